"""nbgrader's region markers in a cell, read one way for the whole repository.

A check cell hides part of its code from students between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS``; a solution cell holds its answer between ``### BEGIN SOLUTION`` and
``### END SOLUTION``. nbgrader removes those regions (its ClearHiddenTests and ClearSolutions
preprocessors); otter-grader's assignments (tools/grading/otter.py) and the tests need the same
regions read, not removed. This module reads them exactly as nbgrader does: the delimiters are
nbgrader's own (its configurable defaults), a line that contains a delimiter is a marker line and
belongs to neither part, and a region that is nested or never closed is refused, in one sentence.
"""
from __future__ import annotations

from typing import NamedTuple

from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

HIDDEN_TESTS = (ClearHiddenTests.begin_test_delimeter.default_value,
                ClearHiddenTests.end_test_delimeter.default_value)
SOLUTION = (ClearSolutions.begin_solution_delimeter.default_value,
            ClearSolutions.end_solution_delimeter.default_value)


class Regions(NamedTuple):
    outside: list[str]  # the lines outside every region (what a student sees of a check cell)
    inside: list[str]   # the lines inside the regions (the hidden tests, or the solution)
    found: bool         # whether the text has a region at all

    @property
    def visible(self) -> str:
        return "\n".join(self.outside)

    @property
    def hidden(self) -> str:
        return "\n".join(self.inside)


def regions(text: str, markers: tuple[str, str] = HIDDEN_TESTS) -> Regions:
    """Split a cell's source at nbgrader's markers (default: the hidden tests)."""
    begin, end = markers
    outside, inside, within, found = [], [], False, False
    for number, line in enumerate(text.split("\n"), 1):
        if begin in line:
            if within:
                raise ValueError(f"line {number}: a second {begin!r} before the {end!r} of the first")
            within = found = True
        elif end in line:
            if not within:
                raise ValueError(f"line {number}: {end!r} without a {begin!r} before it")
            within = False
        else:
            (inside if within else outside).append(line)
    if within:
        raise ValueError(f"{begin!r} is never closed by {end!r}")
    return Regions(outside, inside, found)


def without_markers(text: str, markers: tuple[str, str] = HIDDEN_TESTS) -> str:
    """The whole code, the regions' content included, less the marker lines (the instructor's run)."""
    regions(text, markers)  # refuses unbalanced markers
    return "\n".join(line for line in text.split("\n") if markers[0] not in line and markers[1] not in line)
