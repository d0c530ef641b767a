"""The graders' references: what the model solution's checks answer, recorded in a trusted run.

    python -m tools.grading.references [LABEL ...]      # compute (or reuse) and print a summary

When an assignment is built (tools/grading/course.py for nbgrader, tools/grading/otter.py for otter and
the Gradescope zip), the chapter's course source (the model solutions, the hardened checks) runs top to
bottom in a plain kernel of the instructor's, without the cells that grading skips, and every check
cell's answer output (grading_runtime.ANSWER_MIME) is kept: {grade_id: {"points": p, "answers": [...]}}.
The graders compare each student's answers with these, in their own process. A check whose model run
fails, sends no answers or records a value that is not a number refuses the build, in one sentence.

The run is cached in _build/grading-references/ by the hash of what it ran, so that one build of the
suite computes each chapter's references once, however many courses and zips it makes.
"""
from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

import nbformat

from tools.grading import grading_runtime as runtime
from tools.registry import ROOT, Chapter

CACHE = ROOT / "_build" / "grading-references"


def _key(nb) -> str:
    digest = hashlib.sha256(nbformat.writes(nb).encode("utf-8"))
    digest.update(Path(runtime.__file__).read_bytes())
    return digest.hexdigest()[:20]


def trusted_run(nb, name: str) -> nbformat.NotebookNode:
    """Execute the course source in the instructor's own python3 kernel (not the grading sandbox: this is
    the model solution), skipping what grading skips."""
    from nbclient import NotebookClient

    nb = nbformat.reads(nbformat.writes(nb), as_version=4)      # a copy
    nb.cells = [c for c in nb.cells if runtime.SKIP_TAG not in c.get("metadata", {}).get("tags", [])]
    with tempfile.TemporaryDirectory(prefix="attention-references-") as folder:
        # Agg as the graders' kernels draw (never os.environ: this process's later kernels must not inherit it)
        client = NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=True,
                                extra_arguments=[f"--matplotlib={runtime.MPLBACKEND}"],
                                resources={"metadata": {"path": folder}})
        client.execute()
    for index, cell in enumerate(nb.cells):
        if "raises-exception" in cell.get("metadata", {}).get("tags", []):
            continue                                  # a cell that shows an error on purpose
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                raise SystemExit(f"{name}: the model solution's run failed in cell {index} "
                                 f"({output.get('ename')}: {str(output.get('evalue'))[:200]}); no references written")
    return nb


def from_run(nb, name: str) -> dict:
    """The references of an executed course source."""
    checks = {}
    for cell in nb.cells:
        if not runtime.is_check_cell(cell):
            continue
        gid = runtime.grade_id(cell)
        found = runtime.answer_outputs(cell.get("outputs", []))
        if len(found) != 1 or not isinstance(found[0], dict) or found[0].get("grade_id") != gid:
            raise SystemExit(f"{name}: the check {gid} sent {len(found)} answer outputs in the model solution's run "
                             f"(one is needed: is its last line emit_answers?)")
        answers = found[0].get("answers", [])
        if not answers:
            raise SystemExit(f"{name}: the check {gid} records no answer (answer(), check_array, ...), so it could "
                             f"not tell a wrong solution from a right one")
        for answer_name, record in answers:
            if "error" in record:
                raise SystemExit(f"{name}: the model solution's {answer_name!r} in {gid} is not an answer: {record['error']}")
        checks[gid] = {"points": float(cell.metadata["nbgrader"].get("points") or 0),
                       "answers": [[n, runtime.reference_record(r)] for n, r in answers]}
    if not checks:
        raise SystemExit(f"{name}: no graded check in the course source")
    return checks


def references(chapter: Chapter, nb=None) -> dict:
    """The chapter's references, from the cache when this exact course source ran before."""
    from filelock import FileLock

    from tools.grading.course import course_source

    nb = nb if nb is not None else course_source(chapter)
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{chapter.stem}-{_key(nb)}.json"
    with FileLock(str(path) + ".lock"):
        if not path.exists():
            checks = from_run(trusted_run(nb, chapter.stem), chapter.stem)
            path.write_text(runtime.dump_references(checks, chapter.label), encoding="utf-8")
        return runtime.load_references(path.read_text(encoding="utf-8"))


def references_text(chapter: Chapter, nb=None) -> str:
    return runtime.dump_references(references(chapter, nb), chapter.label)


if __name__ == "__main__":
    from tools.grading.course import chosen

    for chapter in chosen(sys.argv[1:] or None):
        checks = references(chapter)
        print(f"{chapter.label}: {len(checks)} checks, {sum(len(c['answers']) for c in checks.values())} answers")
