"""otter-grader, run the book's way: the kernel only answers, this process scores (for `python -m
tools.grading.otter_run` and for the Gradescope zip's run_otter.py, which carries this file and
grading_runtime.py beside it; it imports nothing of the book's).

`install()`, called before otter starts, changes four things in otter's own machinery:

- **time limits**: otter-grader 7 executes a submission with nbconvert's ExecutePreprocessor and no timeout,
  so a student's infinite loop would make `otter run` (and a Gradescope autograder) wait forever. Each cell
  gets grading_runtime.CELL_SECONDS (the first cell, whose imports are slow on a loaded machine,
  FIRST_CELL_SECONDS), after which it is interrupted and grading goes on; a kernel slow to start is waited
  for STARTUP_SECONDS; matplotlib draws with Agg. Every submission runs in the kernel `kernel` (the grading
  sandbox when otter_run has it), whatever kernel its metadata names, through IPC sockets;
- **scores**: otter's test runner runs inside the student's kernel, which could replace it; the results file
  it writes is never read (no unpickling of anything a student's kernel made). Instead every check sends its
  answers out as an output (grading_runtime.ANSWER_MIME) and `score_outside_the_kernel` compares them, here,
  with the model solution's, which this process holds in memory (`install(references=...)`); a question's
  score is the points of its checks that passed, never more;
- **no log**: otter's log server (which unpickles what the kernel sends) is not started, and an .OTTER_LOG is
  never deserialized;
- **intake** (the zip): `take_in_only_the_notebook` leaves the one notebook in Gradescope's submission folder.
"""
from __future__ import annotations

try:                                   # in the book
    from tools.grading import grading_runtime as runtime
except ImportError:                    # in an autograder zip: the copy beside this file
    import grading_runtime as runtime

CELL_SECONDS = runtime.CELL_SECONDS
REFERENCES: dict = {}                  # {grade_id: {"points": p, "answers": [...]}}, set by install()


def install(seconds: int = CELL_SECONDS, kernel: str = "python3", references: dict | None = None) -> None:
    """Also: every submission runs in the kernel `kernel` (the grading sandbox when otter_run has it),
    whatever kernel its metadata names (VS Code writes its own environment's name, which the grader
    does not have), and the kernel talks through IPC sockets in the submission's folder, not TCP ports
    (parallel starts cannot collide on a port, and the sandbox has no network)."""
    import os
    import shutil
    import tempfile
    import weakref

    import nbconvert.preprocessors
    from traitlets import Bool, Integer, Unicode

    if references is not None:
        REFERENCES.clear()
        REFERENCES.update(references)
    os.environ.setdefault("MPLBACKEND", runtime.MPLBACKEND)   # the kernels inherit it
    base = nbconvert.preprocessors.ExecutePreprocessor
    if getattr(base, "cell_seconds", None) == seconds and getattr(base, "grading_kernel", None) == kernel:
        return
    base = getattr(base, "original", base)

    class TimeLimitedExecutePreprocessor(runtime.StopsWhatIgnoresAnInterrupt, base):
        original = base
        cell_seconds, grading_kernel = seconds, kernel
        timeout = Integer(seconds, allow_none=True).tag(config=True)
        interrupt_on_timeout = Bool(True).tag(config=True)
        startup_timeout = Integer(runtime.STARTUP_SECONDS).tag(config=True)
        kernel_name = Unicode(kernel).tag(config=True)

        def preprocess(self, nb, resources=None, km=None):
            self._first_cell_ran = False
            return super().preprocess(nb, resources, km)

        def _get_timeout(self, cell):
            timeout = super()._get_timeout(cell)
            if cell is not None and timeout and not getattr(self, "_first_cell_ran", True):
                self._first_cell_ran = True      # the first cell the kernel runs: its imports get FIRST_CELL_SECONDS
                return max(timeout, runtime.FIRST_CELL_SECONDS)
            return timeout

        def preprocess_cell(self, cell, resources, index):
            try:
                return super().preprocess_cell(cell, resources, index)
            except Exception as error:
                unresponsive = self.ignored_its_interrupt(cell, error)
                if type(error).__name__ != "DeadKernelError" and not unresponsive:
                    raise
                # which cell: otter scores a notebook only once it has run to its end, so nothing is scored
                first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")[:80]
                what = ("ran past the time limit and ignored the interrupt, so its kernel was stopped"
                        if unresponsive else "the kernel died in it")
                from nbclient.exceptions import DeadKernelError
                raise DeadKernelError(f"the cell that begins {first!r}: {what}; otter grades a notebook "
                                  f"only once every cell has run, so nothing of it was scored") from None

        def create_kernel_manager(self):
            self.kernel_name = self.grading_kernel     # not the notebook's own kernelspec
            manager = super().create_kernel_manager()
            manager.transport = "ipc"     # in a new folder: absolute paths, otter and the kernel differ in folder
            folder = tempfile.mkdtemp(prefix="attention-kernel-")
            manager.ip = os.path.join(folder, "ipc")
            weakref.finalize(manager, shutil.rmtree, folder, True)    # the folder goes with its manager
            return manager

    TimeLimitedExecutePreprocessor.__name__ = "ExecutePreprocessor"
    nbconvert.preprocessors.ExecutePreprocessor = TimeLimitedExecutePreprocessor
    score_outside_the_kernel()


def question_of(gid: str) -> str:
    """The exercise (otter's question) a check belongs to: its grade_id up to `_ex<n>`."""
    import re
    found = re.match(r"^(.*?_ex\d+)", gid)
    return found.group(1) if found else gid


def verdicts(notebook, references: dict) -> dict:
    """{grade_id: (passed, sentence, problem)} from every answer output of the executed notebook."""
    by_check = {gid: [] for gid in references}
    for cell in (notebook.cells if notebook is not None else []):
        for output in cell.get("outputs", []):
            for data in runtime.answer_outputs([output]):
                claimed = data.get("grade_id") if isinstance(data, dict) else None
                if claimed in by_check:
                    by_check[claimed].append(output)
    return {gid: runtime.judge(references[gid]["answers"], outputs, gid) for gid, outputs in by_check.items()}


def results_from(notebook, references: dict):
    """otter's GradingResults built here: one question per exercise, one test case per check, worth the
    check's points (from the references, not from anything the kernel could write), passed only when
    its answers match. The questions that lost points for want of answers are listed in `unfinished`."""
    from otter.test_files import GradingResults
    from otter.test_files.abstract_test import TestCase, TestCaseResult
    from otter.test_files.exception_test import ExceptionTestFile

    judged = verdicts(notebook, references)
    files, unfinished = {}, []
    for gid, check in references.items():
        question = question_of(gid)
        passed, sentence, problem = judged[gid]
        case = TestCase(name=gid, body=None, hidden=True, points=float(check["points"]), success_message=None,
                        failure_message=None)
        test_file = files.setdefault(question, ExceptionTestFile(question, "", [], all_or_nothing=False))
        test_file.test_cases.append(case)
        test_file.test_case_results.append(TestCaseResult(test_case=case, message=sentence, passed=passed))
        if problem:
            unfinished.append(problem)
    results = GradingResults(list(files.values()), notebook=notebook)
    results.unfinished = unfinished
    return results


def score_outside_the_kernel() -> None:
    """Replace otter's scoring (see the module's docstring): grade_notebook still runs the submission and
    otter's tests in the kernel (which sends the answers), then the scores are computed here."""
    try:
        import otter.execute as execute
        from otter.check.logs import Log
        from otter.test_files import GradingResults
    except ImportError:
        return
    if getattr(execute.grade_notebook, "holds", False):
        return
    original = execute.grade_notebook

    # the file the kernel's test runner writes is never unpickled: an empty result stands in for it
    import types
    execute.pickle = types.SimpleNamespace(load=lambda f, **kwargs: GradingResults([]))
    # no log server (it unpickles what arrives), and no log is ever read
    execute.start_server = lambda *args, **kwargs: (("127.0.0.1", 9), lambda: None)

    def refuse_log(*args, **kwargs):
        raise ValueError("this grader reads no .OTTER_LOG")

    Log.from_file = staticmethod(refuse_log)

    def grade_notebook(submission_path, *args, tests_glob=None, **kwargs):
        if not REFERENCES:
            raise RuntimeError("no references to grade with (the zip's references.json, or otter_run's); rebuild the zip")
        kwargs["log"] = None
        ran = original(submission_path, *args, tests_glob=tests_glob, **kwargs)
        return results_from(getattr(ran, "notebook", None), REFERENCES)

    grade_notebook.holds = True
    execute.grade_notebook = grade_notebook


def take_in_only_the_notebook(folder: str) -> list[str]:
    """Leave only the one notebook (a regular file) in a submission folder; return what was removed.
    Several notebooks: the largest is kept (Gradescope's uploads); a link is removed, never followed."""
    import os
    import shutil
    entries = sorted(os.listdir(folder))
    notebooks = [e for e in entries if e.endswith(".ipynb") and os.path.isfile(os.path.join(folder, e))
                 and not os.path.islink(os.path.join(folder, e))]
    keep = max(notebooks, key=lambda e: os.path.getsize(os.path.join(folder, e)), default=None)
    removed = []
    for entry in entries:
        if entry == keep:
            continue
        path = os.path.join(folder, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
        removed.append(entry)
    return removed


RUN_OTTER = '''"""Runs Otter-Grader's autograding process the book's way (otter_grading.py): only the notebook is taken
in, each cell is limited to {seconds} s, and the scores are decided in this process from the answers the
checks send out, against the model solution's (references.json, read into memory and then removed from the
disk before any student code runs)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import otter_grading  # noqa: E402

if __name__ == "__main__":
    autograder = sys.argv[1] if len(sys.argv) > 1 else "/autograder"
    path = os.path.join(HERE, "references.json")
    if not os.path.isfile(path):
        sys.exit("no references.json beside run_otter.py: it is removed once read, so unpack the zip again to re-grade")
    with open(path, encoding="utf-8") as f:
        references = otter_grading.runtime.load_references(f.read())
    os.remove(path)
    removed = otter_grading.take_in_only_the_notebook(os.path.join(autograder, "submission"))
    if removed:
        print("handed in beside the notebook, not graded: " + ", ".join(removed))
    otter_grading.install({seconds}, references=references)
    from otter.run.run_autograder import main as run_autograder
    run_autograder(autograder)
'''
