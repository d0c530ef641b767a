"""Load what a chapter notebook defines, so that tests can check it.

The notebooks stand alone (Colab has no repository beside them), so the tests do not import a
package: they execute a notebook's code cells in a fresh namespace, leaving out the cells tagged
``skip-in-tests`` (training loops, timing sweeps, large plots), and hand back that namespace.
"""
from __future__ import annotations

import contextlib
import io
import json
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def notebook_path(name: str) -> Path:
    """`"01_bottleneck"` or `"01_bottleneck.ipynb"` -> the notebook's path."""
    stem = name[:-6] if name.endswith(".ipynb") else name
    return NOTEBOOKS / f"{stem}.ipynb"


def code_cells(name: str, skip_tag: str = "skip-in-tests"):
    """The source of each code cell that the tests run, in order."""
    nb = json.loads(notebook_path(name).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        if skip_tag in tags:
            continue
        source = "".join(cell["source"])
        # IPython magics and shell escapes have no meaning outside a kernel.
        lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        yield "\n".join(lines), tags


@lru_cache(maxsize=None)
def load_notebook(name: str) -> dict:
    """Execute the notebook's code cells (all but `skip-in-tests`) and return the namespace.

    Cells tagged `raises-exception` must raise; their exception is swallowed. Printed output is
    discarded. Figures are drawn on matplotlib's non-interactive backend and closed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns: dict = {"__name__": f"notebook_{Path(name).stem}"}
    with contextlib.redirect_stdout(io.StringIO()):
        for index, (source, tags) in enumerate(code_cells(name)):
            code = compile(source, f"<{name} cell {index}>", "exec")
            if "raises-exception" in tags:
                try:
                    exec(code, ns)
                except Exception:
                    continue
                raise AssertionError(f"{name} cell {index} is tagged raises-exception but did not raise")
            exec(code, ns)
            plt.close("all")
    return ns
