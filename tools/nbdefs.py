"""Load what a chapter notebook defines: the one loader of the tests and the seed studies.

The notebooks stand alone (Colab has no repository beside them), so the tests and the seed studies
(tools/seed_studies/) do not import a package: they execute a notebook's code cells in a fresh
namespace, leaving out the cells tagged ``skip-in-tests`` (training loops, timing sweeps, large
plots), and get back that namespace. A seed study may stop before a cell (the Exercises, say) or
run only the cells that define what it needs.

    from tools.nbdefs import load_notebook          # tests: `from nbdefs import ...` (tests/nbdefs.py)
    nb = load_notebook(stem)                        # a chapter's stem (tools/chapters.toml)
    nb.softmax                                      # what its cells define
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
SKIP_TAG = "skip-in-tests"


def notebook_path(name: str) -> Path:
    """A stem (`"NN_name"`) or a file name (`"NN_name.ipynb"`) -> the notebook's path."""
    stem = name[:-6] if name.endswith(".ipynb") else name
    return NOTEBOOKS / f"{stem}.ipynb"


def code_cells(name: str, skip_tag: str = SKIP_TAG, only: tuple[str, ...] | None = None,
               stop_before: str | None = None):
    """The source and tags of each code cell to run, in order: every one not tagged `skip_tag`;
    with `only`, just the cells whose source contains one of those strings (tags aside); with
    `stop_before`, none from the first cell whose source starts with that string on."""
    nb = json.loads(notebook_path(name).read_text(encoding="utf-8"))
    found = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if stop_before is not None and source.startswith(stop_before):
            break
        tags = cell.get("metadata", {}).get("tags", [])
        if only is not None:
            wanted = {needle for needle in only if needle in source}
            if not wanted:
                continue
            found |= wanted
        elif skip_tag in tags:
            continue
        # IPython magics and shell escapes have no meaning outside a kernel.
        lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        yield "\n".join(lines), tags
    if only is not None and found != set(only):
        raise KeyError(f"notebook {name} has no code cell containing {sorted(set(only) - found)}")


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
def load_notebook(name: str, *, only: tuple[str, ...] | None = None, stop_before: str | None = None,
                  module_name: str | None = None) -> NotebookDefinitions:
    """Execute the notebook's code cells (all but `skip-in-tests`; see code_cells for `only` and
    `stop_before`) and return what they define, in a namespace called `module_name`.

    A cell tagged `raises-exception` must raise, and only the exception its first line names
    (`# raises: ValueError`); any other exception, or none, fails the load. Printed output is
    discarded. Figures are drawn on matplotlib's non-interactive backend and closed.
    """
    import builtins

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns: dict = {"__name__": module_name or f"notebook_{Path(name).stem}"}
    with contextlib.redirect_stdout(io.StringIO()):
        for index, (source, tags) in enumerate(code_cells(name, only=only, stop_before=stop_before)):
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
