"""The exercises, their nbgrader checks and the student version (`make student`).

(a) Structure: every chapter has at least four exercises labelled `<chapter>_ex<n>` under
    `## Exercises`; a code exercise is the five cells of CONTRIBUTING.md (exercise, {solution-start},
    nbgrader solution cell with BEGIN/END SOLUTION, {solution-end}, locked nbgrader check cell), a
    prose exercise is the exercise and an nbgrader answer cell; nbgrader accepts the metadata and
    the grade_ids are unique.
(b) The solved notebooks pass their checks: nbval executes them, hidden tests included. Here the
    visible checks of the student version are also run once the solution is filled back in.
(c) In each student notebook every autograded check fails on the stub, both in the notebook as
    handed out and with every earlier exercise solved (so that a check cannot fail only because
    an earlier exercise is unsolved).
(d) The student notebooks run top to bottom apart from the exercise cells: every other cell
    succeeds (cells tagged raises-exception may raise, as under nbval).

The student notebooks are executed with nbclient, one kernel (`python3`, the interpreter running
pytest) per notebook, each alone in an empty folder as on Colab, two notebooks at a time (each
kernel with half the cores for its math threads), the longest first; notebooks without nbgrader
cells are not run (nbval runs them, and the structure tests fail for them). Each is executed once
top to bottom (d), then its Exercises section again, one exercise at a time: stub, check,
solution, check (c, b). What was run, and how long it took, is written to `_build/student-test/`
(`summary.md`, and each executed notebook).

Every cell runs, as the issue asks: the student notebook as handed out, top to bottom. For a
quicker run while writing a chapter, STUDENT_TEST_SKIP_SLOW=1 leaves out the cells tagged
`skip-in-tests` before the `## Exercises` heading (training loops, timing sweeps), which nothing
untagged depends on by CONTRIBUTING.md and which nbval executes anyway; that is never the default.
"""
from __future__ import annotations

import asyncio
import copy
import os
import re
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest


from tools import student_version as sv

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WORK = ROOT / "_build" / "student-test"
WORKERS = 2           # notebooks executed at the same time (the course machines have 2 cores)
CELL_TIMEOUT = 900    # seconds, as for nbval
ALL_CELLS = os.environ.get("STUDENT_TEST_SKIP_SLOW", "") in ("", "0")

EXERCISE = re.compile(r"^\s*(?:`{3,}|:{3,})\s*\{exercise\}")
LABEL = re.compile(r"^\s*:label:\s*(\S+)\s*$", re.MULTILINE)
HEADING_EXERCISES = re.compile(r"^##\s+Exercises\s*$", re.MULTILINE)
HEADING_H2 = re.compile(r"^##\s+\S", re.MULTILINE)
# One check statement: an assert, a call of a check helper, or an explicit `raise AssertionError(...)`.
CHECK_CALL = re.compile(r"^\s*(?:assert\b|_?check\w*\(|raise AssertionError\b)", re.MULTILINE)


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
    """Index of the `## Exercises` heading (else of the first nbgrader cell, else len(cells))."""
    for i, c in enumerate(nb.cells):
        if (c.cell_type == "markdown" and HEADING_EXERCISES.search(source(c))) or role(c) != "other":
            return i
    return len(nb.cells)


def chapter_prefix(nb_path: Path) -> str:
    return sv.CHAPTER_LABELS[nb_path.stem[:2]]


# --------------------------------------------------------------------------------------------
# (a) the exercises' structure in the solved notebooks


@dataclass
class Exercise:
    label: str
    kind: str                      # "code", "code + written" or "prose"
    cell: int                      # index of the exercise cell
    solution: int | None = None    # code exercises
    check: int | None = None
    answer: int | None = None      # prose exercises
    points: float = 0.0
    visible_checks: int = 0
    hidden_checks: int = 0


def split_hidden(text: str) -> tuple[str, str]:
    visible, hidden, inside = [], [], False
    for line in text.split("\n"):
        if "BEGIN HIDDEN TESTS" in line:
            inside = True
        elif "END HIDDEN TESTS" in line:
            inside = False
        else:
            (hidden if inside else visible).append(line)
    return "\n".join(visible), "\n".join(hidden)


def parse_exercises(nb) -> tuple[list[Exercise], list[str]]:
    """The exercises of a solved notebook, and every way in which they break the contract."""
    cells, problems, found = nb.cells, [], []
    exercises_heading = next((i for i, c in enumerate(cells)
                              if c.cell_type == "markdown" and HEADING_EXERCISES.search(source(c))), None)
    used = set()
    for i, cell in enumerate(cells):
        if cell.cell_type != "markdown" or not EXERCISE.search(source(cell)):
            continue
        m = LABEL.search(source(cell))
        if not m:
            problems.append(f"cell {i}: an {{exercise}} without a :label:")
            continue
        label = m.group(1)
        if exercises_heading is None or i < exercises_heading:
            problems.append(f"{label}: the exercise stands before the '## Exercises' heading")
        nxt = lambda k: cells[i + k] if i + k < len(cells) else None  # noqa: E731
        if nxt(1) is not None and sv.is_solution_start(nxt(1)):
            ex = Exercise(label, "code", i, solution=i + 2)
            start, sol = nxt(1), nxt(2)
            if label not in source(start).split("\n")[0]:
                problems.append(f"{label}: its {{solution-start}} names another label: {source(start).splitlines()[0]!r}")
            if sol is None or sol.cell_type != "code" or role(sol) != "solution" or nbg(sol).get("grade"):
                problems.append(f"{label}: the cell after {{solution-start}} must be a code cell with nbgrader "
                                f"metadata solution=true, grade=false")
            else:
                if nbg(sol).get("grade_id") != f"{label}_solution":
                    problems.append(f"{label}: the solution cell's grade_id is {nbg(sol).get('grade_id')!r}; expected '{label}_solution'")
                text = source(sol)
                if "### BEGIN SOLUTION" not in text or "### END SOLUTION" not in text:
                    problems.append(f"{label}: the solution cell lacks the '### BEGIN SOLUTION' / '### END SOLUTION' markers")
            # A written part of the answer may follow the code inside the dropdown, as an nbgrader
            # answer cell (markdown, grade and solution): the student version keeps it as
            # "YOUR ANSWER HERE". Any other cell in the dropdown is dropped from the student version.
            k = i + 3
            while k < len(cells) and not sv.is_solution_end(cells[k]) and not sv.is_solution_start(cells[k]) \
                    and not (cells[k].cell_type == "markdown" and EXERCISE.search(source(cells[k]))):
                extra = cells[k]
                if role(extra) == "answer" and nbg(extra).get("grade"):
                    ex.kind, ex.answer = "code + written", k
                    if nbg(extra).get("grade_id") != f"{label}_answer":
                        problems.append(f"{label}: the written answer's grade_id is {nbg(extra).get('grade_id')!r}; expected '{label}_answer'")
                    ex.points += float(nbg(extra).get("points") or 0)
                elif extra.cell_type == "markdown" and not nbg(extra):
                    problems.append(
                        f"{label}: cell {k} in the solution dropdown is plain markdown; the student version drops it and "
                        f"leaves no place for that answer. If it answers part of the exercise, give it the nbgrader metadata "
                        f"of an answer cell (grade=true, solution=true, locked=false, points, grade_id '{label}_answer'); "
                        f"if it only explains the code, make it comments in the solution cell")
                else:
                    problems.append(f"{label}: cell {k} in the solution dropdown is neither the solution cell nor an nbgrader answer cell")
                k += 1
            end = cells[k] if k < len(cells) else None
            chk = cells[k + 1] if k + 1 < len(cells) else None
            ex.check = k + 1
            if end is None or not sv.is_solution_end(end):
                problems.append(f"{label}: the solution cell must be followed by a {{solution-end}} cell")
            if chk is None or chk.cell_type != "code" or role(chk) != "check":
                problems.append(f"{label}: the cell after {{solution-end}} must be a code check cell with nbgrader "
                                f"metadata grade=true, solution=false")
            else:
                meta = nbg(chk)
                if meta.get("grade_id") != f"{label}_check":
                    problems.append(f"{label}: the check cell's grade_id is {meta.get('grade_id')!r}; expected '{label}_check'")
                if not meta.get("locked"):
                    problems.append(f"{label}: the check cell is not locked (nbgrader metadata locked=true)")
                if not meta.get("points"):
                    problems.append(f"{label}: the check cell gives no points")
                ex.points += float(meta.get("points") or 0)
                visible, hidden = split_hidden(source(chk))
                ex.visible_checks = len(CHECK_CALL.findall(visible))
                ex.hidden_checks = len(CHECK_CALL.findall(hidden))
                if ex.visible_checks == 0:
                    problems.append(f"{label}: the check cell has no visible check (check_…(), assert or raise AssertionError)")
            used.update(range(i, k + 2))
        elif nxt(1) is not None and role(nxt(1)) == "answer" and nbg(nxt(1)).get("grade"):
            ex = Exercise(label, "prose", i, answer=i + 1)
            meta = nbg(nxt(1))
            if not sv.is_solution_dropdown(nxt(1)):
                problems.append(f"{label}: the answer cell should hold a {{solution}} {label} dropdown")
            if meta.get("grade_id") != f"{label}_answer":
                problems.append(f"{label}: the answer cell's grade_id is {meta.get('grade_id')!r}; expected '{label}_answer'")
            if not meta.get("points"):
                problems.append(f"{label}: the answer cell gives no points")
            ex.points = float(meta.get("points") or 0)
            used.update(range(i, i + 2))
        else:
            problems.append(f"{label}: the exercise cell must be followed by a {{solution-start}} cell (code "
                            f"exercise) or by an nbgrader answer cell with a {{solution}} dropdown (prose exercise)")
            continue
        found.append(ex)
    for i, cell in enumerate(cells):
        if i in used:
            continue
        if nbg(cell) and (nbg(cell).get("grade") or nbg(cell).get("solution")):
            problems.append(f"cell {i}: nbgrader cell {nbg(cell).get('grade_id')!r} belongs to no exercise")
        elif sv.is_solution_start(cell) or sv.is_solution_end(cell) or sv.is_solution_dropdown(cell):
            problems.append(f"cell {i}: solution markup outside the exercise pattern: {source(cell).splitlines()[0]!r}")
    return found, problems


def solved(nb_path: Path):
    return nbformat.read(nb_path, as_version=4)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_chapter_has_at_least_four_labelled_exercises(nb_path):
    exercises, _ = parse_exercises(solved(nb_path))
    prefix = chapter_prefix(nb_path)
    labels = [ex.label for ex in exercises]
    assert len(labels) >= 4, (
        f"{nb_path.name} has {len(labels)} exercise(s) {labels}; at least four are required, labelled "
        f"{prefix}_ex1, {prefix}_ex2, … (CONTRIBUTING.md, 'Exercises (graded with nbgrader)')")
    expected = [f"{prefix}_ex{n}" for n in range(1, len(labels) + 1)]
    assert labels == expected, f"{nb_path.name}: the exercise labels are {labels}; expected {expected}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_follow_the_nbgrader_pattern(nb_path):
    nb = solved(nb_path)
    exercises, problems = parse_exercises(nb)
    if not exercises:
        pytest.fail(f"{nb_path.name} has no exercises yet", pytrace=False)
    if not any(ex.kind.startswith("code") for ex in exercises):
        problems.append("no code exercise: nothing for nbgrader to grade automatically")
    first_check = min((ex.check for ex in exercises if ex.check is not None), default=None)
    if first_check is not None and not any(
            "def check_array(" in source(c) for c in nb.cells[:first_check] if c.cell_type == "code" and not nbg(c)):
        problems.append("check_array is not defined before the first check cell")
    from nbgrader.nbgraderformat import MetadataValidator, ValidationError
    try:
        MetadataValidator().validate_nb(copy.deepcopy(nb))
    except ValidationError as exc:
        problems.append(f"nbgrader rejects the metadata: {exc}")
    assert not problems, f"{nb_path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_visible_checks_hold_no_reference_solution(nb_path):
    """A function defined in the visible part of a check cell is in the student's notebook: calling
    it from the solution cell passes the check (and nbgrader's autograde) without solving anything."""
    problems = []
    for cell in solved(nb_path).cells:
        if role(cell) == "check":
            visible, _ = split_hidden(source(cell))
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
# the student version, as written by nbgrader's preprocessors


@pytest.fixture(scope="session")
def student_dir() -> Path:
    out = WORK / "notebooks"
    if out.exists():
        shutil.rmtree(out)
    sv.write_student_versions(out, NOTEBOOKS)
    return out


def student(student_dir: Path, nb_path: Path):
    return nbformat.read(student_dir / nb_path.name, as_version=4)


def solution_lines(text: str, begin: str, end: str) -> list[str]:
    lines, inside = [], False
    for line in text.split("\n"):
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            lines.append(line.strip())
    return lines


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
    body = lambda book: [(source(c), c.metadata.get("tags", [])) for c in book.cells[:exercises_start(book)]  # noqa: E731
                         if c.cell_type == "code"]
    if body(stu) != body(nb):
        problems.append("the code cells before the Exercises differ from the chapter's")

    # Nothing of an answer or a hidden test survives in the Exercises section of the student
    # notebook: not in an exercise's text, a hint, a helper or a visible check (the chapter body
    # before it may of course show code that a solution reuses).
    answer_lines = set()
    for cell in nb.cells:
        if role(cell) == "solution":
            answer_lines.update(filter(telling, solution_lines(source(cell), "BEGIN SOLUTION", "END SOLUTION")))
        elif role(cell) == "answer":
            body = "\n".join(ln for ln in source(cell).split("\n") if not re.match(r"^\s*(`{3,}|:{3,}|:class:)", ln))
            answer_lines.update(s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", body) if len(s.strip()) >= 40)
        elif role(cell) == "check":
            visible, _ = split_hidden(source(cell))
            answer_lines.update(ln for ln in solution_lines(source(cell), "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
                                if telling(ln) and ln not in visible)
    start = exercises_start(stu)
    for i, cell in enumerate(stu.cells[start:], start):
        for line in sorted(answer_lines):
            if line in source(cell):
                problems.append(f"cell {i} shows a line of an answer or a hidden test: {line[:70]!r}")
    assert not problems, f"student version of {nb_path.name}:\n  " + "\n  ".join(problems)


# --------------------------------------------------------------------------------------------
# executing the student notebooks: (c), (d) and (b)


@dataclass
class Step:
    phase: str          # "as handed out" | "stub" | "solved" | "solution"
    index: int          # cell index in the student notebook
    role: str
    grade_id: str | None
    error: str | None   # "Name: value" of the exception, None if the cell succeeded
    tags: list = field(default_factory=list)

    def where(self) -> str:
        return self.grade_id or f"cell {self.index}"


@dataclass
class Run:
    name: str
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0
    fatal: str | None = None
    skipped: int = 0    # cells tagged skip-in-tests before the Exercises, not run (nbval runs them)


def cells_not_rerun(nb) -> set[int]:
    """The cells tagged skip-in-tests before the Exercises, when no Exercises code cell is tagged so."""
    start = exercises_start(nb)
    tagged = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "skip-in-tests" in c.metadata.get("tags", [])]
    if ALL_CELLS or any(i >= start for i in tagged):
        return set()
    return set(tagged)


def estimated_seconds(nb) -> float:
    """The time its last `make execute` took for the cells that this test runs (cell metadata)."""
    from datetime import datetime
    total, skip = 0.0, cells_not_rerun(nb)
    for i, cell in enumerate(nb.cells):
        if i in skip:
            continue
        ex = cell.get("metadata", {}).get("execution", {})
        a, b = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
        if a and b:
            try:
                total += (datetime.fromisoformat(b.replace("Z", "+00:00"))
                          - datetime.fromisoformat(a.replace("Z", "+00:00"))).total_seconds()
            except ValueError:
                pass
    return total or 0.5 * sum(c.cell_type == "code" for c in nb.cells)  # not executed with timings


def error_of(cell) -> str | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename')}: {out.get('evalue')}"[:300]
    return None


async def execute_student_notebook(nb_path: Path, stu, sol) -> Run:
    from nbclient import NotebookClient

    run = Run(nb_path.stem)
    folder = WORK / "run" / nb_path.stem  # empty folder, as on Colab
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    solutions = {nbg(c)["grade_id"]: c for c in sol.cells if role(c) == "solution"}
    client = NotebookClient(stu, kernel_name="python3", timeout=CELL_TIMEOUT, allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    env = dict(os.environ)
    # Two kernels share the machine: one math thread each (on 2 cores) instead of two threads each.
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or WORKERS) // WORKERS)))
    began = time.monotonic()
    handed_out = None

    async def execute(cell, index, phase):
        await client.async_execute_cell(cell, index)
        step = Step(phase, index, role(cell), nbg(cell).get("grade_id"), error_of(cell),
                    cell.get("metadata", {}).get("tags", []))
        run.steps.append(step)
        return step

    skip = cells_not_rerun(stu)
    try:
        async with client.async_setup_kernel(env=env):
            # (d) the notebook as handed out, top to bottom (less what nbval has run already)
            for i, cell in enumerate(stu.cells):
                if i in skip:
                    run.skipped += 1
                elif cell.cell_type == "code":
                    await execute(cell, i, "as handed out")
            handed_out = copy.deepcopy(stu)  # (nbclient stores each executed cell back into stu)
            # (c) and (b): the Exercises section again, one exercise at a time
            first = next((i for i, c in enumerate(stu.cells) if role(c) in ("solution", "check")), None)
            pending = []
            for i in range(first if first is not None else len(stu.cells), len(stu.cells)):
                cell = copy.deepcopy(stu.cells[i])
                if cell.cell_type != "code":
                    continue
                r = role(cell)
                if r == "solution":
                    await execute(cell, i, "stub")
                    pending.append(nbg(cell)["grade_id"])
                elif r == "check":
                    await execute(cell, i, "stub")
                    for gid in pending:
                        await execute(copy.deepcopy(solutions[gid]), i, "solution")
                    pending = []
                    await execute(copy.deepcopy(stu.cells[i]), i, "solved")
                else:
                    await execute(cell, i, "stub")
    except Exception as exc:  # a dead kernel, a timeout: report it, let the other notebooks finish
        run.fatal = f"{type(exc).__name__}: {exc}"[:500]
    run.seconds = time.monotonic() - began
    if handed_out is not None:
        nbformat.write(handed_out, folder / nb_path.name)  # the run "as handed out", with its outputs
    return run


def execute_all(jobs, workers=WORKERS) -> dict[str, Run]:
    """Run the jobs `workers` at a time, in an event loop on its own thread."""
    results: dict[str, Run] = {}

    async def main():
        gate = asyncio.Semaphore(workers)

        async def one(job):
            async with gate:
                run = await execute_student_notebook(*job)
                results[run.name] = run

        await asyncio.gather(*(one(job) for job in jobs))

    failure = []
    thread = threading.Thread(target=lambda: _run_catching(main, failure), name="student-notebooks")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return results


def _run_catching(main, failure):
    try:
        asyncio.run(main())
    except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
        failure.append(exc)


def write_summary(runs: dict[str, Run], wall: float, load: float) -> None:
    lines = [f"# Student-version run: {len(runs)} notebooks, {WORKERS} at a time, {wall:.0f} s wall clock",
             f"(1-minute load average at the start: {load:.2f}; all cells: {ALL_CELLS})", "",
             "| notebook | exercises | checks failing on the stub (as handed out / alone) | checks passing when solved | other cells failing | skip-in-tests cells not run | seconds |",
             "|---|---|---|---|---|---|---|"]
    for nb_path in NOTEBOOKS:
        run = runs.get(nb_path.stem)
        if run is None:
            continue
        exercises, _ = parse_exercises(solved(nb_path))
        handed = [s for s in run.steps if s.phase == "as handed out" and s.role == "check"]
        alone = [s for s in run.steps if s.phase == "stub" and s.role == "check"]
        done = [s for s in run.steps if s.phase == "solved"]
        others = [s for s in run.steps if s.phase == "as handed out" and s.role == "other"
                  and s.error and "raises-exception" not in s.tags]
        lines.append(f"| {nb_path.stem} | {len(exercises)} | {sum(bool(s.error) for s in handed)}/{len(handed)} / "
                     f"{sum(bool(s.error) for s in alone)}/{len(alone)} | {sum(not s.error for s in done)}/{len(done)} | "
                     f"{len(others)} | {run.skipped} | {run.seconds:.0f}{' (' + run.fatal + ')' if run.fatal else ''} |")
    lines += ["", "| exercise | kind | points | visible checks | hidden checks |", "|---|---|---|---|---|"]
    for nb_path in NOTEBOOKS:
        for ex in parse_exercises(solved(nb_path))[0]:
            lines.append(f"| {ex.label} | {ex.kind} | {ex.points:g} | {ex.visible_checks} | {ex.hidden_checks} |")
    (WORK / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="session")
def student_runs(student_dir) -> dict[str, Run]:
    """Execute every student notebook that has exercises (the others equal their chapter, which
    nbval runs), longest first."""
    jobs = []
    for nb_path in NOTEBOOKS:
        stu, sol = student(student_dir, nb_path), solved(nb_path)
        if any(role(c) in ("solution", "check") for c in stu.cells):
            jobs.append((estimated_seconds(sol), nb_path, stu, sol))
    jobs.sort(key=lambda job: -job[0])
    began, load = time.monotonic(), os.getloadavg()[0]
    runs = execute_all([job[1:] for job in jobs])
    write_summary(runs, time.monotonic() - began, load)
    return runs


def run_of(runs: dict[str, Run], nb_path: Path) -> Run:
    run = runs.get(nb_path.stem)
    if run is None:
        pytest.skip(f"{nb_path.name} has no nbgrader cells yet (the structure tests fail for it)")
    if run.fatal:
        pytest.fail(f"the student version of {nb_path.name} could not be run: {run.fatal}", pytrace=False)
    return run


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_student_notebook_runs_apart_from_the_exercise_cells(nb_path, student_runs):
    run = run_of(student_runs, nb_path)
    failing = [f"cell {s.index}: {s.error}" for s in run.steps
               if s.phase in ("as handed out", "stub") and s.role == "other" and s.error
               and "raises-exception" not in s.tags]
    assert not failing, (f"in the student version of {nb_path.name}, cells outside the exercises fail "
                         f"(does a later cell use a solution?):\n  " + "\n  ".join(dict.fromkeys(failing)))


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_check_fails_on_the_stub(nb_path, student_runs):
    run = run_of(student_runs, nb_path)
    passing = [f"{s.where()} passes in the student notebook as handed out" for s in run.steps
               if s.phase == "as handed out" and s.role == "check" and not s.error]
    passing += [f"{s.where()} passes on its own stub, with the earlier exercises solved" for s in run.steps
                if s.phase == "stub" and s.role == "check" and not s.error]
    assert not passing, f"{nb_path.name}: a check that passes on an unsolved exercise:\n  " + "\n  ".join(passing)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_checks_pass_once_the_solution_is_filled_in(nb_path, student_runs):
    run = run_of(student_runs, nb_path)
    failing = [f"{s.where()} ({s.phase}): {s.error}" for s in run.steps
               if s.phase in ("solution", "solved") and s.error]
    assert not failing, (f"{nb_path.name}: with the solution put back into the student version, "
                         f"these cells fail:\n  " + "\n  ".join(failing))
