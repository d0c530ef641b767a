"""Each chapter has a MyST Markdown text copy in notebooks/md/, paired by jupytext (jupytext.toml),
so that a change to a chapter reads as a text diff in `git diff` and in a pull request
(CONTRIBUTING.md). That each copy is in sync with its notebook is part of the derived-files check
(tools/derived.py, tests/test_derived.py); here, that no copy is left without its chapter.
"""
from __future__ import annotations

from tools.registry import ROOT, chapters


def test_no_text_copy_without_its_chapter():
    stems = {c.stem for c in chapters()}
    orphans = sorted(p.name for p in (ROOT / "notebooks" / "md").glob("*.md") if p.stem not in stems)
    assert not orphans, f"notebooks/md/ holds text copies of no registry chapter: {orphans}"
