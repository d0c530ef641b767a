"""Write the student version of every chapter notebook: no solutions, no hidden tests, no outputs.

    python -m tools.grading.student_version DEST [LABEL ...]     # `make student`: DEST = _build/student

The student version is what `nbgrader generate_assignment` releases, made by nbgrader itself with
the course configuration that instructors copy (tools/grading/nbgrader_config.py) in a scratch
course directory (tools/grading/course.py), so that `make student` and an instructor's nbgrader
course hand out the same notebook. nbgrader turns a code solution between ``### BEGIN SOLUTION``
and ``### END SOLUTION`` into ``raise NotImplementedError()``, a prose answer cell into
"YOUR ANSWER HERE", removes the ``### BEGIN HIDDEN TESTS`` regions of the check cells and the
outputs, and locks the check cells against editing.

Two steps of ours come first and make nbgrader's source (tools.grading.course.course_source):

- `DropGatedSolutionMarkup` (tools.grading.course): on the website a code solution sits in a collapsed dropdown made of the
  sphinx-exercise markers ``{solution-start}`` ... ``{solution-end}`` (two markdown cells around the
  solution cell). In a student notebook those markers would only show up as stray directive text,
  and anything inside the dropdown other than the nbgrader solution cell (an explanation written
  next to the code, say) would be part of the answer. It removes the marker cells and every cell
  between them that is not an nbgrader solution cell, and any ``{solution}`` dropdown that is not
  an nbgrader answer cell. The nbgrader solution cells stay, for nbgrader to replace by stubs.
- `tools.convert.myst`: the website's MyST markdown becomes Markdown that Colab and Jupyter render.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from tools.grading.course import chosen, make_course, nbgrader


def write_student_versions(dest: Path, labels: list[str] | None = None) -> list[Path]:
    """Write the student version of each chosen chapter (default: every chapter) into `dest`,
    made by `nbgrader generate_assignment` in a scratch course built by tools.grading.course."""
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
