"""Plumbing cells: code that serves the book rather than teaches, folded in every client.

    python -m tools.authoring.plumbing          # mark the plumbing cells of every chapter (idempotent)
    python -m tools.authoring.plumbing --check  # exit 1 if a mark is missing or misplaced

A plumbing cell is
- a shared helper copy that is no lesson: `compare_with_note` (the errata rule), `check_helpers`
  (the exercises' checks), `site_explorer` (the explorer's website contract); `book_style` stays in
  view, because it is where the chapter picks its device (CUDA when present), which a reader should see;
- a later chapter's copy of a helper that an earlier chapter teaches (its `teaches` field in
  tools/chapters.toml: chapter 5's attention, chapter 6's corpus, chapter 8's model and measures): the
  lesson is in the chapter that writes it out, and the copy is there for Colab's sake;
- an explorer's construction: a cell that defines a function returning `SiteExplorer(...)` (its
  sliders, the HTML it draws, its config for the website).

Its marks: `jupyter.source_hidden` (JupyterLab, Notebook 7 and VS Code show the cell folded, its
output in view), the tag `hide-input` (the website shows a toggle), and in the Colab copy
(tools/convert/myst.py) a `#@title` line and `cellView: "form"`. The cell still runs everywhere and is
tested like any other; tests/test_plumbing.py checks that every plumbing cell has the marks and
that no other cell is folded.
"""
from __future__ import annotations

import ast
import sys

import nbformat

from tools.registry import chapters

FOLDED_HELPERS = ("compare_with_note", "check_helpers", "site_explorer")
# helpers that one chapter teaches; every marked copy of them is in a later chapter
TAUGHT_HELPERS = tuple(sorted({name for chapter in chapters() for name in chapter.teaches}))


def is_plumbing(cell) -> bool:
    if cell.get("cell_type") != "code":
        return False
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    first = source.split("\n", 1)[0]
    if first.startswith("# shared helper: "):
        return first[len("# shared helper: "):].split(" ", 1)[0] in FOLDED_HELPERS + TAUGHT_HELPERS
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Call) \
                        and ast.unparse(inner.value.func) == "SiteExplorer":
                    return True
    return False


def is_folded(cell) -> bool:
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))


def problems(nb, stem: str) -> list[str]:
    found = []
    for index, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if is_plumbing(cell):
            if not is_folded(cell):
                found.append(f"{stem}: plumbing cell {index} is not folded (jupyter.source_hidden)")
            if "hide-input" not in tags:
                found.append(f"{stem}: plumbing cell {index} lacks the tag hide-input")
        elif is_folded(cell):
            found.append(f"{stem}: cell {index} is folded but teaches (only plumbing cells are folded)")
    return found


def mark(nb) -> int:
    changed = 0
    for cell in nb.cells:
        if is_plumbing(cell) and not (is_folded(cell) and "hide-input" in cell.metadata.get("tags", [])):
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
            tags = cell.metadata.setdefault("tags", [])
            if "hide-input" not in tags:
                tags.append("hide-input")
            changed += 1
    return changed


def main(argv: list[str]) -> int:
    failures = []
    for chapter in chapters():
        nb = nbformat.read(chapter.notebook, as_version=4)
        if "--check" in argv:
            failures += problems(nb, chapter.stem)
        elif mark(nb):
            nbformat.write(nb, chapter.notebook)
            print(f"marked the plumbing cells of {chapter.stem}")
    print("\n".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
