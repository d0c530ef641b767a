"""The grading runtime: every contract between the book's notebooks and its graders, defined once.

Used by nbgrader's course configuration (nbgrader_config.py), by otter-grader's runner (otter_grading.py:
`python -m tools.grading.otter_run` and the Gradescope zip's run_otter.py) and by the course build
(tools/grading/references.py, course.py, otter.py). It imports nothing of the book's and nothing but the
standard library, so that the course folder and the autograder zip each carry a plain copy of this one file.

The design: **the kernel only answers, a process it cannot reach scores.** A check cell of an exercise
calls the student's code on fixed inputs and records what came back as plain data (numbers, shapes,
types; the book's `answer()` and `check_*` helpers), and its last line, added by the course build,
sends the record out as one output of the cell (ANSWER_MIME). The grader, in its own process, compares
that output with the model solution's, recorded in a trusted run when the assignment was built
(`references`, kept in the course folder or in the grader's memory, never where the kernel can read it).
Nothing the kernel prints, patches or redefines can turn a wrong value into a pass: a missing, doubled or
malformed answer scores 0 and is named. What the checks assert inside the kernel is advice for the student.
"""
from __future__ import annotations

import json
import math

# --- how the notebooks run under a grader ---------------------------------------------------------------
# Without the expensive demonstrations (tagged SKIP_TAG, skipped) no cell of any chapter takes more than a
# few seconds on one slow core; a cell that runs CELL_SECONDS is a loop and is interrupted.
CELL_SECONDS = 20
# the first cell a kernel runs imports numpy, torch and matplotlib: slow on a loaded machine or in a fresh
# environment whose modules are not compiled yet
FIRST_CELL_SECONDS = 120
STARTUP_SECONDS = 300          # a kernel slow to start is waited for this long (nbclient's default is 60)
MPLBACKEND = "agg"             # grading draws nothing: the checks read numbers, never pictures
# the tag of the cells grading skips (expensive demonstrations before the first exercise): otter-grader's
# own name for it, which nbgrader's executor is told to skip too
SKIP_TAG = "otter_ignore"
# the book's cells that check the model solution against independent computations: no grader's notebook has them
VERIFY_TAG = "verify-solution"
HIDDEN_BEGIN, HIDDEN_END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"     # nbgrader's own marker words
# grading refuses to start without the bubblewrap sandbox unless this variable is "1" (instructors.md)
WITHOUT_SANDBOX = "ATTENTION_GRADING_WITHOUT_SANDBOX"

# --- what a check cell sends out ------------------------------------------------------------------------
ANSWER_MIME = "application/vnd.attention-book.answers+json"
ANSWER_BYTES = 2_000_000       # an answer output larger than this is not read
MESSAGE_CHARS = 300


def is_check_cell(cell) -> bool:
    """A graded check: a code cell with nbgrader's grade flag that is not a solution."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def grade_id(cell) -> str:
    return str(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))


def emit_line(gid: str) -> list[str]:
    """The lines the course build appends to a check's hidden part: the record goes out, then nothing else."""
    return [f"emit_answers({gid!r})"]


def failure_lines(gid: str, message: str) -> list[str]:
    """Lines that send out that a check stopped with an error (otter's test wrappers: without them, a check that
    failed in the kernel and one that never ran would look alike)."""
    return ["from IPython.display import display as _display",
            f"_display({{{ANSWER_MIME!r}: {{'grade_id': {gid!r}, 'failed': {message}}}}}, raw=True)"]


def answer_outputs(outputs) -> list:
    """The data of every answer output among `outputs` (in order), whatever grade_id it claims."""
    found = []
    for output in outputs or []:
        if output.get("output_type") in ("display_data", "execute_result") and ANSWER_MIME in output.get("data", {}):
            found.append(output["data"][ANSWER_MIME])
    return found


def without_answer_outputs(outputs) -> list:
    return [o for o in outputs or [] if not (o.get("output_type") in ("display_data", "execute_result")
                                              and ANSWER_MIME in o.get("data", {}))]


# --- the comparison, outside the kernel -----------------------------------------------------------------
def _number(value):
    """A recorded value as a float: finite numbers as they are, 'inf', '-inf' and 'nan' as the strings say."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError("not a number")
    if isinstance(value, str):
        if value not in ("inf", "-inf", "nan"):
            raise ValueError("not a number")
        return float(value)
    return float(value)


def _well_formed(data) -> list:
    """The [name, record] pairs of an answer output, or ValueError with a sentence."""
    if not isinstance(data, dict) or not isinstance(data.get("answers"), list):
        raise ValueError("its answer output is not in the graders' format")
    pairs = data["answers"]
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], dict)):
            raise ValueError("its answer output is not in the graders' format")
    return pairs


def _index(k: int, shape: list) -> tuple:
    position = []
    for size in reversed(shape):
        position.insert(0, k % size)
        k //= size
    return tuple(position)


def compare_one(name: str, expected: dict, got: dict) -> str | None:
    """None when `got` (the student's record) meets `expected` (the model solution's), else one sentence."""
    if "error" in got:
        return str(got["error"])[:MESSAGE_CHARS]
    if expected.get("type") == "int" and got.get("type") != "int":
        return f"{name} should be an int, got a {str(got.get('type'))[:20]}."
    shape, got_shape = expected.get("shape"), got.get("shape")
    if not isinstance(got_shape, list) or [*got_shape] != [*shape]:
        return f"{name} has shape {tuple(got_shape) if isinstance(got_shape, list) else '?'}; expected {tuple(shape)}."
    try:
        values = [_number(v) for v in got.get("values", [])]
        wanted = [_number(v) for v in expected["values"]]
    except (ValueError, TypeError):
        return f"{name} holds something that is not a number."
    if len(values) != len(wanted) or len(values) != math.prod(shape):
        return f"{name} does not hold one number per entry of its shape."
    atol, rtol = float(expected.get("atol", 0.0)), float(expected.get("rtol", 0.0))
    for k, v in enumerate(values):
        if math.isnan(v):
            return f"{name} contains NaN; look for an overflow or a division by zero."
    if expected.get("weights"):
        row = shape[-1] if shape else 1
        for k, v in enumerate(values):
            if v < -atol:
                return f"{name} has a negative weight ({v:.3g}); softmax weights are never negative."
        for start in range(0, len(values), row):
            if abs(math.fsum(values[start:start + row]) - 1.0) > max(atol, 1e-12):
                return f"{name} does not sum to 1 along the last axis; divide by the sum of the exponentials."
        masked = expected.get("masked")
        if masked:
            for k, (v, blocked) in enumerate(zip(values, masked)):
                if blocked and v != 0:
                    return f"{name} is not exactly 0 at the blocked positions; give them a score of -inf."
    why = goal_missed(name, expected.get("goal"), values)
    if why:
        return why
    if expected.get("compare_values", True):
        for k, (v, w) in enumerate(zip(values, wanted)):
            if not (v == w or abs(v - w) <= atol + rtol * abs(w)):
                at = f" at index {_index(k, shape)}" if shape else ""
                return f"{name} differs from the model solution's value{at}: got {v:.6g}, expected {w:.6g}."
    return None


# What the grader computes from an answer where many values are right (the model solution's record names it):
# its length at most a bound; the softmax of K @ value putting at least a weight on one position.
GOALS = ("length_at_most", "softmax_of", "index", "at_least")


def goal_missed(name: str, goal, values: list) -> str | None:
    if not goal:
        return None
    if set(goal) - set(GOALS):
        raise ValueError(f"unknown goal {sorted(set(goal) - set(GOALS))} in the references")
    if not all(math.isfinite(v) for v in values):
        return f"{name} holds an infinity; give finite numbers."
    if "length_at_most" in goal and math.sqrt(math.fsum(v * v for v in values)) > float(goal["length_at_most"]) + 1e-9:
        return f"{name} is longer than {goal['length_at_most']}."
    if "softmax_of" in goal:
        scores = [math.fsum(float(k) * v for k, v in zip(row, values)) for row in goal["softmax_of"]]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        weight = weights[int(goal.get("index", 0))] / math.fsum(weights)
        if weight < float(goal.get("at_least", 0.0)):
            return f"{name} gives position {int(goal.get('index', 0)) + 1} a weight of {weight:.3f}, less than {goal['at_least']}."
    return None


def reference_record(record: dict) -> dict:
    """A record of the model solution's run as the references keep it (which spec fields count)."""
    return {key: record[key] for key in ("type", "shape", "values", "atol", "rtol", "weights", "masked", "hidden",
                                         "compare_values", "goal") if key in record}


def judge(expected: list, outputs, gid: str) -> tuple[bool, str, str | None]:
    """The verdict on one check: (passed, sentence for the student, problem for the instructor or None).

    `expected` is the model solution's [name, record] list for this check; `outputs` are the outputs of the
    cell (or cells) in which the check ran. Every answer output claiming this grade_id must match; there
    must be at least one, and an output claiming another check's id (or none) makes the check fail too."""
    found = answer_outputs(outputs)
    if not found:
        return False, f"{gid} failed: its checks sent no answers (they did not run to their end).", \
            f"{gid} sent no answers (its checks did not run to their end)"
    for data in found:
        if not isinstance(data, dict):
            return False, f"{gid} failed: its answer output is not in the graders' format.", \
                f"{gid}: its answer output is not in the graders' format"
        claimed = data.get("grade_id")
        if claimed == gid and "failed" in data:     # a check that stopped with an error says so (otter's tests)
            return False, f"{gid} failed: {str(data['failed'])[:MESSAGE_CHARS]}", None
        if claimed != gid:
            return False, f"{gid} failed: an answer output of another check appeared in its cell.", \
                f"{gid}: an answer output claiming {str(claimed)[:40]!r} appeared in its cell"
        try:
            pairs = _well_formed(data)
        except ValueError as error:
            return False, f"{gid} failed: {error}.", f"{gid}: {error}"
        names = [name for name, _ in pairs]
        wanted = [name for name, _ in expected]
        if names != wanted:
            missing = [n for n in wanted if n not in names]
            hidden_missing = any(rec.get("hidden") for n, rec in expected if n in missing)
            what = ("a hidden test of this exercise did not run to its end" if hidden_missing or not missing
                    else f"the check of {missing[0][:80]} did not run")
            return False, f"{gid} failed: {what}.", None if missing else f"{gid}: its answers are not the checks' own"
        for (name, record), (_, ref) in zip(pairs, expected):
            why = compare_one(name, ref, record)
            if why is not None:
                if ref.get("hidden"):
                    return False, f"{gid} failed: a hidden test of this exercise did not pass.", None
                return False, f"{gid} failed: {why}", None
    return True, f"{gid} passed: every answer matches the model solution's (compared outside the notebook).", None


class StopsWhatIgnoresAnInterrupt:
    """For nbclient's executors (both graders'): a cell still running one time limit after its interrupt
    (compiled code that never returns to Python, which alone can act on an interrupt) gets its kernel
    stopped, and a DeadKernelError saying UNRESPONSIVE, instead of nbclient interrupting it forever."""

    async def _async_handle_timeout(self, timeout, cell=None):
        if cell is not None and getattr(self, "_interrupted_cell", None) is cell:
            import inspect

            from nbclient.exceptions import DeadKernelError
            self.unresponsive_cell = cell
            stopped = self.km.shutdown_kernel(now=True)
            if inspect.isawaitable(stopped):
                await stopped
            raise DeadKernelError(UNRESPONSIVE)
        self._interrupted_cell = cell
        return await super()._async_handle_timeout(timeout, cell)

    def ignored_its_interrupt(self, cell, error) -> bool:
        """Whether `error`, raised while `cell` ran, means that the cell ignored its interrupt (nbclient may
        also give up waiting for the interrupted cell's output, CellTimeoutError); if so its kernel is stopped."""
        if getattr(self, "unresponsive_cell", None) is cell:
            return True
        if type(error).__name__ != "CellTimeoutError" or getattr(self, "_interrupted_cell", None) is not cell:
            return False
        self.unresponsive_cell = cell
        try:
            import inspect

            from jupyter_core.utils import run_sync
            stop = self.km.shutdown_kernel
            (run_sync(stop) if inspect.iscoroutinefunction(stop) else stop)(now=True)
        except Exception:  # noqa: BLE001 - a kernel already gone
            pass
        return True


# --- the references file ----------------------------------------------------------------------------------
REFERENCES_FORMAT = 1


def load_references(text: str) -> dict:
    """{grade_id: {"points": p, "answers": [[name, record], ...]}} from a references file's text."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != REFERENCES_FORMAT or not isinstance(data.get("checks"), dict):
        raise ValueError("not a references file of this grading runtime (rebuild the assignment)")
    return data["checks"]


def dump_references(checks: dict, assignment: str) -> str:
    return json.dumps({"format": REFERENCES_FORMAT, "assignment": assignment, "checks": checks}, indent=1, sort_keys=True)


# --- what went wrong, per notebook ------------------------------------------------------------------------
KERNEL_DIED = "the kernel died while this cell ran (os._exit, exit(), a signal or memory): grading stopped here"
UNRESPONSIVE = ("this cell ran past the time limit and did not stop when interrupted (a loop inside compiled code, "
                "such as a regular expression that backtracks), so its kernel was stopped: grading stopped here")
NOT_RUN = "not run: the kernel died in an earlier cell"
WRONG, NO_ANSWER = "WrongAnswer", "NoAnswer"         # the enames of the verdicts the grader writes into a check


def problems(nb) -> list:
    """One phrase per thing that went wrong in a graded notebook (a dict, as json reads it)."""
    notes = []
    for index, cell in enumerate(nb.get("cells", [])):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        first = next((line.strip() for line in source.splitlines() if line.strip()), "")[:60]
        gid = grade_id(cell)
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            if output.get("ename") == "KernelDied" and output.get("evalue") == KERNEL_DIED:
                notes.append(f"the kernel died in cell {index} ({first!r}); the checks after it scored 0")
            elif output.get("ename") == "KernelDied" and output.get("evalue") == UNRESPONSIVE:
                notes.append(f"cell {index} ({first!r}) ignored the interrupt at the time limit and its kernel was "
                             f"stopped; the checks after it scored 0")
            elif output.get("ename") == NO_ANSWER:      # the grader's verdict: its second line says what went wrong
                trace = output.get("traceback") or []
                notes.append(str(trace[1]) if len(trace) > 1 else f"{gid} sent no answers")
            elif output.get("ename") in ("KeyboardInterrupt", "CellTimeoutError"):
                notes.append(f"cell {index} ({first!r}) was stopped at the time limit")
    return notes
