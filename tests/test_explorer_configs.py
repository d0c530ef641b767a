"""Every interactive on the built site has a known kind and a config as CONTRIBUTING.md lists it.

Runs without a browser: it reads the HTML of the strict site build (stored outputs). The
browser tests (tests/test_browser.py) then drive each explorer in Chromium.
"""
from __future__ import annotations

import copy
import html
import json

import pytest

from browser_helpers import FIELDS, KIND_CHAPTER, PENDING, config_problems, fixture_configs, site_explorers


@pytest.fixture(scope="module")
def explorers(built_site):
    return site_explorers(built_site)


def test_every_explorer_has_a_known_kind_and_a_config_as_contributing_lists(explorers):
    problems = []
    for e in explorers:
        where = f'{e["page"]} explorer #{e["position"] + 1} ({e["kind"]})'
        if e["kind"] not in FIELDS:
            problems.append(f'{where}: unknown kind; known kinds: {", ".join(FIELDS)}')
            continue
        try:
            config = json.loads(e["raw"] or "")
        except json.JSONDecodeError as err:
            problems.append(f"{where}: data-config is not JSON ({err})")
            continue
        problems += [f"{where}: {p}" for p in config_problems(e["kind"], config)]
        expected_page = f'notebooks/{KIND_CHAPTER[e["kind"]]}.html'
        if e["page"] != expected_page:
            problems.append(f'{where}: CONTRIBUTING.md puts this kind on {expected_page}')
    assert not problems, "explorer configs that deviate from CONTRIBUTING.md:\n" + "\n".join(problems)


@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_each_kind_is_on_its_chapter_page(explorers, kind):
    chapter = KIND_CHAPTER[kind]
    found = [e for e in explorers if e["kind"] == kind]
    if kind in PENDING:
        assert not found, (f"the {kind} explorer is now on {found[0]['page']}: remove {kind!r} from PENDING "
                           f"in tests/browser_helpers.py")
        pytest.skip(f"chapter {chapter} has no {kind} explorer yet (listed in PENDING)")
    assert found, f"no {kind} explorer on the site; CONTRIBUTING.md expects one in {chapter}"


def test_explorer_pages_load_the_script_and_keep_a_fallback(built_site, explorers):
    for page in sorted({e["page"] for e in explorers}):
        text = (built_site / page).read_text(encoding="utf-8")
        assert "_static/explorers.js" in text, f"{page} has explorers but does not load explorers.js"
        assert "attn-explorer-fallback" in text, f"{page}: an explorer lost its fallback sentence"
        assert "application/vnd.jupyter.widget-view+json" not in text, f"{page} shows an ipywidgets view"


def test_the_contract_check_finds_deviations():
    """config_problems itself: it accepts configs shaped as CONTRIBUTING.md says and names what is wrong otherwise."""
    for kind, config in fixture_configs():
        assert config_problems(kind, config) == [], kind
        div_config = json.loads(html.unescape(html.escape(json.dumps(config), quote=True)))
        assert div_config == config
        first = FIELDS[kind][0]
        broken = {k: v for k, v in config.items() if k != first}
        assert any(first in p for p in config_problems(kind, broken)), kind
        assert any("does not list" in p for p in config_problems(kind, {**config, "extra": 1})), kind
    assert config_problems("pie-chart", {}) and "unknown kind" in config_problems("pie-chart", {})[0]
    kind, config = fixture_configs()[0]
    bad = copy.deepcopy(config)
    bad["points"] = bad["points"][:-1]
    assert any('"points" should have shape' in p for p in config_problems(kind, bad))
    bad = copy.deepcopy(config)
    bad["log10_tau"] = 5.0
    assert any("outside" in p for p in config_problems(kind, bad))
    kind, config = fixture_configs()[3]
    assert any('"dk_values"' in p for p in config_problems(kind, {**config, "dk_values": [0, 2]}))
    kind, config = fixture_configs()[4]
    assert any('"head"' in p for p in config_problems(kind, {**config, "head": 2}))
