"""Load what a chapter notebook defines, so that tests can check it.

The notebooks stand alone (Colab has no repository beside them), so the tests do not import a
package: they execute a notebook's code cells in a fresh namespace, leaving out the cells tagged
``skip-in-tests`` (training loops, timing sweeps, large plots), and hand back that namespace.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
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


class NotebookDefinitions(dict):
    """What a notebook defines, by name: `nb.scaled_dot_attention` (or `nb["scaled_dot_attention"]`).

    A name the notebook does not define fails with one sentence naming the notebook, so that a
    renamed teaching variable shows up as exactly that.
    """

    def __init__(self, name: str, namespace: dict):
        super().__init__(namespace)
        self.notebook_name = name

    def __missing__(self, key):
        raise KeyError(f"notebook {self.notebook_name} defines no name {key!r} (renamed or removed?); "
                       "the tests need it")

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as error:
            raise AttributeError(error.args[0]) from None


@lru_cache(maxsize=None)
def load_notebook(name: str) -> NotebookDefinitions:
    """Execute the notebook's code cells (all but `skip-in-tests`) and return what they define.

    A cell tagged `raises-exception` must raise, and only the exception its first line names
    (`# raises: ValueError`); any other exception, or none, fails the load. Printed output is
    discarded. Figures are drawn on matplotlib's non-interactive backend and closed.
    """
    import builtins

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns: dict = {"__name__": f"notebook_{Path(name).stem}"}
    with contextlib.redirect_stdout(io.StringIO()):
        for index, (source, tags) in enumerate(code_cells(name)):
            code = compile(source, f"<{name} cell {index}>", "exec")
            if "raises-exception" in tags:
                expected = expected_exception(source)
                if expected is None:
                    raise AssertionError(f"{name} cell {index} is tagged raises-exception but its first line "
                                         "does not name the exception (# raises: ValueError)")
                expected_type = getattr(builtins, expected, None) or ns.get(expected)
                try:
                    exec(code, ns)
                except Exception as error:  # noqa: BLE001 - checked against the named type just below
                    if expected_type is None or not isinstance(error, expected_type):
                        raise AssertionError(f"{name} cell {index} should raise {expected}, "
                                             f"but raised {type(error).__name__}: {error}") from error
                    continue
                raise AssertionError(f"{name} cell {index} is tagged raises-exception but did not raise")
            exec(code, ns)
            plt.close("all")
    return NotebookDefinitions(Path(name).stem, ns)


def expected_exception(source: str) -> str | None:
    """The exception that a `raises-exception` cell names on its first line: `# raises: ValueError`."""
    first = source.lstrip().splitlines()[0] if source.strip() else ""
    match = re.match(r"#\s*raises:\s*([A-Za-z_][A-Za-z0-9_.]*)", first)
    return match.group(1) if match else None
