"""The instructors' table of exercises and points, generated from the registry and nbgrader metadata.

    python -m tools.grading.table            # rewrite the generated block in book/instructors.md
    python -m tools.grading.table --check    # exit 1 if the block is out of date (make derived rewrites it; tests/test_derived.py)

The block lies between `<!-- BEGIN GENERATED: exercises -->` and `<!-- END GENERATED: exercises -->`
in book/instructors.md: one row per chapter (exercises, code and written, autograded and
hand-graded points), then one row per exercise. Points are the nbgrader metadata of the solved
notebooks: a check cell's points are autograded, an answer cell's are graded by hand.
"""
from __future__ import annotations

import re
import sys

import nbformat

from tools.registry import ROOT, Chapter, chapters

PAGE = ROOT / "book" / "instructors.md"
BEGIN, END = "<!-- BEGIN GENERATED: exercises -->", "<!-- END GENERATED: exercises -->"
EXERCISE = re.compile(r"^\s*(?:`{3,}|:{3,})\s*\{exercise\}\s*(?P<title>.*?)\s*$", re.MULTILINE)
LABEL = re.compile(r"^\s*:label:\s*(\S+)\s*$", re.MULTILINE)


def exercises(chapter: Chapter) -> list[dict]:
    """Each exercise of the chapter: label, title, autograded and hand-graded points."""
    nb = nbformat.read(chapter.notebook, as_version=4)
    found: list[dict] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and EXERCISE.search(cell.source) and LABEL.search(cell.source):
            found.append({"label": LABEL.search(cell.source).group(1), "title": EXERCISE.search(cell.source).group("title"),
                          "auto": 0.0, "manual": 0.0})
            continue
        meta = cell.metadata.get("nbgrader") or {}
        if not meta.get("grade") or not found:
            continue
        points = float(meta.get("points") or 0)
        if cell.cell_type == "code":
            found[-1]["auto"] += points
        else:
            found[-1]["manual"] += points
    return found


def _n(x: float) -> str:
    return f"{x:g}"


def block() -> str:
    lines = [BEGIN, "",
             "| chapter | exercises (code + written) | autograded points | points graded by hand |",
             "|---|---|---|---|"]
    rows = []
    for chapter in chapters():
        found = exercises(chapter)
        code = sum(1 for e in found if e["auto"])
        lines.append(f"| {{doc}}`{chapter.number}. {chapter.title[:1].upper() + chapter.title[1:]} "
                     f"<../notebooks/{chapter.stem}>` | {len(found)} ({code} + {len(found) - code}) | "
                     f"{_n(sum(e['auto'] for e in found))} | {_n(sum(e['manual'] for e in found))} |")
        for e in found:
            rows.append(f"| `{e['label']}` | {e['title']} | {_n(e['auto'])} | {_n(e['manual'])} |")
    lines += ["", "| exercise | title | autograded points | points graded by hand |", "|---|---|---|---|"]
    lines += rows
    lines += ["", END]
    return "\n".join(lines)


def current() -> str:
    text = PAGE.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{PAGE.name} has no {BEGIN} ... {END} block")
    return text[text.index(BEGIN):text.index(END) + len(END)]


def write() -> None:
    text = PAGE.read_text(encoding="utf-8")
    new = text.replace(current(), block())
    if new != text:
        PAGE.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        ok = current() == block()
        print("book/instructors.md: the exercise table is " + ("up to date" if ok else
              "out of date; run `python -m tools.grading.table`"))
        sys.exit(0 if ok else 1)
    write()
