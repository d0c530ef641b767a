"""The order in which `make test` hands its xdist groups to the workers (tools/testing/xdist_groups.py):
the longest groups first, so that no worker runs on alone at the end."""
from __future__ import annotations

import re

import pytest

from tools.registry import ROOT, chapters
from tools.testing import xdist_groups


class Item:
    """Just what xdist_groups.rank reads of a pytest item: its xdist_group marks."""

    def __init__(self, group: str):
        self.mark = pytest.mark.xdist_group(group).mark

    def iter_markers(self, name):
        return iter([self.mark] if name == "xdist_group" else [])


def test_the_longest_groups_go_first_and_the_rest_keep_their_order():
    long = next(c for c in chapters() if c.long_training)                            # from the registry
    plain = next(c for c in chapters() if not (c.long_training or c.messy_class))
    names = ["file:tests/test_registry.py", "page:book/index.html", f"colab-runtime:{plain.stem}",
             f"grading-{plain.label}", "grading-zip", f"colab-runtime:{long.stem}",
             f"file:_build/nbval/{long.stem}/{long.stem}.ipynb", "frontends", "file:tests/test_errata.py"]
    ordered = [item.mark.args[0] for item in sorted((Item(n) for n in names), key=xdist_groups.rank)]
    assert ordered == ["frontends", f"file:_build/nbval/{long.stem}/{long.stem}.ipynb",
                       f"colab-runtime:{long.stem}", "grading-zip", f"grading-{plain.label}", f"colab-runtime:{plain.stem}",
                       "file:tests/test_registry.py", "page:book/index.html", "file:tests/test_errata.py"]


def test_the_registry_decides_which_chapters_go_early():
    for c in chapters():
        early = [p for p in xdist_groups.LONGEST_FIRST if c.stem in p or p.endswith(f"-{c.label}")]
        assert bool(early) == bool(c.long_training or c.messy_class), (c.stem, early)


def test_make_test_keeps_that_order():
    """pytest-xdist reorders the groups by their number of tests unless told not to."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    runs = [line for line in makefile.splitlines() if "-m pytest" in line and "--dist loadgroup" in line]
    assert runs and all("--no-loadscope-reorder" in line for line in runs), runs


def test_every_pattern_names_groups_the_suite_declares():
    """A renamed group would silently lose its place: each pattern's fixed part (a chapter's label or
    stem taken out) is a group name the tests write, or a notebook that nbval runs."""
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("*.py"))
    sources += (ROOT / "tools" / "testing" / "xdist_groups.py").read_text(encoding="utf-8").split("LONGEST_FIRST")[0]
    names = sorted({c.label for c in chapters()} | {c.stem for c in chapters()}, key=len, reverse=True)
    stale = []
    for pattern in xdist_groups.LONGEST_FIRST:
        if pattern.startswith("file:"):
            path = pattern.removeprefix("file:").removeprefix("_build/nbval/").split("/")[0]
            found = (ROOT / "notebooks" / f"{path}.ipynb").exists() or (ROOT / path).exists()
        else:
            fixed = re.split(r"\*", re.sub("|".join(map(re.escape, names)), "*", pattern))[0]
            if "/" in fixed:  # a page: the group is written as `page:` and the page's path
                fixed = fixed.split(":")[0] + ":"
            found = bool(fixed) and (f'"{fixed}' in sources or f"'{fixed}" in sources)
        if not found:
            stale.append(pattern)
    assert not stale, f"LONGEST_FIRST names groups that no test declares: {stale}"
