"""An nbgrader course directory for the book: one assignment per chapter, from the solved notebooks.

    python -m tools.grading.course COURSE [LABEL ...]    # write COURSE/nbgrader_config.py and COURSE/source/
    cd COURSE && nbgrader generate_assignment LABEL       # the student version, and the gradebook

The assignment of a chapter is named by its exercise-label prefix in tools/chapters.toml
(`scoring` for chapter 4) and holds one notebook, `source/<label>/<stem>.ipynb`: the chapter's
solved notebook as nbgrader's source, i.e. with the website's solution-dropdown marker cells removed
(`DropGatedSolutionMarkup`) and its MyST markdown turned into Markdown that Colab and Jupyter
render (`tools.colab`); solutions, hidden tests and nbgrader metadata are untouched. `make student`
runs nbgrader's own `generate_assignment` on exactly this course (tools/student_version.py).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from tools import colab
from tools.registry import Chapter, chapters

CONFIG = Path(__file__).resolve().with_name("nbgrader_config.py")
BIN = Path(sys.executable).parent


def course_source(chapter: Chapter) -> nbformat.NotebookNode:
    """The chapter's solved notebook as nbgrader's source for the course."""
    from tools.student_version import DropGatedSolutionMarkup

    nb = nbformat.read(chapter.notebook, as_version=4)
    nb, _ = DropGatedSolutionMarkup().preprocess(nb, {})
    return colab.colab_notebook(nb, chapter.stem)


def chosen(labels: list[str] | None = None) -> list[Chapter]:
    every = chapters()
    if not labels:
        return every
    unknown = set(labels) - {c.label for c in every}
    if unknown:
        raise SystemExit(f"no chapter with the label(s) {sorted(unknown)}; known: {[c.label for c in every]}")
    return [c for c in every if c.label in labels]


def make_course(dest: Path, labels: list[str] | None = None) -> Path:
    """Write nbgrader_config.py and source/<label>/<stem>.ipynb for the chosen chapters into dest."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIG, dest / "nbgrader_config.py")
    for chapter in chosen(labels):
        folder = dest / "source" / chapter.label
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(course_source(chapter), folder / f"{chapter.stem}.ipynb")
    return dest


def nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run nbgrader's command line in the course directory. nbgrader starts alembic (its database
    migrations) as a program, so the environment's bin folder must be on PATH."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run([str(BIN / "nbgrader"), *args], cwd=course, env=env, text=True,
                            capture_output=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    course = make_course(Path(sys.argv[1]), sys.argv[2:] or None)
    print(f"{course}: nbgrader_config.py and source/ for " + ", ".join(c.label for c in chosen(sys.argv[2:] or None)))
