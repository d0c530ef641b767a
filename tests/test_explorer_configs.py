"""The explorer contract (tools/explorers): every explorer a chapter makes follows its kind's schema.

Runs without a browser. The configs come from two places: the chapters' `SiteExplorer` objects
(each keeps `.kind` and `.config`; the notebook is loaded through tests/nbdefs.py) and the built
site's HTML (what the pages show, from the stored outputs). tests/test_browser.py then drives each
explorer in Chromium, and checks that explorers.js refuses what `problems()` refuses.
"""
from __future__ import annotations

import html
import json

import jsonschema
import pytest

from browser_helpers import is_sinusoidal, kind_chapter, site_explorers
from nbdefs import load_notebook
from tools import explorers as contract
from tools.registry import chapters

CHAPTERS_WITH_EXPLORERS = [c for c in chapters() if c.explorers]


class StoredExplorer:
    """An explorer as the notebook's stored output shows it (the text/html part of its output)."""

    def __init__(self, kind, config, site_html):
        self.kind, self.config, self.site_html = kind, config, site_html


def notebook_explorers(stem: str) -> list:
    """The chapter's explorers: the SiteExplorer objects it binds to a name (each keeps .kind and
    .config), or, where it binds none (an explorer made and displayed inside a function), the
    explorers of its stored outputs."""
    nb = load_notebook(stem)
    found = [v for v in nb.values() if type(v).__name__ == "SiteExplorer" and hasattr(v, "config")]
    if found:
        return found
    from browser_helpers import _ExplorerFinder
    import html as html_lib
    stored = json.loads((contract.ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    for cell in stored["cells"]:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/html")
            if not text:
                continue
            text = "".join(text) if isinstance(text, list) else text
            finder = _ExplorerFinder()
            finder.feed(text)
            found += [StoredExplorer(kind, json.loads(raw or "null"), html_lib.escape(raw or "", quote=True))
                      for kind, raw in finder.found]
    return found


def test_every_registry_kind_has_a_schema():
    unknown = sorted({k for c in chapters() for k in c.explorers} - set(contract.kinds()))
    assert not unknown, f"tools/chapters.toml lists kinds without a schema in tools/explorers/schemas: {unknown}"


@pytest.mark.parametrize("kind", contract.kinds())
def test_each_schema_is_valid_json_schema_and_its_example_passes(kind):
    schema = contract.schemas()[kind]
    jsonschema.Draft202012Validator.check_schema(schema)
    example = contract.example(kind)
    jsonschema.Draft202012Validator(schema).validate(example)
    assert contract.problems(kind, example) == []
    assert contract.slider_params(kind, example), f"{kind}: no slider"


def test_the_contract_check_finds_deviations():
    """problems() names what is wrong; it agrees with jsonschema on types and required fields."""
    for kind in contract.kinds():
        ex = contract.example(kind)
        first = next(iter(ex))
        assert any(first in p for p in contract.problems(kind, {k: v for k, v in ex.items() if k != first})), kind
        assert any("does not list" in p for p in contract.problems(kind, {**ex, "extra": 1})), kind
        for field, spec in contract.schemas()[kind]["properties"].items():
            bad = {**ex, field: "text" if spec["type"] != "string" else 1}
            assert contract.problems(kind, bad), (kind, field)
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(bad, contract.schemas()[kind])
    assert "unknown kind" in contract.problems("pie-chart", {})[0]
    ex = contract.example("convex-hull")
    assert any("T = " in p for p in contract.problems("convex-hull", {**ex, "points": ex["points"][:-1]}))
    assert any("outside" in p for p in contract.problems("convex-hull", {**ex, "log10_tau": 5.0}))
    ex = contract.example("dk-scaling")
    assert any('"dk_values"' in p for p in contract.problems("dk-scaling", {**ex, "dk_values": [0, 2]}))
    assert any('"dk_values"' in p for p in contract.problems("dk-scaling", {**ex, "dk_values": [1, len(ex["q"]) + 1]}))
    ex = contract.example("head-query")
    assert any('"head"' in p for p in contract.problems("head-query", {**ex, "head": len(ex["W_q"])}))
    ex = contract.example("softmax-sharpening")
    assert any("at most 6" in p for p in contract.problems("softmax-sharpening", {
        **ex, "labels": ex["labels"] * 2, "scores": ex["scores"] * 2, "values": ex["values"] * 2}))


def test_the_positional_encoding_example_is_the_sinusoidal_encoding_and_bad_ones_are_named():
    """The schema's example is Vaswani et al.'s encoding (T = 32, d_model = 16, 4 decimals), as its
    description says; problems() names a config with too many positions or an index out of range."""
    ex = contract.example("positional-encoding")
    assert is_sinusoidal(ex["PE"], atol=5e-5 + 1e-12)
    assert not is_sinusoidal([row[::-1] for row in ex["PE"]])
    pe = ex["PE"]
    assert any("at most 64" in p for p in contract.problems("positional-encoding", {**ex, "PE": (pe * 3)[:65]}))
    assert any('"position"' in p for p in contract.problems("positional-encoding", {**ex, "position": len(pe)}))
    assert any('"dimension"' in p for p in contract.problems("positional-encoding", {**ex, "dimension": len(pe[0])}))
    assert any("ragged" in p for p in contract.problems("positional-encoding", {**ex, "PE": [pe[0][:-1]] + pe[1:]}))


@pytest.mark.parametrize("chapter", CHAPTERS_WITH_EXPLORERS, ids=lambda c: c.stem)
def test_the_chapters_explorers_follow_their_schema(chapter):
    found = notebook_explorers(chapter.stem)
    kinds = sorted({e.kind for e in found})
    assert kinds == sorted(chapter.explorers), (
        f"{chapter.stem} defines explorers of kinds {kinds}; tools/chapters.toml lists {sorted(chapter.explorers)}")
    for e in found:
        assert contract.problems(e.kind, e.config) == [], f"{chapter.stem} ({e.kind}): {contract.problems(e.kind, e.config)}"
        assert json.dumps(e.config) in html.unescape(e.site_html)


@pytest.fixture(scope="module")
def explorers(built_site):
    return site_explorers(built_site)


@pytest.mark.site
def test_every_explorer_on_the_site_follows_its_schema_on_its_chapter_page(explorers):
    problems = []
    where_kind = kind_chapter()
    for e in explorers:
        where = f'{e["page"]} explorer #{e["position"] + 1} ({e["kind"]})'
        try:
            config = json.loads(e["raw"] or "")
        except json.JSONDecodeError as err:
            problems.append(f"{where}: data-config is not JSON ({err})")
            continue
        problems += [f"{where}: {p}" for p in contract.problems(e["kind"], config)]
        if e["kind"] in where_kind and e["page"] != f'notebooks/{where_kind[e["kind"]]}.html':
            problems.append(f'{where}: tools/chapters.toml puts this kind in {where_kind[e["kind"]]}')
    assert not problems, "explorer configs that deviate from their schema:\n" + "\n".join(problems)


@pytest.mark.site
@pytest.mark.parametrize("kind", sorted(kind_chapter()))
def test_each_kind_is_on_its_chapter_page(explorers, kind):
    assert any(e["kind"] == kind for e in explorers), f"no {kind} explorer on the site; tools/chapters.toml expects one in {kind_chapter()[kind]}"


@pytest.mark.site
def test_explorer_pages_load_the_scripts_and_keep_a_fallback(built_site, explorers):
    for page in sorted({e["page"] for e in explorers}):
        text = (built_site / page).read_text(encoding="utf-8")
        for script in ("explorer-contract.js", "explorers.js"):
            assert f"_static/{script}" in text, f"{page} has explorers but does not load {script}"
        assert "attn-explorer-fallback" in text, f"{page}: an explorer lost its fallback sentence"
        # MyST-NB renders a widget view as <script type="application/vnd.jupyter.widget-view+json">;
        # the mimetype may still appear as text inside a code cell (the SiteExplorer helper).
        assert 'type="application/vnd.jupyter.widget-view+json"' not in text, f"{page} shows an ipywidgets view"
        assert "application/vnd.jupyter.widget-state+json" not in text, f"{page} carries unused ipywidgets state"
