"""Copy each chapter notebook alone into an empty folder, for nbval to execute it there.

A reader on Colab opens one notebook with nothing beside it. Running nbval on such lone copies
(`_build/nbval/<chapter>/<chapter>.ipynb`) checks two things with one execution: the stored
outputs are what a clean run produces, and the notebook needs no file of the repository.

Where Debian's Chromium is installed, `make test` runs every chapter in JupyterLab
(tests/test_frontends.py), in the same environment, and nbval compares the stored outputs with that
run (tools/testing/nbval_replay.py): no chapter is staged, so that none is executed twice. Without
Chromium the front-end tests are skipped (they fail under CI=true) and every chapter is staged.

    python -m tools.testing.stage_notebooks [DEST]         # default: _build/nbval
    python -m tools.testing.stage_notebooks --all [DEST]   # every chapter, Chromium or not
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tools.registry import ROOT, chapters
from tools.site.pdf import CHROMIUM


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


# The chapters whose `skip-in-tests` cells (their training runs, and the cells that use them) JupyterLab
# leaves out (`long_training` in tools/chapters.toml): those cells run once, in the Colab re-run (Colab's
# versions, lowered SIMD dispatch, under the device check; tests/test_portability.py), not a second time
# in `.venv` (docs/decisions.md has the measurement behind it).
TRAINING_ONLY_IN_THE_COLAB_RUN = tuple(c.stem for c in chapters() if c.long_training)


def front_ends_run_the_chapters() -> bool:
    return Path(CHROMIUM).is_file()


def main(argv: list[str]) -> None:
    every = "--all" in argv
    args = [a for a in argv if a != "--all"]
    dest = (Path(args[0]) if args else ROOT / "_build" / "nbval").resolve()
    if front_ends_run_the_chapters() and not every:
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        print(f"nbval: no chapter staged in {dest}: tests/test_frontends.py runs each in JupyterLab and nbval "
              "compares the stored outputs with that run", file=sys.stderr)
    else:
        for copy in stage(dest):
            print(copy.relative_to(ROOT) if copy.is_relative_to(ROOT) else copy)


if __name__ == "__main__":
    main(sys.argv[1:])
