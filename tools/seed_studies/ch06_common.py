"""Load chapter 6's definitions for a seed study, as the tests load them (tools/nbdefs.py).

The study scripts import nothing from the repository but this loader, which executes every code
cell of notebooks/06_toy_translator.ipynb that is not tagged skip-in-tests (training, plots); a cell
tagged raises-exception (an error shown on purpose) must raise the error it names.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402


def load_chapter6():
    return load_notebook("06_toy_translator", module_name="ch06_study")
