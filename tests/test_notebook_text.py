"""Each chapter has a MyST Markdown text copy in notebooks/md/, paired by jupytext (jupytext.toml),
so that a change to a chapter reads as a text diff in `git diff` and in a pull request
(CONTRIBUTING.md, "Reading a chapter change as text"). The copy must be exactly what jupytext writes
from the notebook: after editing either one, `jupytext --sync` brings the other in line.
"""
from __future__ import annotations

import jupytext

from tools.registry import ROOT, chapters


def text_copy(chapter):
    return ROOT / "notebooks" / "md" / f"{chapter.stem}.md"


def test_every_chapter_has_a_text_copy_in_sync():
    stale = []
    for chapter in chapters():
        nb = jupytext.read(chapter.notebook)
        copy = text_copy(chapter)
        if not copy.exists() or copy.read_text(encoding="utf-8") != jupytext.writes(nb, fmt="md:myst"):
            stale.append(chapter.notebook.relative_to(ROOT))
            continue
        # and back: the text copy gives the notebook's cells exactly (no source changes on a round trip)
        back = jupytext.read(copy)
        if [(c.cell_type, c.source, c.metadata) for c in back.cells] != [(c.cell_type, c.source, c.metadata) for c in nb.cells]:
            stale.append(chapter.notebook.relative_to(ROOT))
    assert not stale, ("the text copies in notebooks/md/ differ from these notebooks: run "
                       f"`.venv/bin/jupytext --sync {' '.join(map(str, stale))}`")


def test_no_text_copy_without_its_chapter():
    stems = {c.stem for c in chapters()}
    orphans = sorted(p.name for p in (ROOT / "notebooks" / "md").glob("*.md") if p.stem not in stems)
    assert not orphans, f"notebooks/md/ holds text copies of no registry chapter: {orphans}"
