"""tools/grading/suspicion.py on hand-written cheating cells: each route to free marks that a sceptical
instructor found is reported by cell and line, the book's own solutions are not, and a grading skip tag
that a student added is found (tools/grading/check_submissions.py takes it off with --fix)."""
from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools.grading.suspicion import cell_findings, skip_tags, suspicions

CHEATS = {
    "patched allclose": ("import numpy as np\nnp.allclose = lambda *a, **k: True", "np.allclose"),
    "patched testing": ("np.testing.assert_allclose = print", "np.testing.assert_allclose"),
    "torch patched by setattr": ("import torch\nsetattr(torch, 'allclose', lambda *a, **k: True)", "setattr"),
    "builtins": ("import builtins\nbuiltins.isinstance = lambda *a: True", "builtins.isinstance"),
    "input transformer": ("ip = get_ipython()\nip.input_transformers_cleanup.append(lambda lines: [])",
                          "input_transformers_cleanup"),
    "exception handler": ("get_ipython().set_custom_exc((AssertionError,), lambda *a, **k: None)", "set_custom_exc"),
    "frame walking": ("import sys\nexpected = sys._getframe(1).f_globals['expected']", "frames"),
    "inspect": ("import inspect\nframe = inspect.currentframe()", "inspect"),
    "redefined helper": ("def check_array(name, got, expected, atol=1e-6):\n    return None", "check helper check_array"),
    "always equal": ("class Yes:\n    def __eq__(self, other):\n        return True", "__eq__"),
    "array protocol": ("import numpy as np\nclass A(np.ndarray):\n    def __array_ufunc__(self, *a, **k):\n        return True",
                       "__array_ufunc__"),
    "kernel killed": ("import os\nos._exit(0)", "ends the process"),
    "exit": ("exit()", "ends the process"),
    "otter patched": ("import otter\notter.Notebook.check = lambda self, q: None", "otter.Notebook.check"),
    "gradebook read": ("data = open('../../gradebook.db', 'rb').read()", "outside the notebook's folder"),
    "course read": ("import os\nprint(os.listdir('/root/attention-course/source'))", "reaches files"),
    "subprocess": ("import subprocess\nsubprocess.run(['ls', '/'])", "subprocess"),
    "hidden marker": ("# ### BEGIN HIDDEN TESTS\nx = 1", "hidden tests"),
}


@pytest.mark.parametrize("name", CHEATS)
def test_each_cheat_is_reported_with_its_line(name):
    source, word = CHEATS[name]
    found = cell_findings(source)
    assert found, f"{name} is not reported"
    assert any(word in what for _, what in found), (name, found)


@pytest.mark.parametrize("source", [
    "def softmax(scores):\n    shifted = scores - scores.max()\n    return np.exp(shifted) / np.exp(shifted).sum()",
    "expected = np.stack([a, b])\nassert np.allclose(got, expected)",
    "%matplotlib inline\nfig, ax = plt.subplots()\nax.plot(x, y)",
    "with open('results.txt', 'w') as f:\n    f.write(str(total))",
    "class Encoder(nn.Module):\n    def forward(self, x):\n        return x",
    "class Log:\n    def __init__(self):\n        self.events = []\n        self.register = {}",
])
def test_ordinary_student_code_is_not_reported(source):
    assert cell_findings(source) == []


def test_only_the_students_own_cells_are_read_and_skip_tags_are_found():
    check = new_code_cell("check_array('x', x, [1.0])", metadata={"nbgrader": {"grade": True, "solution": False,
                                                                               "grade_id": "c", "points": 1}})
    demo = new_code_cell("train()", metadata={"tags": ["otter_ignore"]})
    release = new_notebook(cells=[new_code_cell("x = None  # your answer"), demo, check])
    tagged_check = nbformat.from_dict(check)
    tagged_check.metadata["tags"] = ["otter_ignore"]
    submission = new_notebook(cells=[new_code_cell("import numpy as np\nnp.allclose = lambda *a: True\nx = [1.0]"),
                                     demo, tagged_check, new_markdown_cell("BEGIN HIDDEN TESTS")])
    lines = suspicions(submission, release)
    assert lines == ["cell 0, line 2: assigns to np.allclose, an attribute of a module the checks use "
                     "(np.allclose = lambda *a: True)",
                     "cell 3, line 1: the marker of nbgrader's hidden tests (BEGIN HIDDEN TESTS)"]
    assert skip_tags(submission, release) == [(2, "otter_ignore")]     # the demonstration keeps its tag
    assert suspicions(release, release) == [] and skip_tags(release, release) == []
