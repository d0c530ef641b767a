"""Colab-ready copies of the chapter notebooks, colab/<stem>.ipynb (a step of `make derived`).

    python -m tools.site.colab                 # (re)write colab/<stem>.ipynb for every chapter of the registry
                                               # (that they are up to date is make derived's check)

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
from tools.derived import generated
from tools.registry import ROOT, chapters

DEST = ROOT / "colab"


def write(dest: Path = DEST) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for chapter in chapters():
        nb = nbformat.read(chapter.notebook, as_version=4)
        path = dest / f"{chapter.stem}.ipynb"
        copy = colab_notebook(nb, chapter.stem)
        copy.metadata["generated"] = generated(f"notebooks/{chapter.stem}.ipynb", "make derived (tools/site/colab.py)",
                                               f"notebooks/md/{chapter.stem}.md")
        text = nbformat.writes(copy) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    for stale in sorted(set(dest.glob("*.ipynb")) - set(written)):
        stale.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    for path in write():
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
