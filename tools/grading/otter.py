"""otter-grader assignments generated from the nbgrader-annotated chapters (one source, two formats).

    python -m tools.grading.otter DEST [LABEL ...]
        # DEST/<label>/<stem>.ipynb (otter-assign master) and requirements.txt, then `otter assign
        # <stem>.ipynb dist --no-pdfs` in DEST/<label>, and the zip finished (the per-cell time limit)

The master notebook of a chapter is its nbgrader course source (tools.grading.course.course_source:
Colab-ready markdown, solutions and hidden tests included) rewritten in otter-assign's format:

- the first cell is otter's assignment configuration (a raw cell `# ASSIGNMENT CONFIG`), with the
  tests stored in the student notebook's metadata, so that `grader.check("<label>_exN")` works in
  Colab from the one .ipynb file;
- every code exercise becomes a question named after its label: the exercise statement is its
  prompt, the nbgrader solution cell its solution (otter replaces the region between
  `# BEGIN SOLUTION` and `# END SOLUTION` by `...`, the lines around it stay), and the nbgrader
  check cell its tests. A check cell without hidden tests is one public test worth the cell's
  points. A check cell with `### BEGIN HIDDEN TESTS` gives a public test (its visible part, 0
  points, what a student's `grader.check` runs) and a hidden test (the whole cell, worth the
  points), so the score is the nbgrader score: all of a check cell's points or none;
- every written answer (nbgrader answer cell) becomes a manually graded question with its points,
  the model answer as its solution.

A test runs the check cell's code in the notebook's global namespace (`exec`), exactly what
nbgrader runs, so the two graders cannot disagree about what a check means.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import yaml
from nbgrader import utils as nbgrader_utils

from tools.grading.course import chosen, course_source
from tools.grading.references import references_text
from tools.grading import grading_runtime, otter_grading
from tools.registry import ROOT, Chapter


def _raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text)


def _yaml(config: dict) -> str:
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=None).strip()


def split_hidden(text: str) -> tuple[str, bool]:
    """The visible part of a check cell, and whether it had hidden tests."""
    visible, inside, had = [], False, False
    for line in text.split("\n"):
        if grading_runtime.HIDDEN_BEGIN in line:
            inside, had = True, True
        elif grading_runtime.HIDDEN_END in line:
            inside = False
        elif not inside:
            visible.append(line)
    return "\n".join(visible), had


def without_hidden_markers(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if "HIDDEN TESTS" not in line)


def _test_cell(name: str, code: str, points: float, hidden: bool, gid: str = "") -> nbformat.NotebookNode:
    config = f'""" # BEGIN TEST CONFIG\nhidden: {str(hidden).lower()}\npoints: {points:g}\n""" # END TEST CONFIG'
    function = f"test_{name}"
    # The check's code runs as a string in the notebook's namespace (exactly what nbgrader runs). A
    # failure is re-raised as one sentence that names the check: otter prints the failing line of
    # this test and the error's message, so the raise line below is all it shows, never a line of
    # the check; a hidden test's message says nothing of its code, reference or expected value.
    if hidden:
        message = f"f'{name} failed: a hidden test of this exercise did not pass.'"
    else:
        message = (f"f'{name} failed: {{type(error).__name__}}' + "
                   f"(': ' + str(error).strip().splitlines()[0][:300] if str(error).strip() else '.')")
    body = (f"{config}\ndef {function}(env):\n"
            f"    check = {code!r}\n"
            f"    try:\n"
            f"        exec(compile(check, {name!r}, 'exec'), env)\n"
            f"    except Exception as error:\n"
            f"        message = {message}\n"
            + "".join(f"        {line}\n" for line in (grading_runtime.failure_lines(gid, "message") if hidden else [])) +
            f"    else:\n"
            f"        return\n"
            f"    raise AssertionError(message) from None\n"
            f"{function}(globals())")
    return nbformat.v4.new_code_cell(body)


def _otter_solution(text: str) -> str:
    """nbgrader's `### BEGIN SOLUTION` markers -> otter's `# BEGIN SOLUTION`."""
    return re.sub(r"^(\s*)#+\s*(BEGIN|END) SOLUTION\s*$", r"\1# \2 SOLUTION", text, flags=re.MULTILINE)


def master_notebook(chapter: Chapter) -> nbformat.NotebookNode:
    nb = course_source(chapter)
    cells = nb.cells
    config = {
        "name": chapter.label,
        "init_cell": True,
        "check_all_cell": False,
        "export_cell": False,
        "run_tests": False,           # the suite runs `otter run` on a solved and an unsolved submission
        "tests": {"files": False, "ok_format": False},   # tests in the notebook's metadata: Colab needs one file
        "generate": {"show_stdout": True, "show_hidden": False},
        # the chapter's own dependencies, pinned (chapter_requirements): the autograder zip's
        # environment.yml installs them with otter-grader
        "requirements": "requirements.txt",
        # otter's default list adds otter-grader[grading,plugins]; no plugin is used, and the plugins
        # extra brings Google's API clients: requirements.txt names otter-grader[grading] itself
        "overwrite_requirements": True,
    }
    out = [_raw("# ASSIGNMENT CONFIG\n" + _yaml(config))]
    i = 0
    while i < len(cells):
        cell = cells[i]
        label = _exercise_label(cell)
        if label is None:
            if nbgrader_utils.is_grade(cell) or nbgrader_utils.is_solution(cell):
                raise ValueError(f"{chapter.stem}: nbgrader cell {cell.metadata['nbgrader'].get('grade_id')!r} "
                                 f"follows no exercise statement")
            out.append(cell)
            i += 1
            continue
        # the exercise's cells: the statement, then its nbgrader cells up to the next non-nbgrader cell
        j = i + 1
        group = []
        while j < len(cells) and (nbgrader_utils.is_grade(cells[j]) or nbgrader_utils.is_solution(cells[j])):
            group.append(cells[j])
            j += 1
        out.extend(_questions(chapter, label, cell, group))
        i = j
    nb.cells = out
    nb.metadata.pop("otter", None)
    return nb


EXERCISE_HEADING = re.compile(r"^### Exercise `([\w-]+)`", re.MULTILINE)


def _exercise_label(cell) -> str | None:
    if cell.cell_type != "markdown":
        return None
    m = EXERCISE_HEADING.search(cell.source)
    return m.group(1) if m else None


def _questions(chapter: Chapter, label: str, statement, group) -> list:
    code_solutions = [c for c in group if c.cell_type == "code" and nbgrader_utils.is_solution(c)]
    checks = [c for c in group if c.cell_type == "code" and nbgrader_utils.is_grade(c)]
    answers = [c for c in group if c.cell_type == "markdown" and nbgrader_utils.is_solution(c)]
    if not (code_solutions or answers):
        return [statement] + group
    out = []
    prompt_used = False
    if code_solutions or checks:
        tests, points = [], 0.0
        for check in checks:
            gid = check.metadata.nbgrader["grade_id"]
            p = float(check.metadata.nbgrader.get("points") or 0)
            visible, had_hidden = split_hidden(check.source)
            if had_hidden:
                tests.append(_test_cell(f"{gid}_public", visible, 0, hidden=False))
                tests.append(_test_cell(f"{gid}_hidden", without_hidden_markers(check.source), p, hidden=True, gid=gid))
            else:
                tests.append(_test_cell(gid, check.source, p, hidden=False))
            points += p
        out.append(_raw("# BEGIN QUESTION\n" + _yaml({"name": label})))
        out.append(statement)
        prompt_used = True
        out.append(_raw("# BEGIN SOLUTION"))
        for sol in code_solutions:
            cell = nbformat.v4.new_code_cell(_otter_solution(sol.source))
            cell.metadata["book_solution"] = sol.metadata.nbgrader["grade_id"]  # which nbgrader cell it was
            out.append(cell)
        out.append(_raw("# END SOLUTION"))
        if tests:
            out.append(_raw("# BEGIN TESTS"))
            out.extend(tests)
            out.append(_raw("# END TESTS"))
        out.append(_raw("# END QUESTION"))
    for answer in answers:
        gid = answer.metadata.nbgrader["grade_id"]
        points = float(answer.metadata.nbgrader.get("points") or 0)
        out.append(_raw("# BEGIN QUESTION\n" + _yaml({"name": gid, "manual": True, "points": points})))
        if not prompt_used:
            out.append(statement)
            prompt_used = True
        else:
            out.append(nbformat.v4.new_markdown_cell(f"*The written part of exercise `{label}`.*"))
        out.append(_raw("# BEGIN SOLUTION"))
        out.append(nbformat.v4.new_markdown_cell(answer.source))
        out.append(_raw("# END SOLUTION"))
        out.append(_raw("# END QUESTION"))
    return out


# What the notebooks import, by module, and the distribution that provides it (pinned from the
# repository's constraints.txt). A notebook's kernel needs ipykernel as well.
DISTRIBUTIONS = {"numpy": "numpy", "torch": "torch", "matplotlib": "matplotlib",
                 "ipywidgets": "ipywidgets", "IPython": "ipython"}
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def chapter_requirements(chapter: Chapter) -> str:
    """The chapter's requirements.txt for the autograder: what its code imports, pinned, and
    torch's CPU build (no grading step needs a GPU; PyPI's Linux torch pulls several GB of CUDA)."""
    nb = nbformat.read(chapter.notebook, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    modules = set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", code, flags=re.MULTILINE))
    wanted = sorted({DISTRIBUTIONS[m] for m in modules if m in DISTRIBUTIONS} | {"ipykernel"})
    pinned = pins()
    missing = [d for d in wanted if d not in pinned]
    if missing:
        raise ValueError(f"constraints.txt pins no version of {missing}, which {chapter.stem} needs")
    lines = [f"# {chapter.stem}: otter-grader, and what the chapter's code imports, pinned as in the book's constraints.txt",
             f"otter-grader[grading]=={pinned['otter-grader']}"]
    if "torch" in wanted:
        lines.append(f"--extra-index-url {TORCH_CPU_INDEX}")
    lines += [f"{d}=={pinned[d]}" for d in wanted]
    return "\n".join(lines) + "\n"


def write_masters(dest: Path, labels: list[str] | None = None) -> list[Path]:
    written = []
    for chapter in chosen(labels):
        folder = Path(dest) / chapter.label
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{chapter.stem}.ipynb"
        nbformat.write(master_notebook(chapter), path)
        (folder / "requirements.txt").write_text(chapter_requirements(chapter), encoding="utf-8")
        written.append(path)
    return written


def finish_zip(zip_path: Path, references: str) -> None:
    """Make an autograder zip grade the book's way: otter_grading.py and grading_runtime.py beside a
    run_otter.py (what Gradescope runs) that installs them before otter starts, and references.json, the
    model solution's answers (tools/grading/references.py), which run_otter.py reads and removes."""
    import zipfile

    with zipfile.ZipFile(zip_path) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    if "run_otter.py" not in entries:
        raise ValueError(f"{zip_path}: no run_otter.py; is this an otter-grader autograder zip?")
    entries["run_otter.py"] = otter_grading.RUN_OTTER.format(seconds=grading_runtime.CELL_SECONDS).encode()
    entries["otter_grading.py"] = Path(otter_grading.__file__).read_bytes()
    entries["grading_runtime.py"] = Path(grading_runtime.__file__).read_bytes()
    entries["references.json"] = references.encode("utf-8")
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)


def assign(dest: Path, labels: list[str] | None = None) -> list[Path]:
    """Masters, `otter assign` (no PDFs: no LaTeX needed) and the finished zip of each chosen
    chapter: DEST/<label>/dist/student/<stem>.ipynb and DEST/<label>/dist/autograder/*.zip.

    otter assign runs in this process, through otter's own entry point (`otter.assign.main`, what the
    `otter assign` command calls), rather than as a second Python process that imports otter again
    (1.5 CPU-seconds a chapter)."""
    import contextlib
    import io

    from otter import logging as otter_logging
    from otter.assign import main as otter_assign

    otter_logging.set_level(otter_logging.WARNING)   # what the command sets without -v
    out = []
    for master in write_masters(dest, labels):
        log = io.StringIO()
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                otter_assign(str(master), str(master.parent / "dist"), no_pdfs=True)
        except Exception as error:  # noqa: BLE001 - reported in one sentence with otter's output
            raise SystemExit(f"otter assign {master} failed: {type(error).__name__}: {error}\n{log.getvalue()[-2000:]}") from None
        (zip_path,) = (master.parent / "dist" / "autograder").glob("*.zip")
        chapter = next(c for c in chosen(labels) if c.stem == master.stem)
        finish_zip(zip_path, references_text(chapter))
        out.append(master.parent / "dist")
    return out


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    for dist in assign(Path(sys.argv[1]), sys.argv[2:] or None):
        print(f"{dist}: student/ (hand out) and autograder/*.zip (Gradescope, or python -m tools.grading.otter_run)")
