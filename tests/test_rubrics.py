"""Every written exercise has a rubric (tools/grading/rubrics.toml) that splits exactly its points.

A manually graded answer cell is one whose nbgrader metadata has `solution` and `grade` set (the
written answers, markdown cells), or `task` set: nbgrader gives it no autograder and a person
scores it. Pure JSON and TOML reading, no notebook is executed.
"""
from __future__ import annotations

import json
import math
import tomllib

import pytest

from tools.registry import ROOT, chapters

RUBRICS = ROOT / "tools" / "grading" / "rubrics.toml"
FIELDS = {"chapter", "points", "criteria", "partial"}


def manual_cells() -> dict[str, tuple[str, float]]:
    """grade_id -> (chapter stem, points) of every manually graded cell of every registry chapter."""
    found: dict[str, tuple[str, float]] = {}
    for chapter in chapters():
        nb = json.loads(chapter.notebook.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if (meta.get("solution") and meta.get("grade")) or meta.get("task"):
                gid = meta.get("grade_id")
                assert gid, f"{chapter.stem}: a manually graded cell has no grade_id"
                assert gid not in found, f"grade_id {gid!r} appears twice ({found[gid][0]} and {chapter.stem})"
                found[gid] = (chapter.stem, float(meta.get("points", 0)))
    return found


CELLS = manual_cells()
RUBRIC = tomllib.loads(RUBRICS.read_text(encoding="utf-8"))


def test_the_book_has_written_answers_to_check():
    assert CELLS, "no manually graded answer cell found in any registry chapter; is the metadata still there?"


def test_every_rubric_names_an_existing_written_answer():
    stray = sorted(set(RUBRIC) - set(CELLS))
    assert not stray, f"rubrics.toml has rubrics for grade_ids that no chapter's manually graded cell has: {stray}"


@pytest.mark.parametrize("gid", sorted(CELLS))
def test_each_written_answer_has_a_rubric_that_splits_its_points(gid):
    stem, points = CELLS[gid]
    assert gid in RUBRIC, f"{stem}: the written answer {gid!r} ({points:g} points) has no rubric in {RUBRICS.name}"
    rubric = RUBRIC[gid]
    assert set(rubric) <= FIELDS, f"{gid}: unknown rubric fields {sorted(set(rubric) - FIELDS)}"
    assert rubric.get("chapter") == stem, f"{gid}: the rubric says chapter {rubric.get('chapter')!r}, the cell is in {stem!r}"
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
