"""Grade many otter-grader submissions locally: a per-cell time limit, parallel, one line per student.

    python -m tools.grading.otter_run ZIP SUBMISSIONS -o OUT [--jobs N] [--release STUDENT_NOTEBOOK]

ZIP is the chapter's autograder zip (python -m tools.grading.otter), SUBMISSIONS a folder holding
either <student>.ipynb files or <student>/<anything>.ipynb folders (as a Gradescope or LMS export
unpacks). Each submission is graded by otter-grader's own `otter run` machinery (otter.run.main), N
processes side by side, each grading its share one after the other, with each cell limited to CELL_SECONDS (tools/grading/otter_grading.py: a
student's infinite loop costs that, not forever), N at a time, in the grading sandbox when it is
installed (tools/grading/sandbox.py). OUT (created if missing) gets <student>/results.json (otter's),
<student>/executed.ipynb (what ran, with its outputs) and scores.csv: one row per student, every
question's score, the total, and what went wrong. The scores are decided in the grading process, never in
the kernel: every check sends its answers out, and otter_grading.score_outside_the_kernel (which the
Gradescope zip runs too) compares them with the model solution's, read from the zip into this process's
memory (otter itself gets a copy of the zip without them); a check without answers scores 0 and is reported. With --release, each submission is compared with the released student
notebook and tampering with the checks is reported: edited or deleted `grader.check` cells (otter
grades with the zip's tests either way, so that cannot raise a score), a grading skip tag the student
added (the submission is graded without it: a copy with only the released skip tags, OUT/<student>/
graded.ipynb, as `check_submissions --fix` does for nbgrader), and suspected cheating in the student's own cells by cell and line (tools/grading/suspicion.py),
a report for the instructor, never a penalty.

Only the notebook is taken in: otter grades a plain copy of it (OUT/<student>/submitted.ipynb), so nothing
handed in beside it (a planted .OTTER_LOG, ipykernel_launcher.py, .pth, data) reaches otter or the kernel,
and each such file is named in the student's problems; a link is never followed (a link in place of the
notebook is FAILED).

A submission that cannot be graded at all (not a notebook, a link, a kernel that dies, a process over its
wall limit) is reported as FAILED with the reason and exits 1: never a silent 0.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

from tools.grading import sandbox
from tools.grading.grading_runtime import CELL_SECONDS, WITHOUT_SANDBOX, load_references
from tools.grading.suspicion import skip_tags, suspicions

# a whole submission: every cell at its limit would be far more; this only catches a grader that hangs
WALL_SECONDS = 600
# One process grades a batch of submissions one after the other (otter and its imports load once);
# --jobs N runs N such processes side by side.
_GRADE_BATCH = """
import json, sys
from tools.grading.otter_run import grade_here
grade_here(json.loads(sys.argv[1]), {zip!r}, {seconds}, {kernel!r})
"""

def grade_here(items: list, zip_path: str, seconds: int, kernel: str) -> None:
    """Grade `items` ([student, submission, out folder], ...) one after the other in this process."""
    import zipfile

    from tools.grading.otter_grading import install
    with zipfile.ZipFile(zip_path) as z:
        references = load_references(z.read("references.json").decode("utf-8"))
        entries = {name: z.read(name) for name in z.namelist() if name != "references.json"}
    install(seconds, kernel=kernel, references=references)     # the scores are decided here, from these
    private = tempfile.mkdtemp(prefix="otter-zip-")             # otter unpacks a copy without the references
    zip_path = os.path.join(private, os.path.basename(zip_path))
    with zipfile.ZipFile(zip_path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    from otter.run import main
    try:
        grade_each(main, items, zip_path)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def grade_each(main, items: list, zip_path: str) -> None:
    for student, submission, out in items:
        began = time.monotonic()
        # otter's working folder, the results file its kernel writes and the kernel's sockets all go in a
        # folder of this submission's own, the one folder besides its own that the sandbox lets it see
        share = tempfile.mkdtemp(prefix="otter-grading-")
        tempfile.tempdir, os.environ["ATTENTION_SANDBOX_SHARE"] = share, share
        try:
            results = main(submission, autograder=zip_path, output_dir=out, no_logo=True)
        except Exception as error:  # noqa: BLE001 - reported in one sentence in scores.csv
            Path(out, "error.txt").write_text(f"{type(error).__name__}: {error}"[:300])
            continue
        finally:
            tempfile.tempdir = None
            shutil.rmtree(share, ignore_errors=True)
            Path(out, "seconds.txt").write_text(str(time.monotonic() - began))
        # the cells that ran over the limit: nbclient interrupted them (KeyboardInterrupt)
        notebook = getattr(results, "notebook", None)
        cells = notebook.cells if notebook else []
        stopped = [i for i, cell in enumerate(cells)
                   if any(o.get("ename") in ("KeyboardInterrupt", "CellTimeoutError") for o in cell.get("outputs", []))]
        Path(out, "interrupted.json").write_text(json.dumps(stopped))
        # the checks that sent no answers, or answers not their own (otter_grading.results_from)
        Path(out, "unfinished.json").write_text(json.dumps(getattr(results, "unfinished", [])))
        if notebook is not None:      # what ran, with its outputs (the instructor's to look at)
            nbformat.write(notebook, Path(out, "executed.ipynb"))


def submissions(folder: Path) -> tuple[dict[str, Path], dict[str, str], dict[str, list[str]]]:
    """Each student's notebook, taken in alone: (found, refused, beside). A link, in place of a notebook or
    of a student's folder or anywhere inside it, is never followed: a link to the notebook is refused (a
    sentence per student), another is named. `beside` names everything else a student's folder holds
    (a planted .OTTER_LOG, ipykernel_launcher.py, .pth, data): otter never sees it, because grade_batch
    gives otter a plain copy of the notebook alone."""
    found, refused, beside = {}, {}, {}
    for path in sorted(folder.iterdir()):
        if path.is_symlink():
            refused[path.stem if path.suffix == ".ipynb" else path.name] = (
                f"a link (to {os.readlink(path)}), not a handed-in file: not graded")
        elif path.is_file() and path.suffix == ".ipynb":
            found[path.stem] = path
        elif path.is_dir():
            entries, links = [], []
            for root, dirs, files in os.walk(path):      # os.walk follows no link to a folder
                for name in sorted(dirs + files):
                    entry = Path(root, name)
                    (links if entry.is_symlink() else entries).append(entry)
            notebooks = sorted(e for e in entries if e.suffix == ".ipynb" and e.is_file()
                               and ".ipynb_checkpoints" not in e.parts)
            linked = sorted(e for e in links if e.suffix == ".ipynb")
            if notebooks:
                found[path.name] = notebooks[0]
            elif linked:
                refused[path.name] = f"the notebook {linked[0].name} is a link (to {os.readlink(linked[0])}): not graded"
            others = [e for e in entries + links if e not in notebooks[:1] and not (e.is_dir() and not e.is_symlink())]
            if others and path.name in found:
                beside[path.name] = sorted(str(e.relative_to(path)) + (f" (a link to {os.readlink(e)})" if e.is_symlink() else "")
                                           for e in others)
    return found, refused, beside


def taken_in(notebook: Path, folder: Path) -> Path:
    """A plain copy of the notebook alone, in the student's output folder: what otter grades."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / "submitted.ipynb"
    copy.write_bytes(notebook.read_bytes())
    return copy


def check_cells(nb) -> dict[str, str]:
    """question -> source of the cell that runs its `grader.check("question")`."""
    out = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            for name in re.findall(r"""grader\.check\(\s*["']([\w-]+)["']\s*\)""", cell.source):
                out[name] = cell.source
    return out


def tampering(submission: Path, release: Path | None) -> list[str]:
    if release is None:
        return []
    try:
        nb = nbformat.read(submission, as_version=4)
    except Exception as error:  # noqa: BLE001 - reported as one sentence
        return [f"not a readable notebook ({type(error).__name__})"]
    release_nb = nbformat.read(release, as_version=4)
    released, got = check_cells(release_nb), check_cells(nb)
    notes = [f"deleted check {q}" for q in released if q not in got]
    notes += [f"edited check {q}" for q in released if q in got and got[q].strip() != released[q].strip()]
    notes += [f"skip tag {tag!r} added on cell {index} (graded without it)" for index, tag in skip_tags(nb, release_nb)]
    notes += [f"SUSPECTED {line}" for line in suspicions(nb, release_nb)]
    return notes


def without_added_skip_tags(submission: Path, release: Path | None, folder: Path) -> Path:
    """The notebook to grade: the submission itself, or, when the student added a grading skip tag to a
    cell that is no released demonstration, a copy in `folder` without those tags."""
    if release is None:
        return submission
    try:
        nb = nbformat.read(submission, as_version=4)
    except Exception:  # noqa: BLE001 - otter reports an unreadable file itself
        return submission
    added = skip_tags(nb, nbformat.read(release, as_version=4))
    if not added:
        return submission
    for index, tag in added:
        tags = nb.cells[index].metadata.get("tags", [])
        nb.cells[index].metadata["tags"] = [t for t in tags if t != tag]
    folder.mkdir(parents=True, exist_ok=True)
    graded = folder / "graded.ipynb"
    nbformat.write(nb, graded)
    return graded


def grade_batch(batch: list[tuple[str, Path]], zip_path: Path, out: Path, seconds: int) -> list[dict]:
    items = []
    for student, path in batch:
        folder = out / student
        folder.mkdir(parents=True, exist_ok=True)
        items.append((student, str(path.resolve()), str(folder.resolve())))
    kernel = sandbox.KERNEL_NAME if sandbox.installed() else "python3"
    code = _GRADE_BATCH.format(seconds=seconds, zip=str(zip_path.resolve()), kernel=kernel)
    root = Path(__file__).resolve().parents[2]
    try:
        result = subprocess.run([sys.executable, "-c", code, json.dumps(items)], cwd=root, capture_output=True,
                                text=True, timeout=WALL_SECONDS * len(items))
        log, stopped = result.stdout + result.stderr, None
    except subprocess.TimeoutExpired as expired:
        log, stopped = f"{expired.stdout or ''}{expired.stderr or ''}", f"grading ran over {WALL_SECONDS} s a submission and was stopped"
    rows = []
    for student, _, folder in items:
        folder = Path(folder)
        (folder / "otter.log").write_text(log if isinstance(log, str) else "", encoding="utf-8")
        taken = float((folder / "seconds.txt").read_text()) if (folder / "seconds.txt").exists() else 0.0
        results = folder / "results.json"
        if (folder / "error.txt").exists() or not results.exists():
            reason = (folder / "error.txt").read_text() if (folder / "error.txt").exists() else (stopped or "no results")
            rows.append({"student": student, "failed": f"otter could not grade it: {reason}", "seconds": taken})
            continue
        data = json.loads(results.read_text(encoding="utf-8"))
        scores = {t["name"]: float(t["score"]) for t in data["tests"] if t["name"] != "Public Tests"}
        interrupted = folder / "interrupted.json"
        timed_out = bool(json.loads(interrupted.read_text())) if interrupted.exists() else False
        unfinished = json.loads((folder / "unfinished.json").read_text()) if (folder / "unfinished.json").exists() else []
        rows.append({"student": student, "scores": scores, "seconds": taken, "timed_out": timed_out,
                     "unfinished": unfinished})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("zip", type=Path)
    parser.add_argument("submissions", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--release", type=Path, help="the released student notebook, to report tampering")
    parser.add_argument("--cell-seconds", type=int, default=CELL_SECONDS)
    parser.add_argument("--without-sandbox", action="store_true",
                        help=f"grade even where the sandbox cannot run (students' code then runs as you; or {WITHOUT_SANDBOX}=1)")
    args = parser.parse_args(argv)
    if not sandbox.installed() and not (args.without_sandbox or os.environ.get(WITHOUT_SANDBOX) == "1"):
        sys.exit(f"the grading sandbox is not installed here ({sandbox.unusable()}), so nothing is graded: install it "
                 f"(python -m tools.grading.sandbox install), or pass --without-sandbox knowing that students' code then "
                 f"runs as you")
    for path, what in ((args.zip, "autograder zip"), (args.submissions, "submissions folder")):
        if not path.exists():
            sys.exit(f"no {what} at {path}")
    found, refused, beside = submissions(args.submissions)
    if not found and not refused:
        sys.exit(f"no notebook in {args.submissions} (expected <student>.ipynb or <student>/*.ipynb)")
    args.output.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(args.jobs, len(found) or 1))
    to_grade = {student: without_added_skip_tags(taken_in(path, args.output / student), args.release, args.output / student)
                for student, path in found.items()}
    batches = [batch for batch in (list(to_grade.items())[k::jobs] for k in range(jobs)) if batch]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = [row for rows in pool.map(lambda batch: grade_batch(batch, args.zip, args.output, args.cell_seconds), batches)
                for row in rows]
    rows += [{"student": student, "failed": why, "seconds": 0.0} for student, why in refused.items()]
    rows.sort(key=lambda row: row["student"])
    questions = sorted({q for r in rows for q in r.get("scores", {})})
    failed = 0
    with open(args.output / "scores.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *questions, "total", "seconds", "problems"])
        for row in rows:
            notes = tampering(found[row["student"]], args.release) if row["student"] in found else []
            if row["student"] in beside:
                notes.append("handed in beside the notebook, not given to otter: " + ", ".join(beside[row["student"]]))
            if row.get("timed_out"):
                notes.append(f"a cell ran over {args.cell_seconds} s and was interrupted")
            notes += row.get("unfinished", [])
            if "failed" in row:
                failed += 1
                notes.insert(0, "FAILED: " + row["failed"])
                writer.writerow([row["student"], *["" for _ in questions], "", f"{row['seconds']:.1f}", "; ".join(notes)])
                print(f"{row['student']}: FAILED - {row['failed']}")
                continue
            total = sum(row["scores"].values())
            writer.writerow([row["student"], *[row["scores"].get(q, 0) for q in questions], total,
                             f"{row['seconds']:.1f}", "; ".join(notes)])
            print(f"{row['student']}: {total:g} points in {row['seconds']:.0f} s" + (f" - {'; '.join(notes)}" if notes else ""))
    print(f"{len(rows)} submission(s) graded, {failed} failed; scores in {args.output / 'scores.csv'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
