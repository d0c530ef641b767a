"""The exercises' structure in the solved notebooks, and the student version (`make student`).

(a) Structure: every chapter has at least four exercises labelled `<label>_ex<n>` (label from
    tools/chapters.toml) under `## Exercises`. Each nbgrader cell belongs to the exercise before it
    and is named after it: `<label>_exN_solution` (a code cell with `### BEGIN SOLUTION` /
    `### END SOLUTION`), `<label>_exN_check` (a locked check cell worth points, with at least one
    visible check), `<label>_exN_answer` or `_answer_b`... (a written answer worth points, holding a
    `{solution}` dropdown unless it sits in a code solution's dropdown); every exercise has a solution or answer cell, and every code solution a
    check. nbgrader's own MetadataValidator accepts the metadata.
(b) The student version is what `nbgrader generate_assignment` releases (tools/grading/student_version.py):
    stubs, no solution or hidden test left, no outputs, locked checks, and no raw MyST (it must read
    well in Colab).

Whether the checks fail on the stubs, pass with the solutions (hidden tests included) and whether
the student version runs apart from its exercises is tested by grading it: tests/test_grading.py
runs nbgrader's autograde (and otter's) on a solved, an unsolved and a wrong submission.
"""
from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from tools.grading.course import GRADING_SKIP_TAG

from tools.grading import course as sv  # the solution-dropdown markup and its preprocessor
from tools.grading import markers
from tools.registry import ROOT, by_stem, chapters
from instructors_guide import guide_blocks, run_block

NOTEBOOKS = [c.notebook for c in chapters()]

EXERCISE = re.compile(r"^\s*(?:`{3,}|:{3,})\s*\{exercise\}")
LABEL = re.compile(r"^\s*:label:\s*(\S+)\s*$", re.MULTILINE)
HEADING_EXERCISES = re.compile(r"^##\s+Exercises\s*$", re.MULTILINE)
# One check statement: an assert, a call of a check helper, or an explicit `raise AssertionError(...)`.
CHECK_CALL = re.compile(r"^\s*(?:assert\b|_?check\w*\(|raise AssertionError\b)", re.MULTILINE)
GRADE_ID = re.compile(r"^(?P<label>\w+_ex\d+)_(?P<kind>solution|check|answer)(?:_\w+)?$")
MYST_LEFT = re.compile(r"^\s*(?:`{3,}|:{3,})\s*\{[\w:-]+\}|\{[\w:-]+\}`", re.MULTILINE)


def source(cell) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def nbg(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def role(cell) -> str:
    """'solution', 'check' (an autograded test cell), 'answer' (prose solution) or 'other'."""
    meta = nbg(cell)
    if meta.get("solution"):
        return "solution" if cell.cell_type == "code" else "answer"
    if meta.get("grade") and cell.cell_type == "code":
        return "check"
    return "other"


def exercises_start(nb) -> int:
    """Index of the first exercise statement or nbgrader cell (else len(cells))."""
    for i, c in enumerate(nb.cells):
        if role(c) != "other" or (c.cell_type == "markdown" and (
                EXERCISE.search(source(c)) or re.search(r"^### Exercise `", source(c), re.MULTILINE))):
            return i
    return len(nb.cells)


def solved(nb_path: Path):
    return nbformat.read(nb_path, as_version=4)


def exercise_labels(nb) -> list[tuple[int, str]]:
    return [(i, m.group(1)) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and EXERCISE.search(source(c))
            for m in [LABEL.search(source(c))] if m]


def structure_problems(nb) -> list[str]:
    """Every way in which a solved notebook's exercises break the contract (module docstring, (a))."""
    problems = []
    heading = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and HEADING_EXERCISES.search(source(c))), None)
    labelled = exercise_labels(nb)
    if len(labelled) != sum(1 for c in nb.cells if c.cell_type == "markdown" and EXERCISE.search(source(c))):
        problems.append("an {exercise} without a :label:")
    current, cells_of = None, {label: [] for _, label in labelled}
    starts = dict(labelled)
    gated = False  # inside a {solution-start} ... {solution-end} dropdown
    for i, cell in enumerate(nb.cells):
        if sv.is_solution_start(cell) or sv.is_solution_end(cell):
            gated = sv.is_solution_start(cell)
        if i in starts:
            current = starts[i]
            if heading is None or i < heading:
                problems.append(f"{current}: the exercise stands before the '## Exercises' heading")
            continue
        if role(cell) == "other" and not nbg(cell).get("grade"):
            continue
        gid = nbg(cell).get("grade_id", "")
        m = GRADE_ID.match(gid)
        if current is None or not m or m.group("label") != current:
            problems.append(f"cell {i}: nbgrader cell {gid!r} does not belong to the exercise before it ({current}); "
                            f"name it {current}_solution, {current}_check or {current}_answer")
            continue
        kind, r = m.group("kind"), role(cell)
        if (kind, r) not in (("solution", "solution"), ("check", "check"), ("answer", "answer")):
            problems.append(f"{gid}: a {cell.cell_type} cell with the role {r!r} does not fit its name")
        if r == "solution":
            if "### BEGIN SOLUTION" not in source(cell) or "### END SOLUTION" not in source(cell):
                problems.append(f"{gid}: no '### BEGIN SOLUTION' / '### END SOLUTION' markers")
            if nbg(cell).get("grade"):
                problems.append(f"{gid}: a solution cell must not be graded itself (grade=false; the check is)")
        if r == "check":
            if not nbg(cell).get("locked"):
                problems.append(f"{gid}: the check cell is not locked")
            if not nbg(cell).get("points"):
                problems.append(f"{gid}: the check cell gives no points")
            if not CHECK_CALL.search(markers.regions(source(cell)).visible):
                problems.append(f"{gid}: the check cell has no visible check (check_…(), assert or raise AssertionError)")
        if r == "answer":
            if not nbg(cell).get("grade") or not nbg(cell).get("points"):
                problems.append(f"{gid}: a written answer must be graded (grade=true) and give points")
            if not gated and not sv.is_solution_dropdown(cell):  # (inside a code solution's dropdown it needs none)
                problems.append(f"{gid}: the answer cell should hold a {{solution}} {current} dropdown")
        cells_of[current].append((kind, i))
    for label, found in cells_of.items():
        kinds = [k for k, _ in found]
        if not ({"solution", "answer"} & set(kinds)):
            problems.append(f"{label}: no solution or answer cell")
        if "solution" in kinds and "check" not in kinds:
            problems.append(f"{label}: a code solution without a check cell")
        if "check" in kinds and "solution" in kinds and kinds.index("check") < kinds.index("solution"):
            problems.append(f"{label}: the check comes before the solution")
    try:
        sv.DropGatedSolutionMarkup().preprocess(copy.deepcopy(nb), {})
    except RuntimeError as exc:
        problems.append(f"solution dropdown markers: {exc}")
    from nbgrader.nbgraderformat import MetadataValidator, ValidationError
    try:
        MetadataValidator().validate_nb(copy.deepcopy(nb))
    except ValidationError as exc:
        problems.append(f"nbgrader rejects the metadata: {exc}")
    return problems


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_chapter_has_at_least_four_labelled_exercises(nb_path):
    prefix = by_stem(nb_path.stem).label
    labels = [label for _, label in exercise_labels(solved(nb_path))]
    assert len(labels) >= 4, (
        f"{nb_path.name} has {len(labels)} exercise(s) {labels}; at least four are required, labelled "
        f"{prefix}_ex1, {prefix}_ex2, … (CONTRIBUTING.md, 'Exercises')")
    expected = [f"{prefix}_ex{n}" for n in range(1, len(labels) + 1)]
    assert labels == expected, f"{nb_path.name}: the exercise labels are {labels}; expected {expected}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_follow_the_nbgrader_pattern(nb_path):
    nb = solved(nb_path)
    problems = structure_problems(nb)
    if not any(role(c) == "check" for c in nb.cells):
        problems.append("no code exercise: nothing for nbgrader to grade automatically")
    assert not problems, f"{nb_path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_visible_checks_hold_no_reference_solution(nb_path):
    """A function defined in the visible part of a check cell is in the student's notebook: calling
    it from the solution cell passes the check (and nbgrader's autograde) without solving anything."""
    problems = []
    for cell in solved(nb_path).cells:
        if role(cell) == "check":
            visible = markers.regions(source(cell)).visible
            # (helpers named check… judge an answer and return nothing, so they are no way around it)
            names = [name for name in re.findall(r"^\s*def\s+(\w+)\s*\(", visible, re.MULTILINE)
                     if not name.lstrip("_").startswith("check")]
            if names:
                problems.append(f"{nbg(cell).get('grade_id')} defines {', '.join(n + '()' for n in names)} in its visible part")
    assert not problems, (
        f"{nb_path.name}: a student could call these from the solution cell and pass:\n  " + "\n  ".join(problems)
        + "\nMove such a reference, and the comparisons that use it, between ### BEGIN HIDDEN TESTS and "
          "### END HIDDEN TESTS; keep visible checks of type, shape, NaN and sums.")


def test_exercise_labels_and_grade_ids_are_unique_across_the_book():
    seen: dict[str, str] = {}
    duplicates = []
    for nb_path in NOTEBOOKS:
        for cell in solved(nb_path).cells:
            ids = [nbg(cell).get("grade_id")] if nbg(cell) else []
            if cell.cell_type == "markdown" and EXERCISE.search(source(cell)):
                ids += [f"label:{m}" for m in LABEL.findall(source(cell))]
            for key in filter(None, ids):
                if key in seen:
                    duplicates.append(f"{key} in {seen[key]} and {nb_path.name}")
                seen[key] = nb_path.name
    assert not duplicates, "duplicates: " + "; ".join(duplicates)


# --------------------------------------------------------------------------------------------
# the student version, as released by nbgrader


@pytest.fixture(scope="session")
def student_dir() -> Path:
    """The student versions as the instructors' guide makes them: its `make student` block, run as
    written from the book's folder (it writes _build/student/)."""
    (block,) = guide_blocks("make student")
    out = ROOT / "_build" / "student"
    shutil.rmtree(out, ignore_errors=True)
    result = run_block(block, ROOT)
    assert result.returncode == 0, f"the guide's `make student` failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return out


def student(student_dir: Path, nb_path: Path):
    return nbformat.read(student_dir / nb_path.name, as_version=4)


def telling(line: str) -> bool:
    """A line long and specific enough that finding it elsewhere means it was copied."""
    code = line.split("#")[0].strip()
    return len(code.replace(" ", "")) >= 20


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_student_version_has_stubs_and_no_solutions(nb_path, student_dir):
    nb, stu = solved(nb_path), student(student_dir, nb_path)
    problems = []
    for i, cell in enumerate(stu.cells):
        text = source(cell)
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            if marker in text:
                problems.append(f"cell {i} still holds '{marker}'")
        if sv.is_solution_start(cell) or sv.is_solution_end(cell):
            problems.append(f"cell {i}: solution dropdown markup is left")
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            problems.append(f"cell {i} keeps its output")
        r = role(cell)
        if r == "solution" and "raise NotImplementedError()" not in text:
            problems.append(f"{nbg(cell)['grade_id']}: no `raise NotImplementedError()` stub")
        if r == "answer" and text.strip() != "YOUR ANSWER HERE":
            problems.append(f"{nbg(cell)['grade_id']}: the answer cell is not 'YOUR ANSWER HERE'")
        if r == "check" and cell.metadata.get("editable", True):
            problems.append(f"{nbg(cell)['grade_id']}: the check cell is not locked against editing")
    if stu.metadata.get("kernelspec", {}).get("name") != nb.metadata.get("kernelspec", {}).get("name"):
        problems.append("the kernelspec changed")
    # (the graders' skip tag, otter_ignore, is added to the demonstrations: test_grading checks which)
    # and the Colab form title of a folded plumbing cell (tools/convert/myst.py) is the copy's, not the code's)
    body = lambda book: [(re.sub(r"\A#@title [^\n]*\n", "", source(c)),  # noqa: E731
                          [t for t in c.metadata.get("tags", []) if t != GRADING_SKIP_TAG])
                         for c in book.cells[:exercises_start(book)] if c.cell_type == "code"]
    if body(stu) != body(nb):
        problems.append("the code cells before the Exercises differ from the chapter's")

    # Nothing of an answer or a hidden test survives in the Exercises section of the student
    # notebook: not in an exercise's text, a hint, a helper or a visible check (the chapter body
    # before it may of course show code that a solution reuses).
    answer_lines = set()
    for cell in nb.cells:
        if role(cell) == "solution":
            answer_lines.update(filter(telling, (ln.strip() for ln in markers.regions(source(cell), markers.SOLUTION).inside)))
        elif role(cell) == "answer":
            body = "\n".join(ln for ln in source(cell).split("\n") if not re.match(r"^\s*(`{3,}|:{3,}|:class:)", ln))
            answer_lines.update(s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", body) if len(s.strip()) >= 40)
        elif role(cell) == "check":
            visible = markers.regions(source(cell)).visible
            answer_lines.update(ln for ln in (ln.strip() for ln in markers.regions(source(cell)).inside)
                                if telling(ln) and ln not in visible)
    start = exercises_start(stu)
    for i, cell in enumerate(stu.cells[start:], start):
        for line in sorted(answer_lines):
            if line in source(cell):
                problems.append(f"cell {i} shows a line of an answer or a hidden test: {line[:70]!r}")
    assert not problems, f"student version of {nb_path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_student_version_reads_well_in_colab(nb_path, student_dir):
    """No MyST directive or role is left for Colab to show raw (the conversion is tools/convert/myst.py)."""
    left = [f"cell {i}: {m.group(0)!r}" for i, c in enumerate(student(student_dir, nb_path).cells)
            if c.cell_type == "markdown" for m in MYST_LEFT.finditer(source(c))]
    assert not left, f"student version of {nb_path.name} shows raw MyST:\n  " + "\n  ".join(left)
