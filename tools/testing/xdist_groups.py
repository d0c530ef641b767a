"""A pytest plugin (pytest.ini: `-p tools.testing.xdist_groups`) for `--dist loadgroup`.

`make test` distributes with `--dist loadgroup`: the tests of one xdist group run on one worker.

1. A test without an `xdist_group` mark is put in its file's group, so that a file's tests share
   one worker and its module-scoped fixtures and caches (a notebook loaded once, one nbgrader
   course) as under `--dist loadscope`; a file spreads its tests over the workers by marking them
   with groups of their own (one per page, per explorer kind, per chapter). nbval's items are
   notebook cells, and a notebook is their file: its cells share a kernel and run in order on one
   worker.
2. pytest-xdist 3.8 passes the group to its scheduler by appending `@<group>` to the test's node id
   (`item._nodeid`), which pytest 9.2 no longer reads (node ids became structured): the groups are
   then silently ignored (pytest-dev/pytest-xdist#1386, fix pending in #1388). Until a release of
   pytest-xdist carries the fix, this plugin writes the same suffix into pytest's own id, after
   pytest-xdist's hook; once pytest-xdist does it itself, the suffix is already there and this
   step does nothing.
3. A grouped test that still reaches the scheduler without its group stops the run, rather than
   letting tests that share a kernel or a cache run on different workers.
4. The longest groups go first (LONGEST_FIRST; `make test` passes `--no-loadscope-reorder`, so
   that pytest-xdist hands the groups out in this order). pytest-xdist's default order puts the
   groups with the most tests first, so the one-test groups that run for minutes (the Colab re-run
   of a training chapter, a class graded) came last: one worker ran on alone for two minutes at the end.
"""
from __future__ import annotations

from fnmatch import fnmatch

import pytest

from tools.registry import GRADERS, chapters

# Groups by their measured time on 2 cores, longest first (fnmatch patterns; the others follow in
# collection order). The chapters named here are those whose registry entry (tools/chapters.toml) says
# that they train at length (`long_training`: their nbval and Colab runs) or that a messy class of theirs
# is graded (`messy_class`); docs/decisions.md has the measured times behind this order.
_LONG = [c.stem for c in chapters() if c.long_training]
_MESSY = {grader: [c.label for c in chapters() if grader in c.messy_class] for grader in GRADERS}
LONGEST_FIRST = (
    "frontends",                                           # every chapter in JupyterLab, one in Notebook 7
    *[f"file:_build/nbval/{stem}/*" for stem in _LONG],    # nbval of a training chapter (without Chromium)
    *[f"grading-{label}" for label in _MESSY["nbgrader"]],             # the messy classes under nbgrader
    *[f"colab-runtime:{stem}" for stem in _LONG],          # a training chapter's Colab re-run
    *[f"grading-otter-{label}" for label in _MESSY["otter"]],       # the messy classes under otter
    "grading-zip",
    "contributor",                                         # a new chapter's recipe in a clone (test_contributor)
    "grading-*",                                           # each chapter under nbgrader or otter
    "file:tests/test_portability.py",
    "page:notebooks/*",                                    # each chapter page in the browser
    "colab-runtime:*",
)


def groups(item) -> list[str]:
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return sorted(names)


def pytest_itemcollected(item):
    if not item.get_closest_marker("xdist_group"):
        item.add_marker(pytest.mark.xdist_group(f"file:{item.nodeid.split('::', 1)[0]}"))


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook, before it sends the ids to the scheduler
def pytest_collection_modifyitems(config, items):
    if not config.getoption("loadgroup", False):  # set on pytest-xdist's workers under --dist loadgroup
        return
    for item in items:
        names = groups(item)
        if not names or "@" in item.nodeid.rpartition("]")[2]:
            continue
        grouped = f"{item.nodeid}@{'_'.join(names)}"
        if hasattr(item, "_id"):  # pytest >= 9.2: the structured node id
            from _pytest.nodeid import coerce_node_id
            item._id = coerce_node_id(grouped)
        else:
            item._nodeid = grouped
        if item.nodeid != grouped:
            raise pytest.UsageError(f"{item.nodeid}: cannot pass its xdist_group {names} to pytest-xdist "
                                    "(tools/testing/xdist_groups.py needs updating for this pytest)")
    items.sort(key=rank)  # stable: a notebook's cells keep their order


def rank(item) -> int:
    names = groups(item)
    name = "_".join(names)
    return next((k for k, pattern in enumerate(LONGEST_FIRST) if fnmatch(name, pattern)), len(LONGEST_FIRST))
