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


def test_only_the_notebook_is_taken_in_and_no_link_is_followed(tmp_path):
    """Issue 43, item 2: whatever is handed in beside the notebook (a planted ipykernel_launcher.py, a .pth, otter's
    .OTTER_LOG, a folder, a link into the course) is named per student and moved to the backup by --fix, so that
    nbgrader copies only the notebook (and its own timestamp.txt) next to the kernel and into the feedback; a
    link in place of the notebook or of a folder is a PROBLEM, never followed, and --fix moves the link away."""
    course, assignment, name = tmp_path / "course", "alpha", "03_alpha.ipynb"
    (course / "release" / assignment).mkdir(parents=True)
    (course / "source").mkdir()
    (course / "source" / "secret.ipynb").write_text("the instructor's solutions")
    nbformat.write(graded("alpha"), course / "release" / assignment / name)
    submitted = course / "submitted"
    for student in ("a_good", "f_extras"):
        (submitted / student / assignment).mkdir(parents=True)
        nbformat.write(graded("alpha"), submitted / student / assignment / name)
        (submitted / student / assignment / "timestamp.txt").write_text("2026-11-27 12:00:00 UTC")
    extras = submitted / "f_extras" / assignment
    (extras / "ipykernel_launcher.py").write_text("print('mine first')")
    (extras / "evil.pth").write_text("import os")
    (extras / ".OTTER_LOG").write_bytes(b"\x80\x04crafted")
    (extras / "data").mkdir()
    (extras / "notes.txt").symlink_to("../../../source/secret.ipynb")
    (submitted / "g_linked_notebook" / assignment).mkdir(parents=True)
    (submitted / "g_linked_notebook" / assignment / name).symlink_to(submitted / "a_good" / assignment / name)
    (submitted / "h_linked_folder").mkdir()
    (submitted / "h_linked_folder" / assignment).symlink_to(submitted / "a_good" / assignment)
    (submitted / "i_linked_student").symlink_to(submitted / "a_good")
    good = (submitted / "a_good" / assignment / name).read_bytes()

    def check(*flags):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = check_submissions.main([str(course), assignment, *flags])
        return status, {line.split(":")[0]: line for line in out.getvalue().splitlines() if ":" in line}

    status, lines = check()
    assert status == 1 and lines["a_good"] == "a_good: ok"
    assert lines["f_extras"] == ("f_extras: handed in beside the notebook: .OTTER_LOG, data/, evil.pth, "
                                 "ipykernel_launcher.py, notes.txt (a link to ../../../source/secret.ipynb)")
    assert lines["g_linked_notebook"].startswith("g_linked_notebook: PROBLEM: the notebook is a link (to ")
    assert lines["h_linked_folder"].startswith("h_linked_folder: PROBLEM: the folder h_linked_folder/alpha is a link")
    assert lines["i_linked_student"].startswith("i_linked_student: PROBLEM: the folder i_linked_student is a link")
    status, lines = check("--fix")
    assert "(repaired; original in submitted-backup/)" in lines["f_extras"], lines["f_extras"]
    assert sorted(p.name for p in extras.iterdir()) == [name, "timestamp.txt"]
    backup = course / "submitted-backup" / "f_extras" / assignment
    assert (backup / "notes.txt").is_symlink() and (backup / "ipykernel_launcher.py").is_file()
    assert not (submitted / "g_linked_notebook" / assignment / name).exists()
    assert not (submitted / "h_linked_folder" / assignment).exists() and not (submitted / "i_linked_student").exists()
    assert (submitted / "a_good" / assignment / name).read_bytes() == good
    assert (course / "source" / "secret.ipynb").read_text() == "the instructor's solutions"
    status, lines = check("--fix")           # the class as it is now: the extras are gone, the links with them
    assert lines["f_extras"] == "f_extras: ok" and lines["a_good"] == "a_good: ok"
    assert lines["g_linked_notebook"].startswith("g_linked_notebook: PROBLEM: no 03_alpha.ipynb in the submission")


def test_otter_run_takes_in_the_notebook_alone_and_follows_no_link(tmp_path):
    """otter_run.submissions (issue 43, item 2, under otter): a notebook handed in as a link, or a student's
    folder whose only notebook is a link, is refused in one sentence; a linked folder is never entered; what a
    folder holds beside its notebook is named; and otter is given a plain copy of the notebook alone."""
    from tools.grading import otter_run
    folder = tmp_path / "submissions"
    folder.mkdir()
    (tmp_path / "source.ipynb").write_text("the instructor's solutions")
    nbformat.write(graded("alpha"), folder / "a_plain.ipynb")
    (folder / "b_link.ipynb").symlink_to(tmp_path / "source.ipynb")
    (folder / "c_extras").mkdir()
    nbformat.write(graded("alpha"), folder / "c_extras" / "hw.ipynb")
    (folder / "c_extras" / ".OTTER_LOG").write_bytes(b"\x80\x04crafted")
    (folder / "c_extras" / "ipykernel_launcher.py").write_text("print('mine first')")
    (folder / "c_extras" / "notes.txt").symlink_to(tmp_path / "source.ipynb")
    (folder / "d_only_a_link").mkdir()
    (folder / "d_only_a_link" / "hw.ipynb").symlink_to(tmp_path / "source.ipynb")
    (folder / "e_linked_folder").symlink_to(folder / "c_extras")
    found, refused, beside = otter_run.submissions(folder)
    assert sorted(found) == ["a_plain", "c_extras"] and found["c_extras"].name == "hw.ipynb"
    assert sorted(refused) == ["b_link", "d_only_a_link", "e_linked_folder"], refused
    assert refused["b_link"].startswith("a link (to ") and refused["d_only_a_link"].startswith("the notebook hw.ipynb is a link")
    assert beside == {"c_extras": [".OTTER_LOG", "ipykernel_launcher.py", f"notes.txt (a link to {tmp_path / 'source.ipynb'})"]}
    copy = otter_run.taken_in(found["c_extras"], tmp_path / "out" / "c_extras")
    assert not copy.is_symlink() and copy.read_bytes() == found["c_extras"].read_bytes()
    assert sorted(p.name for p in copy.parent.iterdir()) == ["submitted.ipynb"]
