"""Every written exercise has a rubric (its chapter's entry in tools/chapters.toml) that splits exactly its points.

A manually graded answer cell is one whose nbgrader metadata has `solution` and `grade` set (the
written answers, markdown cells), or `task` set: nbgrader gives it no autograder and a person
scores it. Pure JSON and TOML reading, no notebook is executed.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tools.registry import ROOT, chapters

FIELDS = {"points", "criteria", "partial"}


def manual_cells(notebook: Path) -> dict[str, float]:
    """grade_id -> points of every manually graded cell of one notebook."""
    found: dict[str, float] = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if (meta.get("solution") and meta.get("grade")) or meta.get("task"):
            gid = meta.get("grade_id")
            assert gid, f"{notebook.name}: a manually graded cell has no grade_id"
            assert gid not in found, f"{notebook.name}: grade_id {gid!r} appears twice"
            found[gid] = float(meta.get("points", 0))
    return found


def every_cell(notebooks) -> dict[str, tuple[str, float]]:
    """grade_id -> (notebook stem, points) over the given notebooks; a grade_id may not repeat."""
    found: dict[str, tuple[str, float]] = {}
    for notebook in notebooks:
        for gid, points in manual_cells(notebook).items():
            assert gid not in found, f"grade_id {gid!r} appears in {found[gid][0]} and in {notebook.stem}"
            found[gid] = (notebook.stem, points)
    return found


# the written answers that must have a rubric: those of the chapters in tools/chapters.toml
CELLS = every_cell(chapter.notebook for chapter in chapters())
# the written answers a rubric may name: those of every notebook in notebooks/ (a chapter may be
# added to the registry after its notebook and its rubrics)
ON_DISK = every_cell(sorted((ROOT / "notebooks").glob("*.ipynb")))
RUBRIC = {gid: rubric for chapter in chapters() for gid, rubric in chapter.rubrics.items()}
OWNER = {gid: chapter.stem for chapter in chapters() for gid in chapter.rubrics}


def test_the_book_has_written_answers_to_check():
    assert CELLS, "no manually graded answer cell found in any registry chapter; is the metadata still there?"


def test_every_rubric_names_an_existing_written_answer():
    stray = sorted(set(RUBRIC) - set(ON_DISK))
    assert not stray, f"tools/chapters.toml has rubrics for grade_ids that no notebook's manually graded cell has: {stray}"
    elsewhere = sorted(gid for gid, stem in OWNER.items() if gid in ON_DISK and ON_DISK[gid][0] != stem)
    assert not elsewhere, f"rubrics under another chapter's entry than their answer's notebook: {elsewhere}"


# every registry chapter's written answer, and any other notebook's that already has a rubric
@pytest.mark.parametrize("gid", sorted(set(CELLS) | (set(RUBRIC) & set(ON_DISK))))
def test_each_written_answer_has_a_rubric_that_splits_its_points(gid):
    stem, points = ON_DISK.get(gid) or CELLS[gid]
    assert gid in RUBRIC, f"{stem}: the written answer {gid!r} ({points:g} points) has no rubric in its entry of tools/chapters.toml"
    rubric = RUBRIC[gid]
    assert set(rubric) <= FIELDS, f"{gid}: unknown rubric fields {sorted(set(rubric) - FIELDS)}"
    assert math.isclose(float(rubric.get("points", -1)), points), \
        f"{gid}: the rubric says {rubric.get('points')} points, the cell gives {points:g}"
    criteria = rubric.get("criteria", [])
    assert criteria, f"{gid}: the rubric has no criteria"
    for i, criterion in enumerate(criteria, start=1):
        assert set(criterion) == {"points", "earns"}, f"{gid}, criterion {i}: expected the fields points and earns, got {sorted(criterion)}"
        assert isinstance(criterion["points"], (int, float)) and criterion["points"] > 0, \
            f"{gid}, criterion {i}: points must be a positive number, got {criterion['points']!r}"
        assert isinstance(criterion["earns"], str) and len(criterion["earns"].split()) >= 5, \
            f"{gid}, criterion {i}: 'earns' must say in words what earns the points"
    total = sum(c["points"] for c in criteria)
    assert math.isclose(total, points), f"{gid}: the criteria add up to {total:g} points, the cell gives {points:g}"
    if "partial" in rubric:
        assert isinstance(rubric["partial"], str) and rubric["partial"].strip(), f"{gid}: 'partial' must be a sentence"
