"""The grading sandbox's kernel (tools/grading/sandbox.py), started as the graders start it (IPC sockets in a
folder of their own, the submission's folder as its working directory): it reads and writes its own
folder, and it cannot read the repository, the course's files beside its folder or the network, nor allocate more memory
than its limit. The messy classes in test_grading.py check the same through both graders."""
from __future__ import annotations

import os

import pytest

from tools.grading import sandbox
from tools.grading.sandbox import SNOOP, reached, snooped
from tools.registry import ROOT

pytestmark = pytest.mark.skipif(not sandbox.installed(), reason=f"the grading sandbox is not installed here "
                                f"({sandbox.unusable() or 'run python -m tools.grading.sandbox install'})")

# the student's own folder and its memory, then what any snooping student tries (tests/sandbox_probe.py)
PROBE = """
import os
open("mine.txt", "w").write("a student's file")
print("OWN " + repr(sorted(os.listdir("."))))
try:
    block = bytearray(LIMIT + 2**30)
    print("MEMORY allocated")
except MemoryError:
    print("MEMORY MemoryError")
""" + SNOOP


def test_the_sandboxed_kernel_sees_its_folder_only(tmp_path):
    work = tmp_path / "submitted" / "student" / "label"
    work.mkdir(parents=True)
    (tmp_path / "submitted" / "other").mkdir()
    (tmp_path / "gradebook.db").write_text("the hidden tests")
    paths = {"repository file": str(ROOT / "README.md"), "repository": str(ROOT / "tools"),
             "a classmate": str(tmp_path / "submitted" / "other"), "the gradebook": str(tmp_path / "gradebook.db")}
    limit = int(os.environ.get("ATTENTION_SANDBOX_MEMORY", 6 * 2**30))
    text = sandbox.run(f"PATHS = {list(paths.values())!r}\nLIMIT = {limit}\n" + PROBE, str(work))
    assert "OWN ['mine.txt']" in text and (work / "mine.txt").read_text() == "a student's file", text
    assert "MEMORY MemoryError" in text, text
    found = snooped(text)
    assert set(found) == set(paths.values()) | {"network"} and not reached(found), found
    for path in paths.values():
        assert found[path].endswith("Error"), (path, found[path])
