"""Keep a stored notebook when a re-run changed only its volatile values (`make execute`, last step).

    python -m tools.authoring.rerun NEW STORED   # NEW: the fresh run, already stripped by nbstripout

A chapter prints some values that differ on every run by nature: timings, float error magnitudes,
the device, and the random model id of each widget view; the outputs of the cells marked
the tag `nbval-ignore-output` (measurements, each asserted in its cell within a stated tolerance); and a
few figures that plot measured times (their cells are tagged `measured-time`). If the fresh run
differs from the stored notebook only in those (nbval's own sanitizers,
tools/testing/nbval_sanitize.cfg, and nbval's own marker: what nbval does not compare either), the
stored notebook is kept as it is and the fresh run is discarded (an ignored cell's wording, its text with the
numbers left out, must still be the same), so that `git diff` stays empty. Otherwise the fresh run replaces the stored notebook
whole, never mixed with the earlier one. The fresh run executes the stored file's sources, so a kept
notebook's every output but the volatile values has just been reproduced by the code it shows, and its
in-cell assertions held in both runs; its timings are those of the earlier run (of an edited cell too,
when the edit changed no result: refresh them with FORCE=1).
Everything else is compared exactly: sources, cell ids, execution counts, every text and every
other image byte (the padding of a right-aligned column around a volatile value aside).
FORCE=1 (`make execute FORCE=1`) always writes the fresh run, to refresh the timings.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
from nbval.plugin import get_sanitize_patterns

from tools.registry import ROOT

SANITIZE = ROOT / "tools" / "testing" / "nbval_sanitize.cfg"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def sanitizers() -> list:
    return [(re.compile(regex), replacement)
            for regex, replacement in get_sanitize_patterns(SANITIZE.read_text(encoding="utf-8"))]


PLACEHOLDER = re.compile(r" +(?=<[a-z-]+>)")  # a right-aligned column pads a volatile value by its width
MEASURED_FIGURE = "measured-time"  # a cell's tag: its figure plots times measured on the machine that ran it
IGNORED_BY_NBVAL = "nbval-ignore-output"  # nbval's tag: the cell's outputs are not compared


def _clean(value, patterns):
    if isinstance(value, list):
        value = "".join(value)
    if not isinstance(value, str):
        return value
    for regex, replacement in patterns:
        value = regex.sub(replacement, value)
    return PLACEHOLDER.sub(" ", value)


NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:e[-+]?\d+)?%?")


def _wording(value):
    """A measurement's printed text with every number replaced by # (and runs of spaces, which pad numbers, by one)."""
    if isinstance(value, list):
        value = "".join(value)
    if not isinstance(value, str):
        return value
    return re.sub(r" +", " ", NUMBER.sub("#", value))


def comparable(nb, patterns) -> list:
    """The notebook as nbval would compare it, plus everything nbval skips but a reader sees
    (images, execution counts, metadata): only the sanitized values and widget model ids left out."""
    cells = []
    for cell in nb.cells:
        outputs = []
        measured = MEASURED_FIGURE in cell.metadata.get("tags", [])
        if cell.cell_type == "code" and IGNORED_BY_NBVAL in cell.metadata.get("tags", []):
            # declared volatile (a measurement, asserted in its cell within a stated tolerance): its
            # outputs' kinds and their text without its numbers are compared, so that the outputs of an
            # edited cell's earlier code (which `make derived` leaves beside the new source) are never kept
            outputs = [(out.get("output_type"), out.get("name"), sorted(out.get("data", {})), _wording(out.get("text")),
                        _wording(out.get("data", {}).get("text/plain"))) for out in cell.get("outputs", [])]
            cells.append((cell.get("id"), cell.cell_type, cell.source, repr(cell.metadata), cell.get("execution_count"), outputs))
            continue
        for out in cell.get("outputs", []):
            data = {mime: (None if mime == WIDGET_VIEW or (measured and mime.startswith("image/")) else _clean(value, patterns))
                    for mime, value in out.get("data", {}).items()}
            outputs.append((out.get("output_type"), out.get("name"), _clean(out.get("text"), patterns),
                            data, out.get("execution_count"), out.get("ename"), _clean(out.get("evalue"), patterns),
                            repr(out.get("metadata", {}))))
        cells.append((cell.get("id"), cell.cell_type, cell.source, repr(cell.metadata),
                      cell.get("execution_count"), outputs))
    return [repr(nb.metadata), cells]


def only_volatile_changes(new: Path, stored: Path) -> bool:
    if not stored.exists():
        return False
    patterns = sanitizers()
    a, b = (nbformat.read(p, as_version=4) for p in (new, stored))
    return comparable(a, patterns) == comparable(b, patterns)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    new, stored = Path(argv[0]), Path(argv[1])
    if not new.is_file():
        print(f"{new}: no such notebook (the fresh run to compare with {stored})", file=sys.stderr)
        return 1
    if os.environ.get("FORCE") != "1" and only_volatile_changes(new, stored):
        new.unlink()
        print(f"{stored}: kept; the re-run changed only volatile values (what nbval does not compare either)")
    else:
        shutil.move(new, stored)
        print(f"{stored}: written from the fresh run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
