"""Every calculation of the source notes is in its chapter, and every erratum is on the errata page.

The IDs are those of the book's list of hand calculations (one per row of the notes' worked
examples). A chapter marks an erratum with an admonition titled "Erratum <ID>…"; the errata page
has one table row per erratum, whose first cell is the ID.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CALCULATIONS = {
    "01_bottleneck": ["B1", "B2", "A1", "A2", "A3", "A4"],
    "02_soft_attention": ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"],
    "03_bahdanau_by_hand": ["M1", "M2", "M3", "M4", "M5", "M6", "M7"],
    "04_scoring_functions": ["V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8"],
    "05_self_and_multihead_attention": ["SA1", "SA2", "SA3", "MH1", "MH2", "MH3", "MH4"],
    "06_toy_translator": ["T1", "T2"],
}
ERRATA_SECTION = {
    "01_bottleneck": "Chapter 1", "02_soft_attention": "Chapter 2", "03_bahdanau_by_hand": "Chapter 3",
    "04_scoring_functions": "Chapter 4", "05_self_and_multihead_attention": "Chapter 5",
    "06_toy_translator": "Chapter 6",
}
ID = r"(?:SA|MH|[BASMVT])\d+"


def markdown(stem: str) -> str:
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def notebook_text(stem: str) -> str:
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def errata_rows(section: str) -> set[str]:
    text = (ROOT / "book" / "errata.md").read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    body = next(p for p in parts if p.startswith(section))
    ids = set()
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells and re.fullmatch(ID, cells[0]):
            ids.add(cells[0])
    return ids


@pytest.mark.parametrize("stem", list(CALCULATIONS))
def test_every_calculation_appears_in_its_chapter(stem):
    text = notebook_text(stem)
    missing = [c for c in CALCULATIONS[stem] if not re.search(rf"\b{c}\b", text)]
    assert not missing, f"{stem} never names calculation(s) {missing}"


@pytest.mark.parametrize("stem", list(CALCULATIONS))
def test_errata_boxes_and_errata_page_agree(stem):
    boxes = set(re.findall(rf"\{{admonition\}}\s*Erratum ({ID})", markdown(stem)))
    rows = errata_rows(ERRATA_SECTION[stem])
    assert boxes == rows, (
        f"{stem}: erratum boxes {sorted(boxes)} but rows on the errata page {sorted(rows)}")
    assert boxes <= set(CALCULATIONS[stem]), f"{stem}: erratum for an unknown ID {sorted(boxes - set(CALCULATIONS[stem]))}"
