"""One time limit per notebook cell when otter-grader grades a submission (nbgrader has its own:
`Execute.timeout` in nbgrader_config.py, set to the same CELL_SECONDS), and the other settings of
the grading kernels that nbgrader_config.py sets for nbgrader: a kernel slow to start is waited for
STARTUP_SECONDS (nbclient's 60 s made a submission fail on a loaded machine), and matplotlib draws
with Agg, so that grading renders no figure (MPLBACKEND; the checks read numbers, never pictures).

otter-grader 7 executes a submission with nbconvert's ExecutePreprocessor and sets no timeout, so a
student's infinite loop makes `otter run` (and a Gradescope autograder) wait forever. `install()`
gives otter's executor the limit that nbgrader's has: a cell still running after CELL_SECONDS is
interrupted (a KeyboardInterrupt in that cell, whose exercise then fails its checks) and grading goes
on with the next cell. It replaces `nbconvert.preprocessors.ExecutePreprocessor`, which otter's
`grade_notebook` imports when it is called, by a subclass with these two settings.

This file has no import of the book's, so that it can travel inside an autograder zip: the zip's
`run_otter.py` (what Gradescope runs) calls `install()` before otter starts
(tools/grading/otter.py writes both into the zip); `python -m tools.grading.otter_run` does the same
for local grading.
"""
from __future__ import annotations

# Without the expensive demonstrations (tagged otter_ignore and skipped) no cell of any chapter takes
# more than a few seconds on one slow core; a cell that runs this long is a loop.
CELL_SECONDS = 20
STARTUP_SECONDS = 300
# the first cell a kernel runs (its imports of numpy, torch, matplotlib) may take longer on a loaded machine
FIRST_CELL_SECONDS = 120
GRADING_MPLBACKEND = "agg"


def install(seconds: int = CELL_SECONDS, kernel: str = "python3") -> None:
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

    os.environ.setdefault("MPLBACKEND", GRADING_MPLBACKEND)   # the kernels inherit it
    base = nbconvert.preprocessors.ExecutePreprocessor
    if getattr(base, "cell_seconds", None) == seconds and getattr(base, "grading_kernel", None) == kernel:
        return
    base = getattr(base, "original", base)

    class TimeLimitedExecutePreprocessor(base):
        original = base
        cell_seconds, grading_kernel = seconds, kernel
        timeout = Integer(seconds, allow_none=True).tag(config=True)
        interrupt_on_timeout = Bool(True).tag(config=True)
        startup_timeout = Integer(STARTUP_SECONDS).tag(config=True)
        kernel_name = Unicode(kernel).tag(config=True)

        def preprocess(self, nb, resources=None, km=None):
            self._first_cell_ran = False
            return super().preprocess(nb, resources, km)

        def _get_timeout(self, cell):
            timeout = super()._get_timeout(cell)
            if cell is not None and timeout and not getattr(self, "_first_cell_ran", True):
                self._first_cell_ran = True      # the first cell the kernel runs: its imports get FIRST_CELL_SECONDS
                return max(timeout, FIRST_CELL_SECONDS)
            return timeout

        def preprocess_cell(self, cell, resources, index):
            try:
                return super().preprocess_cell(cell, resources, index)
            except Exception as error:
                if type(error).__name__ != "DeadKernelError":
                    raise
                # which cell: otter scores a notebook only once it has run to its end, so nothing is scored
                first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")[:80]
                raise type(error)(f"the kernel died in the cell that begins {first!r}; otter grades a notebook "
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
    hold_results()


# The end of the line that every hidden test prints when it has run to its end (tools/grading/course.py,
# COMPLETION: "<grade_id>: every check ran to its end").
COMPLETION_TAIL = ": every check ran to its end"
# What otter's results file (a pickle that the student's kernel writes) may hold: otter's result classes
# and plain values. otter reads it with pickle.load, which would run any code a crafted file names, in
# the grading process; the unpickler below refuses everything else.
RESULT_MODULES = ("otter.test_files", "otter.test_files.abstract_test", "otter.test_files.exception_test",
                  "otter.test_files.ok_test", "otter.test_files.metadata_test")
PLAIN = {"list", "dict", "tuple", "set", "frozenset", "str", "bytes", "int", "float", "bool", "complex"}


def results_only_pickle():
    """A stand-in for the pickle module whose load accepts otter's result classes and plain values only."""
    import pickle
    import types

    def otters_own_class(module, name):
        # a class defined in otter itself: a class otter merely imports (Popen, say) could be called
        found = getattr(__import__(module, fromlist=[name]), name, None)
        return isinstance(found, type) and getattr(found, "__module__", "").startswith("otter.")

    class ResultsOnly(pickle.Unpickler):
        def find_class(self, module, name):
            if "." not in name and ((module in RESULT_MODULES and otters_own_class(module, name))
                                    or (module == "builtins" and name in PLAIN)):
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"a results file may not name {module}.{name}")

    safe = types.SimpleNamespace(dump=pickle.dump, dumps=pickle.dumps, HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL)
    safe.load = lambda f, **kwargs: ResultsOnly(f).load()
    return safe


def hold_results() -> None:
    """otter-grader scores what its test runner, inside the student's kernel, reports. Here a question
    counts only if its hidden test printed its completion line (read from the executed notebook, outside
    the kernel: a kernel that replaced otter's test runner, or emptied the checks, prints none), and the
    results file is read with results_only_pickle. The questions zeroed are listed in the results'
    `unfinished` attribute, and each of their test cases says why (what Gradescope shows)."""
    import os
    import re
    try:
        import otter.execute as execute
    except ImportError:
        return
    if getattr(execute.grade_notebook, "holds", False):
        return
    original = execute.grade_notebook
    execute.pickle = results_only_pickle()

    def grade_notebook(submission_path, *args, tests_glob=None, **kwargs):
        results = original(submission_path, *args, tests_glob=tests_glob, **kwargs)
        needed = {}
        for path in tests_glob or []:
            with open(path, encoding="utf-8", errors="replace") as f:
                found = set(re.findall(r"([A-Za-z0-9_]+)" + re.escape(COMPLETION_TAIL), f.read()))
            if found:
                needed[os.path.splitext(os.path.basename(path))[0]] = found
        notebook = getattr(results, "notebook", None)
        printed = "".join(o.get("text", "") for cell in (notebook.cells if notebook else []) for o in cell.get("outputs", [])
                          if o.get("output_type") == "stream" and o.get("name") == "stdout")
        ran = set(re.findall(r"^([A-Za-z0-9_]+)" + re.escape(COMPLETION_TAIL) + "$", printed, re.M))
        results.unfinished = []
        for name, test in (getattr(results, "results", None) or {}).items():
            if needed.get(name, set()) - ran and test.score > 0:
                for case in test.test_case_results:
                    case.passed = False
                    case.message = ("the checks of this question did not run to their end, so it scored 0 "
                                    "(look for a cell that changes how the notebook runs)")
                results.unfinished.append(name)
        return results

    grade_notebook.holds = True
    execute.grade_notebook = grade_notebook


RUN_OTTER = '''"""Runs Otter-Grader's autograding process, each cell limited to {seconds} s (cell_time_limit.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cell_time_limit  # noqa: E402

cell_time_limit.install({seconds})

from otter.run.run_autograder import main as run_autograder  # noqa: E402

if __name__ == "__main__":
    run_autograder(sys.argv[1] if len(sys.argv) > 1 else "/autograder")
'''
