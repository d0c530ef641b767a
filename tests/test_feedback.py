"""The feedback preprocessors of tools/grading/nbgrader_config.py on hand-made cells: a failed check's
message never repeats a hidden test line, whoever raised it; a student's marker words mark nothing; a
cell's outputs are cut to the byte cap, and the cut is said. (The messy classes in test_grading.py run
them through nbgrader's generate_feedback.)"""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_output
from traitlets.config import Config

from tools.registry import ROOT


def config_namespace() -> dict:
    namespace = {"get_config": Config}
    exec(compile((ROOT / "tools" / "grading" / "nbgrader_config.py").read_text(encoding="utf-8"),
                 "nbgrader_config.py", "exec"), namespace)
    return namespace


NS = config_namespace()
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


def test_a_check_counts_only_when_its_last_line_printed():
    """ChecksRanToTheirEnd: a check cell without an error passes only with its completion line in its own
    output (a cell that an input transformer emptied prints nothing); read outside the kernel."""
    step, line = NS["ChecksRanToTheirEnd"](), NS["COMPLETION"].format(grade_id="ex1_check")

    def ran(*printed):
        cell = check_cell("m", 1)
        cell.outputs = [new_output("stream", name="stdout", text=text) for text in printed]
        return step.preprocess_cell(cell, {}, 0)[0].outputs

    assert [o["output_type"] for o in ran("x ok\n", line + "\n")] == ["stream", "stream"]
    for printed in ((), ("x ok\n",), (f"not quite {line}\n",), (NS["COMPLETION"].format(grade_id="ex2_check") + "\n",)):
        assert ran(*printed)[-1]["ename"] == "CheckDidNotFinish", printed
    failed = check_cell("x differs", 1)          # a check that raised keeps its own error, and only that
    assert step.preprocess_cell(failed, {}, 0)[0].outputs[-1]["ename"] == "AssertionError"


def test_the_course_and_the_graders_print_and_read_one_completion_line():
    from tools.grading import cell_time_limit, course
    assert course.COMPLETION == NS["COMPLETION"]
    assert course.COMPLETION.format(grade_id="gpt_ex4_check") == "gpt_ex4_check" + cell_time_limit.COMPLETION_TAIL


def test_hardened_checks_define_the_helpers_again_and_end_with_the_line():
    """harden_checks on hand-made cells: the helpers come first in the hidden part, the completion line
    last; a check without hidden tests runs its visible part again after the helpers."""
    from tools.grading.course import COMPLETION, harden_checks
    meta = {"nbgrader": {"grade": True, "solution": False, "grade_id": "ex1_check", "points": 1}}
    with_hidden = new_code_cell("a = 1\n### BEGIN HIDDEN TESTS\nhidden = 2\n### END HIDDEN TESTS\nprint('done')", metadata=meta)
    visible_only = new_code_cell("check_array('x', x, [1.0])", metadata={"nbgrader": dict(meta["nbgrader"], grade_id="ex2_check")})
    nb = harden_checks(nbformat.v4.new_notebook(cells=[with_hidden, visible_only, new_code_cell("x = 1")]))
    first = nb.cells[0].source.split("\n")
    assert first[:2] == ["a = 1", "### BEGIN HIDDEN TESTS"] and first[2].startswith("# shared helper: check_helpers")
    assert first[-4:] == ["hidden = 2", f"print({COMPLETION.format(grade_id='ex1_check')!r})", "### END HIDDEN TESTS",
                          "print('done')"]
    second = nb.cells[1].source.split("\n")
    assert second[0] == second[-3] == "check_array('x', x, [1.0])" and "def check_array(" in nb.cells[1].source
    assert nb.cells[2].source == "x = 1"


def test_otter_names_the_cell_in_which_the_kernel_died(tmp_path):
    """cell_time_limit's executor (otter_run and the Gradescope zip): a dead kernel is reported with the
    first line of the cell in which it died, not as a bare DeadKernelError. One real kernel."""
    import nbconvert.preprocessors
    import pytest
    from nbclient.exceptions import DeadKernelError

    from tools.grading import cell_time_limit
    original = nbconvert.preprocessors.ExecutePreprocessor
    try:
        cell_time_limit.install(cell_time_limit.CELL_SECONDS)
        nb = nbformat.v4.new_notebook(cells=[new_code_cell("x = 1"), new_code_cell("import os\nos._exit(0)"), new_code_cell("y = 2")])
        with pytest.raises(DeadKernelError, match="the kernel died in the cell that begins 'import os'"):
            nbconvert.preprocessors.ExecutePreprocessor(startup_timeout=120).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    finally:
        nbconvert.preprocessors.ExecutePreprocessor = original


def test_otters_results_are_read_without_running_what_a_crafted_file_names():
    """cell_time_limit.results_only_pickle: otter's own result classes and plain values load; a pickle that
    names any other callable (os.system, or a class that an otter module only imports) is refused."""
    import pickle
    import subprocess

    import pytest
    from otter.test_files import GradingResults
    from otter.test_files.abstract_test import TestCase, TestCaseResult

    from tools.grading.cell_time_limit import results_only_pickle
    safe = results_only_pickle()
    case = TestCaseResult(test_case=TestCase(name="q", body="", hidden=False, points=1, success_message="",
                                             failure_message=""), message="", passed=True)
    import io
    assert safe.load(io.BytesIO(pickle.dumps({"q": [case, 1.5, "x"]})))["q"][0].passed is True

    class Crafted:
        def __reduce__(self):
            return (subprocess.Popen, (["true"],))
    for bad in (Crafted(), GradingResults.__init__):
        with pytest.raises(pickle.UnpicklingError, match="may not name"):
            safe.load(io.BytesIO(pickle.dumps(bad)))


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


def test_the_first_cell_gets_a_longer_budget_under_nbgrader(tmp_path, monkeypatch):
    """ExecuteUntilTheKernelDies (issue 43, item 4): the first cell a kernel runs, its imports, gets
    FIRST_CELL_SECONDS, every later cell the cell limit; here 6 s and 2 s, with two 4 s cells. One kernel."""
    from tools.grading import cell_time_limit
    assert NS["FIRST_CELL_SECONDS"] == cell_time_limit.FIRST_CELL_SECONDS, "nbgrader's and otter's budgets differ"
    monkeypatch.setitem(NS, "FIRST_CELL_SECONDS", 6)
    config = Config()
    config.Execute.timeout = 2
    config.Execute.interrupt_on_timeout = True
    config.Execute.startup_timeout = 120
    out, _ = NS["ExecuteUntilTheKernelDies"](config=config).preprocess(_slow_imports_then_a_loop(), {"metadata": {"path": str(tmp_path)}})
    errors = [[o.get("ename") for o in c.outputs if o.get("output_type") == "error"] for c in out.cells]
    assert errors[0] == [] and errors[1] and errors[2] == [], errors
    assert out.cells[2].outputs[0]["text"] == "ran\n"


def test_the_first_cell_gets_a_longer_budget_under_otter(tmp_path, monkeypatch):
    """cell_time_limit's executor (otter_run and the Gradescope zip): the same budgets as nbgrader's."""
    import nbconvert.preprocessors

    from tools.grading import cell_time_limit
    monkeypatch.setattr(cell_time_limit, "FIRST_CELL_SECONDS", 6)
    original = nbconvert.preprocessors.ExecutePreprocessor
    try:
        cell_time_limit.install(2)
        out, _ = nbconvert.preprocessors.ExecutePreprocessor(startup_timeout=120, allow_errors=True).preprocess(
            _slow_imports_then_a_loop(), {"metadata": {"path": str(tmp_path)}})
    finally:
        nbconvert.preprocessors.ExecutePreprocessor = original
    errors = [[o.get("ename") for o in c.outputs if o.get("output_type") == "error"] for c in out.cells]
    assert errors[0] == [] and errors[1] and errors[2] == [], errors
