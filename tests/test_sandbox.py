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


# what a kernel that wants more than its share tries: the grader's secrets, a launcher of its own handed in
# beside the notebook, many processes, a big file, a big /tmp (which lives in memory)
GREEDY = """
import os, subprocess, sys
print("SECRET " + repr(os.environ.get("JUPYTERHUB_API_TOKEN")) + " " + repr(os.environ.get("AWS_SECRET_ACCESS_KEY")))
print("LAUNCHER " + repr(sorted(name for name in sys.modules if name.startswith("planted"))))
children = []
try:
    for _ in range(400):
        children.append(subprocess.Popen(["sleep", "30"]))
    print("TASKS unlimited")
except OSError as error:
    print("TASKS stopped after", len(children), type(error).__name__)
for child in children:
    child.kill()
    child.wait()
def fill(path, megabytes):
    try:
        with open(path, "wb") as f:
            for _ in range(megabytes):
                f.write(bytes(2**20))
        return "written"
    except OSError as error:
        return type(error).__name__
    finally:
        if os.path.exists(path):
            os.remove(path)
print("FILE " + fill("big.bin", 100))
os.makedirs("/tmp/spill", exist_ok=True)
spilled = []
try:
    for i in range(12):             # each file under the file-size limit, together past the /tmp limit
        with open(f"/tmp/spill/{i}.bin", "wb") as f:
            for _ in range(60):
                f.write(bytes(2**20))
        spilled.append(i)
    print("TMP unlimited")
except OSError as error:
    print("TMP stopped after", len(spilled) * 60, "MB", type(error).__name__)
"""


def test_the_sandboxed_kernel_gets_no_secret_no_planted_launcher_and_limited_resources(tmp_path, monkeypatch):
    """The grader's environment stays outside (an allow-list); a file named ipykernel_launcher.py beside the
    notebook is not what starts the kernel (Python starts isolated); processes, a file's size and /tmp are
    limited."""
    work = tmp_path / "submitted" / "student" / "label"
    work.mkdir(parents=True)
    (work / "ipykernel_launcher.py").write_text("import planted_marker\n")
    (work / "planted_marker.py").write_text("open('/tmp/planted', 'w')\n")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "instructor-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cloud-key")
    text = sandbox.run(GREEDY, str(work), timeout=120)
    assert "SECRET None None" in text, text
    assert "LAUNCHER []" in text, text
    assert "TASKS stopped after" in text, text
    assert int(text.split("TASKS stopped after", 1)[1].split()[0]) < 256, text
    assert "FILE OSError" in text and not (work / "big.bin").exists(), text
    assert "TMP stopped after" in text, text
    assert int(text.split("TMP stopped after", 1)[1].split()[0]) <= 512, text


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
