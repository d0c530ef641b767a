"""A pytest plugin for nbval: compare a notebook's stored outputs with those of a run made elsewhere.

    pytest --nbval --nbval-current-env --nbval-sanitize-with tools/testing/nbval_sanitize.cfg \
           -p tools.testing.nbval_replay --nbval-replay EXECUTED.ipynb STORED.ipynb

The Jupyter front-end test (tests/test_frontends.py) runs every chapter top to bottom in JupyterLab,
in the book's own environment (`.venv`), and saves it. Running the chapter once more under nbval in
the same environment would repeat that execution; instead nbval compares, cell by cell, the stored
outputs of STORED with the outputs the front end produced (EXECUTED): the same comparison, sanitizers
(the tags `nbval-ignore-output` and `raises-exception`, the sanitize file) and failure report as a run of its
own, with nbval's kernel replaced by one that replays EXECUTED's outputs.

The cells are matched by their id. A stored code cell whose id is missing from EXECUTED, whose code
differs (but for the `#@title` line of a Colab form, tools/convert/myst.py) or which did not run there
fails with one sentence: the replay can only vouch for cells the front end ran as they are stored.
The one exception is explicit: with `--nbval-replay-left-out TAG`, a stored cell tagged TAG that the
run left out on purpose is reported as skipped (the front-end test leaves the training of the
`long_training` chapters out of JupyterLab: tools/testing/stage_notebooks.py, TRAINING_ONLY_IN_THE_COLAB_RUN).
"""
from __future__ import annotations

import os
import uuid
from collections import deque
from pathlib import Path
from queue import Empty

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SANITIZE = ROOT / "tools" / "testing" / "nbval_sanitize.cfg"

_EXECUTED: dict[str, nbformat.NotebookNode] = {}


def pytest_addoption(parser):
    parser.addoption("--nbval-replay", default=None, metavar="EXECUTED",
                     help="compare with the outputs of this executed notebook instead of running a kernel")
    parser.addoption("--nbval-replay-left-out", default=None, metavar="TAG",
                     help="a stored cell with this tag that EXECUTED does not hold is skipped (it runs elsewhere)")


def without_form(source: str) -> str:
    """The code without the `#@title` line that the Colab copies add to a folded cell."""
    first, _, rest = source.partition("\n")
    return rest if first.startswith("#@title ") else source


class ReplayKernel:
    """What nbval's IPyNbCell.runtest asks of its RunningKernel, answered from an executed notebook."""

    language = "python"

    def __init__(self, kernel_name=None, cwd=None, startup_timeout=None):
        self.alive = True
        self.cell = None          # the stored cell nbval is about to run (pytest_runtest_call)
        self.iopub: deque = deque()

    def is_alive(self):
        return self.alive

    def execute_cell_input(self, cell_input, allow_stdin=None):
        stored = self.cell
        cell_id = stored.get("id") if stored is not None else None
        ran = _EXECUTED.get(cell_id)
        msg_id = uuid.uuid4().hex
        if ran is None:
            outputs = [_error(f"the cell {cell_id!r} is not in the notebook the front end ran")]
        elif without_form(ran.source) != without_form(stored.source):
            outputs = [_error(f"the cell {cell_id!r} the front end ran has other code than the stored one")]
        elif ran.get("execution_count") is None:
            outputs = [_error(f"the front end did not run the cell {cell_id!r}")]
        else:
            outputs = ran.get("outputs", [])
        for out in outputs:
            kind = out["output_type"]
            if kind == "stream":
                content = {"name": out["name"], "text": out["text"]}
            elif kind in ("display_data", "execute_result"):
                content = {"data": out.get("data", {}), "metadata": out.get("metadata", {})}
                if kind == "execute_result":
                    content["execution_count"] = out.get("execution_count")
            elif kind == "error":
                content = {"ename": out["ename"], "evalue": out["evalue"], "traceback": out.get("traceback", [])}
            else:
                continue
            self.iopub.append({"msg_type": kind, "parent_header": {"msg_id": msg_id}, "content": content})
        self.iopub.append({"msg_type": "status", "parent_header": {"msg_id": msg_id},
                           "content": {"execution_state": "idle"}})
        return msg_id

    def get_message(self, stream, timeout=None):
        if stream != "iopub" or not self.iopub:
            raise Empty
        return self.iopub.popleft()

    def await_reply(self, msg_id, timeout=None):
        return None

    def await_idle(self, parent_id, timeout):
        while self.iopub:
            msg = self.iopub.popleft()
            if msg["msg_type"] == "status" and msg["parent_header"]["msg_id"] == parent_id:
                return

    def interrupt(self):
        pass

    def restart(self):
        pass

    def stop(self):
        self.alive = False


def _error(sentence: str) -> dict:
    return {"output_type": "error", "ename": "ReplayError", "evalue": sentence, "traceback": [sentence]}


def pytest_configure(config):
    path = config.getoption("--nbval-replay")
    if not path:
        return
    import nbval.plugin

    executed = nbformat.read(path, as_version=4)
    _EXECUTED.update({c.get("id"): c for c in executed.cells if c.cell_type == "code"})
    nbval.plugin.RunningKernel = ReplayKernel


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    kernel = getattr(getattr(item, "parent", None), "kernel", None)
    if isinstance(kernel, ReplayKernel):
        kernel.cell = item.cell
        tag = item.config.getoption("--nbval-replay-left-out")
        if tag and item.cell.get("id") not in _EXECUTED and tag in item.cell.get("metadata", {}).get("tags", []):
            pytest.skip(f"left out of this run (tagged {tag}): it runs elsewhere")


# ---------------------------------------------------------------- running it (tests/test_frontends.py)

def command(python, executed: str | None, stored: str, left_out: str | None = None) -> list[str]:
    """pytest with nbval on `stored`, replaying `executed` (paths relative to the folder it runs in);
    with executed=None, nbval runs its own kernel (the plugin then does nothing); `left_out`: see
    --nbval-replay-left-out."""
    return [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rs", "-o", "addopts=",
            "-p", "tools.testing.nbval_replay", "--nbval", "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE),
            *(["--nbval-replay", executed] if executed else []),
            *(["--nbval-replay-left-out", left_out] if left_out else []), stored]


def environment() -> dict:
    """The nested pytest's environment: the repository importable, and none of the outer session's
    PYTEST_ADDOPTS (its plugins and options are not the nested run's)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env
