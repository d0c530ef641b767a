"""Load chapter 6's definitions for a seed study: exec the notebook's code cells, as the tests do.

The study scripts import nothing from the repository but this loader, which reads the notebook
(notebooks/06_toy_translator.ipynb) and executes every code cell that is not tagged
skip-in-tests (training, plots) and not tagged raises-exception (an error shown on purpose).
"""
import contextlib
import io
import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "06_toy_translator.ipynb"


def load_chapter6():
    import matplotlib
    matplotlib.use("Agg")
    ns = {"__name__": "ch06_study"}
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in cells:
            tags = cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] != "code" or "skip-in-tests" in tags or "raises-exception" in tags:
                continue
            exec(compile("".join(cell["source"]), "<06_toy_translator>", "exec"), ns)
    return ns
