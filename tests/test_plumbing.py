"""Plumbing out of the reader's way (tools/authoring/plumbing.py): every cell that serves the book
rather than teaches (the shared compare_with_note, check_helpers and site_explorer copies; each
explorer's construction) is folded in every client, and no teaching cell is: `jupyter.source_hidden`
(JupyterLab, Notebook 7), the tag `hide-input` (the website's toggle), `#@title` and cellView "form"
in the Colab copy. The cells still run: nbval and the Colab re-run execute them like any other."""
from __future__ import annotations

import json

import pytest

from tools.authoring import plumbing
from tools.registry import ROOT, chapters

STEMS = [c.stem for c in chapters()]


def cells(folder, stem):
    return json.loads((ROOT / folder / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("stem", STEMS)
def test_every_plumbing_cell_and_no_teaching_cell_is_folded(stem):
    import nbformat
    nb = nbformat.reads(json.dumps({"cells": cells("notebooks", stem), "metadata": {}, "nbformat": 4,
                                    "nbformat_minor": 5}), as_version=4)
    assert plumbing.problems(nb, stem) == []
    assert sum(plumbing.is_plumbing(c) for c in nb.cells) >= 1, f"{stem}: no plumbing cell found (compare_with_note?)"


@pytest.mark.parametrize("stem", STEMS)
def test_colab_folds_exactly_the_plumbing_cells(stem):
    source = [c for c in cells("notebooks", stem) if c["cell_type"] == "code"]
    copy = [c for c in cells("colab", stem) if c["cell_type"] == "code"]
    assert len(source) == len(copy)
    for index, (original, colab) in enumerate(zip(source, copy)):
        folded = colab["metadata"].get("cellView") == "form"
        assert folded == plumbing.is_plumbing(original), f"{stem}: code cell {index} folded={folded} in Colab"
        if folded:
            title, rest = "".join(colab["source"]).split("\n", 1)
            assert title.startswith("#@title Book plumbing: ") and rest == "".join(original["source"])


def test_the_markers_recognise_plumbing_and_teaching():
    helper = {"cell_type": "code", "metadata": {}, "source": "# shared helper: check_helpers (checks)\nx = 1"}
    style = {"cell_type": "code", "metadata": {}, "source": "# shared helper: book_style (device)\nx = 1"}
    explorer = {"cell_type": "code", "metadata": {},
                "source": "def make(c):\n    s = widgets.IntSlider()\n    return SiteExplorer('k', c, [s])\n"}
    lesson = {"cell_type": "code", "metadata": {}, "source": "def softmax(x):\n    return np.exp(x) / np.exp(x).sum()\n"}
    assert plumbing.is_plumbing(helper) and plumbing.is_plumbing(explorer)
    assert not plumbing.is_plumbing(style) and not plumbing.is_plumbing(lesson)


@pytest.mark.parametrize("stem", STEMS)
def test_no_marker_comment_reaches_readers(stem):
    """nbval's instructions are cell tags (`nbval-ignore-output`, `nbval-skip`, `raises-exception`), never
    `# NBVAL_...` comments, which the site, the Colab copy and the student version would show."""
    for folder in ("notebooks", "colab"):
        marked = [c["source"][:1] for c in cells(folder, stem)
                  if c["cell_type"] == "code" and "NBVAL_" in "".join(c["source"])]
        assert not marked, f"{folder}/{stem}.ipynb: cells with an nbval comment: {marked}"
