"""The instructors' table of exercises and points, generated from the registry and nbgrader metadata.

`make derived` writes it into book/instructors.md, between `<!-- BEGIN GENERATED: exercises -->` and
`<!-- END GENERATED: exercises -->` (tools/authoring/blocks.py): one row per chapter (exercises, code and written, autograded and
hand-graded points), then one row per exercise. Points are the nbgrader metadata of the solved
notebooks: a check cell's points are autograded, an answer cell's are graded by hand.
"""
from __future__ import annotations

import re

import nbformat

from tools.registry import Chapter, chapters

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


def block(entries=None) -> str:
    """The table (without its marker lines)."""
    lines = ["",
             "| chapter | exercises (code + written) | autograded points | points graded by hand |",
             "|---|---|---|---|"]
    rows = []
    for chapter in entries if entries is not None else chapters():
        found = exercises(chapter)
        code = sum(1 for e in found if e["auto"])
        lines.append(f"| {{doc}}`{chapter.number}. {chapter.title[:1].upper() + chapter.title[1:]} "
                     f"<../notebooks/{chapter.stem}>` | {len(found)} ({code} + {len(found) - code}) | "
                     f"{_n(sum(e['auto'] for e in found))} | {_n(sum(e['manual'] for e in found))} |")
        for e in found:
            rows.append(f"| `{e['label']}` | {e['title']} | {_n(e['auto'])} | {_n(e['manual'])} |")
    lines += ["", "| exercise | title | autograded points | points graded by hand |", "|---|---|---|---|"]
    lines += rows
    lines += [""]
    return "\n".join(lines)
