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
