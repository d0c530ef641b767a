"""The linter (ruff, configured in pyproject.toml) finds nothing in the tools, the tests and the notebooks' code
cells (ruff reads .ipynb files cell by cell). `make test-fast` runs it first."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.registry import ROOT


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", "--output-format", "concise", "tools", "tests", "notebooks"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, ("ruff check found these (fix a notebook's code in its text, notebooks/md/, then "
                                    "make chapter N=...):\n" + result.stdout[-3000:] + result.stderr[-1000:])
