"""MyST to plain notebooks: what the Colab copies, the graded versions and the student version share
(tools/convert/myst.py)."""
