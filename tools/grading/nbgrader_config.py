# nbgrader configuration for a course that uses the book's chapters: copy this file into the
# course directory (`python -m tools.grading.course COURSE` does, and fills source/ as well).
# One assignment per chapter: source/<label>/<notebook>.ipynb, where <label> is the prefix of the
# chapter's exercise labels (bottleneck, soft_attention, ..., see instructors.md).
# Read by nbgrader >= 0.9 (a Python file, run by traitlets). It imports nothing of the book's but
# grading_runtime.py, which the course build copies beside it (every contract with the notebooks, defined
# once for both graders), so that it works in any course directory.
import json
import os
import re
import shutil
import sys
import tempfile
import weakref

COURSE_ROOT = os.path.dirname(os.path.abspath(__file__))   # traitlets runs this file with __file__ set
sys.path.insert(0, COURSE_ROOT)
import grading_runtime as runtime  # noqa: E402 - beside this file
sys.path.remove(COURSE_ROOT)

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor, Preprocessor
from nbformat.notebooknode import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, Execute, GetGrades,
                                    IgnorePattern, LimitOutput, SaveAutoGrades)
from traitlets import Bool

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader reads this file

c.CourseDirectory.course_id = "attention"

# The student version: the notebook itself, without header or footer; a solution region becomes
# `raise NotImplementedError()` (the def line and the `name = ...` lines around it stay).
c.ClearSolutions.code_stub = {"python": "raise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Autograding executes every submission top to bottom, except the expensive demonstrations before
# the first exercise (training runs, seed studies, timings), which carry the tag runtime.SKIP_TAG (`otter_ignore`)
# (tools/grading/course.py: one tag that otter-grader skips too; no exercise depends on them).
# Without them no cell of any chapter takes more than a few seconds, so a cell that runs 20 s is a
# loop: it is interrupted (a KeyboardInterrupt in that cell, which then scores 0) and grading goes
# on with the next cell. The same limit as otter's (grading_runtime.CELL_SECONDS, otter_grading.py;
# a test keeps the two equal).
c.Execute.skip_cells_with_tag = runtime.SKIP_TAG
c.Execute.timeout = runtime.CELL_SECONDS
c.Execute.interrupt_on_timeout = True
# The first cell a kernel runs imports numpy, torch and matplotlib: on a loaded machine, or in a fresh environment
# whose modules are not yet compiled, that alone can take longer than 20 s, and a solved submission would lose
# its imports. It gets runtime.FIRST_CELL_SECONDS instead (ExecuteUntilTheKernelDies; otter's the same).
c.Execute.kernel_name = "python3"
# A kernel slow to start (a loaded machine, four autograde processes at a time) is waited for up to
# 300 s rather than nbclient's 60, after which a submission fails; the same as otter's (STARTUP_SECONDS).
c.Execute.startup_timeout = runtime.STARTUP_SECONDS

# Grading draws no figure: the checks read numbers, never pictures, and turning each figure into a
# PNG took a fifth of a submission's time (docs/decisions.md). The kernels start with matplotlib's Agg backend (IPython's --matplotlib
# option), which shows nothing; the graded notebooks then hold no figures (the released one does).
# To keep them, remove this line.
c.Execute.extra_arguments = [f"--matplotlib={runtime.MPLBACKEND}"]
# Each kernel talks to nbgrader through files in the submission's folder (IPC sockets), not TCP ports: kernels
# started at the same moment by parallel autogrades can no longer take the same port ("Address already in
# use", a solved submission graded 0.0), and the sandbox below needs no network. When the grading sandbox is
# installed (`python -m tools.grading.sandbox install`: bubblewrap), every submission runs in it: its kernel
# sees its own folder and the Python environment, not the course (source/, the gradebook, other students),
# not the network, with a memory limit (tools/grading/sandbox_launch.py). Without it, the usual python3
# kernel; tools.grading.check_submissions says so.
class IPCKernelManager(AsyncKernelManager):
    """A kernel whose sockets are files in a new folder of its own (absolute paths: nbgrader and the
    kernel run in different folders)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        folder = tempfile.mkdtemp(prefix="attention-kernel-")
        self.transport, self.ip = "ipc", os.path.join(folder, "ipc")
        weakref.finalize(self, shutil.rmtree, folder, True)      # the folder goes with its manager


c.Execute.kernel_manager_class = IPCKernelManager
SANDBOX = "attention-sandbox"
# Without the sandbox a student's code runs as the instructor, with the course folder in reach: grading then
# refuses to start, unless the instructor says so explicitly (instructors.md says what that risks).
REFUSED = None
try:
    from jupyter_client.kernelspec import KernelSpecManager
    if SANDBOX in KernelSpecManager().find_kernel_specs() and shutil.which("bwrap"):
        c.Execute.kernel_name = SANDBOX
    else:
        raise LookupError
except Exception:  # noqa: BLE001 - no sandbox: the python3 kernel above, if the instructor allows it
    if os.environ.get(runtime.WITHOUT_SANDBOX) != "1":
        REFUSED = (f"the grading sandbox is not installed here (python -m tools.grading.sandbox install; it needs "
                   f"bubblewrap), so nothing is graded; to grade without it, knowing that students' code then runs as "
                   f"you, set {runtime.WITHOUT_SANDBOX}=1")

# A submission whose check cells were deleted, or saved by a front end that dropped their nbgrader
# metadata, gets the check cells back from the gradebook (they are appended where they were lost:
# see instructors.md, and run `python -m tools.grading.check_submissions COURSE ASSIGNMENT --fix` first).
c.OverwriteCells.add_missing_cells = True


# The sentence a cell gets when the kernel died in it (os._exit, a signal, exit(), memory), and the one
# every later cell gets: the autograded notebook and the student's feedback show them.
KERNEL_DIED, NOT_RUN = runtime.KERNEL_DIED, runtime.NOT_RUN


class ExecuteUntilTheKernelDies(runtime.StopsWhatIgnoresAnInterrupt, Execute):
    """(A cell that ignores the interrupt at its time limit gets its kernel stopped: runtime.StopsWhatIgnoresAnInterrupt.)
    nbgrader's Execute, which loses the whole submission when the kernel dies (it exports 0.0, as for
    an untouched notebook). Here the cell in which it died gets an error saying so, and every later cell
    that would have run gets an error saying that it was not run: the checks before it keep their points,
    the checks after it score 0 (a check without an error would count as passed), and the autograded
    notebook says where and why."""

    def preprocess(self, nb, resources=None, km=None):
        if REFUSED:
            raise RuntimeError(REFUSED)
        self._died_in, self._first_cell_ran = None, False
        # The kernel runs in an empty scratch folder of its own, never in autograded/: what it writes there
        # (a file, a link to the gradebook or to a classmate's notebook) never reaches nbgrader's folders,
        # which hold only what nbgrader itself writes (the executed notebook), and goes with the folder.
        resources = resources if resources is not None else {}
        metadata = resources.setdefault("metadata", {})
        submission = metadata.get("path")
        metadata["path"] = tempfile.mkdtemp(prefix="attention-scratch-")
        try:
            return super().preprocess(nb, resources, km)
        finally:
            shutil.rmtree(metadata["path"], ignore_errors=True)
            metadata["path"] = submission

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        if cell is not None and timeout and not getattr(self, "_first_cell_ran", True):
            self._first_cell_ran = True      # the first cell the kernel runs: its imports get a longer budget
            return max(timeout, runtime.FIRST_CELL_SECONDS)
        return timeout

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or self.skip_cells_with_tag in cell.metadata.get("tags", []):
            return super().preprocess_cell(cell, resources, index) if self._died_in is None else (cell, resources)
        if self._died_in is not None:
            cell.outputs = [NotebookNode(output_type="error", ename="KernelDied", evalue=NOT_RUN,
                                         traceback=[f"KernelDied: {NOT_RUN} (cell {self._died_in})"])]
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except Exception as error:  # noqa: BLE001 - a dead kernel, or one stopped for ignoring its interrupt
            if not (isinstance(error, DeadKernelError) or self.ignored_its_interrupt(cell, error)):
                raise
            self._died_in = index
            why = runtime.UNRESPONSIVE if getattr(self, "unresponsive_cell", None) is cell else KERNEL_DIED
            cell.outputs.append(NotebookNode(output_type="error", ename="KernelDied", evalue=why,
                                             traceback=[f"KernelDied: {why}"]))
            return cell, resources




class ScoreOutsideTheKernel(Preprocessor):
    """The verdict on every check cell, decided here, in nbgrader's process: the answers the cell sent out
    (grading_runtime.ANSWER_MIME) are compared with the model solution's, which the course build recorded
    in references/<assignment>.json (a folder the grading kernel cannot see). A check cell that passes
    keeps what it printed and gets one line saying so; one that fails, or sent no answers, gets one error
    with one sentence. Its answer output, any result value and anything it wrote to stderr are removed, so
    nothing the kernel printed decides nbgrader's score (an error output: 0; none: the cell's points)."""
    enabled = Bool(True)

    def preprocess(self, nb, resources):
        assignment = resources.get("nbgrader", {}).get("assignment", "")
        path = os.path.join(COURSE_ROOT, "references", f"{assignment}.json")
        try:
            with open(path, encoding="utf-8") as f:
                self._references = runtime.load_references(f.read())
        except (OSError, ValueError) as error:
            raise RuntimeError(f"no references for {assignment!r} ({path}: {error}); rebuild the course with "
                               f"`python -m tools.grading.course` before grading") from None
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if not runtime.is_check_cell(cell):
            return cell, resources
        gid = runtime.grade_id(cell)
        outputs = cell.get("outputs", [])
        if gid not in self._references:
            raise RuntimeError(f"the check {gid} is not in this assignment's references; rebuild the course")
        if any(o.get("output_type") == "error" for o in outputs):
            cell.outputs = runtime.without_answer_outputs(outputs)       # it failed in the kernel: 0 either way
            return cell, resources
        passed, sentence, problem = runtime.judge(self._references[gid]["answers"], outputs, gid)
        kept = [o for o in runtime.without_answer_outputs(outputs)
                if o.get("output_type") == "stream" and o.get("name") == "stdout" or o.get("output_type") == "display_data"]
        if passed:
            kept.append(NotebookNode(output_type="stream", name="stdout", text=sentence + "\n"))
        else:
            ename = runtime.NO_ANSWER if problem else runtime.WRONG
            kept.append(NotebookNode(output_type="error", ename=ename, evalue=sentence,
                                     traceback=[f"{ename}: {sentence}", *([problem] if problem else [])]))
        cell.outputs = kept
        return cell, resources


class OneSentenceCheckFailures(Preprocessor):
    """Feedback for a failed check cell: the check's name and one sentence, never a traceback.

    An autograded notebook holds the hidden tests again, and a check cell that failed holds
    IPython's traceback, which prints the failing line of the check cell: a hidden test's code,
    its reference formula, its expected value. For every failed check cell this replaces the
    outputs by one line: the check's grade_id, and the error's own message only when the failing
    line is in the visible part of the check (what the student's notebook shows anyway); a
    failure in a hidden test says only that a hidden test did not pass. Runs before ClearHiddenTests,
    which then removes the hidden source.
    """

    enabled = Bool(True)  # nbconvert's preprocessors run only when enabled

    def preprocess_cell(self, cell, resources, index):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if cell.cell_type != "code" or not meta.get("grade") or not errors:
            return cell, resources
        error = errors[-1]
        if error.get("ename") in (runtime.WRONG, runtime.NO_ANSWER):     # the grader's own sentence, already safe
            cell.outputs = [{"output_type": "stream", "name": "stderr", "text": "Check " + error.get("evalue", "") + "\n"}]
            return cell, resources
        hidden, inside = set(), False
        for number, line in enumerate(cell.source.split("\n"), start=1):
            if runtime.HIDDEN_BEGIN in line:
                inside = True
            if inside:
                hidden.add(number)
            if runtime.HIDDEN_END in line:
                inside = False
        plain = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.get("traceback", [])))
        count = cell.get("execution_count")
        lines = [int(n) for n in re.findall(rf"(?:Cell In\[{count}\]|<ipython-input-{count}-[0-9a-f]+>), line (\d+)", plain)]
        failing = lines[0] if lines else None
        name = meta.get("grade_id", "this check")
        source_lines = cell.source.split("\n")
        hidden_text = [source_lines[n - 1].strip() for n in sorted(hidden) if len(source_lines[n - 1].strip()) >= 8]
        message = (error.get("evalue") or "").strip().split("\n")[0][:300]
        if failing is None or failing in hidden or any(h in message or message and message in h for h in hidden_text):
            # (a message that quotes a hidden line, whoever raised it, says only that a hidden test failed)
            text = f"Check {name} failed: a hidden test of this exercise did not pass."
        else:
            text = f"Check {name} failed: {error.get('ename', 'Error')}" + (f": {message}" if message else ".")
        cell.outputs = [{"output_type": "stream", "name": "stderr", "text": text + "\n"}]
        return cell, resources


class StudentMarkersAreText(Preprocessor):
    """A student's cell that contains the words of nbgrader's hidden-test markers (in a comment, a string,
    an answer) would make ClearHiddenTests stop the student's feedback ("BEGIN HIDDEN TESTS" without its
    end, or the other way round): in every cell that is not a check, the marker words get a hyphen, so
    that they read the same and mark nothing."""

    enabled = Bool(True)

    def preprocess_cell(self, cell, resources, index):
        if not runtime.is_check_cell(cell) and "HIDDEN TESTS" in cell.source:
            cell.source = cell.source.replace("HIDDEN TESTS", "HIDDEN-TESTS")
        return cell, resources


# What one cell may put into a student's feedback: its outputs are cut to this many bytes (a print of
# 50 MB gave a 50.5 MB feedback page; nbgrader's own limit counts lines, not bytes).
FEEDBACK_BYTES_PER_CELL = 20_000


class CapOutputBytes(Preprocessor):
    """Every cell's outputs in the feedback together hold at most FEEDBACK_BYTES_PER_CELL bytes of text;
    what is cut is said in one line. Rich outputs (HTML, images) of a cell over the cap are dropped."""

    enabled = Bool(True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not cell.get("outputs"):
            return cell, resources
        left, kept, cut = FEEDBACK_BYTES_PER_CELL, [], 0
        for output in cell.outputs:
            texts = []
            if output.get("output_type") == "stream":
                texts = [("text", output.get("text", ""))]
            elif output.get("output_type") == "error":
                texts = [("traceback", "\n".join(output.get("traceback", [])))]
            else:
                data = output.get("data", {})
                size = sum(len(str(v).encode("utf-8")) for v in data.values())
                if size > left:
                    cut += size
                    continue
                left -= size
                kept.append(output)
                continue
            for key, text in texts:
                raw = text.encode("utf-8")
                if len(raw) > left:
                    cut += len(raw) - left
                    text = raw[:left].decode("utf-8", errors="ignore")
                left -= len(text.encode("utf-8"))
                if key == "traceback":
                    output["traceback"] = text.split("\n") if text else []
                else:
                    output["text"] = text
            kept.append(output)
        if cut:
            kept.append(NotebookNode({"output_type": "stream", "name": "stderr",
                         "text": f"\n[{cut:,} more bytes of this cell's output left out of the feedback]\n"}))
        cell.outputs = kept
        return cell, resources


# Feedback is made from the autograded notebook, which holds the hidden tests again: failed checks
# are reduced to one sentence, a student's own marker words are made plain text, the hidden tests are
# removed, and every cell's outputs are cut to FEEDBACK_BYTES_PER_CELL before the HTML is written.
c.GenerateFeedback.preprocessors = [GetGrades, OneSentenceCheckFailures, StudentMarkersAreText, ClearHiddenTests,
                                    CapOutputBytes, CSSHTMLHeaderPreprocessor]
# What a student wrote or printed is shown as text, never run: nbconvert's sanitizer takes scripts, event
# handlers (<img onerror=...>) and the like out of markdown cells and outputs, both in the feedback and in the
# formgrader, which renders every submission with the instructor's session (a script there could call the
# server's API as the instructor).
c.HTMLExporter.sanitize_html = True

# Autograding: the cells run (a dead kernel costs only the cells after it), every check is scored outside
# the kernel from the answers it sent (ScoreOutsideTheKernel), and every cell's outputs are cut to the same byte cap before the autograded
# notebook is saved (a print of 50 MB stays out of the course's files, the gradebook and the formgrader).
c.Autograde.autograde_preprocessors = [ExecuteUntilTheKernelDies, ScoreOutsideTheKernel, IgnorePattern,
                                       ClearMetadataPreprocessor, LimitOutput, CapOutputBytes, SaveAutoGrades,
                                       AssignLatePenalties, CheckCellMetadata]


class ExportWithProblems(CsvExportPlugin):
    """nbgrader's CSV export, written with Python's csv module (a student id with a comma or a quote stays
    one field), with one more column, `problems`: what went wrong in each autograded notebook, so that
    a low score is never a bare number (a kernel that died and where, a check that did not run to its
    end, a cell stopped at the time limit)."""

    def export(self, gradebook):
        import csv
        import glob
        keys = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
                "raw_score", "late_submission_penalty", "score", "max_score", "problems"]
        coursedir = self.parent.coursedir
        with open(self.to or "grades.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(keys)
            for assignment in gradebook.assignments:
                if self.assignment and assignment.name not in self.assignment:
                    continue
                for student in gradebook.students:
                    if self.student and student.id not in self.student:
                        continue
                    row = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
                           "last_name": student.last_name, "first_name": student.first_name, "email": student.email,
                           "max_score": assignment.max_score, "problems": ""}
                    try:
                        submission = gradebook.find_submission(assignment.name, student.id)
                    except MissingEntry:
                        row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0,
                                   problems="nothing submitted")
                    else:
                        penalty = submission.late_submission_penalty or 0.0
                        row.update(timestamp=submission.timestamp, raw_score=submission.score,
                                   late_submission_penalty=penalty, score=max(0.0, submission.score - penalty))
                        folder = coursedir.format_path(coursedir.autograded_directory, student.id, assignment.name)
                        notes = []
                        for path in sorted(glob.glob(os.path.join(folder, "*.ipynb"))):
                            with open(path, encoding="utf-8") as nb_file:
                                notes += problems(json.load(nb_file))
                        row["problems"] = "; ".join(notes)
                    writer.writerow(["" if row[k] is None else row[k] for k in keys])


problems = runtime.problems


c.ExportApp.plugin_class = ExportWithProblems
