"""Colab-ready copies of the chapter notebooks, colab/<stem>.ipynb (a step of `make derived`).

    python -m tools.site.colab                 # (re)write colab/<stem>.ipynb for every chapter of the registry
    python -m tools.site.colab --check         # exit 1 if a committed copy differs from what would be written

Each copy is its chapter with the MyST of its markdown cells turned into the Markdown that Colab and
Jupyter render (tools/convert/myst.py: the parser, and what each directive and role becomes), and its
plumbing cells in Colab's form view. The site's Colab launch buttons open these copies
(book/_static/colab-links.js rewrites the button's address from notebooks/ to colab/).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from tools.convert.myst import colab_notebook, convert_block, page_url, site_url  # noqa: F401  (the public names)
from tools.registry import ROOT, chapters

DEST = ROOT / "colab"


def write(dest: Path = DEST) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for chapter in chapters():
        nb = nbformat.read(chapter.notebook, as_version=4)
        path = dest / f"{chapter.stem}.ipynb"
        text = nbformat.writes(colab_notebook(nb, chapter.stem)) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    for stale in sorted(set(dest.glob("*.ipynb")) - set(written)):
        stale.unlink()
    return written


def out_of_sync(dest: Path = DEST) -> list[str]:
    """The copies in `dest` that differ from what `write` would write (empty when in sync)."""
    problems = []
    expected = set()
    for chapter in chapters():
        path = dest / f"{chapter.stem}.ipynb"
        expected.add(path)
        text = nbformat.writes(colab_notebook(nbformat.read(chapter.notebook, as_version=4), chapter.stem)) + "\n"
        if not path.exists():
            problems.append(f"{path.relative_to(ROOT)} is missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{path.relative_to(ROOT)} differs from notebooks/{chapter.stem}.ipynb")
    problems += [f"{p.relative_to(ROOT)} belongs to no chapter" for p in sorted(set(dest.glob("*.ipynb")) - expected)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that colab/ is in sync")
    args = parser.parse_args(argv)
    if args.check:
        problems = out_of_sync()
        for p in problems:
            print(p)
        if problems:
            print("run `python -m tools.site.colab` (or `make colab`) to rewrite them")
        return 1 if problems else 0
    for path in write():
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
