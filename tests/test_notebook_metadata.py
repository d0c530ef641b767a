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
