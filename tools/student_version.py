"""Write the student version of every chapter notebook: no solutions, no hidden tests, no outputs.

    python -m tools.student_version DEST [LABEL ...]     # `make student`: DEST = _build/student

The student version is what `nbgrader generate_assignment` releases, made by nbgrader itself with
the course configuration that instructors copy (tools/grading/nbgrader_config.py) in a scratch
course directory (tools/grading/course.py), so that `make student` and an instructor's nbgrader
course hand out the same notebook. nbgrader turns a code solution between ``### BEGIN SOLUTION``
and ``### END SOLUTION`` into ``raise NotImplementedError()``, a prose answer cell into
"YOUR ANSWER HERE", removes the ``### BEGIN HIDDEN TESTS`` regions of the check cells and the
outputs, and locks the check cells against editing.

Two steps of ours come first and make nbgrader's source (tools.grading.course.course_source):

- `DropGatedSolutionMarkup`: on the website a code solution sits in a collapsed dropdown made of the
  sphinx-exercise markers ``{solution-start}`` ... ``{solution-end}`` (two markdown cells around the
  solution cell). In a student notebook those markers would only show up as stray directive text,
  and anything inside the dropdown other than the nbgrader solution cell (an explanation written
  next to the code, say) would be part of the answer. It removes the marker cells and every cell
  between them that is not an nbgrader solution cell, and any ``{solution}`` dropdown that is not
  an nbgrader answer cell. The nbgrader solution cells stay, for nbgrader to replace by stubs.
- `tools.colab`: the website's MyST markdown becomes Markdown that Colab and Jupyter render.
"""
from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbgrader import utils as nbgrader_utils

_FENCE = r"^\s*(?:`{3,}|:{3,})\s*"
SOLUTION_START = re.compile(_FENCE + r"\{solution-start\}", re.MULTILINE)
SOLUTION_END = re.compile(_FENCE + r"\{solution-end\}", re.MULTILINE)
SOLUTION_DROPDOWN = re.compile(_FENCE + r"\{solution\}", re.MULTILINE)


def is_solution_start(cell) -> bool:
    return cell.cell_type == "markdown" and bool(SOLUTION_START.search(cell.source))


def is_solution_end(cell) -> bool:
    return cell.cell_type == "markdown" and bool(SOLUTION_END.search(cell.source))


def is_solution_dropdown(cell) -> bool:
    return cell.cell_type == "markdown" and bool(SOLUTION_DROPDOWN.search(cell.source))


class DropGatedSolutionMarkup(Preprocessor):
    """Remove the website's solution dropdowns, keeping only the nbgrader solution cells."""

    def preprocess(self, nb, resources):
        kept, inside = [], False
        for cell in nb.cells:
            if is_solution_start(cell):
                if inside:
                    raise RuntimeError("a {solution-start} cell follows another one without a {solution-end} between them")
                inside = True
                continue
            if is_solution_end(cell):
                if not inside:
                    raise RuntimeError("a {solution-end} cell has no {solution-start} before it")
                inside = False
                continue
            if nbgrader_utils.is_solution(cell):
                kept.append(cell)  # ClearSolutions turns it into a stub
            elif inside:
                continue  # part of the website's solution, not nbgrader's: an answer either way
            elif is_solution_dropdown(cell):
                continue  # a {solution} dropdown that is not an nbgrader answer cell
            else:
                kept.append(cell)
        if inside:
            raise RuntimeError("a {solution-start} cell has no {solution-end} after it")
        nb.cells = kept
        return nb, resources


def write_student_versions(dest: Path, labels: list[str] | None = None) -> list[Path]:
    """Write the student version of each chosen chapter (default: every chapter) into `dest`,
    made by `nbgrader generate_assignment` in a scratch course built by tools.grading.course."""
    from tools.grading.course import chosen, make_course, nbgrader

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="student-course-") as scratch:
        course = make_course(Path(scratch), labels)
        nbgrader(course, "generate_assignment", "*", "--force")  # every assignment in source/
        for chapter in chosen(labels):
            out = dest / f"{chapter.stem}.ipynb"
            shutil.copyfile(course / "release" / chapter.label / f"{chapter.stem}.ipynb", out)
            written.append(out)
    return written


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    for out in write_student_versions(Path(sys.argv[1]), sys.argv[2:] or None):
        print(out)
