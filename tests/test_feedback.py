"""The feedback preprocessors of tools/grading/nbgrader_config.py on hand-made cells: a failed check's
message never repeats a hidden test line, whoever raised it; a student's marker words mark nothing; a
cell's outputs are cut to the byte cap, and the cut is said. (The messy classes in test_grading.py run
them through nbgrader's generate_feedback.)"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_output
from traitlets.config import Config

from tools.registry import ROOT


def config_namespace() -> dict:
    path = ROOT / "tools" / "grading" / "nbgrader_config.py"
    namespace = {"get_config": Config, "__file__": str(path)}      # as traitlets runs it
    exec(compile(path.read_text(encoding="utf-8"), "nbgrader_config.py", "exec"), namespace)
    return namespace


NS = config_namespace()


@pytest.fixture(autouse=True)
def _no_backend_left_behind(monkeypatch):
    """otter_grading.install sets MPLBACKEND for the kernels it starts (in otter_run's and the zip's own
    processes); here it is undone after each test, so that a later notebook run in this worker draws as a
    reader's does."""
    monkeypatch.setenv("MPLBACKEND", "unset-by-the-test")
    monkeypatch.delenv("MPLBACKEND")
HIDDEN = "assert abs(total - 42.125) < 1e-9, 'the hidden total'"


def check_cell(message: str, line: int):
    source = f"check_array('x', x, [1.0])\n### BEGIN HIDDEN TESTS\n{HIDDEN}\n### END HIDDEN TESTS"
    cell = new_code_cell(source, metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "ex1_check",
                                                       "points": 1}}, execution_count=7)
    cell.outputs = [new_output("error", ename="AssertionError", evalue=message,
                               traceback=[f"Cell In[7], line {line}", message])]
    return cell


def test_a_message_that_quotes_a_hidden_line_says_only_that_a_hidden_test_failed():
    step = NS["OneSentenceCheckFailures"]()
    visible, _ = step.preprocess_cell(check_cell("x differs at index (0,)", 1), {}, 0)
    assert "x differs at index (0,)" in visible.outputs[0]["text"]
    # the student's own code raised, from the visible line, with the hidden line in its message
    quoted, _ = step.preprocess_cell(check_cell(f"found it: {HIDDEN}", 1), {}, 0)
    assert quoted.outputs[0]["text"] == "Check ex1_check failed: a hidden test of this exercise did not pass.\n"


def test_a_students_marker_words_mark_nothing_and_a_checks_stay():
    step = NS["StudentMarkersAreText"]()
    student, _ = step.preprocess_cell(new_code_cell("# ### BEGIN HIDDEN TESTS is what they hide"), {}, 0)
    assert "HIDDEN TESTS" not in student.source and "HIDDEN-TESTS" in student.source
    check, _ = step.preprocess_cell(check_cell("m", 1), {}, 0)
    assert "### BEGIN HIDDEN TESTS" in check.source


def test_outputs_are_cut_to_the_cap_per_cell():
    step, cap = NS["CapOutputBytes"](), NS["FEEDBACK_BYTES_PER_CELL"]
    cell = new_code_cell("print('é' * 10**6)")
    cell.outputs = [new_output("stream", name="stdout", text="é" * 10**6),
                    new_output("display_data", data={"text/html": "<b>" + "y" * cap + "</b>"})]
    cut, _ = step.preprocess_cell(cell, {}, 0)
    kept = sum(len(o.get("text", "").encode("utf-8")) for o in cut.outputs[:-1])
    assert kept <= cap and len(cut.outputs) == 2          # the HTML over the cap is dropped
    assert "more bytes of this cell's output left out" in cut.outputs[-1]["text"]
    small = new_code_cell("print(1)")
    small.outputs = [new_output("stream", name="stdout", text="1\n")]
    assert step.preprocess_cell(nbformat.from_dict(small), {}, 0)[0].outputs == small.outputs


@pytest.mark.kernel
def test_a_dead_kernel_costs_the_checks_after_it_only():
    """ExecuteUntilTheKernelDies (issue 38, item 5, under nbgrader): the kernel dies in the third cell; the
    check before it keeps its output (passed), the cell says where grading stopped, and every later cell,
    the second check included, carries an error so that it cannot count as passed. One real kernel."""
    def check(source, grade_id):
        return new_code_cell(source, metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": grade_id,
                                                           "points": 1}})
    nb = nbformat.v4.new_notebook(cells=[
        new_code_cell("x = 2"), check("assert x == 2", "ex1_check"),
        new_code_cell("import os\nos._exit(0)  # a student's code kills the kernel"),
        check("assert x == 2", "ex2_check"), nbformat.v4.new_markdown_cell("text"),
        new_code_cell("y = 1", metadata={"tags": ["otter_ignore"]})])
    config = Config()
    config.Execute.skip_cells_with_tag = "otter_ignore"
    config.Execute.timeout = 20
    config.Execute.startup_timeout = 120
    step = NS["ExecuteUntilTheKernelDies"](config=config)
    out, _ = step.preprocess(nb, {"metadata": {"path": "."}})
    errors = [[o for o in c.get("outputs", []) if o.get("output_type") == "error"] for c in out.cells]
    assert errors[0] == [] and errors[1] == [], errors[:2]
    assert errors[2][-1]["ename"] == "KernelDied" and errors[2][-1]["evalue"] == NS["KERNEL_DIED"]
    assert errors[3] and errors[3][-1]["evalue"] == NS["NOT_RUN"]
    assert out.cells[5].get("outputs") == [] and out.cells[4].cell_type == "markdown"


@pytest.mark.kernel
def test_the_kernel_runs_in_a_scratch_folder_that_goes_with_it(tmp_path):
    """ExecuteUntilTheKernelDies (issue 43, item 2): the kernel's working folder is an empty scratch folder,
    not the submission's folder nbgrader names, so a file or a link it leaves (to the gradebook, to a
    classmate's notebook) never reaches autograded/ or feedback/; the scratch folder is removed. One kernel."""
    submission = tmp_path / "autograded" / "student" / "label"
    submission.mkdir(parents=True)
    (tmp_path / "gradebook.db").write_text("grades")
    nb = nbformat.v4.new_notebook(cells=[new_code_cell(
        "import os\n"
        f"os.symlink({str(tmp_path / 'gradebook.db')!r}, 'gradebook-link.db')\n"
        "open('planted.txt', 'w').write('left for the grader')\n"
        "print(os.getcwd(), sorted(os.listdir('.')))")])
    config = Config()
    config.Execute.timeout = 20
    config.Execute.startup_timeout = 120
    resources = {"metadata": {"path": str(submission)}}
    out, resources = NS["ExecuteUntilTheKernelDies"](config=config).preprocess(nb, resources)
    printed = out.cells[0].outputs[0]["text"].split()
    assert printed[1:] == ["['gradebook-link.db',", "'planted.txt']"], printed
    assert printed[0] != str(submission) and not Path(printed[0]).exists(), printed[0]
    assert list(submission.iterdir()) == [] and resources["metadata"]["path"] == str(submission)


REFERENCE = [["w", {"type": "array", "shape": [1, 2], "values": [0.25, 0.75], "atol": 1e-9, "rtol": 0.0,
                     "weights": True, "compare_values": True, "hidden": False}],
             ["n", {"type": "int", "shape": [], "values": [42], "atol": 0.0, "rtol": 0.0, "weights": False,
                     "compare_values": True, "hidden": True}]]


def answers(*pairs, gid="ex1_check"):
    from tools.grading.grading_runtime import ANSWER_MIME
    return new_output("display_data", data={ANSWER_MIME: {"grade_id": gid, "answers": [list(p) for p in pairs]}})


def record(values, shape, kind="array"):
    return {"type": kind, "shape": shape, "values": values}


def scored(*outputs, references=None):
    """ScoreOutsideTheKernel on one hand-made check cell (no kernel): its outputs afterwards."""
    step = NS["ScoreOutsideTheKernel"]()
    step._references = references or {"ex1_check": {"points": 2, "answers": REFERENCE}}
    cell = new_code_cell("check_array('w', w, [[0.25, 0.75]])", metadata={"nbgrader": {
        "grade": True, "solution": False, "grade_id": "ex1_check", "points": 2}})
    cell.outputs = list(outputs)
    return step.preprocess_cell(cell, {}, 0)[0].outputs


RIGHT = (["w", record([0.25, 0.75], [1, 2])], ["n", record([42], [], "int")])


def test_a_check_is_scored_outside_the_kernel_from_its_answers():
    """ScoreOutsideTheKernel (issue 43, item 1): the answers a check cell sent are compared with the model
    solution's in nbgrader's process; what else the kernel printed decides nothing."""

    from tools.grading.grading_runtime import NO_ANSWER, WRONG
    passed = scored(new_output("stream", name="stdout", text="w ok\n"), answers(*RIGHT))
    assert [o["output_type"] for o in passed] == ["stream", "stream"] and "matches" in passed[-1]["text"]
    # a result value that nbgrader would read as partial credit (300 of 2), and stderr, are dropped
    padded = scored(answers(*RIGHT), new_output("execute_result", data={"text/plain": "300"}, execution_count=1),
                    new_output("stream", name="stderr", text="warning\n"))
    assert [o["output_type"] for o in padded] == ["stream"]
    cases = {  # what the kernel sent -> the error nbgrader then scores 0, and its sentence
        "nothing": ((), NO_ANSWER, "sent no answers"),
        "a completion line only": ((new_output("stream", name="stdout", text="ex1_check: every check ran to its end\n"),),
                                   NO_ANSWER, "sent no answers"),
        "another check's answers": ((answers(*RIGHT, gid="ex2_check"),), NO_ANSWER, "another check"),
        "a wrong visible value": ((answers(["w", record([0.5, 0.5], [1, 2])], RIGHT[1]),), WRONG, "got 0.5, expected 0.25"),
        "weights that do not sum to 1": ((answers(["w", record([0.25, 0.8], [1, 2])], RIGHT[1]),), WRONG, "sum to 1"),
        "a wrong hidden value": ((answers(RIGHT[0], ["n", record([41], [], "int")]),), WRONG, "hidden test"),
        "a float for an int": ((answers(RIGHT[0], ["n", record([42.0], [])]),), WRONG, "hidden test"),
        "NaN": ((answers(["w", record(["nan", 0.75], [1, 2])], RIGHT[1]),), WRONG, "NaN"),
        "a wrong shape": ((answers(["w", record([0.25, 0.75], [2])], RIGHT[1]),), WRONG, "shape"),
        "a missing answer": ((answers(RIGHT[0]),), WRONG, "hidden test"),
        "right, then wrong": ((answers(*RIGHT), answers(RIGHT[0], ["n", record([7], [], "int")])), WRONG, "hidden test"),
        "not the format": ((new_output("display_data", data={NS["runtime"].ANSWER_MIME: [1, 2]}),), NO_ANSWER, "format"),
        "a kernel's error": ((new_output("error", ename="AssertionError", evalue="w differs", traceback=[]),),
                             "AssertionError", "w differs"),
    }
    for what, (outputs, ename, words) in cases.items():
        out = scored(*outputs)
        errors = [o for o in out if o["output_type"] == "error"]
        assert len(errors) == 1 and errors[0]["ename"] == ename and words in errors[0]["evalue"], (what, out)
        assert not any(NS["runtime"].ANSWER_MIME in o.get("data", {}) for o in out), what


def test_problems_name_a_check_without_answers():
    out = scored()
    nb = {"cells": [{"cell_type": "code", "source": "x", "metadata": {"nbgrader": {"grade_id": "ex1_check"}}, "outputs": out}]}
    assert NS["problems"](nb) == ["ex1_check sent no answers (its checks did not run to their end)"]


def test_hardened_checks_record_every_check_and_send_the_record_last():
    """harden_checks on hand-made cells: the hidden part defines the helpers again, runs the visible checks
    again with them, marks what follows as hidden, and ends with the line that sends the answers out."""
    from tools.grading.course import harden_checks
    meta = {"nbgrader": {"grade": True, "solution": False, "grade_id": "ex1_check", "points": 1}}
    with_hidden = new_code_cell("a = 1\n### BEGIN HIDDEN TESTS\nhidden = 2\n### END HIDDEN TESTS", metadata=meta)
    visible_only = new_code_cell("check_array('x', x, [1.0])", metadata={"nbgrader": dict(meta["nbgrader"], grade_id="ex2_check")})
    nb = harden_checks(nbformat.v4.new_notebook(cells=[with_hidden, visible_only, new_code_cell("x = 1")]))
    first = nb.cells[0].source.split("\n")
    assert first[:2] == ["a = 1", "### BEGIN HIDDEN TESTS"] and first[2].startswith("# shared helper: check_helpers")
    assert first[-5:] == ["a = 1", "_IN_HIDDEN[0] = True", "hidden = 2", "emit_answers('ex1_check')", "### END HIDDEN TESTS"]
    second = nb.cells[1].source.split("\n")
    assert second[0] == second[-4] == "check_array('x', x, [1.0])" and "def check_array(" in nb.cells[1].source
    assert second[-2] == "emit_answers('ex2_check')"
    assert nb.cells[2].source == "x = 1"


@pytest.mark.kernel
def test_otter_names_the_cell_in_which_the_kernel_died(tmp_path):
    """otter_grading's executor (otter_run and the Gradescope zip): a dead kernel is reported with the
    first line of the cell in which it died, not as a bare DeadKernelError. One real kernel."""
    import nbconvert.preprocessors
    import pytest
    from nbclient.exceptions import DeadKernelError

    from tools.grading import otter_grading
    original = nbconvert.preprocessors.ExecutePreprocessor
    try:
        otter_grading.install(otter_grading.CELL_SECONDS)
        nb = nbformat.v4.new_notebook(cells=[new_code_cell("x = 1"), new_code_cell("import os\nos._exit(0)"), new_code_cell("y = 2")])
        with pytest.raises(DeadKernelError, match="the cell that begins 'import os': the kernel died in it"):
            nbconvert.preprocessors.ExecutePreprocessor(startup_timeout=120).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    finally:
        nbconvert.preprocessors.ExecutePreprocessor = original


def test_what_a_student_wrote_is_shown_never_run():
    """The course's HTMLExporter configuration (feedback and formgrader, issue 43, item 4): a script in a written
    answer or in an output, and an image with an event handler, are shown as text, never as live HTML; the
    answer's words and harmless markup stay."""
    from nbconvert import HTMLExporter
    payload = "fetch('/api/contents/x', {method: 'PUT'})"
    answer = nbformat.v4.new_markdown_cell(f'My answer: the weights sum to one.\n\n<img src="x" onerror="{payload}">'
                                           f"\n<script>{payload}</script>")
    printed = new_code_cell("display(HTML(...))")
    printed.outputs = [new_output("display_data", data={"text/html": f"<b>bold</b><script>{payload}</script>",
                                                         "text/plain": "<HTML>"})]
    nb = nbformat.v4.new_notebook(cells=[answer, printed])
    html, _ = HTMLExporter(config=NS["c"]).from_notebook_node(nb)
    assert "the weights sum to one" in html and "<b>bold</b>" in html
    live = [f"<script>{payload}", f'<img src="x" onerror="{payload}">']
    assert not [tag for tag in live if tag in html], [line for line in html.splitlines() if payload in line]
    # (what is left of them is shown as text: &lt;script&gt;..., which a browser does not run)
    assert all("&lt;" in line for line in html.splitlines() if payload in line)


def _slow_imports_then_a_loop():
    # the first cell stands for imports slower than a cell's limit (a loaded machine), the second for a loop
    return nbformat.v4.new_notebook(cells=[new_code_cell("import time\ntime.sleep(4)\nfirst = 'ran'"),
                                           new_code_cell("time.sleep(4)\nsecond = 'ran'"),
                                           new_code_cell("print(first)")])


@pytest.mark.kernel
def test_the_first_cell_gets_a_longer_budget_under_nbgrader(tmp_path, monkeypatch):
    """ExecuteUntilTheKernelDies (issue 43, item 4): the first cell a kernel runs, its imports, gets
    FIRST_CELL_SECONDS, every later cell the cell limit; here 6 s and 2 s, with two 4 s cells. One kernel."""
    monkeypatch.setattr(NS["runtime"], "FIRST_CELL_SECONDS", 6)
    config = Config()
    config.Execute.timeout = 2
    config.Execute.interrupt_on_timeout = True
    config.Execute.startup_timeout = 120
    out, _ = NS["ExecuteUntilTheKernelDies"](config=config).preprocess(_slow_imports_then_a_loop(), {"metadata": {"path": str(tmp_path)}})
    errors = [[o.get("ename") for o in c.outputs if o.get("output_type") == "error"] for c in out.cells]
    assert errors[0] == [] and errors[1] and errors[2] == [], errors
    assert out.cells[2].outputs[0]["text"] == "ran\n"


@pytest.mark.kernel
def test_the_first_cell_gets_a_longer_budget_under_otter(tmp_path, monkeypatch):
    """otter_grading's executor (otter_run and the Gradescope zip): the same budgets as nbgrader's (one module
    defines them: grading_runtime)."""
    import nbconvert.preprocessors

    from tools.grading import grading_runtime, otter_grading
    monkeypatch.setattr(grading_runtime, "FIRST_CELL_SECONDS", 6)
    original = nbconvert.preprocessors.ExecutePreprocessor
    try:
        otter_grading.install(2)
        out, _ = nbconvert.preprocessors.ExecutePreprocessor(startup_timeout=120, allow_errors=True).preprocess(
            _slow_imports_then_a_loop(), {"metadata": {"path": str(tmp_path)}})
    finally:
        nbconvert.preprocessors.ExecutePreprocessor = original
    errors = [[o.get("ename") for o in c.outputs if o.get("output_type") == "error"] for c in out.cells]
    assert errors[0] == [] and errors[1] and errors[2] == [], errors


def test_a_goal_is_computed_outside_where_many_answers_are_right():
    """grading_runtime.goal_missed: chapter 1's s_focus, any state of length <= 3 that gives h1 >= 0.9."""
    from tools.grading.grading_runtime import compare_one
    goal = {"length_at_most": 3, "softmax_of": [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], "index": 0, "at_least": 0.9}
    expected = {"type": "array", "shape": [2], "values": [3.0, 0.0], "compare_values": False, "goal": goal}
    assert compare_one("s", expected, record([2.9, -0.1], [2])) is None          # not the model's, and right
    assert "longer than 3" in compare_one("s", expected, record([3.0, 1.0], [2]))
    assert "weight of" in compare_one("s", expected, record([1.0, 0.0], [2]))
    assert "infinity" in compare_one("s", expected, record(["inf", 0.0], [2]))


def test_otter_scores_come_from_the_references_and_never_exceed_the_points():
    """otter_grading.results_from: one question per exercise, worth its checks' points from the references;
    a check passes only on its own answers; what the kernel claimed is not read."""
    from tools.grading.otter_grading import results_from
    references = {"ex1_check": {"points": 2, "answers": REFERENCE},
                  "x_ex2_check": {"points": 3, "answers": REFERENCE}}
    cell = new_code_cell("grader.check_all()")
    cell.outputs = [answers(*RIGHT), answers(*RIGHT, gid="x_ex2_check"), answers(RIGHT[0], gid="x_ex2_check")]
    results = results_from(nbformat.v4.new_notebook(cells=[cell]), references)
    assert {name: tf.score for name, tf in results.results.items()} == {"ex1_check": 2.0, "x_ex2": 0.0}
    assert results.total == 2.0 and results.possible == 5.0 and results.unfinished == []
    empty = results_from(nbformat.v4.new_notebook(cells=[]), references)
    assert empty.total == 0 and len(empty.unfinished) == 2


def test_the_zip_takes_in_only_the_notebook(tmp_path):
    from tools.grading.otter_grading import take_in_only_the_notebook
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "02_soft_attention.ipynb").write_text("{}" * 50)
    (folder / "old.ipynb").write_text("{}")
    (folder / ".OTTER_LOG").write_bytes(b"\x80\x04")
    (folder / "ipykernel_launcher.py").write_text("print('first')")
    (folder / "notes").mkdir()
    (folder / "link.txt").symlink_to(tmp_path)
    removed = take_in_only_the_notebook(str(folder))
    assert sorted(p.name for p in folder.iterdir()) == ["02_soft_attention.ipynb"]
    assert sorted(removed) == [".OTTER_LOG", "ipykernel_launcher.py", "link.txt", "notes", "old.ipynb"]
    assert tmp_path.is_dir()


@pytest.mark.kernel
def test_a_cell_that_ignores_the_interrupt_stops_its_kernel_and_is_named(tmp_path):
    """ExecuteUntilTheKernelDies (issue 43, item 4): a cell that the interrupt at the time limit does not stop (here
    one that ignores SIGINT; a regular expression that backtracks inside compiled code can do the same, and did
    under the sandbox's message interrupts); one limit later its kernel is stopped, the cell
    says why, the later cells say they were not run, the cells before keep their results, and the export's
    problems column names it. One kernel, a 2 s limit."""
    config = Config()
    config.Execute.timeout = 2
    config.Execute.interrupt_on_timeout = True
    config.Execute.startup_timeout = 120
    nb = nbformat.v4.new_notebook(cells=[new_code_cell("import signal\nbefore = 'ran'\nprint(before)"),
                                         new_code_cell("signal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"),
                                         new_code_cell("print('after')")])
    out, _ = NS["ExecuteUntilTheKernelDies"](config=config).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert out.cells[0].outputs[0]["text"] == "ran\n"
    assert out.cells[1].outputs[-1]["evalue"] == NS["runtime"].UNRESPONSIVE
    assert out.cells[2].outputs[-1]["evalue"] == NS["NOT_RUN"]
    notes = NS["problems"](nbformat.from_dict(json.loads(nbformat.writes(out))))
    assert notes == ["cell 1 ('signal.signal(signal.SIGINT, signal.SIG_IGN)') ignored the interrupt at the time limit "
                     "and its kernel was stopped; the checks after it scored 0"], notes


def test_otter_starts_no_log_server_and_reads_no_log():
    """otter_grading.install (issue 43, item 3): otter's log server, which unpickles whatever reaches its port,
    is not started, an .OTTER_LOG is never deserialized, and the results file the kernel writes is never
    unpickled (an empty result stands in for it; the scores come from results_from)."""
    import io

    import nbconvert.preprocessors
    import otter.execute as execute
    import pytest
    from otter.check.logs import Log

    from tools.grading import otter_grading
    original = nbconvert.preprocessors.ExecutePreprocessor
    try:
        otter_grading.install(otter_grading.CELL_SECONDS)
        (host, port), stop = execute.start_server()
        assert (host, port) == ("127.0.0.1", 9) and stop() is None
        with pytest.raises(ValueError, match="reads no .OTTER_LOG"):
            Log.from_file(".OTTER_LOG")
        assert execute.pickle.load(io.BytesIO(b"cos\nsystem\n(S'touch /tmp/pwned'\ntR.")).results == {}
    finally:
        nbconvert.preprocessors.ExecutePreprocessor = original


def test_the_kernel_and_the_graders_name_one_answer_format():
    """The check helpers (in the kernel, where nothing of the book can be imported) send their answers under
    the media type the graders read (grading_runtime.ANSWER_MIME); the hardened checks end with its line."""
    from tools.grading import grading_runtime
    helpers = (ROOT / "tools" / "shared" / "check_helpers.py").read_text(encoding="utf-8")
    assert f'"{grading_runtime.ANSWER_MIME}"' in helpers
    assert grading_runtime.emit_line("x_ex1_check") == ["emit_answers('x_ex1_check')"] and "def emit_answers(" in helpers


def test_a_check_that_records_no_answer_or_sends_none_is_refused_when_the_course_is_built():
    """Issue 44, item 2: a check cell whose model run records no answer would pass anything that runs to its
    end, and one without its last line (emit_answers) sends nothing to compare: building the references
    refuses both in one sentence naming the check and the fix."""
    from tools.grading import grading_runtime as runtime
    from tools.grading.references import from_run

    def check(gid, outputs):
        cell = new_code_cell("check_array('x', x, expected)", metadata={"nbgrader": {"grade": True, "grade_id": gid, "points": 2}})
        cell.outputs = outputs
        return cell

    sent = lambda gid, answers: new_output("display_data", data={runtime.ANSWER_MIME: {"grade_id": gid, "answers": answers}})
    nb = nbformat.v4.new_notebook(cells=[check("toy_ex1_check", [sent("toy_ex1_check", [])])])
    with pytest.raises(SystemExit, match=r"^toy: the check toy_ex1_check records no answer \(answer\(\), check_array, ...\), "
                                         r"so it could not tell a wrong solution from a right one$"):
        from_run(nb, "toy")
    nb.cells[0].outputs = []
    with pytest.raises(SystemExit, match=r"^toy: the check toy_ex1_check sent 0 answer outputs .*is its last line emit_answers\?\)$"):
        from_run(nb, "toy")
    nb.cells[0].outputs = [sent("toy_ex1_check", [["x", {"values": [1.0], "shape": [1]}]])]
    assert list(from_run(nb, "toy")) == ["toy_ex1_check"]
