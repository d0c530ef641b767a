"""The book's check helpers (tools/shared/check_helpers.py, copied into every chapter) against results
that cheat: subclasses and objects that compare equal to anything, and the comparison functions of numpy
and torch replaced after the helpers were defined. Each must fail with one sentence; honest results pass.
The helpers run here as a chapter runs them: their source executed in a namespace with np and torch."""
from __future__ import annotations

import builtins

import numpy as np
import pytest
import torch

from tools.registry import ROOT

SOURCE = (ROOT / "tools" / "shared" / "check_helpers.py").read_text(encoding="utf-8")


@pytest.fixture
def helpers(monkeypatch):
    namespace = {"np": np, "torch": torch}
    exec(compile(SOURCE, "check_helpers.py", "exec"), namespace)
    # what a student's cell does after the helpers are defined (undone after each test)
    for module, names in ((np, ("allclose", "isclose", "array_equal")), (torch, ("allclose", "equal"))):
        for name in names:
            monkeypatch.setattr(module, name, lambda *args, **kwargs: True)
    monkeypatch.setattr(np.testing, "assert_allclose", lambda *args, **kwargs: None)
    monkeypatch.setattr(builtins, "abs", lambda x: 0)
    return namespace


class Same(np.ndarray):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __array_ufunc__(self, *args, **kwargs):
        return True


class SameInt(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


class SameTensor(torch.Tensor):
    pass


class Anything:
    def __eq__(self, other):
        return True

    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0])


@pytest.mark.parametrize("got, message", [
    (np.zeros(2).view(Same), "should be a NumPy array, a torch tensor or a number, got Same"),
    (SameInt(3), "got SameInt"),
    (torch.zeros(2).as_subclass(SameTensor), "got SameTensor"),
    (Anything(), "got Anything"),
    ([1.0, 2.0], "is a list"),
    (np.array([1.0, 2.5]), r"differs from the expected value at index \(1,\): got 2.5, expected 2"),
    (torch.tensor([1.0, 2.5]), "differs from the expected value at index"),
    (np.array([np.nan, 2.0]), "contains NaN"),
    (np.ones(3), "has shape"),
])
def test_a_cheating_or_wrong_result_fails_with_one_sentence(helpers, got, message):
    with pytest.raises(AssertionError, match=message):
        helpers["check_array"]("r", got, [1.0, 2.0])


def test_honest_results_pass_and_exact_checks_are_exact(helpers):
    helpers["check_array"]("r", np.array([1.0, 2.0 + 1e-7]), [1.0, 2.0])
    helpers["check_array"]("r", torch.tensor([[1.0], [2.0]], requires_grad=True), [[1.0], [2.0]])
    helpers["check_array"]("m", -np.inf, -np.inf, atol=0)
    helpers["check_equal"]("mask", np.array([True, False]), [True, False])
    helpers["check_equal"]("count", 7, 7)
    with pytest.raises(AssertionError, match="got 8, expected 7"):
        helpers["check_equal"]("count", np.int64(8), 7)
    helpers["check_weights"]("w", np.array([[0.5, 0.5], [1.0, 0.0]]), masked=[[False, False], [False, True]])
    with pytest.raises(AssertionError, match="sum to 1"):
        helpers["check_weights"]("w", np.array([0.5, 0.6]))
    with pytest.raises(AssertionError, match="exactly 0 at the blocked"):
        helpers["check_weights"]("w", np.array([0.5, 0.5]), masked=[False, True])
    plain = helpers["check_form"]("r", np.arange(4.0).view(np.ndarray).reshape(2, 2), (2, 2))
    assert type(plain) is np.ndarray and plain.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_hidden_tests_compare_only_through_the_helpers():
    """No hidden test of any chapter compares a result with numpy's or torch's own comparisons (which a
    student's cell can replace): it goes through check_array & co. (CONTRIBUTING, Exercises)."""
    import re

    import nbformat
    from nbgrader import utils as nbgrader_utils

    from tools.grading.markers import regions
    from tools.registry import chapters
    raw = re.compile(r"\b(?:np|numpy|torch|math)\.(?:allclose|isclose|array_equal|equal)\(|np\.testing\.")
    found = []
    for chapter in chapters():
        for cell in nbformat.read(chapter.notebook, as_version=4).cells:
            if cell.cell_type == "code" and nbgrader_utils.is_grade(cell) and not nbgrader_utils.is_solution(cell):
                found += [f"{chapter.stem} {cell.metadata.nbgrader.grade_id}: {line.strip()}"
                          for line in regions(cell.source).inside if raw.search(line)]
    assert not found, "\n".join(found)
