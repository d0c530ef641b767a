"""Every figure of every chapter has a caption and an alt text written for a reader (tests/figure_text.py),
read from the notebooks' cell metadata, where the site, the Colab copies and the PDFs take them from.
The built site's figures are checked by the same rule in tests/test_site.py."""
from __future__ import annotations

import json

import pytest

from figure_text import figure_problems, text_problems
from nbdefs import notebook_path
from tools.registry import chapters

STEMS = [c.stem for c in chapters()]


def figures(stem):
    """(figure name, caption, alt text) of every cell that makes a captioned figure."""
    nb = json.loads(notebook_path(stem).read_text(encoding="utf-8"))
    for k, cell in enumerate(nb["cells"]):
        meta = cell.get("metadata", {}).get("mystnb", {})
        if "figure" in meta or "image" in meta:
            yield (meta.get("figure", {}).get("name", f"cell {k}"), meta.get("figure", {}).get("caption"),
                   meta.get("image", {}).get("alt"))


@pytest.mark.parametrize("stem", STEMS)
def test_every_figure_has_prose_for_its_caption_and_alt_text(stem):
    found = list(figures(stem))
    assert found, f"{stem} has no figure"
    problems = [f"{name}: {p}" for name, caption, alt in found for p in figure_problems(caption, alt)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("caption, alt, expected", [
    ("Cross-attention of the trained model, one heat map per head. HEATMAP_CAPTION", "HEATMAP_ALT",
     ["caption contains an identifier", "alt text has fewer than", "alt text contains an identifier"]),
    ("", "A line falling from 32 to 21 at distance 10.", ["caption is empty"]),
    ("Dot products of the encodings against the distance.", "   ", ["alt text is empty"]),
    ("TODO: write the caption of this figure", "Heat map of eight heads, one diagonal.", ["caption contains a marker"]),
    ("Weights of the three heads over five words.", "fixme later, describe it", ["alt text contains a marker"]),
    ("The softmax of {scores} at three temperatures.", "Three bar charts of weights, sharper as tau falls.",
     ["caption contains an unfilled template field"]),
    ("Three bar charts of the weights.", "three bar charts of the weights", ["copy of the caption"]),
    ("Figure", "png", ["caption has fewer than", "alt text has fewer than"]),
    ("Dot product of PE[t] and PE[100] for d_model = 64, with 32 at distance 0.",
     "Line plot peaking at 32 at distance 0, falling to 21.05 at distance 10.", []),
])
def test_the_rule_on_hand_written_figures(caption, alt, expected):
    problems = figure_problems(caption, alt)
    assert len(problems) == len(expected), problems
    for want in expected:
        assert any(want in p for p in problems), (want, problems)


def test_lower_case_names_with_underscores_are_not_placeholders():
    assert text_problems("caption", "Scores for d_model = 64 and d_k = 16, as in eq. 7.1.") == []
