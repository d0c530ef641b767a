"""An nbgrader course directory for the book: one assignment per chapter, from the solved notebooks.

    python -m tools.grading.course COURSE [LABEL ...]    # write COURSE/nbgrader_config.py and COURSE/source/
    cd COURSE && nbgrader generate_assignment LABEL       # the student version, and the gradebook

The assignment of a chapter is named by its exercise-label prefix in tools/chapters.toml
(`label`) and holds one notebook, `source/<label>/<stem>.ipynb`: the chapter's
solved notebook as nbgrader's source, i.e. with the website's solution-dropdown marker cells removed
(`DropGatedSolutionMarkup`) and its MyST markdown turned into Markdown that Colab and Jupyter
render (`tools.convert.myst`); solutions, hidden tests and nbgrader metadata are untouched. `make student`
runs nbgrader's own `generate_assignment` on exactly this course (tools/grading/student_version.py).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbgrader import utils as nbgrader_utils

from tools.registry import ROOT, Chapter, chapters
from tools.convert import myst
from tools.grading import grading_runtime as runtime
from tools.grading.markers import HIDDEN_TESTS, regions

CONFIG = Path(__file__).resolve().with_name("nbgrader_config.py")
RUNTIME = Path(runtime.__file__)
BIN = Path(sys.executable).parent

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



# The tag of the cells that grading skips: the expensive demonstrations before the first exercise
# (training runs, seed studies, timings), i.e. the cells tagged `skip-in-tests` there, on which no
# untagged cell depends (CONTRIBUTING.md). One tag, two graders (grading_runtime.SKIP_TAG).
GRADING_SKIP_TAG = runtime.SKIP_TAG


def first_exercise_index(nb) -> int:
    """Index of the first cell that belongs to an exercise (its statement or an nbgrader cell)."""
    for i, cell in enumerate(nb.cells):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or (
                cell.cell_type == "markdown" and re.search(r"^### Exercise `", cell.source, re.MULTILINE)):
            return i
    return len(nb.cells)


def tag_for_grading(nb) -> nbformat.NotebookNode:
    """Tag the `skip-in-tests` cells before the first exercise with GRADING_SKIP_TAG (in place)."""
    for cell in nb.cells[:first_exercise_index(nb)]:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if cell.cell_type == "code" and "skip-in-tests" in tags and GRADING_SKIP_TAG not in tags:
            tags.append(GRADING_SKIP_TAG)
    return nb


CHECK_HELPERS = ROOT / "tools" / "shared" / "check_helpers.py"


def harden_checks(nb) -> nbformat.NotebookNode:
    """Each graded check cell gets, in its hidden tests (in place): first the book's check helpers defined
    again, so that nothing a student's cell redefined records the answers; then the visible checks once
    more and the hidden tests, now with those helpers (every value they look at is recorded); last the
    line that sends the record out of the kernel (grading_runtime.emit_line), which the graders compare
    with the model solution's outside the kernel. A check cell that stops before its last line (an error,
    a cell emptied by an input transformer) sends nothing and scores 0."""
    helpers = CHECK_HELPERS.read_text(encoding="utf-8").rstrip("\n").split("\n")
    begin, end = HIDDEN_TESTS
    for cell in nb.cells:
        if not runtime.is_check_cell(cell):
            continue
        found = regions(cell.source)
        visible = "\n".join(found.outside if found.found else cell.source.split("\n")).rstrip("\n").split("\n")
        hidden = found.inside if found.found else []
        cell.source = "\n".join([*visible, f"### {begin}", *helpers, *visible, "_IN_HIDDEN[0] = True", *hidden,
                                 *runtime.emit_line(runtime.grade_id(cell)), f"### {end}"])
    return nb


def without_verification(nb) -> nbformat.NotebookNode:
    """The book's cells that check the model solution against independent computations
    (grading_runtime.VERIFY_TAG) are the book's: no grader's notebook has them (in place)."""
    nb.cells = [c for c in nb.cells if runtime.VERIFY_TAG not in c.get("metadata", {}).get("tags", [])]
    return nb


def course_source(chapter: Chapter) -> nbformat.NotebookNode:
    """The chapter's solved notebook as nbgrader's source for the course: the website's solution
    markup dropped, the expensive demonstrations tagged to be skipped when grading, the checks
    hardened (harden_checks), each written answer's model answer followed by its rubric (its
    chapter's entry in tools/chapters.toml), Colab-ready markdown."""
    nb = nbformat.read(chapter.notebook, as_version=4)
    nb.metadata.pop("generated", None)     # the book's note to its authors, not the course's
    nb, _ = DropGatedSolutionMarkup().preprocess(nb, {})
    without_verification(nb)
    tag_for_grading(nb)
    harden_checks(nb)
    add_rubrics(nb)
    return myst.colab_notebook(nb, chapter.stem)


def rubrics() -> dict:
    """The rubric of each written answer, by grade_id (the chapters' entries in tools/chapters.toml)."""
    return {gid: rubric for chapter in chapters() for gid, rubric in chapter.rubrics.items()}


def rubric_markdown(gid: str, rubric: dict) -> str:
    lines = [f"**Rubric for `{gid}`** ({rubric['points']:g} points):", ""]
    for criterion in rubric.get("criteria", []):
        lines.append(f"- **{criterion['points']:g}**: {criterion['earns']}")
    if rubric.get("partial"):
        lines += ["", f"*Partial credit:* {rubric['partial']}"]
    return "\n".join(lines)


def add_rubrics(nb) -> nbformat.NotebookNode:
    """Append its rubric to each written answer's model answer (what graders see in nbgrader's
    formgrader and in otter's solutions; the student version replaces the whole cell by a stub)."""
    known = rubrics()
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "markdown" and meta.get("solution") and meta.get("grade") and meta.get("grade_id") in known:
            cell.source = cell.source.rstrip() + "\n\n" + rubric_markdown(meta["grade_id"], known[meta["grade_id"]])
    return nb


def chosen(labels: list[str] | None = None) -> list[Chapter]:
    every = chapters()
    if not labels:
        return every
    unknown = set(labels) - {c.label for c in every}
    if unknown:
        raise SystemExit(f"no chapter with the label(s) {sorted(unknown)}; known: {[c.label for c in every]}")
    return [c for c in every if c.label in labels]


def make_course(dest: Path, labels: list[str] | None = None) -> Path:
    """Write nbgrader_config.py (with grading_runtime.py beside it), source/<label>/<stem>.ipynb and
    references/<label>.json (the model solution's answers, from a trusted run: tools/grading/references.py)
    for the chosen chapters into dest."""
    from tools.grading.references import references_text

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIG, dest / "nbgrader_config.py")
    shutil.copyfile(RUNTIME, dest / RUNTIME.name)
    (dest / "references").mkdir(exist_ok=True)
    def build(chapter):
        folder = dest / "source" / chapter.label
        folder.mkdir(parents=True, exist_ok=True)
        nb = course_source(chapter)
        nbformat.write(nb, folder / f"{chapter.stem}.ipynb")
        (dest / "references" / f"{chapter.label}.json").write_text(references_text(chapter, nb), encoding="utf-8")

    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=3) as pool:       # the trusted runs, three kernels at a time
        list(pool.map(build, chosen(labels)))
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
