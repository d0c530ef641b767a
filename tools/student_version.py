"""Write the student version of every chapter notebook: no solutions, no hidden tests, no outputs.

    python -m tools.student_version DEST [NOTEBOOK ...]     # `make student`: DEST = _build/student

The work is done by nbgrader's own preprocessors, in the order that `nbgrader generate_assignment`
applies them (less the steps that need a course database or header files):

    CheckCellMetadata -> LockCells -> ClearSolutions -> ClearOutput -> ComputeChecksums
    -> ClearHiddenTests -> ClearMarkScheme -> ComputeChecksums -> CheckCellMetadata

so a code solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` becomes
``raise NotImplementedError()``, a prose answer cell becomes "YOUR ANSWER HERE", the
``### BEGIN HIDDEN TESTS`` regions of the check cells disappear, outputs are cleared, and the
check cells are locked against editing. nbconvert's ClearMetadataPreprocessor then drops the
notebook-level widget state that belonged to the cleared outputs.

One step of our own runs first, because it concerns the website, not nbgrader: on the website a
code solution sits in a collapsed dropdown made of the sphinx-exercise markers
``{solution-start}`` ... ``{solution-end}`` (two markdown cells around the solution cell). In a
student notebook those markers would only show up as stray directive text, and anything inside
the dropdown other than the nbgrader solution cell (an explanation written next to the code, say)
would be part of the answer. `DropGatedSolutionMarkup` therefore removes the marker cells and
every cell between them that is not an nbgrader solution cell, and it removes any ``{solution}``
dropdown that is not an nbgrader answer cell. The nbgrader solution cells themselves stay, for
ClearSolutions to replace with the stubs.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import ClearMetadataPreprocessor, Preprocessor
from nbgrader import utils as nbgrader_utils
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

# Chapter number -> the prefix of its exercise labels (`scoring_ex2`).
CHAPTER_LABELS = {
    "01": "bottleneck",
    "02": "soft_attention",
    "03": "bahdanau",
    "04": "scoring",
    "05": "multihead",
    "06": "translator",
}

_FENCE = r"^\s*(?:`{3,}|:{3,})\s*"
SOLUTION_START = re.compile(_FENCE + r"\{solution-start\}", re.MULTILINE)
SOLUTION_END = re.compile(_FENCE + r"\{solution-end\}", re.MULTILINE)
SOLUTION_DROPDOWN = re.compile(_FENCE + r"\{solution\}", re.MULTILINE)


def is_solution_start(cell) -> bool:
    return cell.cell_type == "markdown" and bool(SOLUTION_START.search(cell.source))


def is_solution_end(cell) -> bool:
    return cell.cell_type == "markdown" and bool(SOLUTION_END.search(cell.source))


def is_solution_dropdown(cell) -> bool:
    return cell.cell_type == "markdown" and bool(SOLUTION_DROPDOWN.search(cell.source))


class DropGatedSolutionMarkup(Preprocessor):
    """Remove the website's solution dropdowns, keeping only the nbgrader solution cells."""

    def preprocess(self, nb, resources):
        kept, inside = [], False
        for cell in nb.cells:
            if is_solution_start(cell):
                if inside:
                    raise RuntimeError("a {solution-start} cell follows another one without a {solution-end} between them")
                inside = True
                continue
            if is_solution_end(cell):
                if not inside:
                    raise RuntimeError("a {solution-end} cell has no {solution-start} before it")
                inside = False
                continue
            if nbgrader_utils.is_solution(cell):
                kept.append(cell)  # ClearSolutions turns it into a stub
            elif inside:
                continue  # part of the website's solution, not nbgrader's: an answer either way
            elif is_solution_dropdown(cell):
                continue  # a {solution} dropdown that is not an nbgrader answer cell
            else:
                kept.append(cell)
        if inside:
            raise RuntimeError("a {solution-start} cell has no {solution-end} after it")
        nb.cells = kept
        return nb, resources


def preprocessors() -> list[Preprocessor]:
    """Our one markup step, then nbgrader's preprocessors in generate_assignment's order."""
    return [
        DropGatedSolutionMarkup(),
        CheckCellMetadata(),   # nbgrader metadata valid, grade_ids unique
        LockCells(),           # check cells: not editable, not deletable
        ClearSolutions(),      # BEGIN/END SOLUTION -> raise NotImplementedError(); prose -> YOUR ANSWER HERE
        ClearOutput(remove_metadata_fields={"collapsed", "scrolled", "execution"}),  # + run timestamps
        # nbconvert's: drop the notebook-level widget state of the last run, which belongs to
        # outputs that are gone (cell metadata: tags, nbgrader, figure captions, stay).
        ClearMetadataPreprocessor(clear_cell_metadata=False,
                                  preserve_nb_metadata_mask={"kernelspec", "language_info", "colab", "accelerator"}),
        ComputeChecksums(),
        ClearHiddenTests(),    # BEGIN/END HIDDEN TESTS regions removed
        ClearMarkScheme(),
        ComputeChecksums(),    # again, after the hidden tests are gone (as nbgrader does)
        CheckCellMetadata(),
    ]


def student_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version of a solved notebook (the argument is left unchanged)."""
    exporter = NotebookExporter()
    for preprocessor in preprocessors():
        exporter.register_preprocessor(preprocessor, enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": "notebook"}})
    student = nbformat.reads(body, as_version=4)
    nbformat.validate(student)
    return student


def write_student_versions(dest: Path, notebooks: list[Path] | None = None) -> list[Path]:
    """Write the student version of each notebook (default: every chapter) into `dest`."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks if notebooks is not None else sorted(NOTEBOOKS.glob("*.ipynb")):
        path = Path(path)
        nb = nbformat.read(path, as_version=4)
        try:
            student = student_notebook(nb)
        except Exception as exc:  # nbgrader raises RuntimeError/ValidationError without the file name
            raise RuntimeError(f"{path.name}: the student version could not be made: {exc}") from exc
        out = dest / path.name
        nbformat.write(student, out)
        written.append(out)
    return written


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    target = Path(sys.argv[1])
    chosen = [Path(p) for p in sys.argv[2:]] or None
    for out in write_student_versions(target, chosen):
        print(out)
