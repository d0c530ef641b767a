"""Check students' submissions before `nbgrader autograde`: lost nbgrader metadata, deleted or duplicated cells.

    python -m tools.grading.check_submissions COURSE ASSIGNMENT          # report; exit 1 if a submission has a problem
    python -m tools.grading.check_submissions COURSE ASSIGNMENT --fix    # also repair what can be repaired, in place

nbgrader grades the cells that carry its metadata (`metadata.nbgrader.grade_id`). A notebook saved by
a front end that drops cell metadata has none, and `nbgrader autograde` then scores it 0 without a
warning; a copied cell carries a second copy of a grade_id, and nbgrader keeps only the last one.
For every submission in COURSE/submitted/<student>/ASSIGNMENT/ this compares the nbgrader cells of
the released notebook (COURSE/release/ASSIGNMENT/) with the submission's and reports, per student:

- a grade_id that is missing (metadata lost, or the cell deleted);
- a grade_id that occurs more than once (a duplicated cell): nbgrader grades the last copy, and
  with `add_missing_cells` its autograde stops for that student (nbgrader 0.9.6);
- cells that look like a released nbgrader cell but have no metadata (same cell id, or for a
  locked check cell the same source, or for a solution cell the same first line as the stub).

With --fix the metadata of such cells is put back from the release (matched as above), so that the
student's answers are graded, and of a duplicated grade_id only the last copy keeps its metadata
(the one nbgrader would grade). Check cells that cannot be found are put back by autograde itself
(`OverwriteCells.add_missing_cells` in tools/grading/nbgrader_config.py).
"""
from __future__ import annotations

import argparse
import copy
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell) -> str | None:
    meta = nbgrader_meta(cell)
    if meta.get("grade") or meta.get("solution") or meta.get("locked") or meta.get("task"):
        return meta.get("grade_id")
    return None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


@dataclass
class Report:
    path: Path
    missing: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)
    restorable: dict[str, int] = field(default_factory=dict)   # grade_id -> cell index in the submission

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated)

    def lines(self) -> list[str]:
        out = []
        for gid, n in self.duplicated.items():
            out.append(f"{gid} occurs {n} times (a duplicated cell): autograde stops for this notebook; "
                       f"--fix keeps the metadata of the last copy only")
        for gid in self.missing:
            where = self.restorable.get(gid)
            out.append(f"{gid} has no nbgrader metadata" + (
                f" (cell {where} matches it: --fix restores it)" if where is not None
                else " and no cell matches it (deleted?): autograde adds the check cell back, a lost answer scores 0"))
        return out


def check_notebook(submission: nbformat.NotebookNode, release: nbformat.NotebookNode, path: Path) -> Report:
    report = Report(path)
    released = {grade_id(c): c for c in release.cells if grade_id(c)}
    counts = Counter(grade_id(c) for c in submission.cells if grade_id(c))
    report.duplicated = {gid: n for gid, n in counts.items() if n > 1}
    report.missing = [gid for gid in released if gid not in counts]
    unclaimed = [i for i, c in enumerate(submission.cells) if not grade_id(c)]
    for gid in report.missing:
        ref = released[gid]
        match = None
        for i in unclaimed:
            cell = submission.cells[i]
            if cell.cell_type != ref.cell_type:
                continue
            if ref.get("id") and cell.get("id") == ref.get("id"):
                match = i
                break
        if match is None:
            for i in unclaimed:
                cell = submission.cells[i]
                if cell.cell_type != ref.cell_type:
                    continue
                meta = nbgrader_meta(ref)
                if meta.get("locked") and cell.source == ref.source:
                    match = i
                    break
                if meta.get("solution") and ref.cell_type == "code" and _first_line(ref.source) \
                        and _first_line(cell.source) == _first_line(ref.source) \
                        and "NotImplementedError" not in _first_line(ref.source):
                    match = i
                    break
        if match is not None:
            report.restorable[gid] = match
            unclaimed.remove(match)
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
    return fixed


def repairable(report: Report) -> bool:
    return len(report.restorable) == len(report.missing)


def check_assignment(course: Path, assignment: str, fix: bool = False) -> list[Report]:
    course = Path(course)
    reports = []
    for released_path in sorted((course / "release" / assignment).glob("*.ipynb")):
        release = nbformat.read(released_path, as_version=4)
        for student in sorted(p for p in (course / "submitted").glob("*") if p.is_dir()):
            path = student / assignment / released_path.name
            if not path.exists():
                continue
            submission = nbformat.read(path, as_version=4)
            report = check_notebook(submission, release, path)
            if fix and (report.restorable or report.duplicated):
                nbformat.write(repair(submission, release, report), path)
            reports.append(report)
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("course", type=Path)
    parser.add_argument("assignment")
    parser.add_argument("--fix", action="store_true", help="restore lost nbgrader metadata in place")
    args = parser.parse_args(argv)
    reports = check_assignment(args.course, args.assignment, fix=args.fix)
    bad = [r for r in reports if not r.ok]
    for report in reports:
        status = "ok" if report.ok else ("repaired" if args.fix and repairable(report) else "PROBLEM")
        print(f"{report.path.relative_to(args.course)}: {status}")
        for line in report.lines():
            print(f"    {line}")
    print(f"{len(reports)} submission(s) checked, {len(bad)} with problems")
    unrepaired = [r for r in bad if not (args.fix and repairable(r))]
    return 1 if unrepaired else 0


if __name__ == "__main__":
    sys.exit(main())
