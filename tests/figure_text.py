"""What makes a figure's caption or alt text a placeholder instead of words for a reader.

One rule, used on the notebooks' figure metadata (tests/test_figure_text.py) and on the built site's
figures (tests/test_site.py): a caption or an alt text must be prose, not empty, not an identifier
left for later (HEATMAP_ALT), not a marker (TODO, FIXME, TBD, XXX, "placeholder", "lorem ipsum"), not an
unfilled template field ({caption}), and the alt text must not merely repeat the caption.
"""
from __future__ import annotations

import re

MARKER = re.compile(r"\b(TODO|TBD|FIXME|XXX|placeholder|lorem ipsum)\b", re.IGNORECASE)
IDENTIFIER = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")          # HEATMAP_ALT, FIG_2_CAPTION
TEMPLATE = re.compile(r"\{\{?\s*[A-Za-z_][\w.]*\s*\}?\}|\$\{[^}]*\}")  # {alt}, {{ x }}, ${x}; not <eos>
MIN_WORDS = 4                                                             # "Figure", "png", "heat map" are not text


def _normal(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def text_problems(kind: str, text: str | None) -> list[str]:
    """Why `text`, a figure's caption or alt text (kind says which), is not prose for a reader; [] if it is."""
    text = (text or "").strip()
    if not text:
        return [f"the {kind} is empty"]
    problems = []
    if len(text.split()) < MIN_WORDS:
        problems.append(f"the {kind} has fewer than {MIN_WORDS} words: {text!r}")
    for pattern, what in ((MARKER, "a marker"), (IDENTIFIER, "an identifier left as a placeholder"),
                          (TEMPLATE, "an unfilled template field")):
        found = pattern.search(text)
        if found:
            problems.append(f"the {kind} contains {what}: {found.group(0)!r}")
    return problems


def figure_problems(caption: str | None, alt: str | None) -> list[str]:
    """Everything wrong with one figure's caption and alt text; [] when both are prose."""
    problems = text_problems("caption", caption) + text_problems("alt text", alt)
    if caption and alt and _normal(caption) == _normal(alt):
        problems.append("the alt text is a copy of the caption (it should describe what the picture shows)")
    return problems
