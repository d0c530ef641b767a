"""Grading every chapter with nbgrader and otter-grader, with the submissions a real class hands in.

Every chapter, under both graders: the release with the model solutions typed in (full marks), the
release untouched (zero) and the solved release with one deliberate mistake (full marks less that
exercise's points). The graders skip the expensive demonstrations themselves (tag `otter_ignore`,
tools/grading/course.py), so the submissions are the notebooks students hand in, unchanged. nbgrader
runs through its own Python API in the test's process (nbgrader_api), except for the first chapter
(PARALLEL_GUIDE), graded with the guide's commands for a course and its parallel grading command; otter through
tools.grading.otter_run, the guide's command.

A whole class of messy submissions is graded under each grader, on the chapter whose registry entry
names that grader in `messy_class` (otter on chapter 2, which trains a classifier; nbgrader on chapter 3),
by running the instructors' guide's own commands as written (book/instructors.md, the blocks after a
`% tested:` line): saved by Colab with its metadata and with the metadata stripped and the cell ids
changed, a check edited, deleted, renamed or re-pointed, an infinite loop, an exception in an early
cell. No submission may crash or hang a grader or score a silent 0; tampering is reported in one line
per student and graded against the original checks; written answers survive; feedback names the failed
check in one sentence and shows no hidden test.

One autograder zip is also graded in an environment built only from what the zip says (its
environment.yml's pip list), with the zip's own run_otter.py, as Gradescope runs it.

Expected points come from the solved notebooks' nbgrader metadata, never from a grader.
Scores and times go to _build/grading/<tool>-<label>.json (and the instructors' table).
"""
from __future__ import annotations

import ast
import copy
import csv
import html as html_lib
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader import utils as nbgrader_utils

from tools.grading import check_submissions
from tools.grading.course import BIN, GRADING_SKIP_TAG, course_source, make_course
from tools.authoring import exercise_table as table
from tools.grading import grading_runtime, sandbox, markers
from tools.grading.sandbox import SNOOP, reached, snooped
from tools.grading.otter import assign, master_notebook
from tools.registry import GRADERS, ROOT, chapters
from instructors_guide import GUIDE, all_blocks, guide_blocks, run_block

CHAPTERS = chapters()
RESULTS = ROOT / "_build" / "grading"


def grade_id(cell) -> str | None:
    return check_submissions.grade_id(cell)


def check_points(nb) -> dict[str, float]:
    """Autograded points of each exercise label (its check cells), from the nbgrader metadata."""
    points: dict[str, float] = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and nbgrader_utils.is_grade(cell):
            label = re.sub(r"_(check|test)\w*$", "", grade_id(cell))
            points[label] = points.get(label, 0.0) + float(cell.metadata.nbgrader.get("points") or 0)
    return points


def solved_submission(release, source):
    """The release with the model solutions typed in, as a student who solved everything hands it in."""
    answers = {grade_id(c): c.source for c in source.cells if nbgrader_utils.is_solution(c)}
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if is_solution(cell) or nbgrader_utils.is_solution(cell):
            cell.source = answers[solution_id(cell)]
    return nb


MUTABLE = [
    (re.compile(r"^(\s*)return (.+?)\s*(#.*)?$"), r"\1return 2 * (\2)"),                 # return x -> 2 * x
    (re.compile(r"^(\s*)([A-Za-z_]\w*) = (?!None\b)(.+?)\s*(#.*)?$"), r"\1\2 = 2 * (\3)"),  # name = x -> 2 * x
]


def is_solution(cell) -> bool:
    """An nbgrader solution cell, or the cell otter made from one (tools.grading.otter marks it)."""
    return cell.cell_type == "code" and (nbgrader_utils.is_solution(cell) or "book_solution" in cell.metadata)


def solution_id(cell) -> str:
    return cell.metadata.get("book_solution") or grade_id(cell)


def wrong_submission(solved):
    """The solved submission with one deliberate mistake: in the first code exercise that allows it,
    the last value its solution returns (or assigns) is doubled. Returns (notebook, exercise label)."""
    nb = copy.deepcopy(solved)
    for cell in nb.cells:
        if not is_solution(cell):
            continue
        lines = cell.source.split("\n")
        try:
            begin = next(i for i, ln in enumerate(lines) if "BEGIN SOLUTION" in ln)
            end = next(i for i, ln in enumerate(lines) if "END SOLUTION" in ln)
        except StopIteration:
            continue
        for pattern, replacement in MUTABLE:
            for k in range(end - 1, begin, -1):
                if pattern.match(lines[k]) and not lines[k].rstrip().endswith((",", "(", "[", "\\")):
                    lines[k] = pattern.sub(replacement, lines[k])
                    cell.source = "\n".join(lines)
                    return nb, re.sub(r"_solution\w*$", "", solution_id(cell))
    raise AssertionError("no code exercise whose solution returns or assigns a value to double")


def save(name: str, data: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def exercise_of(gid: str) -> str:
    return re.sub(r"_(check|test|solution|answer)\w*$", "", gid)


def last_solution_label(nb) -> str:
    """The label of the last code exercise: a mistake there cannot break a later exercise."""
    return exercise_of(solution_id([c for c in nb.cells if is_solution(c)][-1]))


def with_loop(solved, label: str):
    """The student's answer to exercise `label` never ends."""
    nb = copy.deepcopy(solved)
    cell = next(c for c in nb.cells if is_solution(c) and exercise_of(solution_id(c)) == label)
    # (it waits rather than spins, so that the test's 20 s leave the CPU to the other tests)
    cell.source = "import time\nwhile True:  # a student's loop that never ends\n    time.sleep(0.05)\n" + cell.source
    return nb


def with_dead_kernel(solved, label: str):
    """The student's code kills the kernel just before the answer to exercise `label`."""
    nb = copy.deepcopy(solved)
    k = next(i for i, c in enumerate(nb.cells) if is_solution(c) and exercise_of(solution_id(c)) == label)
    nb.cells.insert(k, nbformat.v4.new_code_cell("import os\nos._exit(0)  # the student's code ends the kernel"))
    return nb


def with_answer_below_its_check(solved, label: str, is_its_check):
    """The student's answer to exercise `label` moved to just below its check cell."""
    nb = copy.deepcopy(solved)
    k = next(i for i, c in enumerate(nb.cells) if is_solution(c) and exercise_of(solution_id(c)) == label)
    answer = nb.cells.pop(k)
    j = max(i for i, c in enumerate(nb.cells) if is_its_check(c))
    nb.cells.insert(j + 1, answer)
    return nb


def with_early_exception(solved):
    """A stray line that raises at the end of the first code cell (its definitions are made)."""
    nb = copy.deepcopy(solved)
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.source += "\nraise ValueError('a stray line of the student')"
    return nb


# Three students who solve nothing and cheat, each in a cell of their own before the first exercise (the
# routes that gave full marks before the checks were hardened: tools/shared/check_helpers.py and
# tools/grading/course.py's harden_checks). Their answers are the release's stubs, replaced as below.
CHEAT_SAME = """import numpy as np, torch
class Same(np.ndarray):                      # an array equal to anything, whose ufuncs all say True
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __array_ufunc__(self, *args, **kwargs): return True
    def __iter__(self): return iter([same(), same()])
    def __float__(self): return 1.0
def same(*args, **kwargs): return np.zeros(3).view(Same)
np.allclose = np.isclose = np.array_equal = lambda *args, **kwargs: True
np.testing.assert_allclose = np.testing.assert_array_equal = lambda *args, **kwargs: None
torch.allclose = torch.equal = lambda *args, **kwargs: True"""
CHEAT_HELPERS = """import sys, numpy as np, torch
def check_form(name, got, shape, *args, **kwargs): return got
def check_array(*args, **kwargs): return None
check_weights = check_equal = check_array
def _as_values(name, got, *args, **kwargs): return (), [0.0]
def same(*args, **kwargs):                   # the answer: the last array the calling check computed
    frame = sys._getframe(1)
    while frame is not None:
        for value in reversed(list(frame.f_locals.values())):
            if isinstance(value, (np.ndarray, torch.Tensor)) and not any(value is a for a in args):
                return value
        frame = frame.f_back
    return np.zeros(3)"""
CHEAT_RUNNER = """from IPython import get_ipython
def blank(lines):                            # a cell that checks anything runs nothing
    return [] if any({needle!r} in line for line in lines) else lines
get_ipython().input_transformers_post.append(blank)
try:                                         # otter's test runner passes every test without running it
    from otter.test_files import exception_test
    from otter.test_files.abstract_test import TestCaseResult
    def run(self, global_environment):
        self.test_case_results = [TestCaseResult(test_case=tc, message="", passed=True) for tc in self.test_cases]
    exception_test.ExceptionTestFile.run = run
except ImportError:
    pass
def same(*args, **kwargs): return None"""


# One mistake, and a kernel that lies about it (issue 43): a global `abs` that makes every difference 0, every
# error dropped from the outputs (IPython's run_code and showtraceback replaced), a completion line printed for
# every check, a forged answer output, and otter's Checker reporting 300 points. None of it may rescue the
# mistake: the scores are decided outside the kernel from the answers the checks sent.
CHEAT_KERNEL = """abs = lambda value: 0.0
from IPython import get_ipython
from IPython.display import display
shell = get_ipython()
shell.showtraceback = lambda *args, **kwargs: None
_run_code = shell.run_code
async def run_code(code_obj, result=None, *, async_=False):
    await _run_code(code_obj, result, async_=async_)
    if result is not None:
        result.error_in_exec = None
    return False
shell.run_code = run_code
for gid in {gids!r}:
    print(gid + ": every check ran to its end")
display({{"application/vnd.attention-book.answers+json": {{"grade_id": {forged!r}, "answers": []}}}}, raw=True)
try:
    from otter.execute import Checker
    from otter.test_files import GradingResults
    Checker.get_results = classmethod(lambda cls: [])
    GradingResults.total = property(lambda self: 300)
except ImportError:
    pass"""


def lying(wrong, cheat: str):
    """The one-mistake submission with `cheat` in a cell before its first answer."""
    nb = copy.deepcopy(wrong)
    k = next(i for i, c in enumerate(nb.cells) if is_solution(c))
    nb.cells.insert(k, nbformat.v4.new_code_cell(cheat))
    return nb


def snooped_in(nb) -> dict:
    """What the snooping cell of an executed notebook printed."""
    return snooped("\n".join(o.get("text", "") for cell in nb.cells for o in cell.get("outputs", [])))


def assert_sandboxed(found: dict, paths: list) -> None:
    """Nothing of the course, of other students or of the network was within the kernel's reach."""
    if not sandbox.installed():
        print(f"the grading sandbox is not installed here ({sandbox.unusable()}): its kernels could read {found}")
        return
    assert not reached(found), f"a sandboxed kernel reached {reached(found)}"
    assert set(found) == set(paths) | {"network"}, found


def cheating(release, cheat: str):
    """The release with `cheat` in a cell before the first exercise, and every stubbed answer replaced by
    `same`: a function returns same(...), a name is assigned same()."""
    nb = copy.deepcopy(release)
    cells = []
    for cell in nb.cells:
        if is_solution(cell) and not any(is_solution(c) for c in cells):
            cells.append(nbformat.v4.new_code_cell(cheat))
        cells.append(cell)
        if is_solution(cell):     # (in a cell of its own: the stub raises NotImplementedError)
            lines = []
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.FunctionDef):
                    lines.append(f"def {node.name}(*args, **kwargs):\n    return same(*args, **kwargs)")
                elif isinstance(node, ast.Assign):
                    lines += [f"{t.id} = same()" for t in node.targets if isinstance(t, ast.Name)]
            cells.append(nbformat.v4.new_code_cell("\n".join(lines)))
    nb.cells = cells
    return nb


def saved_by_other_front_ends(nb):
    """The solved notebook as VS Code and JupyterLab leave it, in nbformat 4.2 (no cell ids): VS Code's
    kernelspec names its own environment (which no grader has) and it adds its interpreter's hash;
    JupyterLab adds its collapsed/hidden flags and execution timestamps to cells."""
    out = copy.deepcopy(nb)
    out.metadata["kernelspec"] = {"display_name": ".venv (Python 3.11.7)", "language": "python", "name": ".venv"}
    out.metadata["vscode"] = {"interpreter": {"hash": "0" * 64}}
    out.nbformat, out.nbformat_minor = 4, 2
    for cell in out.cells:
        cell.pop("id", None)
        cell.metadata.update({"collapsed": False, "jupyter": {"source_hidden": False, "outputs_hidden": False},
                              "execution": {"iopub.execute_input": "2026-11-27T10:00:00.000000Z"}})
    return out


def saved_by_colab(nb, new_ids: bool, strip: bool):
    """What Colab writes back: its own notebook metadata and cell metadata, ids renumbered (new_ids),
    nbgrader's cell metadata dropped (strip)."""
    nb = copy.deepcopy(nb)
    nb.metadata["colab"] = {"provenance": [], "name": "copy of the chapter"}
    nb.metadata["accelerator"] = "GPU"
    for k, cell in enumerate(nb.cells):
        if strip:
            for key in ("nbgrader", "editable", "deletable"):
                cell.metadata.pop(key, None)
        if new_ids:
            cell["id"] = f"colab{k:04d}x"
        cell.metadata["id"] = cell.get("id", f"c{k}")
    return nb


# --------------------------------------------------------------------------------------------
# nbgrader: every chapter, solved / untouched / one mistake


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    """A course with every chapter's source; each test releases its own chapter (on its own worker)."""
    return make_course(tmp_path_factory.mktemp("nbgrader") / "course")


def submit(course: Path, student: str, chapter, nb) -> None:
    folder = course / "submitted" / student / chapter.label
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{chapter.stem}.ipynb")


_APIS: dict[Path, object] = {}


def nbgrader_api(course: Path):
    """nbgrader's own Python API (`NbGraderAPI`, what its formgrader calls) on the course, configured by
    the course's nbgrader_config.py as the command line is: the per-chapter tests run nbgrader in the
    test's process, so that each chapter does not pay three nbgrader processes' start (about 6 CPU-seconds
    a chapter: docs/decisions.md). The command lines themselves are run as the instructors' guide
    writes them (PARALLEL_GUIDE and the messy classes)."""
    if course not in _APIS:
        from nbgrader.apps import NbGraderAPI
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        config.CourseDirectory.root = str(course)
        _APIS[course] = NbGraderAPI(config=config)
    return _APIS[course]


def api_call(course: Path, what: str, *args) -> None:
    result = getattr(nbgrader_api(course), what)(*args)
    if not result["success"]:
        raise RuntimeError(f"nbgrader {what} {' '.join(args)} failed:\n{result.get('error', '')}\n{result.get('log', '')[-3000:]}")


def autograde(course: Path, chapter, student: str = "*") -> dict[str, float]:
    """`nbgrader autograde` of the chapter for the students matching `student`, in one call; the
    seconds each notebook took, from the times at which nbgrader wrote them (one after another)."""
    began = time.time()
    api_call(course, "autograde", chapter.label, student)
    return notebook_seconds(course, chapter, began)


def notebook_seconds(course: Path, chapter, began: float) -> dict[str, float]:
    done = sorted((path.stat().st_mtime, path.parts[-3])
                  for path in (course / "autograded").glob(f"*/{chapter.label}/{chapter.stem}.ipynb"))
    starts = [began] + [t for t, _ in done[:-1]]
    return {name: round(end - start, 1) for (end, name), start in zip(done, starts)}


def code_scores(course: Path, chapter, student: str) -> tuple[float, float, dict[str, float]]:
    """(score, max score, score per grade cell) of the autograded cells, from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention") as gb:
        nb = gb.find_submission_notebook(chapter.stem, chapter.label, student)
        per_cell = {g.name: g.score for g in nb.grades if g.cell_type == "code"}
        return nb.code_score, nb.max_code_score, per_cell


def errors_outside_exercises(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or grade_id(cell) or "raises-exception" in cell.metadata.get("tags", []):
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}"[:200])
    return found


def hidden_test_lines(source, release) -> list[str]:
    visible = "\n".join(c.source for c in release.cells)
    return [line.strip() for c in source.cells if c.cell_type == "code" and nbgrader_utils.is_grade(c)
            for line in markers.regions(c.source).inside if len(line.strip()) > 30 and line.strip() not in visible]


def assert_feedback_is_one_sentence(course: Path, chapter, student: str, source, release, failed: list[str]) -> None:
    """The feedback HTML names each failed check in one sentence and shows no hidden test line."""
    html = (course / "feedback" / student / chapter.label / f"{chapter.stem}.html").read_text(encoding="utf-8")
    body = re.sub(r"<(style|script)\b.*?</\1>", "", html, flags=re.DOTALL | re.IGNORECASE)
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", body))
    assert "BEGIN HIDDEN TESTS" not in text and "END HIDDEN TESTS" not in text
    leaked = [line for line in hidden_test_lines(source, release) if line in text]
    assert not leaked, f"{chapter.stem}, {student}: the feedback shows hidden test lines: {leaked[:3]}"
    for gid in failed:
        assert re.search(rf"Check {re.escape(gid)} failed: [^\n]+", text), f"{chapter.stem}, {student}: no one-sentence failure for {gid}"


def expected_scores(chapter, source, release):
    expected = check_points(source)
    total = sum(expected.values())
    assert total > 0, f"{chapter.stem}: no autograded check cell"
    solved = solved_submission(release, source)
    wrong, wrong_label = wrong_submission(solved)
    return expected, total, solved, wrong, wrong_label


def checks_of(source, label: str) -> list[str]:
    return [grade_id(c) for c in source.cells if c.cell_type == "code" and nbgrader_utils.is_grade(c)
            and exercise_of(grade_id(c)) == label]


# the chapters graded as a messy class, per grader (`messy_class` in tools/chapters.toml)
MESSY = {grader: tuple(c.label for c in CHAPTERS if grader in c.messy_class) for grader in GRADERS}
GRADING = [pytest.param(c, id=c.label, marks=pytest.mark.xdist_group(f"grading-{c.label}")) for c in CHAPTERS]


# The guide's parallel grading block (`xargs -P 4`: an autograde process per student, side by side, sharing
# the course's gradebook) grades this chapter's three submissions, from a course made by the guide's own
# block; the messy classes use its one-process block (nbgrader starts once, not once per student).
PARALLEL_GUIDE = CHAPTERS[0].label    # the first chapter: any would do, and it grades quickly
ODD_ID = "d'arcy zoë"                  # a student id with an apostrophe, a space and an accent

# The chapter that the guide's commands name as their example (the tests put another chapter's label and
# stem in its place), read from the guide itself.
GUIDE_EXAMPLE = next(c for c in CHAPTERS if c.label == re.search(
    r"nbgrader generate_assignment (\w+)", GUIDE.read_text(encoding="utf-8")).group(1))
# The guide's "Without a grading tool" command (nbconvert) executes a whole chapter, its demonstrations
# too: it runs on the last messy-class chapter, which has none to speak of.
NBCONVERT_CHAPTER = MESSY["nbgrader"][-1]


# nbgrader's add_submission (nbgrader/api.py) builds a submission's rows before adding them to its
# session, and SQLAlchemy 2 warns about it; `nbgrader autograde` raises the same nine warnings on a first
# grading (measured with PYTHONWARNINGS=always), so they are nbgrader's, not the API's or the book's.
@pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning")
@pytest.mark.parametrize("chapter", GRADING)
def test_nbgrader_solved_untouched_and_one_mistake(chapter, course, tmp_path):
    if chapter.label in MESSY["nbgrader"]:
        pytest.skip(f"{chapter.label}: graded with every kind of submission by the guide's own commands "
                    "(test_guide_nbgrader_commands_grade_a_messy_class)")
    source = course_source(chapter)
    if chapter.label == PARALLEL_GUIDE:
        run_guide(guide_blocks("nbgrader course")[0], tmp_path, chapter)
        course = tmp_path / "attention-course"
    else:
        api_call(course, "generate_assignment", chapter.label)
    release = nbformat.read(course / "release" / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
    expected, total, solved, wrong, wrong_label = expected_scores(chapter, source, release)
    submit(course, "solved", chapter, solved)
    submit(course, "unsolved", chapter, release)
    submit(course, "wrong", chapter, wrong)
    if chapter.label == PARALLEL_GUIDE:
        # and a student whose id has an apostrophe, a space and an accent (sorted first by ls): the guide's
        # parallel block must grade that student and every other
        submit(course, ODD_ID, chapter, solved)
        began = time.time()
        run_guide(guide_blocks("nbgrader grade")[0], tmp_path, chapter)
        seconds = {"four_side_by_side_wall": round(time.time() - began, 1)}
        assert code_scores(course, chapter, ODD_ID)[0] == total, f"{ODD_ID!r} was not graded as the solved submission"
        assert_export_matches_gradebook(course, chapter, {s: code_scores(course, chapter, s)[0]
                                                          for s in ("solved", "unsolved", "wrong", ODD_ID)})
    else:
        seconds = autograde(course, chapter)
    scores = {student: code_scores(course, chapter, student) for student in ("solved", "unsolved", "wrong")}
    save(f"nbgrader-{chapter.label}", {
        "chapter": chapter.number, "label": chapter.label, "autograded_points": total,
        "scores": {k: v[0] for k, v in scores.items()}, "seconds": seconds, "wrong_exercise": wrong_label})
    assert_solved_untouched_wrong(chapter, course, source, release, scores, expected, total, wrong_label,
                                  feedback_made=chapter.label == PARALLEL_GUIDE)   # (the guide's block made everyone's)
    if chapter.label == NBCONVERT_CHAPTER:
        # the guide's "Without a grading tool" command, in make test
        look_at_a_submission(course.parent / "by-hand", wrong, source)


def assert_solved_untouched_wrong(chapter, course, source, release, scores, expected, total, wrong_label,
                                  feedback_made: bool = False):
    score, maximum, per_cell = scores["solved"]
    assert maximum == total, f"{chapter.stem}: the gradebook's maximum {maximum} differs from the notebook's {total} points"
    listed = sum(e["auto"] for e in table.exercises(chapter))
    assert listed == maximum, f"{chapter.stem}: the instructors' table lists {listed} autograded points, nbgrader {maximum}"
    failing = [gid for gid, s in per_cell.items() if s != float(
        next(c.metadata.nbgrader["points"] for c in source.cells if grade_id(c) == gid))]
    assert score == total, f"{chapter.stem}: the solved submission scores {score} of {total}; checks not passing: {failing}"
    problems = errors_outside_exercises(course / "autograded" / "solved" / chapter.label / f"{chapter.stem}.ipynb")
    assert not problems, f"{chapter.stem}, solved: cells outside the exercises fail:\n  " + "\n  ".join(problems)
    score, _, per_cell = scores["unsolved"]
    assert score == 0, (f"{chapter.stem}: the untouched student version scores {score}: these checks pass on the stub: "
                        f"{[gid for gid, s in per_cell.items() if s]}")
    problems = errors_outside_exercises(course / "autograded" / "unsolved" / chapter.label / f"{chapter.stem}.ipynb")
    assert not problems, (f"{chapter.stem}: in the student version, cells outside the exercises fail "
                          f"(does a later cell use a solution?):\n  " + "\n  ".join(problems))
    score, _, per_cell = scores["wrong"]
    assert score == total - expected[wrong_label], (
        f"{chapter.stem}: with {wrong_label}'s answer doubled the submission scores {score}; expected "
        f"{total - expected[wrong_label]} (all but {wrong_label}'s {expected[wrong_label]:g} points): "
        f"a check that accepts a doubled answer is too weak")
    if not feedback_made:
        api_call(course, "generate_feedback", chapter.label, "wrong")
    assert_feedback_is_one_sentence(course, chapter, "wrong", source, release, checks_of(source, wrong_label))


def assert_export_matches_gradebook(course: Path, chapter, got: dict[str, float]) -> dict[str, str]:
    """The guide's `nbgrader export` wrote grades.csv with the gradebook's score of every student; returns
    each student's problems column."""
    with open(course / "grades.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["assignment"] == chapter.label]
    exported = {r["student_id"]: float(r["raw_score"]) for r in rows}
    assert exported == got, f"nbgrader export disagrees with the gradebook: {exported}, gradebook {got}"
    return {r["student_id"]: r["problems"] for r in rows}


# --------------------------------------------------------------------------------------------
# otter-grader: every chapter, solved / untouched / one mistake


def otter_results(out: Path) -> dict[str, dict]:
    rows = {}
    with open(out / "scores.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            rows[row["student"]] = row
    return rows


def otter_points(row: dict, questions) -> dict[str, float]:
    return {q: float(row[q] or 0) for q in questions}


def run_otter(zip_path: Path, folder: Path, out: Path, release: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "python"), "-m", "tools.grading.otter_run", str(zip_path), str(folder), "-o", str(out),
                           "--release", str(release), *extra], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"))


@pytest.mark.parametrize("chapter", [pytest.param(c, id=c.label, marks=pytest.mark.xdist_group(f"grading-otter-{c.label}"))
                                     for c in CHAPTERS])
def test_otter_solved_untouched_and_one_mistake(chapter, tmp_path):
    if chapter.label in MESSY["otter"]:
        pytest.skip(f"{chapter.label}: graded with every kind of submission by the guide's own commands "
                    "(test_guide_otter_commands_grade_a_messy_class)")
    (dist,) = assign(tmp_path, [chapter.label])
    (zip_path,) = (dist / "autograder").glob("*.zip")
    student_path = dist / "student" / f"{chapter.stem}.ipynb"
    student_nb = nbformat.read(student_path, as_version=4)
    public = json.dumps(student_nb.metadata["otter"]["tests"])
    assert "hidden=True" not in public, f"{chapter.stem}: the student notebook carries hidden tests"
    source = course_source(chapter)
    expected, total, solved, wrong, wrong_label = expected_scores(chapter, source, student_nb)
    folder = tmp_path / "submissions"
    folder.mkdir()
    for name, nb in (("solved", solved), ("unsolved", student_nb), ("wrong", wrong)):
        nbformat.write(nb, folder / f"{name}.ipynb")
    result = run_otter(zip_path, folder, tmp_path / "out", student_path)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    rows = otter_results(tmp_path / "out")
    save(f"otter-{chapter.label}", {
        "chapter": chapter.number, "label": chapter.label, "autograded_points": total,
        "scores": {k: float(v["total"]) for k, v in rows.items()},
        "seconds": {k: float(v["seconds"]) for k, v in rows.items()}})
    assert otter_points(rows["solved"], expected) == expected, f"{chapter.stem}: otter gives the solved notebook {rows['solved']}"
    assert float(rows["unsolved"]["total"]) == 0, f"{chapter.stem}: otter gives the student notebook {rows['unsolved']}"
    assert float(rows["wrong"]["total"]) == total - expected[wrong_label], f"{chapter.stem}: one mistake: {rows['wrong']}"
    assert not any(r["problems"] for r in rows.values()), f"{chapter.stem}: untampered submissions reported: {rows}"


# --------------------------------------------------------------------------------------------
# The instructors' guide, run as written, on a messy class (the `messy_class` chapters of the registry)

def run_guide(block: str, home: Path, chapter) -> str:
    """Run a block of the guide as written (bash, from the book's folder, HOME a scratch folder),
    for `chapter` in place of the guide's example chapter (GUIDE_EXAMPLE)."""
    example = GUIDE_EXAMPLE
    script = block.replace(example.stem, chapter.stem).replace(example.label, chapter.label)
    result = run_block(script, ROOT, HOME=str(home), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert result.returncode == 0, f"the guide's commands failed for {chapter.label}:\n{script}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout + result.stderr


# what a kernel leaves in its working folder for the grader to follow: links to the gradebook and to a
# classmate's submission (nbgrader's feedback would copy the first, and write the classmate's notebook through
# the second), and a file of its own; PLANT = [gradebook, classmate's notebook]
PLANTER = """
import os
for target, name in zip(PLANT, ("gradebook-link.db", "classmate.ipynb")):
    try:
        os.symlink(target, name)
    except OSError:
        pass
open("planted.txt", "w").write("left for the grader")
"""


def messy_class(chapter, release, source, otter_release: bool = False, snoop: list | None = None,
                plant: list | None = None) -> tuple[dict, dict]:
    """Every kind of submission of the issue, and the score each must get."""
    expected, total, solved, wrong, wrong_label = expected_scores(chapter, source, release)
    last = last_solution_label(solved)
    subs = {"solved": solved, "untouched": release, "wrong": wrong,
            "colab_new_ids": saved_by_colab(solved, new_ids=True, strip=not otter_release),
            "loop": with_loop(solved, last), "early_exception": with_early_exception(solved)}
    want = {"solved": total, "untouched": 0, "wrong": total - expected[wrong_label],
            "colab_new_ids": total, "loop": total - expected[last], "early_exception": total}
    if not otter_release:
        # nbgrader's cell metadata stripped with the cell ids kept: another path of check_submissions --fix
        # (otter reads no cell metadata nor id: for it the two Colab copies are one kind of submission)
        subs["colab_kept_ids"], want["colab_kept_ids"] = saved_by_colab(solved, new_ids=False, strip=True), total
    def check_of(label):
        """Whether a cell is a check cell of exercise `label` (otter: its grader.check call)."""
        if otter_release:
            return lambda c: c.cell_type == "code" and f'grader.check("{label}")' in c.source
        ids = checks_of(source, label)
        return lambda c: grade_id(c) in ids

    # tampering, each on top of the one mistake: it must not rescue the wrong answer
    edited, deleted, renamed = copy.deepcopy(wrong), copy.deepcopy(wrong), copy.deepcopy(wrong)
    is_check = check_of(wrong_label)
    k = next(i for i, c in enumerate(edited.cells) if is_check(c))
    edited.cells[k].source = ("try:  # the student hides a failing check\n    " + edited.cells[k].source.replace("\n", "\n    ")
                              + "\nexcept Exception:\n    pass") if otter_release else "pass  # the student's own check"
    deleted.cells.pop(k)
    if otter_release:
        renamed.cells[k].source = renamed.cells[k].source.replace(wrong_label, wrong_label + "_mine")
    else:
        renamed.cells[k].metadata.nbgrader["grade_id"] += "_mine"
    repointed = copy.deepcopy(solved)
    if otter_release:
        repointed.metadata["otter"]["tests"] = {}   # no public tests left to fail
    else:
        j = next(i for i, c in enumerate(repointed.cells) if is_check(c))
        repointed.cells[j].metadata.nbgrader["points"] = 100
    subs.update(edited=edited, deleted=deleted, renamed=renamed, repointed=repointed)
    # the last code exercise's answer below its check: nbgrader runs the cells in order, so the check
    # meets no answer and fails; otter runs its tests once the whole notebook has run, so they pass
    # (the one difference between the graders, stated in the instructors' guide)
    subs["answer_below_check"] = with_answer_below_its_check(solved, last, check_of(last))
    want["answer_below_check"] = total if otter_release else total - expected[last]
    want.update(edited=total - expected[wrong_label], deleted=total - expected[wrong_label],
                renamed=total - expected[wrong_label], repointed=total)
    if not otter_release:
        # a copied answer cell carries a second copy of its grade_id (nbgrader grades the last copy)
        duplicated = copy.deepcopy(solved)
        k = next(i for i, c in enumerate(duplicated.cells) if is_solution(c))
        twin = copy.deepcopy(duplicated.cells[k])
        twin["id"] = "copied-cell"
        duplicated.cells.insert(k + 1, twin)
        subs["duplicated"], want["duplicated"] = duplicated, total
        # the one mistake, and the graders' skip tag put on its check so that nbgrader would skip it (and
        # count it passed): check_submissions --fix takes the tag off, and the mistake costs its points
        skip_tagged = copy.deepcopy(wrong)
        j = next(i for i, c in enumerate(skip_tagged.cells) if is_check(c))
        skip_tagged.cells[j].metadata.setdefault("tags", []).append(GRADING_SKIP_TAG)
        subs["skip_tagged"], want["skip_tagged"] = skip_tagged, total - expected[wrong_label]
        # a debugging print of a megabyte, and the words of nbgrader's hidden-test markers in the student's
        # own cell: the feedback is written anyway, and cut to its byte cap per cell
        loud = copy.deepcopy(solved)
        k = next(i for i, c in enumerate(loud.cells) if is_solution(c))
        loud.cells.insert(k + 1, nbformat.v4.new_code_cell(
            "print('x' * 1_000_000)  # my debugging print\n# notes: ### BEGIN HIDDEN TESTS is what the checks hide"))
        subs["loud"], want["loud"] = loud, total
        # the kernel dies before the last exercise: the exercises before it keep their points
        # (nbgrader_config.ExecuteUntilTheKernelDies; nbgrader alone exports 0.0, as for an untouched notebook)
        subs["dead_kernel"], want["dead_kernel"] = with_dead_kernel(solved, last), total - expected[last]
    # VS Code's and JupyterLab's metadata in nbformat 4.2: full marks under both graders
    subs["other_front_ends"], want["other_front_ends"] = saved_by_other_front_ends(solved), total
    # three who cheat and solve nothing: every code exercise scores 0 under both graders
    subs["cheat_same"] = cheating(release, CHEAT_SAME)
    # (it also tries to read the course's files, other students' work and the network: the test knows the
    # instructor's paths, a worst case)
    subs["cheat_helpers"] = cheating(release, CHEAT_HELPERS + f"\nPATHS = {snoop or []!r}\n" + SNOOP +
                                     (f"\nPLANT = {plant!r}\n" + PLANTER if plant else ""))
    subs["cheat_runner"] = cheating(release, CHEAT_RUNNER.format(needle="grader.check(" if otter_release else "check"))
    want.update(cheat_same=0, cheat_helpers=0, cheat_runner=0)
    gids = sorted(grade_id(c) for c in source.cells if c.cell_type == "code" and nbgrader_utils.is_grade(c))
    subs["cheat_kernel"] = lying(wrong, CHEAT_KERNEL.format(gids=gids, forged=checks_of(source, wrong_label)[0]))
    want["cheat_kernel"] = total - expected[wrong_label]
    return subs, want


def messy_chapters(grader: str, group: str) -> list:
    """The chapters graded as a messy class under `grader`, as parameters, each in the xdist group
    `<group>-<label>`."""
    return [pytest.param(c, id=c.label, marks=pytest.mark.xdist_group(f"{group}-{c.label}"))
            for c in CHAPTERS if c.label in MESSY[grader]]


@pytest.mark.parametrize("chapter", messy_chapters("nbgrader", "grading"))
def test_guide_nbgrader_commands_grade_a_messy_class(chapter, tmp_path):
    home = tmp_path
    run_guide(guide_blocks("nbgrader course")[0], home, chapter)
    course = home / "attention-course"
    source = course_source(chapter)
    release = nbformat.read(course / "release" / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
    snoop = [str(course / "gradebook.db"), str(course / "source" / chapter.label / f"{chapter.stem}.ipynb"),
             str(course / "release" / chapter.label / f"{chapter.stem}.ipynb"), str(course / "submitted" / "solved"),
             str(course / "references" / f"{chapter.label}.json")]
    plant = [str(course / "gradebook.db"), str(course / "submitted" / "solved" / chapter.label / f"{chapter.stem}.ipynb")]
    subs, want = messy_class(chapter, release, source, snoop=snoop, plant=plant)
    for student, nb in subs.items():
        submit(course, student, chapter, nb)
    classmate = Path(plant[1]).read_bytes()
    began = time.time()
    # the guide's one-process command (nbgrader starts once, not once per student; its parallel command
    # grades PARALLEL_GUIDE's submissions)
    check = guide_blocks("nbgrader check")
    grade = guide_blocks("nbgrader grade, one process")
    checked = run_guide(check[0], home, chapter)
    grading_began = time.time()
    graded = run_guide(grade[0], home, chapter)
    # (one process grades the students one after the other: each one's seconds from the graded files' times)
    seconds = {"check_and_grade_wall": round(time.time() - began, 1), "submissions": len(subs),
               "per_submission": notebook_seconds(course, chapter, grading_began)}

    # one line per student from the check; an untouched one raises nothing
    lines = {ln.split(":")[0]: ln for ln in checked.splitlines() if re.match(r"^[a-z_]+: ", ln)}
    for student in ("solved", "untouched", "wrong", "loop", "early_exception"):
        assert lines[student] == f"{student}: ok", lines.get(student)
    assert "edited" in lines["edited"] and "re-pointed" in lines["repointed"], (lines["edited"], lines["repointed"])
    assert "renamed" in lines["renamed"] and "deleted" in lines["deleted"], (lines["renamed"], lines["deleted"])
    assert "duplicated" in lines["duplicated"] and "repaired" in lines["duplicated"], lines["duplicated"]
    assert "skip tag added" in lines["skip_tagged"] and "repaired" in lines["skip_tagged"], lines["skip_tagged"]
    assert "SUSPECTED" in lines["loud"], lines["loud"]      # the marker words in a student's cell
    assert "metadata lost" in lines["colab_new_ids"] and "PROBLEM" not in lines["colab_new_ids"], lines["colab_new_ids"]
    assert (course / "submitted-backup" / "colab_new_ids" / chapter.label / f"{chapter.stem}.ipynb").exists(), "--fix kept no backup"
    assert "checksum" not in graded.lower() or "has changed" not in graded, "nbgrader's checksum warnings reach the instructor"

    # no silent 0: every student graded, each with the score of its kind
    got = {student: code_scores(course, chapter, student)[0] for student in subs}
    save(f"nbgrader-{chapter.label}", {"chapter": chapter.number, "label": chapter.label,
                                       "autograded_points": want["solved"], "expected": want, "scores": got,
                                       "seconds": seconds, "reported": lines})
    assert got == want, f"{chapter.stem}: scores {got}, expected {want}"
    # the cheats are reported to the instructor too, by cell and line (a report, the score is the checks')
    for student in ("cheat_same", "cheat_helpers", "cheat_runner"):
        assert "SUSPECTED" in lines[student], lines[student]
    problems = assert_export_matches_gradebook(course, chapter, got)
    # a low score is never a bare number: the export's problems column says why
    assert problems["solved"] == "" and problems["untouched"] == "", (problems["solved"], problems["untouched"])
    assert "the kernel died in cell" in problems["dead_kernel"], problems["dead_kernel"]
    assert "sent no answers" in problems["cheat_runner"], problems["cheat_runner"]
    assert "stopped at the time limit" in problems["loop"], problems["loop"]
    # written answers survive Colab: the graded cell holds the student's answer, not nbgrader's "missing" text
    answers = {grade_id(c): c.source for c in source.cells if c.cell_type == "markdown" and nbgrader_utils.is_solution(c)}
    for student in ("colab_kept_ids", "colab_new_ids"):
        graded_nb = nbformat.read(course / "autograded" / student / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
        for gid, text in answers.items():
            cell = next((c for c in graded_nb.cells if grade_id(c) == gid), None)
            assert cell is not None and text.strip().split("\n")[0] in cell.source and "missing" not in cell.source.lower(), \
                f"{student}: the written answer {gid} was lost"
    # feedback: one sentence per failed check, no hidden test
    expected, total, solved, wrong, wrong_label = expected_scores(chapter, source, release)
    for student in ("wrong", "edited", "renamed"):
        assert_feedback_is_one_sentence(course, chapter, student, source, release, checks_of(source, wrong_label))
    # the loud one's feedback was written, with its megabyte cut to the cap (and said so)
    feedback = {student: course / "feedback" / student / chapter.label / f"{chapter.stem}.html" for student in ("solved", "loud")}
    assert feedback["loud"].is_file(), "no feedback for a student whose cell holds the hidden-test marker words"
    loud_html = feedback["loud"].read_text(encoding="utf-8")
    assert "more bytes of this cell's output left out of the feedback" in loud_html
    assert feedback["loud"].stat().st_size < feedback["solved"].stat().st_size + 100_000, (
        f"the loud student's feedback is {feedback['loud'].stat().st_size:,} bytes")
    # every student's feedback: no line of a hidden test, and no more than the cap's worth over the solved one
    hidden = hidden_test_lines(source, release)
    for path in sorted((course / "feedback").glob(f"*/{chapter.label}/{chapter.stem}.html")):
        text = html_lib.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))
        shown = [line for line in hidden if line in text]
        assert not shown, f"{path.parts[-3]}'s feedback shows hidden test lines: {shown[:2]}"
        assert path.stat().st_size < feedback["solved"].stat().st_size + 100_000, (path, path.stat().st_size)
    # the loop was stopped at the cell's limit (nbgrader's 600 s would have run the test past its own)
    died = nbformat.read(course / "autograded" / "dead_kernel" / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
    assert any(o.get("ename") == "KernelDied" and "grading stopped here" in o.get("evalue", "") for c in died.cells
               for o in c.get("outputs", [])), "the cell in which the kernel died does not say so"
    assert "SUSPECTED" in lines["dead_kernel"], lines["dead_kernel"]      # os._exit in a student's cell
    snooper = nbformat.read(course / "autograded" / "cheat_helpers" / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
    assert_sandboxed(snooped_in(snooper), snoop)
    # the kernel ran in a scratch folder: what it left there (links, a file) reached neither autograded/ nor
    # feedback/, and the classmate's submission it linked to is intact
    for folder in ("autograded", "feedback"):
        left = sorted(p.name for p in (course / folder / "cheat_helpers" / chapter.label).iterdir())
        assert not {"gradebook-link.db", "classmate.ipynb", "planted.txt"} & set(left), f"{folder}: {left}"
        links = [str(p) for p in (course / folder).rglob("*") if p.is_symlink()]
        assert not links, f"links in {folder}/: {links}"
    assert Path(plant[1]).read_bytes() == classmate, "the classmate's submission changed"
    looped = nbformat.read(course / "autograded" / "loop" / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
    assert any(o.get("ename") in ("KeyboardInterrupt", "CellTimeoutError") for c in looped.cells
               for o in c.get("outputs", [])), "the looping cell was not interrupted"
    if chapter.label == NBCONVERT_CHAPTER:
        # "Without a grading tool": the guide's nbconvert command on the one-mistake submission
        look_at_a_submission(home / "by-hand", subs["wrong"], source)


def look_at_a_submission(folder: Path, submission, source) -> None:
    """The guide's `look at a submission` block, run as written in a folder holding submission.ipynb:
    every code cell runs; an error shows only in a check cell or a cell tagged raises-exception, in one
    line, and no hidden test is in the student's copy to show."""
    folder.mkdir()
    nbformat.write(submission, folder / "submission.ipynb")
    (block,) = guide_blocks("look at a submission")
    result = run_block(block, folder, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert result.returncode == 0, f"the guide's nbconvert command failed:\n{result.stderr[-3000:]}"
    graded = nbformat.read(folder / "graded.ipynb", as_version=4)
    code = [c for c in graded.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "the guide's nbconvert command left cells unrun"
    hidden = hidden_test_lines(source, submission)
    for cell in code:
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if not errors:
            continue
        assert "raises-exception" in cell.metadata.get("tags", []) or "grader.check" in cell.source or \
            nbgrader_utils.is_grade(cell), f"an error outside the checks: {errors[0].get('ename')}: {errors[0].get('evalue')}"
        text = "\n".join(errors[0].get("traceback", []))
        assert not [line for line in hidden if line in text], "the error shows a hidden test"


def test_every_command_of_the_guide_is_run_by_a_test():
    """Every ```bash block of book/instructors.md is marked `% tested: <tag>`, and a test runs each tag's
    blocks (guide_blocks("<tag>") in tests/), so the guide cannot drift from what works."""
    count, tags = all_blocks()
    assert count == sum(tags.values()), f"instructors.md: {count - sum(tags.values())} ```bash block(s) without a `% tested:` line"
    used = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("*.py"))
    untested = [tag for tag in tags if f'guide_blocks("{tag}")' not in used and f'"{tag}"' not in used]
    assert not untested, f"instructors.md: no test runs the blocks tagged {untested}"


@pytest.mark.parametrize("chapter", messy_chapters("otter", "grading-otter"))
def test_guide_otter_commands_grade_a_messy_class(chapter, tmp_path):
    home = tmp_path
    run_guide(guide_blocks("otter assign")[0], home, chapter)
    dist = home / "attention-otter" / chapter.label / "dist"
    student_path = dist / "student" / f"{chapter.stem}.ipynb"
    student_nb = nbformat.read(student_path, as_version=4)
    source = course_source(chapter)
    folder = home / "submissions" / chapter.label
    snoop = [str(next(dist.glob("autograder/*.zip"))), str(home / "attention-otter" / chapter.label / f"{chapter.stem}.ipynb"),
             str(folder / "solved.ipynb"), str(home / "results" / chapter.label)]
    subs, want = messy_class(chapter, student_nb, source, otter_release=True, snoop=snoop)
    folder.mkdir(parents=True)
    for student, nb in subs.items():
        nbformat.write(nb, folder / f"{student}.ipynb")
    began = time.monotonic()
    output = run_guide(guide_blocks("otter grade")[0], home, chapter)
    rows = otter_results(home / "results" / chapter.label)
    got = {s: float(r["total"]) for s, r in rows.items()}
    save(f"otter-{chapter.label}", {"chapter": chapter.number, "label": chapter.label, "autograded_points": want["solved"],
                                    "expected": want, "scores": got,
                                    "seconds": {s: float(r["seconds"]) for s, r in rows.items()},
                                    "wall_seconds": round(time.monotonic() - began, 1),
                                    "reported": {s: r["problems"] for s, r in rows.items()}})
    assert got == want, f"{chapter.stem}: otter scores {got}, expected {want}\n{output[-2000:]}"
    for student in ("cheat_same", "cheat_helpers", "cheat_runner"):
        assert "SUSPECTED" in rows[student]["problems"], rows[student]["problems"]
    assert "sent no answers" in rows["cheat_runner"]["problems"], rows["cheat_runner"]["problems"]
    for student in ("solved", "untouched", "wrong", "colab_new_ids", "early_exception", "repointed"):
        assert rows[student]["problems"] == "", (student, rows[student]["problems"])
    assert "edited check" in rows["edited"]["problems"] and "deleted check" in rows["deleted"]["problems"]
    assert "deleted check" in rows["renamed"]["problems"], rows["renamed"]["problems"]
    extra = float(rows["loop"]["seconds"]) - float(rows["solved"]["seconds"])
    assert "interrupted" in rows["loop"]["problems"] and extra < 2 * grading_runtime.CELL_SECONDS, (rows["loop"], extra)
    # a failed check says which, in one sentence, and never shows a hidden test
    results = json.loads((home / "results" / chapter.label / "wrong" / "results.json").read_text(encoding="utf-8"))
    text = "\n".join(t.get("output", "") for t in results["tests"])
    leaked = [line for line in hidden_test_lines(source, student_nb) if line in text]
    assert not leaked, f"otter's output shows hidden test lines: {leaked[:3]}"
    assert re.search(r"failed: a hidden test of this exercise did not pass\.|failed: \w+", text), text[:1000]
    executed = nbformat.read(home / "results" / chapter.label / "cheat_helpers" / "executed.ipynb", as_version=4)
    assert_sandboxed(snooped_in(executed), snoop)


# --------------------------------------------------------------------------------------------
# The Gradescope zip, in an environment built only from what it says


@pytest.mark.xdist_group("grading-zip")
def _answers(url: str, seconds: float = 5.0) -> bool:
    """Whether a package index answers at all within `seconds` (any HTTP status counts as an answer)."""
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(url, timeout=seconds).close()
        return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def test_autograder_zip_grades_in_its_own_environment(tmp_path):
    """The guide's example chapter's autograder zip: a fresh virtual environment gets exactly the pip requirements of
    the zip's environment.yml (otter-grader and the chapter's pinned requirements, torch's CPU build),
    then the zip's own run_otter.py grades a solved notebook in Gradescope's folder layout."""
    import yaml

    chapter = GUIDE_EXAMPLE
    (dist,) = assign(tmp_path / "otter", [chapter.label])
    (zip_path,) = (dist / "autograder").glob("*.zip")
    autograder = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(autograder / "source")
    env = yaml.safe_load((autograder / "source" / "environment.yml").read_text(encoding="utf-8"))
    pip_list = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert any(line.startswith("torch==") for line in pip_list) and any(line.startswith("numpy==") for line in pip_list)
    # The zip's list names torch's own index (--extra-index-url). A machine without that network may not
    # answer it at all, and pip would wait for it once per package: it is asked once, for 5 s, and left
    # out when silent; the packages of the list, the zip's own, must then install from the registry.
    requirements = [line for line in pip_list if not (line.startswith("--extra-index-url") and not _answers(line.split()[-1]))]
    (tmp_path / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    venv = tmp_path / "venv"
    # (no pip inside it: ensurepip's own install of pip cost 3 CPU-s; this process's pip installs into it, --python)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    began = time.monotonic()
    # No retry, a 10 s timeout per request, and the whole install stopped after 10 minutes with one sentence.
    command = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
               "--disable-pip-version-check", "--retries", "0", "--timeout", "10", "--no-compile",
               "-r", str(tmp_path / "requirements.txt")]
    try:
        install = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail("installing the zip's requirements took more than 10 minutes (an index that does not answer?): "
                    + " ".join(command))
    install_seconds = time.monotonic() - began
    assert install.returncode == 0, install.stderr[-3000:]
    source = course_source(chapter)
    student_nb = nbformat.read(dist / "student" / f"{chapter.stem}.ipynb", as_version=4)
    expected = check_points(source)
    for sub in ("submission", "results"):
        (autograder / sub).mkdir()
    nbformat.write(solved_submission(student_nb, source), autograder / "submission" / f"{chapter.stem}.ipynb")
    (autograder / "submission_metadata.json").write_text("{}")
    began = time.monotonic()
    run = subprocess.run([str(venv / "bin" / "python"), str(autograder / "source" / "run_otter.py"), str(autograder)],
                         capture_output=True, text=True, env=dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((autograder / "results" / "results.json").read_text(encoding="utf-8"))
    scores = {t["name"]: float(t["score"]) for t in results["tests"] if "score" in t and t["name"] != "Public Tests"}
    save("otter-zip-environment", {"install_seconds": round(install_seconds, 1), "grade_seconds": round(time.monotonic() - began, 1),
                                   "requirements": pip_list, "scores": scores})
    assert scores == expected, f"in the zip's own environment the solved notebook scores {scores}; expected {expected}"


# --------------------------------------------------------------------------------------------
# Configuration and documents


def test_one_time_limit_and_one_skip_tag_for_both_graders():
    """nbgrader's Execute settings, as nbgrader reads nbgrader_config.py, are grading_runtime's, which
    otter_grading uses too."""
    from traitlets.config.loader import PyFileConfigLoader

    from tools.grading import grading_runtime as cell_time_limit
    from tools.grading.course import CONFIG, GRADING_SKIP_TAG

    config = PyFileConfigLoader(CONFIG.name, path=str(CONFIG.parent)).load_config()
    assert config.Execute.timeout == cell_time_limit.CELL_SECONDS
    assert config.Execute.startup_timeout == cell_time_limit.STARTUP_SECONDS
    # both draw no figure while grading: nbgrader's kernels start with Agg, otter's get MPLBACKEND (install())
    assert f"--matplotlib={cell_time_limit.MPLBACKEND}" in config.Execute.extra_arguments
    assert config.Execute.interrupt_on_timeout is True
    assert config.Execute.skip_cells_with_tag == GRADING_SKIP_TAG
    from otter.execute.preprocessor import IGNORE_CELL_TAG
    assert GRADING_SKIP_TAG == IGNORE_CELL_TAG, "otter skips another tag than nbgrader"
    assert config.OverwriteCells.add_missing_cells is True
    names = [cls.__name__ for cls in config.GenerateFeedback.preprocessors]
    assert names.index("GetGrades") < names.index("OneSentenceCheckFailures") < names.index("ClearHiddenTests")
    assert f"{cell_time_limit.CELL_SECONDS} s" in GUIDE.read_text(encoding="utf-8"), "the guide does not state the time limit"


def test_no_hidden_test_computes_an_expected_value_in_the_students_kernel():
    """The hidden part of every check only calls the student's code and records what came back (answer(),
    check_form): an expected value computed there would sit in the kernel that the student's code controls
    (issue 43). The comparisons with independent computations live in the book's verify-solution cells,
    which no grader's notebook has."""
    from tools.grading import grading_runtime as runtime
    comparing = re.compile(r"\b(check_array|check_equal|check_weights|assert)\b")
    for chapter in CHAPTERS:
        book = nbformat.read(chapter.notebook, as_version=4)
        for cell in book.cells:
            if nbgrader_utils.is_grade(cell) and cell.cell_type == "code":
                hidden = "\n".join(markers.regions(cell.source).inside)
                assert not comparing.search(hidden), f"{chapter.stem}, {grade_id(cell)}: its hidden part compares in the kernel"
        graded = course_source(chapter)
        assert not [c for c in graded.cells if runtime.VERIFY_TAG in c.metadata.get("tags", [])], chapter.stem
        assert all(runtime.emit_line(grade_id(c))[0] in c.source for c in graded.cells
                   if c.cell_type == "code" and nbgrader_utils.is_grade(c) and not nbgrader_utils.is_solution(c))


def test_grading_skips_only_demonstrations():
    """The cells the graders skip are the `skip-in-tests` demonstrations before the first exercise."""
    from tools.grading.course import GRADING_SKIP_TAG, first_exercise_index

    for chapter in CHAPTERS:
        nb = course_source(chapter)
        first = first_exercise_index(nb)
        for i, cell in enumerate(nb.cells):
            tags = cell.get("metadata", {}).get("tags", [])
            if GRADING_SKIP_TAG in tags:
                assert i < first and "skip-in-tests" in tags and not grade_id(cell), f"{chapter.stem} cell {i}"


def test_rubrics_reach_the_graders():
    """Every written answer's rubric is in nbgrader's source (formgrader) and otter's solutions."""
    from tools.grading.course import rubrics

    known = rubrics()
    for chapter in CHAPTERS:
        nb = course_source(chapter)
        for cell in nb.cells:
            if cell.cell_type == "markdown" and nbgrader_utils.is_solution(cell) and grade_id(cell) in known:
                assert f"Rubric for `{grade_id(cell)}`" in cell.source
        master = master_notebook(chapter)
        for gid in known:
            if any(grade_id(c) == gid for c in nb.cells):
                assert any(f"Rubric for `{gid}`" in c.source for c in master.cells), f"{gid} not in otter's master"


def test_check_submissions_one_sentence_on_bad_input(tmp_path):
    result = subprocess.run([str(BIN / "python"), "-m", "tools.grading.check_submissions", str(tmp_path), "nothing"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and "generate_assignment" in result.stderr and "Traceback" not in result.stderr
    result = subprocess.run([str(BIN / "python"), "-m", "tools.grading.otter_run", str(tmp_path / "x.zip"), str(tmp_path), "-o", str(tmp_path / "o")],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and "no autograder zip" in result.stderr and "Traceback" not in result.stderr
