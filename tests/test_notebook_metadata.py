"""Every stored notebook is free of what changes from run to run and is no result.

`make execute` runs nbstripout after each execution, keeping the outputs, the execution counts and
the cell ids, and dropping nbstripout's volatile keys (cell execution timestamps, widget state, ...)
and the kernel's Python version. This test runs nbstripout's own `--verify` with the Makefile's
options on every notebook of the registry and its Colab copy: a notebook stored without the strip
(executed by hand in Jupyter, say) fails, with the command that fixes it.
"""
from __future__ import annotations

import io
import json
import re
import shlex
import sys

from nbstripout import main as nbstripout

from tools.registry import ROOT, chapters


def nbstripout_options() -> list[str]:
    match = re.search(r"^NBSTRIPOUT_OPTIONS\s*:?=\s*(.+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    assert match, "the Makefile defines no NBSTRIPOUT_OPTIONS (the strip that `make execute` runs)"
    return shlex.split(match.group(1))


def verify(paths, monkeypatch) -> bool:
    """Whether `nbstripout --verify OPTIONS PATHS` passes, run in this process (nbformat is imported
    already). nbstripout wraps sys.stdin and sys.stdout and closes them when done: it gets its own."""
    monkeypatch.setattr(sys, "argv", ["nbstripout", "--verify", *nbstripout_options(), *map(str, paths)])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO()))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO()))
    try:
        nbstripout()
    except SystemExit as exit:
        return not exit.code
    return True


def test_every_stored_notebook_is_stripped_of_volatile_metadata(monkeypatch):
    notebooks = [p for c in chapters() for p in (c.notebook, ROOT / "colab" / f"{c.stem}.ipynb") if p.exists()]
    if not verify(notebooks, monkeypatch):
        unstripped = [str(p.relative_to(ROOT)) for p in notebooks if not verify([p], monkeypatch)]
        raise AssertionError(
            "these notebooks carry volatile metadata (execution timestamps, widget state, the kernel's "
            "version): run `make execute NB=...` (or .venv/bin/nbstripout with the Makefile's "
            "NBSTRIPOUT_OPTIONS), then `make colab`:\n  " + "\n  ".join(unstripped))


def test_the_check_finds_a_timestamp(tmp_path, monkeypatch):
    """The check above can fail: a notebook with a cell's execution timestamp is refused."""
    source = ROOT / "notebooks" / f"{chapters()[0].stem}.ipynb"
    text = source.read_text(encoding="utf-8")
    stamped = text.replace('"metadata": {', '"metadata": {\n    "execution": {"iopub.status.idle": "2026-01-01T00:00:00Z"},', 1)
    assert stamped != text
    copy = tmp_path / source.name
    copy.write_text(stamped, encoding="utf-8")
    assert not verify([copy], monkeypatch)


def test_no_printed_stream_is_stored_in_pieces():
    """How one print() reaches the notebook in pieces depends on timing; `make execute` merges the
    consecutive pieces (nbconvert's CoalesceStreamsPreprocessor), so that a re-run stores them alike."""
    pieces = []
    for chapter in chapters():
        nb = json.loads(chapter.notebook.read_text(encoding="utf-8"))
        for index, cell in enumerate(nb["cells"]):
            outputs = cell.get("outputs", [])
            pieces += [f"{chapter.stem} cell {index}" for a, b in zip(outputs, outputs[1:])
                       if a["output_type"] == b["output_type"] == "stream" and a["name"] == b["name"]]
    assert not pieces, "stream outputs stored in pieces (run `make execute NB=...`): " + ", ".join(pieces)


def test_a_rerun_with_the_same_results_keeps_the_stored_notebook(tmp_path, monkeypatch, capsys):
    """tools/authoring/rerun.py, the last step of `make execute`: a fresh run that differs from the
    stored notebook only in volatile values (a timing and its column's padding, a float error size, a
    widget's model id, the figure of a `measured-time` cell, the numbers of an `nbval-ignore-output`
    cell) leaves the stored file untouched; a changed digit of a result, another figure's pixels, or an
    ignored cell's other wording replaces it."""
    import copy

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    def notebook(ms, error, digit, model, measured_png, other_png, ratio=222.5, words="the time of dot"):
        timed = new_code_cell("t", outputs=[new_output("stream", name="stdout", text=f"  512 | {ms:>7.1f} ms | {error:.1e}\n")])
        result = new_code_cell("r", outputs=[new_output("execute_result", data={"text/plain": f"0.24{digit}"}, execution_count=2)])
        widget = new_code_cell("w", outputs=[new_output("display_data", data={
            "application/vnd.jupyter.widget-view+json": {"model_id": model, "version_major": 2, "version_minor": 0},
            "text/plain": "IntSlider(value=3)"})])
        measured = new_code_cell("m", metadata={"tags": ["skip-in-tests", "measured-time"]},
                                 outputs=[new_output("display_data", data={"image/png": measured_png})])
        figure = new_code_cell("f", outputs=[new_output("display_data", data={"image/png": other_png})])
        declared = new_code_cell("print(ratio)", metadata={"tags": ["nbval-ignore-output"]},
                                 outputs=[new_output("stream", name="stdout", text=f"additive takes {ratio}x {words}\n")])
        nb = new_notebook(cells=[timed, result, widget, measured, figure, declared])
        for k, cell in enumerate(nb.cells):
            cell["id"] = f"cell-{k}"
        return nb

    from tools.authoring import rerun

    monkeypatch.delenv("FORCE", raising=False)
    stored_nb = notebook(27.2, 6.0e-07, 7, "a" * 32, "AAAA", "BBBB")
    cases = {
        "volatile only": (notebook(0.3, 5.4e-07, 7, "b" * 32, "CCCC", "BBBB", ratio=251.9), "kept"),
        "a result's digit": (notebook(0.3, 5.4e-07, 8, "b" * 32, "CCCC", "BBBB"), "written"),
        "another figure": (notebook(27.2, 6.0e-07, 7, "a" * 32, "AAAA", "DDDD"), "written"),
        # an edited cell's earlier outputs, left by `make derived` beside its new source: other words, not kept
        "another wording": (notebook(27.2, 6.0e-07, 7, "a" * 32, "AAAA", "BBBB", words="the time of a product"), "written"),
    }
    for name, (fresh_nb, verdict) in cases.items():
        stored, fresh = tmp_path / "stored.ipynb", tmp_path / "fresh.ipynb"
        nbformat.write(copy.deepcopy(stored_nb), stored)
        nbformat.write(fresh_nb, fresh)
        before = stored.read_bytes()
        assert rerun.main([str(fresh), str(stored)]) == 0
        said = capsys.readouterr().out
        assert verdict in said, (name, said)
        assert (stored.read_bytes() == before) == (verdict == "kept"), name
        assert not fresh.exists(), f"{name}: the fresh run was left behind"
