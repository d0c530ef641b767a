"""Grading every chapter through nbgrader's and otter-grader's own command lines.

nbgrader (tools/grading/nbgrader_config.py, the course an instructor builds with tools.grading.course):
`nbgrader generate_assignment` releases every chapter; for each chapter three submissions are
autograded with `nbgrader autograde` (each without its slow `skip-in-tests` cells, see `lean`): the release with the model solutions filled in (full marks),
the release untouched (zero), and the solved release with one deliberate mistake in one code
exercise (full marks less that exercise's points); then `nbgrader export` and
`nbgrader generate_feedback`, whose HTML must not show the hidden tests. The unsolved run also shows
that the student version runs apart from the exercises (every other cell succeeds), and the solved
run that the model solutions pass their checks with the hidden tests restored by autograde.
Two more cases on the shortest chapter: a submission whose nbgrader metadata a front end dropped,
and one with a duplicated solution cell (tools/grading/check_submissions.py reports both).

otter-grader (tools/grading/otter.py): the master notebook generated from the same sources goes
through `otter assign`; `otter run` with the autograder zip gives the solved notebook full marks and
the student notebook zero (the one-mistake case is nbgrader's, above: the same checks).

Expected points are read from the solved notebooks' nbgrader metadata, not from either grader.
Each test's scores and times go to _build/grading/<tool>-<label>.json (and the instructors' table).
"""
from __future__ import annotations

import copy
import html as html_lib
import json
import os
import re
import subprocess
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader import utils as nbgrader_utils

from tools.grading import check_submissions
from tools.grading.course import BIN, course_source, make_course, nbgrader
from tools.grading import table
from tools.grading.otter import write_masters
from tools.registry import ROOT, chapters

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


def hidden_lines(text: str) -> list[str]:
    lines, inside = [], False
    for line in text.split("\n"):
        if "BEGIN HIDDEN TESTS" in line:
            inside = True
        elif "END HIDDEN TESTS" in line:
            inside = False
        elif inside:
            lines.append(line)
    return lines


def lean(nb):
    """The submission less the cells tagged `skip-in-tests` before the first exercise (training
    loops and timing sweeps, on which no untagged cell depends, CONTRIBUTING.md). Their code is the
    chapter's own, which nbval executes (test_student_version checks that the student version's code
    before the exercises is the chapter's), so grading runs everything else: every other cell of the
    chapter and all of its exercises and checks, hidden tests included."""
    nb = copy.deepcopy(nb)
    first = next((i for i, c in enumerate(nb.cells) if grade_id(c) or (
        c.cell_type == "markdown" and re.search(r"^### Exercise `", c.source, re.MULTILINE))), len(nb.cells))
    nb.cells = [c for i, c in enumerate(nb.cells)
                if not (i < first and c.cell_type == "code" and "skip-in-tests" in c.metadata.get("tags", []))]
    return nb


def save(name: str, data: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------------
# nbgrader


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    """A course with every chapter released by `nbgrader generate_assignment`."""
    course = make_course(tmp_path_factory.mktemp("nbgrader") / "course")
    nbgrader(course, "generate_assignment", "*", "--force")
    return course


def submit(course: Path, student: str, chapter, nb) -> None:
    folder = course / "submitted" / student / chapter.label
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{chapter.stem}.ipynb")


def autograde(course: Path, chapter, student: str = "*") -> dict[str, float]:
    """`nbgrader autograde` of the chapter for the students matching `student`, in one call; the
    seconds each notebook took, from the times at which nbgrader wrote them (one after another)."""
    began = time.time()
    nbgrader(course, "autograde", chapter.label, "--student", student, "--force")
    done = sorted((path.stat().st_mtime, path.parts[-3])
                  for path in (course / "autograded").glob(f"{student}/{chapter.label}/{chapter.stem}.ipynb"))
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


def nbgrader_scores_solved_unsolved_and_wrong(chapter, course):
    source = course_source(chapter)
    expected = check_points(source)
    total = sum(expected.values())
    assert total > 0, f"{chapter.stem}: no autograded check cell"
    release = nbformat.read(course / "release" / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
    solved = solved_submission(release, source)
    wrong, wrong_label = wrong_submission(solved)
    submit(course, "solved", chapter, lean(solved))
    submit(course, "unsolved", chapter, lean(release))
    submit(course, "wrong", chapter, lean(wrong))

    seconds = autograde(course, chapter)
    scores = {student: code_scores(course, chapter, student) for student in ("solved", "unsolved", "wrong")}
    save(f"nbgrader-{chapter.label}", {
        "chapter": chapter.number, "label": chapter.label, "autograded_points": total,
        "scores": {k: v[0] for k, v in scores.items()}, "seconds": seconds,
        "wrong_exercise": wrong_label})

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

    # export: one row per student, the autograded score
    csv = course / f"grades-{chapter.label}.csv"
    nbgrader(course, "export", "--to", str(csv), f"--assignment={chapter.label}")
    rows = csv.read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    got = {r.split(",")[header.index("student_id")]: float(r.split(",")[header.index("raw_score")])
           for r in rows[1:] if r.split(",")[header.index("assignment")] == chapter.label}
    assert got == {"solved": total, "unsolved": 0.0, "wrong": total - expected[wrong_label]}, rows

    # feedback: the graded notebook as HTML, without the hidden tests
    nbgrader(course, "generate_feedback", chapter.label, "--student", "solved", "--force")
    html = (course / "feedback" / "solved" / chapter.label / f"{chapter.stem}.html").read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" not in html and "END HIDDEN TESTS" not in html
    visible = "\n".join(c.source for c in release.cells)
    hidden = [line.strip() for c in source.cells if c.cell_type == "code" and nbgrader_utils.is_grade(c)
              for line in hidden_lines(c.source) if len(line.strip()) > 30 and line.strip() not in visible]
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", html))
    leaked = [line for line in hidden if line in text]
    assert not leaked, f"{chapter.stem}: the feedback shows hidden test lines: {leaked[:3]}"


def test_lost_metadata_and_duplicated_cells_are_reported(tmp_path):
    """One submission whose front end dropped every cell's nbgrader metadata, one with a copied
    solution cell (chapter 3's exercises, its slow cells left out). The check script reports both;
    --fix restores the metadata, after which autograde gives both full marks."""
    chapter = next(c for c in CHAPTERS if c.label == "bahdanau")
    course = make_course(tmp_path / "course", [chapter.label])
    nbgrader(course, "generate_assignment", chapter.label, "--force")
    source = course_source(chapter)
    release = nbformat.read(course / "release" / chapter.label / f"{chapter.stem}.ipynb", as_version=4)
    solved = lean(solved_submission(release, source))
    stripped = copy.deepcopy(solved)
    for cell in stripped.cells:
        cell.metadata.pop("nbgrader", None)
        cell.metadata.pop("editable", None)
        cell.metadata.pop("deletable", None)
    duplicated = copy.deepcopy(solved)
    k = next(i for i, c in enumerate(duplicated.cells) if nbgrader_utils.is_solution(c) and c.cell_type == "code")
    twin = copy.deepcopy(duplicated.cells[k])
    twin["id"] = "copied-cell"
    duplicated.cells.insert(k + 1, twin)
    submit(course, "no-metadata", chapter, stripped)
    submit(course, "duplicated", chapter, duplicated)

    reports = {r.path.parts[-3]: r for r in check_submissions.check_assignment(course, chapter.label)}
    released_ids = [grade_id(c) for c in release.cells if grade_id(c)]
    assert sorted(reports["no-metadata"].missing) == sorted(released_ids)
    assert sorted(reports["no-metadata"].restorable) == sorted(released_ids), reports["no-metadata"].lines()
    assert list(reports["duplicated"].duplicated) == [grade_id(twin)]
    result = subprocess.run([str(BIN / "python"), "-m", "tools.grading.check_submissions", str(course), chapter.label],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 1 and "no nbgrader metadata" in result.stdout and "occurs 2 times" in result.stdout, result.stdout

    fixed = subprocess.run([str(BIN / "python"), "-m", "tools.grading.check_submissions", str(course), chapter.label, "--fix"],
                           cwd=ROOT, capture_output=True, text=True)
    assert "no-metadata" in fixed.stdout and "repaired" in fixed.stdout, fixed.stdout
    total = sum(check_points(source).values())
    autograde(course, chapter)
    for student in ("no-metadata", "duplicated"):
        score, maximum, _ = code_scores(course, chapter, student)
        assert score == maximum == total, f"{student}: {score} of {maximum} (expected {total})"


# --------------------------------------------------------------------------------------------
# otter-grader


def otter(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run([str(BIN / "otter"), *args], cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"otter {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def otter_scores(results: Path) -> dict[str, float]:
    data = json.loads(results.read_text(encoding="utf-8"))
    return {t["name"]: t["score"] for t in data["tests"] if t["name"] != "Public Tests"}


def otter_scores_solved_and_unsolved(chapter, tmp_path):
    (master,) = write_masters(tmp_path, [chapter.label])
    folder = master.parent
    otter("assign", master.name, "dist", "--no-pdfs", cwd=folder)
    (zip_path,) = (folder / "dist" / "autograder").glob("*.zip")
    student_nb = nbformat.read(folder / "dist" / "student" / master.name, as_version=4)
    solved_nb = solved_submission(student_nb, course_source(chapter))
    assert "otter" in student_nb.metadata and student_nb.metadata["otter"]["tests"], "no tests in the student notebook"
    public = json.dumps(student_nb.metadata["otter"]["tests"])
    assert "hidden=True" not in public, f"{chapter.stem}: the student notebook carries hidden tests"

    source = course_source(chapter)
    expected = check_points(source)
    total = sum(expected.values())
    # The one-mistake submission is graded by nbgrader above (the same checks run under both graders);
    # here, solved and unsolved only, which keeps otter's start-up cost (10-15 s a run) to two runs.
    seconds, scores = {}, {}
    for name, nb in (("solved", lean(solved_nb)), ("unsolved", lean(student_nb))):
        run_dir = tmp_path / "runs" / name
        run_dir.mkdir(parents=True)
        nbformat.write(nb, run_dir / master.name)
        began = time.monotonic()
        otter("run", "-a", str(zip_path), "-o", str(run_dir), str(run_dir / master.name), cwd=folder)
        seconds[name] = time.monotonic() - began
        scores[name] = otter_scores(run_dir / "results.json")
    save(f"otter-{chapter.label}", {
        "chapter": chapter.number, "label": chapter.label, "autograded_points": total,
        "scores": {k: sum(v.values()) for k, v in scores.items()},
        "seconds": {k: round(v, 1) for k, v in seconds.items()}})

    assert scores["solved"] == expected, f"{chapter.stem}: otter gives the solved notebook {scores['solved']}; expected {expected}"
    assert sum(scores["unsolved"].values()) == 0, f"{chapter.stem}: otter gives the student notebook {scores['unsolved']}"


def grading_tests(chapter):
    """One class per chapter, so that pytest-xdist (`--dist loadscope`) spreads the chapters over
    its workers, while each chapter's two graders run one after the other."""

    class Grading:
        def test_nbgrader_scores_solved_unsolved_and_wrong(self, course):
            nbgrader_scores_solved_unsolved_and_wrong(chapter, course)

        def test_otter_scores_solved_and_unsolved(self, tmp_path):
            otter_scores_solved_and_unsolved(chapter, tmp_path)

    Grading.__name__ = Grading.__qualname__ = f"TestGrading_{chapter.label}"
    return Grading


for _chapter in CHAPTERS:
    globals()[f"TestGrading_{_chapter.label}"] = grading_tests(_chapter)


def test_instructors_table_is_generated_from_the_notebooks():
    assert table.current() == table.block(), (
        "book/instructors.md: the table of exercises and points is out of date; run `python -m tools.grading.table`")


def test_course_configuration():
    """The settings of tools/grading/nbgrader_config.py that instructors.md explains."""
    from traitlets.config.loader import PyFileConfigLoader

    from tools.grading.course import CONFIG

    config = PyFileConfigLoader(CONFIG.name, path=str(CONFIG.parent)).load_config()
    # chapter 6's training cells take 30-60 s on a 2-core CPU: ten times that at least
    assert config.Execute.timeout >= 600
    assert config.OverwriteCells.add_missing_cells is True
    names = [cls.__name__ for cls in config.GenerateFeedback.preprocessors]
    assert names.index("GetGrades") < names.index("ClearHiddenTests")
