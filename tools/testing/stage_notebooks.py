"""Copy each chapter notebook alone into an empty folder, for nbval to execute it there.

A reader on Colab opens one notebook with nothing beside it. Running nbval on such lone copies
(`_build/nbval/<chapter>/<chapter>.ipynb`) checks two things with one execution: the stored
outputs are what a clean run produces, and the notebook needs no file of the repository.

    python -m tools.testing.stage_notebooks [DEST]      # default: _build/nbval
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tools.registry import ROOT, chapters


def stage(dest: Path) -> list[Path]:
    if dest.exists():
        shutil.rmtree(dest)
    copies = []
    for chapter in chapters():  # the registry's chapters (tests/test_registry.py: no other notebook)
        nb = chapter.notebook
        folder = dest / nb.stem
        folder.mkdir(parents=True)
        copies.append(Path(shutil.copy2(nb, folder / nb.name)))
    return copies


if __name__ == "__main__":
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "nbval"
    for copy in stage(dest.resolve()):
        print(copy.relative_to(ROOT) if copy.is_relative_to(ROOT) else copy)
