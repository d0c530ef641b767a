"""Building what readers open: the website from the stored outputs (sitebuild), its PDFs (pdf) and
the Colab-ready copies of the notebooks (colab)."""
