"""The errata follow one written rule, and the chapters, their code and the errata page agree.

The rule (CONTRIBUTING.md, "The errata rule"; book/errata.md) gives each comparison with a note one
of four kinds: error, rounding, illustrative, inconsistent. One helper applies it in every
chapter, `compare_with_note` (or `note_verdict` for what cannot be computed), and prints a line
that begins with the calculation ID and ends with `-> <verdict>`. A chapter shows a box titled
`<ID> — <kind>: ...` for each verdict other than "agrees", and the errata page has one row per
box, in its chapter's table, with the same kind. This test holds the three together, and checks
that every number of a row's "the computation gives" column is one the chapter printed for that ID.
"""
from __future__ import annotations

import json
import re

import pytest

from tools.registry import ERRATA_KINDS, ROOT, chapters

ID = r"(?:SA|MH|FA|KV|[BASMVTO])\d+"
BOX = re.compile(rf"\{{admonition\}}\s*({ID})\s+—\s+([a-z]+):")
VERDICT = re.compile(rf"^({ID})\b.*-> (agrees|{'|'.join(ERRATA_KINDS)})\s*$", re.M)
NUMBER = re.compile(r"-?\d+\.\d+")
CHAPTERS = {c.stem: c for c in chapters()}


def cells(stem: str) -> list[dict]:
    return json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]


def markdown(stem: str) -> str:
    return "\n".join("".join(c["source"]) for c in cells(stem) if c["cell_type"] == "markdown")


def outputs(stem: str) -> str:
    """All text the notebook printed (stored outputs)."""
    parts = []
    for cell in cells(stem):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append("".join(out["text"]))
            elif "data" in out and "text/plain" in out["data"]:
                parts.append("".join(out["data"]["text/plain"]))
    return "\n".join(parts)


def errata_rows(section: str) -> list[list[str]]:
    text = (ROOT / "book" / "errata.md").read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    body = [p for p in parts if p.startswith(section)]
    if not body:  # a chapter without errata needs no section (its boxes must then be none)
        return []
    rows = []
    for line in body[0].splitlines():
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and row and re.fullmatch(ID, row[0]):
            rows.append(row)
    return rows


@pytest.mark.parametrize("stem", CHAPTERS)
def test_every_calculation_appears_in_its_chapter(stem):
    text = "\n".join("".join(c["source"]) for c in cells(stem))
    missing = [c for c in CHAPTERS[stem].calculations if not re.search(rf"\b{c}\b", text)]
    assert not missing, f"{stem} never names calculation(s) {missing}"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_boxes_verdicts_and_errata_page_agree(stem):
    chapter = CHAPTERS[stem]
    boxes = set(BOX.findall(markdown(stem)))
    bad_kinds = {kind for _, kind in boxes if kind not in ERRATA_KINDS}
    assert not bad_kinds, f"{stem}: box kinds must be one of {ERRATA_KINDS}, found {sorted(bad_kinds)}"
    rows = errata_rows(chapter.errata_section)
    assert all(len(r) == 5 for r in rows), f"{stem}: errata rows need 5 columns (ID | kind | states | gives | why)"
    assert {(r[0], r[1]) for r in rows} == boxes, (
        f"{stem}: boxes {sorted(boxes)} but errata-page rows {sorted((r[0], r[1]) for r in rows)}")
    assert {i for i, _ in boxes} <= set(chapter.calculations), f"{stem}: a box names an ID not in the registry"
    printed = {(i, v) for i, v in VERDICT.findall(outputs(stem)) if v != "agrees"}
    assert printed == boxes, (
        f"{stem}: the code's verdicts {sorted(printed)} (lines ending '-> kind') differ from the boxes {sorted(boxes)}")


@pytest.mark.parametrize("stem", CHAPTERS)
def test_the_numbers_of_each_errata_row_were_computed_by_the_chapter(stem):
    printed = outputs(stem)
    problems = []
    for calc_id, kind, _, gives, _ in errata_rows(CHAPTERS[stem].errata_section):
        lines = "\n".join(ln for ln in printed.splitlines() if re.match(rf"{calc_id}\b", ln))
        values = [float(v) for v in NUMBER.findall(lines)]
        for text in NUMBER.findall(gives.replace("−", "-")):
            decimals = len(text.split(".")[1])
            if not any(abs(round(v, decimals) - float(text)) < 10 ** -(decimals + 3) for v in values):
                problems.append(f"{calc_id}: {text} is not printed (at any precision) in a line starting '{calc_id}'")
    assert not problems, f"{stem}: " + "; ".join(problems)
