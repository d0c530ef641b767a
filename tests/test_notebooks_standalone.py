"""Every chapter notebook stands alone: the imports the book allows, no files, no installs.

(The plotting look is the shared `book_style` copy, checked by tests/test_shared_copies.py.
That each one also *runs* alone is checked by nbval, which `make test` points at a lone copy of
every notebook in an empty folder; see tools/testing/stage_notebooks.py.)
"""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from tools.registry import chapters

NOTEBOOKS = [c.notebook for c in chapters()]  # the registry (tests/test_registry.py: = notebooks/)
ALLOWED = {"numpy", "torch", "matplotlib", "ipywidgets", "IPython"}
FILE_READERS = {"open", "load", "loadtxt", "genfromtxt", "fromfile", "read_text", "read_bytes",
                "read_csv", "urlopen", "urlretrieve", "imread", "load_state_dict_from_url"}


def cells(nb_path: Path, kind: str = "code"):
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == kind]


def source(cell) -> str:
    return "".join(cell["source"])


def python_source(cell) -> str:
    return "\n".join(ln for ln in source(cell).splitlines() if not ln.lstrip().startswith(("%", "!")))


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_imports_only_the_allowed_libraries(nb_path):
    stdlib = set(sys.stdlib_module_names)
    for cell in cells(nb_path):
        for node in ast.walk(ast.parse(python_source(cell))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{nb_path.name}: relative import"
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in ALLOWED or top in stdlib, f"{nb_path.name} imports {name}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_reads_no_files_and_installs_nothing(nb_path):
    for cell in cells(nb_path):
        text = source(cell)
        assert "pip install" not in text, f"{nb_path.name} installs packages"
        for node in ast.walk(ast.parse(python_source(cell))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                assert name not in FILE_READERS, f"{nb_path.name} calls {name}(): notebooks read no files"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_come_from_one_top_to_bottom_run(nb_path):
    counts = [c.get("execution_count") for c in cells(nb_path) if source(c).strip()]
    assert None not in counts, f"{nb_path.name} has cells that were not executed"
    assert counts == list(range(1, len(counts) + 1)), f"{nb_path.name} was not executed top to bottom in one run"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_uses_cuda_when_present_and_prints_the_device(nb_path):
    code = "\n".join(source(c) for c in cells(nb_path))
    assert 'torch.device("cuda" if torch.cuda.is_available() else "cpu")' in code
    printed = [c for c in cells(nb_path) if "device" in source(c) and "print(" in source(c)
               and "nbval-ignore-output" in c.get("metadata", {}).get("tags", [])]
    assert printed, f"{nb_path.name} does not print the device"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_follows_the_chapter_skeleton(nb_path):
    markdown = "\n".join(source(c) for c in cells(nb_path, "markdown"))
    titles = [ln for ln in markdown.splitlines() if ln.startswith("# ")]
    assert len(titles) == 1, f"{nb_path.name} should have exactly one # title"
    for heading in ("In this chapter you will", "## Summary", "## Exercises", "## References"):
        assert heading in markdown, f"{nb_path.name} lacks '{heading}'"
