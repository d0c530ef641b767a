"""The tests' import name for tools/nbdefs.py, the one notebook loader of the tests and the seed
studies (`from nbdefs import load_notebook, notebook_path` in a test file)."""
from tools.nbdefs import (NOTEBOOKS, ROOT, NotebookDefinitions, code_cells,  # noqa: F401
                          expected_exception, load_notebook, notebook_path)
