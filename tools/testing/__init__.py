"""Test plumbing that is not a test: the lone-notebook staging for nbval (stage_notebooks), nbval's
sanitizers (nbval_sanitize.cfg) and the nbval plugin of the Colab run (nbval_ipywidgets7)."""
