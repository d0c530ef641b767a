"""The instructors' guide's commands, as the tests run them (book/instructors.md).

Each ```bash block of the guide follows a `% tested: <tag>` line (a MyST comment, invisible on the
site); a test runs the block as written (tests/test_grading.py, tests/test_student_version.py), and
tests/test_grading.py::test_every_command_of_the_guide_is_run_by_a_test checks that no block is
without its tag and no tag without a test.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tools.registry import ROOT

GUIDE = ROOT / "book" / "instructors.md"
TESTED = re.compile(r"^% tested: (?P<tag>[^\n]+?)\s*\n```bash\n(?P<block>.*?)^```", re.MULTILINE | re.DOTALL)


def guide_blocks(tag: str) -> list[str]:
    """The ```bash blocks that follow a `% tested: <tag>` line in instructors.md, in order."""
    blocks = [m.group("block") for m in TESTED.finditer(GUIDE.read_text(encoding="utf-8")) if m.group("tag") == tag]
    assert blocks, f"instructors.md has no block marked `% tested: {tag}`"
    return blocks


def all_blocks() -> tuple[int, dict[str, int]]:
    """(number of ```bash blocks in the guide, {tag: blocks under it})."""
    text = GUIDE.read_text(encoding="utf-8")
    tags: dict[str, int] = {}
    for m in TESTED.finditer(text):
        tags[m.group("tag")] = tags.get(m.group("tag"), 0) + 1
    return len(re.findall(r"^```bash\s*$", text, re.MULTILINE)), tags


def run_block(block: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """A block of the guide, as written: bash -e, in `cwd`, with `env` added to the environment (the
    outer make's own variables dropped, should a block call make)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["bash", "-e", "-c", block], cwd=cwd, env={**environment, **env}, capture_output=True, text=True)
