"""tools/testing/nbval_replay.py: nbval compares a notebook's stored outputs with a run made elsewhere (the
JupyterLab run of tests/test_frontends.py), and fails where a real nbval run would fail."""
from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from tools.testing import nbval_replay


def stored_notebook():
    nb = nbformat.v4.new_notebook()
    cells = [("a1", "print(0.1 + 0.2)", [nbformat.v4.new_output("stream", name="stdout", text="0.30000000000000004\n")]),
             ("a2", "print('took 12.5 ms')", [nbformat.v4.new_output("stream", name="stdout", text="took 12.5 ms\n")]),
             ("a3", "# raises: ValueError\nraise ValueError('no')",
              [nbformat.v4.new_output("error", ename="ValueError", evalue="no", traceback=[])]),
             ("a4", "1 + 1", [nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=4)])]
    for k, (cid, source, outputs) in enumerate(cells, 1):
        cell = nbformat.v4.new_code_cell(source, id=cid, execution_count=k, outputs=outputs)
        if cid == "a3":
            cell.metadata["tags"] = ["raises-exception"]
        nb.cells.append(cell)
    return nb


def replay(tmp_path, executed, stored=None, left_out=None) -> subprocess.CompletedProcess:
    nbformat.write(stored or stored_notebook(), tmp_path / "stored.ipynb")
    nbformat.write(executed, tmp_path / "executed.ipynb")
    return subprocess.run(nbval_replay.command(sys.executable, "executed.ipynb", "stored.ipynb", left_out), cwd=tmp_path,
                          capture_output=True, text=True, env=nbval_replay.environment())


def test_the_same_outputs_pass_and_a_colab_form_line_is_allowed(tmp_path):
    executed = stored_notebook()
    executed.cells[1].source = "#@title Book plumbing: a folded cell\n" + executed.cells[1].source
    executed.cells[1].outputs[0].text = "took 97.0 ms\n"   # a timing: sanitized, as in a run of nbval's own
    result = replay(tmp_path, executed)
    assert result.returncode == 0 and "4 passed" in result.stdout, result.stdout[-2000:]


@pytest.mark.parametrize("change, expected", [
    ("digit", "Cell outputs differ"),
    ("missing", "is not in the notebook the front end ran"),
    ("not run", "the front end did not run the cell"),
    ("other code", "has other code than the stored one"),
    ("error", "Cell execution caused an exception"),
])
def test_a_difference_fails_like_nbval(tmp_path, change, expected):
    executed = stored_notebook()
    if change == "digit":
        executed.cells[0].outputs[0].text = "0.30000000000000009\n"
    elif change == "missing":
        executed.cells.pop(3)
    elif change == "not run":
        executed.cells[3].execution_count, executed.cells[3].outputs = None, []
    elif change == "other code":
        executed.cells[3].source = "1 + 2"
    else:  # an error in a cell not tagged raises-exception
        executed.cells[0].outputs = [nbformat.v4.new_output("error", ename="NameError", evalue="x", traceback=[])]
    result = replay(tmp_path, executed)
    assert result.returncode != 0 and "1 failed" in result.stdout and expected in result.stdout, result.stdout[-3000:]


@pytest.mark.parametrize("tagged, left_out, outcome", [
    (True, "skip-in-tests", "3 passed, 1 skipped"),   # left out on purpose: it runs elsewhere
    (False, "skip-in-tests", "1 failed, 3 passed"),   # not tagged: still a missing cell
    (True, None, "1 failed, 3 passed"),               # tagged, but no cell may be left out of this run
])
def test_only_a_cell_tagged_to_be_left_out_may_be_missing(tmp_path, tagged, left_out, outcome):
    stored = stored_notebook()
    if tagged:
        stored.cells[3].metadata["tags"] = ["skip-in-tests"]
    executed = stored_notebook()
    executed.cells.pop(3)
    result = replay(tmp_path, executed, stored, left_out)
    assert outcome in result.stdout, result.stdout[-2000:]
    assert (result.returncode == 0) == ("failed" not in outcome)


def test_without_the_option_nbval_runs_its_own_kernel(tmp_path):
    """The plugin changes nothing unless --nbval-replay is given (the Colab re-run loads no such plugin,
    and nbval's own runs keep their kernel)."""
    nbformat.write(stored_notebook(), tmp_path / "stored.ipynb")
    result = subprocess.run(nbval_replay.command(sys.executable, None, "stored.ipynb"), cwd=tmp_path,
                            capture_output=True, text=True, env=nbval_replay.environment())
    assert result.returncode == 0 and "4 passed" in result.stdout, result.stdout[-2000:]


def test_nbval_stages_every_chapter_exactly_when_the_front_ends_do_not_run_them(tmp_path, monkeypatch):
    """tools/testing/stage_notebooks.py: no chapter for nbval where Chromium is installed (JupyterLab runs
    them and the replay compares), every chapter where it is missing, and every chapter with --all."""
    from tools.registry import chapters
    from tools.testing import stage_notebooks

    def staged(*args) -> list[str]:
        stage_notebooks.main([*args, str(tmp_path / "nbval")])
        return sorted(p.name for p in (tmp_path / "nbval").glob("*/*.ipynb"))

    every = sorted(c.notebook.name for c in chapters())
    monkeypatch.delenv("NBVAL_MODE", raising=False)
    monkeypatch.setattr(stage_notebooks, "CHROMIUM", str(tmp_path / "no-chromium-here"))
    assert staged() == every and stage_notebooks.nbval_mode() == "lone"
    with pytest.raises(SystemExit, match="needs Chromium"):
        staged("--mode", "replay")
    monkeypatch.setattr(stage_notebooks, "CHROMIUM", sys.executable)  # a file that exists
    assert staged() == [] and (tmp_path / "nbval").is_dir() and stage_notebooks.nbval_mode() == "replay"
    assert staged("--all") == every and staged("--mode", "lone") == every
    last = chapters()[-1]
    assert staged("--mode", "lone", "--chapter", str(last.number)) == [last.notebook.name]
    monkeypatch.setenv("NBVAL_MODE", "lone")
    assert staged() == every
    monkeypatch.setenv("NBVAL_MODE", "sometimes")
    with pytest.raises(SystemExit, match="use one of"):
        staged()
