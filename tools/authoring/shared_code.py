"""The teaching helpers that several notebooks share, kept in one place.

A notebook must stand alone on Colab, so a helper that several chapters use (the errata rule
`compare_with_note`, the exercise checks, `SiteExplorer`, the plotting look) is copied into each
of them. The canonical source of each is `tools/shared/<name>.py`, whose first line is
`# shared helper: <name> (...)`; in a notebook, the cell that begins with the same line is a copy.

    python -m tools.authoring.shared_code sync [NOTEBOOK ...]   # write the canonical sources into the copies
    python -m tools.authoring.shared_code check                 # list copies that differ (tests run this)

A helper that one chapter teaches step by step (its `teaches` field in tools/chapters.toml: that chapter
writes the helper out between its prose, and later chapters copy it) is checked the other way too:
each top-level definition of the canonical source must appear word for word in that chapter's cells.

`sync` changes a cell's source only; re-execute the notebook afterwards (`make execute`).
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat

from tools.registry import ROOT, chapters

SHARED = ROOT / "tools" / "shared"
MARKER = re.compile(r"^# shared helper: (?P<name>[a-z_]+)\b")
# A definition that must only ever appear inside a marked copy.
SHARED_DEFINITIONS = {
    "compare_with_note": "def compare_with_note(",
    "check_helpers": "def check_array(",
    "site_explorer": "class SiteExplorer(",
    "book_style": "plt.rcParams.update(",
}
# The helpers every chapter must carry (the others only where the chapter uses them).
REQUIRED = ("book_style", "compare_with_note", "check_helpers")
# A helper that one chapter teaches step by step, in cells of its own between its prose, and later
# chapters reuse as one marked copy: every top-level definition of the canonical source must appear,
# word for word, in that chapter's code cells (so the lesson and the copy cannot drift apart).
TAUGHT_IN = {name: c.stem for c in chapters() for name in c.teaches}


def canonical() -> dict[str, str]:
    """name -> canonical source text (without the final newline)."""
    sources = {}
    for path in sorted(SHARED.glob("*.py")):
        text = path.read_text(encoding="utf-8").rstrip("\n")
        match = MARKER.match(text)
        if not match or match["name"] != path.stem:
            raise ValueError(f"{path} must begin with '# shared helper: {path.stem}'.")
        sources[path.stem] = text
    return sources


def _cells(nb: dict):
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            yield index, cell, "".join(cell["source"])


def problems(paths=None) -> list[str]:
    """One sentence per copy that differs from its canonical source, or per unmarked definition."""
    sources = canonical()
    found = []
    for path in paths or [c.notebook for c in chapters()]:
        nb = nbformat.read(path, as_version=4)
        for index, cell, text in _cells(nb):
            match = MARKER.match(text)
            if match:
                name = match["name"]
                if name not in sources:
                    found.append(f"{Path(path).name} cell {index}: no canonical source tools/shared/{name}.py")
                elif text.rstrip("\n") != sources[name]:
                    found.append(f"{Path(path).name} cell {index}: the copy of '{name}' differs from "
                                 f"tools/shared/{name}.py (run `python -m tools.authoring.shared_code sync`)")
                continue
            for name, needle in SHARED_DEFINITIONS.items():
                if needle in text:
                    found.append(f"{Path(path).name} cell {index} defines {needle.rstrip('(')} outside "
                                 f"a '# shared helper: {name}' cell")
        names = {MARKER.match(text)["name"] for _, _, text in _cells(nb) if MARKER.match(text)}
        for name in REQUIRED:
            if name not in names:
                found.append(f"{Path(path).name} has no '# shared helper: {name}' cell")
        for name, stem in TAUGHT_IN.items():
            if Path(path).stem == stem:
                found += untaught(name, sources[name], "\n".join(text for _, _, text in _cells(nb)), Path(path).name)
    return found


def untaught(name: str, source: str, code: str, where: str) -> list[str]:
    """One sentence per top-level definition of `source` that the chapter's code does not contain verbatim."""
    tree = ast.parse(source)
    return [f"{where}: the definition at line {node.lineno} of tools/shared/{name}.py "
            f"({ast.get_source_segment(source, node).splitlines()[0][:60]!r}) is not in the chapter's cells word for word"
            for node in tree.body if ast.get_source_segment(source, node) not in code]


def sync(paths=None) -> list[Path]:
    """Write the canonical sources into every marked cell; return the notebooks changed."""
    sources = canonical()
    changed = []
    for path in (Path(p).resolve() for p in paths or [c.notebook for c in chapters()]):
        nb = nbformat.read(path, as_version=4)
        dirty = False
        for _, cell, text in _cells(nb):
            match = MARKER.match(text)
            if match and match["name"] in sources and text.rstrip("\n") != sources[match["name"]]:
                cell["source"] = sources[match["name"]]
                dirty = True
        if dirty:
            nbformat.write(nb, path)
            changed.append(path)
    return changed


if __name__ == "__main__":
    command, *args = sys.argv[1:] or ["check"]
    if command == "sync":
        for path in sync(args or None):
            print(f"updated {path.relative_to(ROOT)}")
    elif command == "check":
        issues = problems(args or None)
        print("\n".join(issues) or "every shared helper matches its canonical source")
        sys.exit(1 if issues else 0)
    else:
        sys.exit(f"unknown command {command!r}: use 'sync' or 'check'")
