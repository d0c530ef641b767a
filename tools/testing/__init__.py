"""Test plumbing that is not a test: the lone-notebook staging for nbval (stage_notebooks), nbval's
sanitizers (nbval_sanitize.cfg), the nbval plugin of the Colab run (nbval_ipywidgets7) and the one that
compares stored outputs with the JupyterLab run (nbval_replay)."""
