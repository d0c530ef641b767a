"""Check students' submissions against the released notebook before `nbgrader autograde`.

    python -m tools.grading.check_submissions COURSE ASSIGNMENT          # one line per student; exit 1 on a problem left
    python -m tools.grading.check_submissions COURSE ASSIGNMENT --fix    # repair what can be repaired (a backup is kept)

nbgrader grades the cells that carry its metadata (`metadata.nbgrader.grade_id`); a submission is
compared cell by cell with the notebook it was released as (COURSE/release/ASSIGNMENT/), never by
nbgrader's checksums (which differ for every untouched submission whose checks have hidden tests,
because the gradebook's copy holds the hidden tests and the release does not). For every submission in
COURSE/submitted/<student>/ASSIGNMENT/ it finds:

- lost metadata: a released nbgrader cell whose grade_id is missing, and a cell that is clearly it
  (same cell id; for a check cell the same source; for a code answer the same first line as the
  stub; for a written answer the cell right after the same exercise statement, which is how a front
  end that drops cell metadata and renumbers cell ids, e.g. Colab, leaves it) - restorable;
- a deleted check: a released check cell that is gone (autograde adds it back and runs it);
- a renamed check or answer: a grade_id the release does not have (nbgrader 0.9.6 stops with
  `KeyError: 'grade_id'` for the whole notebook) - restorable when the cell matches a missing one;
- an edited check: a check cell whose code differs from the release (autograde runs the original);
- re-pointed: a check cell whose points differ from the release (autograde uses the original points);
- a duplicated grade_id (a copied cell): nbgrader grades the last copy and stops with
  add_missing_cells; --fix keeps the metadata of the last copy only;
- a grading skip tag (`otter_ignore`, `skip-execution`) on a cell that is not a released demonstration:
  the graders would skip a check so tagged, and score it as passed; --fix takes the tag off;
- a submission that cannot be graded at all, each in one sentence, the rest of the class checked: another
  assignment's notebook under this one's name (its graded cells are another label's; --fix leaves it), a
  folder without the released file name (the files it holds are named), an empty or a broken file;
- anything handed in beside the notebook (a file, a folder, a hidden file such as .OTTER_LOG, a planted
  ipykernel_launcher.py or .pth, a link): nbgrader would copy it next to the notebook the kernel runs
  and into the student's feedback; --fix moves it to the backup, so that only the notebook is taken in
  (and nbgrader's own timestamp.txt, a plain file). A link in place of the notebook, of the student's
  folder or of the assignment's folder is never followed: it is a PROBLEM, and --fix moves the link away;
- suspected cheating in the student's own cells (tools/grading/suspicion.py: patched modules, IPython
  hooks, frame walking, redefined check helpers, objects that compare equal to anything, ending the
  kernel, files outside the notebook's folder, hidden-test markers), by cell and line: a report for the
  instructor, never a penalty.

Edited checks, points and names never change a score (nbgrader restores the released checks and
points); they are reported so that an instructor can talk to the student. An untouched submission is
reported `ok`.

With --fix the submission is repaired in place, after copying the original to
COURSE/submitted-backup/<student>/ASSIGNMENT/ (never overwritten: the first original stays).
"""
from __future__ import annotations

import argparse
import copy
import os
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools.grading import grading_runtime as runtime, sandbox
from tools.grading.suspicion import skip_tags, suspicions


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell) -> str | None:
    meta = nbgrader_meta(cell)
    if meta.get("grade") or meta.get("solution") or meta.get("locked") or meta.get("task"):
        return meta.get("grade_id")
    return None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def label_of(gid: str) -> str:
    """`scoring_ex2_check` -> `scoring`: the assignment label of a book's grade id (<label>_ex<n>_<kind>)."""
    return re.sub(r"_ex\d+_\w+$", "", gid)


def _is_check(meta: dict) -> bool:
    return runtime.is_check_cell({"cell_type": "code", "metadata": {"nbgrader": meta}})


@dataclass
class Report:
    path: Path
    missing: list[str] = field(default_factory=list)                 # released grade_ids not found
    duplicated: dict[str, int] = field(default_factory=dict)
    restorable: dict[str, int] = field(default_factory=dict)         # grade_id -> cell index in the submission
    renamed: dict[str, str] = field(default_factory=dict)            # unknown grade_id -> released one (or "")
    edited: list[str] = field(default_factory=list)
    repointed: dict[str, tuple[float, float]] = field(default_factory=dict)
    answers: set[str] = field(default_factory=set)                  # released grade_ids of answer cells
    skip_tagged: list[tuple[int, str]] = field(default_factory=list)   # (cell, tag): a skip tag a student added
    problem: str = ""                                                # why the notebook cannot be graded at all
    suspected: list[str] = field(default_factory=list)               # "cell N, line L: what (code)"
    beside: list[str] = field(default_factory=list)                  # names handed in beside the notebook

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated or self.renamed or self.edited or self.repointed
                    or self.skip_tagged or self.suspected or self.beside)

    @property
    def deleted(self) -> list[str]:
        return [gid for gid in self.missing if gid not in self.restorable]

    def lines(self) -> list[str]:
        out = []
        for gid, n in self.duplicated.items():
            out.append(f"{gid} occurs {n} times (a duplicated cell): --fix keeps the metadata of the last copy, "
                       f"the one nbgrader grades")
        for unknown, gid in self.renamed.items():
            out.append(f"renamed: {unknown!r} is not in the release" + (
                f"; it is {gid} (--fix restores the name)" if gid else "; it matches no released cell"))
        for gid in self.missing:
            if gid in self.renamed.values():
                continue
            where = self.restorable.get(gid)
            out.append(f"{gid} has no nbgrader metadata" + (
                f" (cell {where} is it: --fix restores it)" if where is not None
                else " and no cell is it (deleted): autograde adds the check back; a lost answer scores 0"))
        for gid in self.edited:
            out.append(f"edited check {gid}: autograde runs the released check instead")
        for gid, (was, got) in self.repointed.items():
            out.append(f"re-pointed check {gid}: {got:g} points instead of {was:g}; autograde uses {was:g}")
        for index, tag in self.skip_tagged:
            out.append(f"skip tag {tag!r} on cell {index}, which is no released demonstration: the graders would "
                       f"skip it (--fix takes the tag off)")
        out += [f"suspected: {line}" for line in self.suspected]
        if self.beside:
            out.append("handed in beside the notebook: " + ", ".join(self.beside) + " (nbgrader would copy them next "
                       "to the notebook it runs and into the feedback; --fix moves them to submitted-backup/)")
        return out

    def summary(self) -> str:
        """One line for the student."""
        if self.problem:
            return self.problem
        parts = []
        if self.edited:
            parts.append("edited " + ", ".join(self.edited))
        if self.repointed:
            parts.append("re-pointed " + ", ".join(self.repointed))
        if self.renamed:
            parts.append("renamed " + ", ".join(self.renamed))
        if self.deleted:
            parts.append("deleted " + ", ".join(self.deleted))
        lost = [gid for gid in self.restorable if gid not in self.renamed.values()]
        if lost:
            parts.append(f"metadata lost on {len(lost)} cell(s)")
        if self.duplicated:
            parts.append("duplicated " + ", ".join(self.duplicated))
        if self.skip_tagged:
            parts.append("skip tag added on cell(s) " + ", ".join(str(i) for i, _ in self.skip_tagged))
        if self.suspected:
            parts.append(f"SUSPECTED: {len(self.suspected)} line(s) to look at (-v lists them)")
        if self.beside:
            parts.append("handed in beside the notebook: " + ", ".join(self.beside))
        return "; ".join(parts) if parts else "ok"


def _matches(cell, ref, previous_source: str | None, submission_cells, index: int) -> bool:
    if cell.cell_type != ref.cell_type:
        return False
    meta = nbgrader_meta(ref)
    if meta.get("locked") and cell.source.strip() == ref.source.strip():
        return True
    if meta.get("solution") and ref.cell_type == "code" and _first_line(ref.source) \
            and _first_line(cell.source) == _first_line(ref.source) \
            and "NotImplementedError" not in _first_line(ref.source):
        return True
    # a written answer: as many cells after the same exercise statement (or check) as in the release
    if meta.get("solution") and ref.cell_type == "markdown" and previous_source is not None:
        anchor, distance = previous_source
        return index - distance >= 0 and submission_cells[index - distance].source.strip() == anchor.strip()
    return False


def check_notebook(submission: nbformat.NotebookNode, release: nbformat.NotebookNode, path: Path) -> Report:
    report = Report(path)
    released = {grade_id(c): c for c in release.cells if grade_id(c)}
    # for each released cell, the nearest cell before it that a student does not write in (the
    # exercise statement, a check) and how many cells back it is: a written answer is found again
    # by that anchor even when a front end renumbered the ids and dropped the metadata
    before = {}
    for i, c in enumerate(release.cells):
        if grade_id(c):
            k = i - 1
            while k >= 0 and nbgrader_meta(release.cells[k]).get("solution"):
                k -= 1
            before[grade_id(c)] = (release.cells[k].source, i - k) if k >= 0 else None
    counts = Counter(grade_id(c) for c in submission.cells if grade_id(c))
    report.duplicated = {gid: n for gid, n in counts.items() if n > 1}
    report.missing = [gid for gid in released if gid not in counts]
    report.answers = {gid for gid, c in released.items() if nbgrader_meta(c).get("solution")}
    unknown = {i: grade_id(c) for i, c in enumerate(submission.cells) if grade_id(c) and grade_id(c) not in released}
    unclaimed = [i for i, c in enumerate(submission.cells) if not grade_id(c)] + list(unknown)
    for gid in report.missing:
        ref = released[gid]
        match = None
        if ref.get("id"):
            match = next((i for i in unclaimed if submission.cells[i].get("id") == ref.get("id")
                          and submission.cells[i].cell_type == ref.cell_type), None)
        if match is None:
            match = next((i for i in unclaimed if _matches(submission.cells[i], ref, before[gid], submission.cells, i)), None)
        if match is not None:
            report.restorable[gid] = match
            unclaimed.remove(match)
            if match in unknown:
                report.renamed[unknown[match]] = gid
    for i, name in unknown.items():
        report.renamed.setdefault(name, "")
    for gid, ref in released.items():
        meta = nbgrader_meta(ref)
        if not _is_check(meta):
            continue
        cells = [c for c in submission.cells if grade_id(c) == gid]
        if not cells:
            continue
        got = cells[-1]
        if meta.get("locked") and got.source.strip() != ref.source.strip():
            report.edited.append(gid)
        was, now = float(meta.get("points") or 0), float(nbgrader_meta(got).get("points") or 0)
        if was != now:
            report.repointed[gid] = (was, now)
    report.skip_tagged = skip_tags(submission, release)
    report.suspected = suspicions(submission, release)
    # none of the release's cells, and graded cells of another assignment: the student handed in the wrong notebook
    labels, ours = {label_of(gid) for gid in counts}, {label_of(gid) for gid in released}
    if counts and not set(counts) & set(released) and labels and not labels & ours:
        report.problem = (f"not this assignment's notebook: its exercises are {', '.join(sorted(labels))}'s; "
                          f"ask the student for the right one")
        report.answers = set(report.missing)
    return report


def repair(submission: nbformat.NotebookNode, release: nbformat.NotebookNode, report: Report) -> nbformat.NotebookNode:
    released = {grade_id(c): c for c in release.cells if grade_id(c)}
    fixed = copy.deepcopy(submission)
    # a duplicated grade_id: nbgrader grades the last copy and empties the metadata of the others,
    # and with add_missing_cells that empty metadata stops autograde (KeyError 'grade_id', nbgrader
    # 0.9.6). Keep the last copy's metadata, as nbgrader would, and drop it from the earlier copies.
    for gid in report.duplicated:
        copies = [i for i, c in enumerate(fixed.cells) if grade_id(c) == gid]
        for i in copies[:-1]:
            fixed.cells[i].metadata.pop("nbgrader", None)
    for gid, i in report.restorable.items():
        fixed.cells[i].metadata["nbgrader"] = copy.deepcopy(released[gid].metadata["nbgrader"])
        for key in ("editable", "deletable"):
            if key in released[gid].metadata:
                fixed.cells[i].metadata[key] = released[gid].metadata[key]
    # a renamed cell that matches nothing: nbgrader cannot grade an unknown grade_id and stops the
    # whole notebook, so the unknown name is dropped (its check comes back with add_missing_cells)
    for name, gid in report.renamed.items():
        if not gid:
            for cell in fixed.cells:
                if grade_id(cell) == name:
                    cell.metadata.pop("nbgrader", None)
    for index, tag in report.skip_tagged:     # a skip tag the student added: off (released demonstrations keep theirs)
        tags = fixed.cells[index].metadata.get("tags", [])
        fixed.cells[index].metadata["tags"] = [t for t in tags if t != tag]
    return fixed


def needs_fix(report: Report) -> bool:
    return bool(report.restorable or report.duplicated or report.renamed or report.skip_tagged or report.beside)


# what nbgrader itself puts beside a notebook it collects (a plain file, read by nbgrader only)
NBGRADER_FILES = ("timestamp.txt",)


def extras(folder: Path, names: set[str]) -> list[Path]:
    """What `folder` holds besides the notebooks `names` and nbgrader's own plain files: every other file,
    folder or link, hidden ones included (a link is never followed)."""
    return [entry for entry in sorted(folder.iterdir())
            if entry.is_symlink() or not entry.is_file() or entry.name not in (*names, *NBGRADER_FILES)]


def beside(folder: Path, names: set[str]) -> list[str]:
    """The names of `extras`, a folder with a slash, a link with its target."""
    return [f"{entry.name} (a link to {os.readlink(entry)})" if entry.is_symlink()
            else entry.name + ("/" if entry.is_dir() else "") for entry in extras(folder, names)]


def _backup_path(course: Path, path: Path) -> Path:
    return course / "submitted-backup" / path.relative_to(course / "submitted")


def _move_to_backup(course: Path, entry: Path) -> None:
    """Move `entry` (a file, a folder or a link, never followed) from submitted/ to submitted-backup/."""
    backup = _backup_path(course, entry)
    backup.parent.mkdir(parents=True, exist_ok=True)
    if backup.exists() or backup.is_symlink():
        backup = backup.with_name(backup.name + f".{os.getpid()}")
    os.rename(entry, backup)


def _linked(student: Path, assignment: str) -> Path | None:
    """The student's folder or the assignment's folder when it is a link (never followed), else None."""
    for entry in (student, student / assignment):
        if entry.is_symlink():
            return entry
    return None


def lost_answers(report: Report) -> list[str]:
    """Answers that no cell of the submission holds: they would score 0 (the student must be asked)."""
    return [gid for gid in report.deleted if gid in report.answers]


def _backup(course: Path, path: Path) -> Path:
    backup = _backup_path(course, path)
    if not backup.exists():
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, backup)
    return backup


def check_assignment(course: Path, assignment: str, fix: bool = False) -> list[Report]:
    course = Path(course)
    release_dir = course / "release" / assignment
    if not release_dir.is_dir():
        raise SystemExit(f"{release_dir} does not exist: run `nbgrader generate_assignment {assignment}` first")
    reports = []
    released_names = {p.name for p in release_dir.glob("*.ipynb")}
    for released_path in sorted(release_dir.glob("*.ipynb")):
        release = nbformat.read(released_path, as_version=4)
        for student in sorted(p for p in (course / "submitted").glob("*") if p.is_dir() or p.is_symlink()):
            path = student / assignment / released_path.name
            link = _linked(student, assignment) or (path if path.is_symlink() else None)
            if link is not None:           # never followed: a link could point at the gradebook or a classmate
                report = Report(path)
                report.missing = ["(the whole notebook)"]
                report.answers = {"(the whole notebook)"}
                where = "the notebook" if link == path else "the folder " + str(link.relative_to(course / "submitted"))
                report.problem = (f"{where} is a link (to {os.readlink(link)}), not what was handed in: not graded"
                                  + ("; moved to submitted-backup/" if fix else " (--fix moves it away)"))
                if fix:
                    _move_to_backup(course, link)
                reports.append(report)
                continue
            if not path.exists():
                if (student / assignment).is_dir():    # handed in, under another name: say so, never skip the student
                    found = sorted(p.name for p in (student / assignment).iterdir())
                    report = Report(path)
                    report.missing = ["(the whole notebook)"]
                    report.answers = {"(the whole notebook)"}
                    report.problem = (f"no {released_path.name} in the submission; it holds "
                                      + (", ".join(found) if found else "nothing"))
                    reports.append(report)
                continue
            try:
                submission = nbformat.read(path, as_version=4)
            except Exception as error:  # noqa: BLE001 - one sentence per student, not a traceback
                report = Report(path)
                report.missing = ["(the whole notebook)"]
                report.answers = {"(the whole notebook)"}
                empty = path.stat().st_size == 0
                report.problem = ("an empty file" if empty else
                                  f"not a readable notebook ({type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''})")
                reports.append(report)
                continue
            report = check_notebook(submission, release, path)
            report.beside = beside(path.parent, released_names)
            if fix and needs_fix(report) and not report.problem:
                if report.restorable or report.duplicated or report.renamed or report.skip_tagged:
                    _backup(course, path)
                    nbformat.write(repair(submission, release, report), path)
                for entry in extras(path.parent, released_names):      # only the notebook is taken in
                    _move_to_backup(course, entry)
            reports.append(report)
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("course", type=Path)
    parser.add_argument("assignment")
    parser.add_argument("--fix", action="store_true", help="restore lost or renamed nbgrader metadata (original kept in submitted-backup/)")
    parser.add_argument("-v", "--verbose", action="store_true", help="explain each problem on a line of its own")
    args = parser.parse_args(argv)
    reports = check_assignment(args.course, args.assignment, fix=args.fix)
    left = 0
    for report in reports:
        student = report.path.relative_to(args.course / "submitted").parts[0]
        lost = lost_answers(report)
        if lost or report.problem or (needs_fix(report) and not args.fix):
            left += 1
        if report.problem:
            print(f"{student}: PROBLEM: {report.problem}")
            continue
        suffix = " (repaired; original in submitted-backup/)" if args.fix and needs_fix(report) else ""
        suffix += f" - PROBLEM: no cell holds {', '.join(lost)}: ask the student" if lost else ""
        print(f"{student}: {report.summary()}{suffix}")
        if args.verbose:
            for line in report.lines():
                print(f"    {line}")
    print(f"{len(reports)} submission(s) checked, {sum(not r.ok for r in reports)} with something to report")
    if not sandbox.installed():
        print("note: the grading sandbox is not installed (python -m tools.grading.sandbox install), so the "
              "students' code will run able to read the course's files")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
