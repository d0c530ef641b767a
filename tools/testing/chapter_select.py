"""A pytest plugin (pytest.ini: `-p tools.testing.chapter_select`): `--chapter N` keeps one chapter's checks.

`make test-chapter N=3` (or `CH=03`) runs what concerns chapter N and nothing else: its own test file
(tests/test_chNN_*.py), nbval on its stored outputs (the JupyterLab run's replay, or a lone copy, as
`--nbval-mode` says), its Colab re-run, its grading tests (the messy class too, where it has one), its
page's browser tests and its explorers', the per-chapter checks of the other files (errata, plumbing,
figures, standalone imports, ...), and the check that no derived file is stale. A test belongs to the
chapter when its file is the chapter's own, when it is an nbval cell of the chapter's notebook, or
when one of its parameters names the chapter: its stem or label as a whole word, one of its exercise
ids (`<label>_ex...`), or one of its explorer kinds. Everything else is deselected (and counted so in
pytest's summary line).
"""
from __future__ import annotations

import re

import pytest

from tools.registry import chapters

ALWAYS = ("tests/test_derived.py::test_every_derived_file_is_up_to_date",)


def pytest_addoption(parser):
    parser.addoption("--chapter", default=None, metavar="N",
                     help="run only chapter N's checks (its number, e.g. 3 or 03; make test-chapter N=3)")


def chapter_of(value: str):
    wanted = value.strip()
    for c in chapters():
        if wanted.isdigit() and int(wanted) == c.number or wanted in (c.stem, c.label):
            return c
    numbers = ", ".join(str(c.number) for c in chapters())
    raise pytest.UsageError(f"--chapter {value!r}: no such chapter; give its number ({numbers}), stem or label")


def belongs(nodeid: str, chapter) -> bool:
    path, _, rest = nodeid.partition("::")
    name = path.rsplit("/", 1)[-1]
    if name.startswith(f"test_ch{chapter.number:02d}_") or f"_build/nbval/{chapter.stem}/" in path:
        return True
    if nodeid.split("@", 1)[0] in ALWAYS:
        return True
    params = rest.split("[", 1)[1].rsplit("]", 1)[0] if "[" in rest else ""
    if not params:
        return False
    words = set(re.split(r"[\s\-/:.,\[\]]+", params))
    return (chapter.stem in words or chapter.label in words or any(w.startswith(f"{chapter.label}_ex") for w in words)
            or any(kind in params for kind in chapter.explorers))


def pytest_collection_modifyitems(config, items):
    value = config.getoption("chapter")
    if not value:
        return
    chapter = chapter_of(value)
    keep, drop = [], []
    for item in items:
        (keep if belongs(item.nodeid, chapter) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    value = config.getoption("chapter")
    if value:
        c = chapter_of(value)
        return f"chapter {c.number} only ({c.stem}): its own tests and its parameters in the others (--chapter)"
