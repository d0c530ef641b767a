"""tools/grading/check_submissions.py on a hand-made course (no kernel): every student gets one line,
and a submission that cannot be graded at all (another assignment's notebook, a file under another
name, an empty or a broken file) is one clear sentence, while the rest of the class is checked."""
from __future__ import annotations

import contextlib
import io

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from tools.grading import check_submissions


def graded(label: str) -> nbformat.NotebookNode:
    def meta(kind, **extra):
        return {"nbgrader": {"grade_id": f"{label}_ex1_{kind}", "schema_version": 3, **extra}}
    return new_notebook(cells=[
        new_code_cell("def f(x):\n    raise NotImplementedError()", metadata=meta("solution", solution=True, grade=False, locked=False)),
        new_code_cell("assert f(1) == 2", metadata=meta("check", grade=True, solution=False, locked=True, points=1))])


def test_each_student_gets_one_sentence_and_the_class_is_checked(tmp_path):
    course, assignment, name = tmp_path / "course", "alpha", "03_alpha.ipynb"
    (course / "release" / assignment).mkdir(parents=True)
    nbformat.write(graded("alpha"), course / "release" / assignment / name)
    def hand_in(student, filename, content):
        folder = course / "submitted" / student / assignment
        folder.mkdir(parents=True)
        if isinstance(content, str):
            (folder / filename).write_text(content, encoding="utf-8")
        else:
            nbformat.write(content, folder / filename)
    hand_in("a_good", name, graded("alpha"))
    hand_in("b_other_chapter", name, graded("beta"))
    hand_in("c_renamed_file", "my homework.ipynb", graded("alpha"))
    hand_in("d_empty", name, "")
    hand_in("e_truncated", name, '{"cells": [{"cell_type": "code", "source": "x = ')
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = check_submissions.main([str(course), assignment, "--fix"])
    lines = {line.split(":")[0]: line for line in out.getvalue().splitlines() if ":" in line}
    assert status == 1
    assert lines["a_good"] == "a_good: ok"
    assert lines["b_other_chapter"] == ("b_other_chapter: PROBLEM: not this assignment's notebook: its exercises are "
                                        "beta's; ask the student for the right one")
    assert lines["c_renamed_file"] == f"c_renamed_file: PROBLEM: no {name} in the submission; it holds my homework.ipynb"
    assert lines["d_empty"] == "d_empty: PROBLEM: an empty file"
    assert lines["e_truncated"].startswith("e_truncated: PROBLEM: not a readable notebook (") and "Traceback" not in out.getvalue()
    assert "5 submission(s) checked" in out.getvalue()
    # --fix left the other chapter's notebook as it was handed in
    kept = nbformat.read(course / "submitted" / "b_other_chapter" / assignment / name, as_version=4)
    assert [c.metadata["nbgrader"]["grade_id"] for c in kept.cells] == ["beta_ex1_solution", "beta_ex1_check"]


def test_otter_grades_a_copy_without_the_skip_tags_a_student_added(tmp_path):
    """tools/grading/otter_run (issue 38, item 2, under otter): a grading skip tag on a cell that is no
    released demonstration is taken off in the copy that otter grades; a released demonstration keeps
    its tag, and a submission without an added tag is graded as handed in."""
    from tools.grading import otter_run
    demo = new_code_cell("model = train()  # a demonstration", metadata={"tags": ["otter_ignore"]})
    release = new_notebook(cells=[demo, new_code_cell("def f(x):\n    ...\n"), new_code_cell('grader.check("q1")')])
    nbformat.write(release, tmp_path / "release.ipynb")
    handed_in = new_notebook(cells=[nbformat.from_dict(c) for c in release.cells])
    handed_in.cells[1].source = "def f(x):\n    return 2 * x\n"
    handed_in.cells[2].metadata["tags"] = ["otter_ignore", "mine"]
    nbformat.write(handed_in, tmp_path / "student.ipynb")
    graded = otter_run.without_added_skip_tags(tmp_path / "student.ipynb", tmp_path / "release.ipynb", tmp_path / "out")
    assert graded == tmp_path / "out" / "graded.ipynb"
    nb = nbformat.read(graded, as_version=4)
    assert nb.cells[2].metadata["tags"] == ["mine"] and nb.cells[0].metadata["tags"] == ["otter_ignore"]
    assert nb.cells[1].source == handed_in.cells[1].source
    assert "skip tag 'otter_ignore' added on cell 2 (graded without it)" in otter_run.tampering(tmp_path / "student.ipynb", tmp_path / "release.ipynb")
    nbformat.write(release, tmp_path / "untagged.ipynb")
    assert otter_run.without_added_skip_tags(tmp_path / "untagged.ipynb", tmp_path / "release.ipynb", tmp_path / "o2") == tmp_path / "untagged.ipynb"
