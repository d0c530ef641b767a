"""Copy each chapter notebook alone into an empty folder, for nbval to execute it there.

A reader on Colab opens one notebook with nothing beside it. Running nbval on such lone copies
(`_build/nbval/<chapter>/<chapter>.ipynb`) checks two things with one execution: the stored
outputs are what a clean run produces, and the notebook needs no file of the repository.

nbval has two modes, chosen by NBVAL_MODE (a make variable, and an environment variable here):
- `replay`: every chapter runs in JupyterLab (tests/test_frontends.py, in the same environment) and
  nbval compares the stored outputs with that run (tools/testing/nbval_replay.py); no chapter is
  staged, so that none is executed twice. It needs Debian's Chromium.
- `lone`: nbval executes a lone copy of every chapter, staged here (the front-end tests still run
  where Chromium is installed).
- `auto` (the default): `replay` where Chromium is installed, else `lone`.
The test report's header names the mode in force (tests/conftest.py).

    python -m tools.testing.stage_notebooks [--mode auto|replay|lone] [--chapter N] [DEST]   # default: _build/nbval
    python -m tools.testing.stage_notebooks --all [DEST]   # every chapter, Chromium or not (= --mode lone)
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tools.registry import ROOT, chapters
from tools.chromium import CHROMIUM


def stage(dest: Path, only=None) -> list[Path]:
    if dest.exists():
        shutil.rmtree(dest)
    copies = []
    for chapter in chapters():  # the registry's chapters (tests/test_registry.py: no other notebook)
        if only is not None and chapter.stem != only.stem:
            continue
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


MODES = ("auto", "replay", "lone")


def nbval_mode(requested: str | None = None) -> str:
    """The nbval mode in force: NBVAL_MODE (or `requested`) resolved; one sentence when it cannot hold."""
    mode = (requested or os.environ.get("NBVAL_MODE") or "auto").strip()
    if mode not in MODES:
        raise SystemExit(f"NBVAL_MODE={mode!r}: use one of {', '.join(MODES)}")
    if mode == "auto":
        return "replay" if front_ends_run_the_chapters() else "lone"
    if mode == "replay" and not front_ends_run_the_chapters():
        raise SystemExit(f"NBVAL_MODE=replay compares with the JupyterLab run, which needs Chromium at {CHROMIUM}; "
                         "install it (apt-get install -y chromium) or use NBVAL_MODE=lone")
    return mode


def describe(mode: str) -> str:
    return {"replay": "nbval mode: replay (stored outputs compared with the JupyterLab run, tests/test_frontends.py)",
            "lone": "nbval mode: lone (nbval executes a lone copy of each chapter in _build/nbval)"}[mode]


def main(argv: list[str]) -> None:
    args, mode, only = list(argv), None, None
    if "--all" in args:
        args.remove("--all")
        mode = "lone"
    if "--mode" in args:
        k = args.index("--mode")
        mode = args[k + 1]
        del args[k:k + 2]
    if "--chapter" in args:
        from tools.testing.chapter_select import chapter_of

        k = args.index("--chapter")
        only = chapter_of(args[k + 1]) if args[k + 1] else None
        del args[k:k + 2]
    mode = nbval_mode(mode)
    dest = (Path(args[0]) if args else ROOT / "_build" / "nbval").resolve()
    if mode == "replay":
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        print(f"{describe(mode)}: no chapter staged in {dest}", file=sys.stderr)
    else:
        for copy in stage(dest, only):
            print(copy.relative_to(ROOT) if copy.is_relative_to(ROOT) else copy)


if __name__ == "__main__":
    main(sys.argv[1:])
