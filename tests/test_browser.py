"""The built website in a real browser: Debian's Chromium driven by playwright, fully offline.

The site built from the stored outputs is served on 127.0.0.1; every request to another host is
aborted and recorded. For every page: no such request, no JavaScript error, equations rendered.
For every interactive (CONTRIBUTING.md, "Interactives"; rendered by book/_static/explorers.js):
keyboard and mouse move its sliders and change the display; the displayed numbers equal NumPy's
for the slider values the page shows (computed here from data-config, independently of the
JavaScript) to the 3 displayed decimals; weights sum to 1; extreme settings show no NaN; the time
from a slider's input event to the updated layout is measured. A fixture page with one explorer
of each kind, configs made here, checks explorers.js at settings the chapters may not reach
(scores of ±1000 at τ = 0.01), and fully for a kind whose chapter has not delivered (PENDING).

Screenshots (before and after a move) and the measured times go to _build/test-artifacts/.
Without /usr/bin/chromium or playwright, these tests are skipped and say why.
"""
from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
import yaml

from browser_helpers import (ARTIFACTS, KIND_CHAPTER, PENDING, ROOT, FIELDS, LocalServer, fixture_configs,
                             reference, site_explorers, slider_params, write_fixture_site)

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SHOTS = ARTIFACTS / "browser"
ATOL = 0.0005 + 1e-9  # half a unit in the 3rd displayed decimal
# Jupyter Book 1 writes `const THEBE_JS_URL = …` twice into every page: the one known error.
KNOWN_ERROR = re.compile(r"THEBE_JS_URL.*already been declared")


def _pages_of_the_toc() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    # genindex and search are Sphinx's own pages, linked from every page: tested too.
    return [f"{f}.html" for f in files] + ["genindex.html", "search.html"]


PAGES = _pages_of_the_toc()


# ---------------------------------------------------------------- fixtures

def _skip_reason() -> str | None:
    if not CHROMIUM.exists():
        return ("the browser tests need Debian's Chromium at /usr/bin/chromium, which is missing; "
                "install it with `apt-get install -y chromium` (.ci/run does this where it may)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as err:
        return f"playwright cannot be imported ({err}); install requirements.txt into .venv (`make test` does)"
    return None


@pytest.fixture(scope="session")
def browser():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def site(built_site):
    with LocalServer(built_site) as server:
        yield server


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explorers-fixture")
    write_fixture_site(folder)
    with LocalServer(folder) as server:
        yield server


@pytest.fixture(scope="session")
def report():
    """Collects what the closing note reports; written to _build/test-artifacts/browser-report.json."""
    data = {"pages": {}, "interactives": []}
    yield data
    if data["pages"] or data["interactives"]:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        times = [t for e in data["interactives"] for t in e["update_ms"]["all"]]
        if times:
            data["update_ms_overall"] = {"median": statistics.median(times), "max": max(times), "n": len(times)}
        (ARTIFACTS / "browser-report.json").write_text(json.dumps(data, indent=1), encoding="utf-8")


class Watch:
    """What a page did: requests to other hosts (aborted), JavaScript and console errors."""

    def __init__(self, page, stub_mathjax=False):
        self.stub_mathjax = stub_mathjax
        self.remote: list[str] = []
        self.errors: list[str] = []
        page.route("**/*", self._route)
        page.on("pageerror", lambda err: self._error(f"uncaught exception: {err}"))
        page.on("console", self._console)
        page.on("response", lambda r: self._error(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None)

    def _route(self, route):
        url = route.request.url
        local = urlparse(url).hostname == "127.0.0.1"
        if local and self.stub_mathjax and urlparse(url).path.endswith("/mathjax/tex-chtml.js"):
            route.fulfill(status=200, content_type="application/javascript", body="/* stubbed by the test */")
        elif url.startswith(("data:", "blob:")) or local:
            route.continue_()
        else:
            self.remote.append(url)
            route.abort()

    def _console(self, msg):
        if msg.type != "error":
            return
        url = (msg.location or {}).get("url", "")
        # The browser's own guess at /favicon.ico (no page links it; the site has no favicon).
        if urlparse(url).path == "/favicon.ico" and "Failed to load resource" in msg.text:
            return
        self._error(f"console.error: {msg.text} ({url})")

    def _error(self, text):
        if not KNOWN_ERROR.search(text):
            self.errors.append(text)


def open_page(browser, url, stub_mathjax=False):
    """A new page at url, watched. stub_mathjax: serve an empty MathJax (the interactive tests: the
    page tests check the equations, and typesetting would compete for the CPU with the timed updates)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    watch = Watch(page, stub_mathjax)
    page.goto(url, wait_until="domcontentloaded" if stub_mathjax else "load")
    return page, watch


# ---------------------------------------------------------------- every page

MATH_STATE = r"""async () => {
  const math = document.querySelectorAll('.math').length;
  if (math) {
    const t0 = performance.now();
    while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) && performance.now() - t0 < 15000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  }
  const raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => n.parentElement.closest('script, style, pre, code, textarea, mjx-container, .highlight')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
  while (walker.nextNode()) {
    const t = walker.currentNode.nodeValue;
    if (/\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{/.test(t)) raw.push(t.trim().slice(0, 100));
  }
  return {
    math: math,
    mathjax: !!(window.MathJax && MathJax.startup),
    rendered: document.querySelectorAll('mjx-container').length,
    unrendered: [...document.querySelectorAll('.math')].filter((m) => !m.querySelector('mjx-container')).map((m) => m.textContent.slice(0, 100)),
    tex_errors: [...document.querySelectorAll('mjx-merror')].map((m) => m.getAttribute('data-mjx-error') || m.textContent),
    raw: raw,
    explorers: [...document.querySelectorAll('.attn-explorer')].map((e) => e.dataset.ready || 'not built'),
  };
}"""


@pytest.mark.parametrize("path", PAGES)
def test_page_is_offline_error_free_and_renders_its_equations(browser, built_site, site, report, path):
    assert (built_site / path).is_file(), f"{path} was not built"
    page, watch = open_page(browser, f"{site.url}/{path}")
    try:
        state = page.evaluate(MATH_STATE)
    finally:
        page.close()
    report["pages"][path] = {"math_elements": state["math"], "mjx_containers": state["rendered"],
                             "explorers": len(state["explorers"])}
    assert not watch.remote, f"{path} requested other hosts (aborted): {watch.remote}"
    assert not watch.errors, f"{path} has JavaScript errors:\n" + "\n".join(watch.errors)
    if state["math"]:
        assert state["mathjax"], f"{path} has {state['math']} equations but MathJax did not start"
        assert not state["unrendered"], f"{path}: equations MathJax did not render: {state['unrendered'][:5]}"
        assert not state["tex_errors"], f"{path}: TeX errors: {state['tex_errors'][:5]}"
        assert state["rendered"] >= state["math"]
    assert not state["raw"], f"{path} shows raw TeX in its text: {state['raw'][:5]}"
    assert all(r == "true" for r in state["explorers"]), f"{path}: explorers not built: {state['explorers']}"


def test_root_redirects_to_the_title_page(browser, built_site, site):
    page, watch = open_page(browser, f"{site.url}/index.html")
    try:
        page.wait_for_url("**/book/index.html", timeout=10000)
    finally:
        page.close()
    assert not watch.remote and not watch.errors, (watch.remote, watch.errors)


# ---------------------------------------------------------------- every interactive

READ = r"""(root) => {
  const numbers = {};
  root.querySelectorAll('[data-role]').forEach((e) => {
    const role = e.dataset.role;
    if (role === 'slider' || role === 'param-value') return;
    (numbers[role] = numbers[role] || []).push([e.dataset.index === undefined ? -1 : Number(e.dataset.index), e.textContent]);
  });
  const sliders = {};
  root.querySelectorAll('input[type=range]').forEach((s) => {
    const label = document.querySelector(`label[for="${s.id}"]`);
    const output = root.querySelector(`output[data-param="${s.dataset.param}"]`);
    sliders[s.dataset.param] = {value: s.value, min: s.min, max: s.max, step: s.step,
      valuetext: s.getAttribute('aria-valuetext'), label: label ? label.textContent.trim() : '',
      output: output ? output.textContent : null};
  });
  const shapes = [...root.querySelectorAll('svg rect, svg path, svg circle, svg polygon')]
    .map((e) => ['y', 'height', 'r', 'transform', 'fill'].map((a) => e.getAttribute(a)).join(',')).join('|');
  return {ready: root.dataset.ready || null, numbers, sliders, shapes, text: root.innerText,
          focused: document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.param : null};
}"""

SET_AND_READ = r"""(root, values) => {
  for (const [param, v] of Object.entries(values)) {
    const s = root.querySelector(`input[data-param="${param}"]`);
    s.value = String(v);
    s.dispatchEvent(new Event('input', {bubbles: true}));
  }
  return (READ)(root);
}""".replace("READ", READ)

TIME_UPDATES = r"""(root, args) => {
  const s = root.querySelector(`input[data-param="${args.param}"]`);
  const times = [];
  for (let k = 0; k < args.n; k++) {
    s.value = args.values[k % 2];
    const t0 = performance.now();
    s.dispatchEvent(new Event('input', {bubbles: true}));
    void root.offsetHeight;  // include the style and layout work the update causes
    times.push(performance.now() - t0);
  }
  return times;
}"""


def displayed(state) -> dict[str, np.ndarray]:
    """The numbers an explorer shows, by data-role: scalars, or vectors ordered by data-index."""
    out = {}
    for role, entries in state["numbers"].items():
        values = np.array([float(text) for _, text in sorted(entries)])
        out[role] = values[0] if entries[0][0] == -1 else values
    return out


def params_of(state) -> dict[str, float]:
    return {p: float(s["value"]) for p, s in state["sliders"].items()}


class Explorer:
    """One explorer on an open page: reads its state and checks it against NumPy."""

    def __init__(self, page, root, kind, config, name):
        self.page, self.root, self.kind, self.config, self.name = page, root, kind, config, name
        self.checked = 0

    def read(self):
        return self.root.evaluate(READ)

    def check(self, state=None, why=""):
        """The display against NumPy for the slider values shown, weights summing to 1, no NaN."""
        state = state or self.read()
        where = f"{self.name} ({why}; sliders {params_of(state)})"
        for bad in ("NaN", "Infinity", "undefined"):
            assert bad not in state["text"], f"{where}: the display shows {bad}"
        for param, s in state["sliders"].items():
            assert s["label"], f"{where}: slider {param} has no <label>"
            assert s["output"] and s["output"] in (s["valuetext"] or ""), f"{where}: slider {param}'s aria-valuetext does not say its displayed value"
        shown = displayed(state)
        expected = reference(self.kind, self.config, params_of(state))
        for role, value in expected.items():
            assert role in shown, f"{where}: no element with data-role={role!r}"
            got = np.asarray(shown[role])
            assert got.shape == np.shape(value), f"{where}: {role} has {got.shape} entries, NumPy {np.shape(value)}"
            assert np.isfinite(got).all(), f"{where}: {role} is not finite: {got}"
            assert np.allclose(got, value, rtol=0, atol=ATOL), f"{where}: {role} shows {got}, NumPy gives {np.round(value, 4)}"
            if role.startswith("weight"):
                assert (got >= 0).all()
                assert abs(got.sum() - 1) <= ATOL * got.size, f"{where}: {role} sums to {got.sum():.4f}"
        self.checked += 1
        return state

    def set(self, values: dict, why: str):
        return self.check(self.root.evaluate(SET_AND_READ, values), why=why)

    def slider(self, param):
        return self.root.locator(f'input[data-param="{param}"]')


def _grid(s, k):
    lo, hi, step = float(s["min"]), float(s["max"]), float(s["step"])
    n = int(round((hi - lo) / step))
    return round(lo + min(max(k, 0), n) * step, 10), n


def exercise(page, root, kind, config, name, report, full=True):
    """The checks of one explorer (attached and built). full=False: the numbers only (settings and
    extremes set through input events), without keyboard, mouse, screenshots and timing."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
    SHOTS.mkdir(parents=True, exist_ok=True)
    root.scroll_into_view_if_needed()
    state = root.evaluate(READ)
    assert state["ready"] == "true", f"{name} was not built: {state['text'][:300]}"
    params = slider_params(kind, config)
    assert sorted(state["sliders"]) == sorted(params), f"{name}: sliders {sorted(state['sliders'])}, expected {sorted(params)}"
    ex = Explorer(page, root, kind, config, name)
    ex.check(state, "as loaded")
    start = {p: v["value"] for p, v in state["sliders"].items()}

    if full:
        root.screenshot(path=str(SHOTS / f"{slug}-before.png"))
        # Keyboard: focus a slider, End/Home change the display; an arrow key moves one step. Every
        # slider where there are at most three; else the first two and the last (the score sliders
        # are built by the same code).
        for param in params if len(params) <= 3 else params[:2] + params[-1:]:
            ex.set(start, "back to the start")
            slider = ex.slider(param)
            slider.focus()
            before = ex.read()
            s = before["sliders"][param]
            for key in ("End", "Home") if s["value"] != s["max"] else ("Home", "End"):
                page.keyboard.press(key)
                after = ex.check(why=f"keyboard {key} on {param}")
                if after["shapes"] != before["shapes"] or after["numbers"] != before["numbers"]:
                    break
            else:
                pytest.fail(f"{name}: End and Home on slider {param} did not change the display")
            assert after["focused"] == param, f"{name}: the keyboard moved the focus away from {param}"
            value = float(after["sliders"][param]["value"])
            key = "ArrowLeft" if value >= float(s["max"]) else "ArrowRight"
            page.keyboard.press(key)
            moved = ex.check(why=f"keyboard {key} on {param}")
            step = float(s["step"])
            assert abs(abs(float(moved["sliders"][param]["value"]) - value) - step) < 1e-9, f"{name}: {key} did not move {param} by one step"
            assert moved["sliders"][param]["valuetext"] != after["sliders"][param]["valuetext"]

        # Mouse: click on the track at two places, then drag the thumb (first and last slider).
        for param in dict.fromkeys([params[0], params[-1]]):
            ex.set(start, "back to the start")
            slider = ex.slider(param)
            slider.scroll_into_view_if_needed()
            box = slider.bounding_box()
            y = box["y"] + box["height"] / 2
            page.mouse.click(box["x"] + 0.15 * box["width"], y)
            left = ex.check(why=f"mouse click at 15% of {param}")
            page.mouse.click(box["x"] + 0.85 * box["width"], y)
            right = ex.check(why=f"mouse click at 85% of {param}")
            assert float(left["sliders"][param]["value"]) < float(right["sliders"][param]["value"]), f"{name}: clicks did not move {param}"
            assert left["shapes"] != right["shapes"] and left["numbers"] != right["numbers"], f"{name}: clicking {param} did not change the display"
            page.mouse.move(box["x"] + 0.85 * box["width"], y)
            page.mouse.down()
            page.mouse.move(box["x"] + 0.3 * box["width"], y, steps=3)
            page.mouse.up()
            dragged = ex.check(why=f"mouse drag on {param}")
            assert float(dragged["sliders"][param]["value"]) < float(right["sliders"][param]["value"]), f"{name}: dragging did not move {param}"

    # Several settings on the slider grids (seeded), then the extremes.
    sliders = ex.read()["sliders"]
    rng = np.random.default_rng(0)
    for k in range(4):
        ex.set({p: _grid(s, int(rng.integers(0, _grid(s, 0)[1] + 1)))[0] for p, s in sliders.items()}, f"setting {k}")
    lo = {p: s["min"] for p, s in sliders.items()}
    hi = {p: s["max"] for p, s in sliders.items()}
    ex.set(lo, "every slider at its minimum")
    ex.set(hi, "every slider at its maximum")
    if kind in ("convex-hull", "softmax-sharpening"):
        scores = [p for p in params if p.startswith("score-")]
        for tau in ("log10_tau_min", "log10_tau_max"):
            t = {"log10_tau": config[tau]}
            ex.set({**t, **{p: sliders[p]["max"] for p in scores}}, f"{tau}, equal scores")
            top = ex.set({**t, scores[0]: sliders[scores[0]]["max"], **{p: sliders[p]["min"] for p in scores[1:]}},
                         f"{tau}, one top score")
            if tau == "log10_tau_min":
                assert displayed(top)["weight"][0] > 0.99, f"{name}: the smallest τ does not give one-hot-like weights"
            ex.set({**t, **{p: sliders[p]["max" if i % 2 else "min"] for i, p in enumerate(scores)}}, f"{tau}, alternating extremes")
    elif kind == "decoder-state":
        for a in ("min", "max"):
            for b in ("min", "max"):
                ex.set({"s-0": sliders["s-0"][a], "s-1": sliders["s-1"][b]}, f"s at the corner ({a}, {b})")
    elif kind == "dk-scaling":
        for i in range(len(config["dk_values"])):
            ex.set({"dk_index": i}, f"d_k = {config['dk_values'][i]}")
    elif kind == "head-query":
        heads, T = len(config["W_q"]), len(config["tokens"])
        pairs = {(0, 0), (heads - 1, T - 1), (0, T - 1), (heads - 1, 0)}
        pairs |= {(int(rng.integers(heads)), int(rng.integers(T))) for _ in range(6)}
        for h, i in sorted(pairs):
            ex.set({"head": h, "query": i}, f"head {h}, query {i}")

    if not full:
        ex.set(start, "back to the start")
        print(f"{name}: {ex.checked} displays checked against NumPy")
        return
    # The time from an input event to the updated display (DOM updated and laid out).
    param = params[-1]
    s = sliders[param]
    values = [s["min"], s["max"]]
    ex.root.evaluate(TIME_UPDATES, {"param": param, "values": values, "n": 6})  # warm up
    times = ex.root.evaluate(TIME_UPDATES, {"param": param, "values": values, "n": 40})
    ex.set({param: _grid(s, _grid(s, 0)[1] // 3)[0]}, "after the timing")
    root.screenshot(path=str(SHOTS / f"{slug}-after.png"))
    entry = {"name": name, "kind": kind, "checks": ex.checked,
             "update_ms": {"median": statistics.median(times), "max": max(times), "all": times}}
    report["interactives"].append(entry)
    print(f"{name}: {ex.checked} displays checked against NumPy; input-to-display "
          f"median {entry['update_ms']['median']:.2f} ms, max {entry['update_ms']['max']:.2f} ms")
    assert entry["update_ms"]["median"] < 16, f"{name}: a slider update takes {entry['update_ms']['median']:.1f} ms, more than a frame"


@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_interactives_on_the_site(browser, built_site, site, report, kind):
    found = [e for e in site_explorers(built_site) if e["kind"] == kind]
    if not found:
        if kind in PENDING:
            pytest.skip(f"chapter {KIND_CHAPTER[kind]} has no {kind} explorer yet (listed in PENDING)")
        pytest.fail(f"no {kind} explorer on the site; CONTRIBUTING.md expects one in {KIND_CHAPTER[kind]}")
    for path in dict.fromkeys(e["page"] for e in found):
        page, watch = open_page(browser, f"{site.url}/{path}", stub_mathjax=True)
        try:
            for e in (e for e in found if e["page"] == path):
                root = page.locator(".attn-explorer").nth(e["position"])
                config = json.loads(root.get_attribute("data-config"))
                exercise(page, root, kind, config, f"{Path(path).stem}-{kind}-{e['position'] + 1}", report)
        finally:
            page.close()
        assert not watch.remote, f"{path} requested other hosts: {watch.remote}"
        assert not watch.errors, f"{path}: JavaScript errors while using the explorers:\n" + "\n".join(watch.errors)


def test_explorer_pages_read_without_javascript(browser, built_site, site):
    """With scripts off, an explorer's place shows its fallback sentence (the captioned figure sits
    beside it). One page, the one with the most explorers: test_explorer_configs.py checks that every
    explorer page keeps the sentence, and the page's CSS is the same everywhere."""
    explorers = site_explorers(built_site)
    if not explorers:
        pytest.skip("no page of the site has an explorer yet")
    pages = [e["page"] for e in explorers]
    paths = [max(sorted(set(pages)), key=pages.count)]
    context = browser.new_context(java_script_enabled=False)
    try:
        for path in paths:
            page = context.new_page()
            page.route("**/*", lambda route: route.continue_() if urlparse(route.request.url).hostname == "127.0.0.1" else route.abort())
            page.goto(f"{site.url}/{path}")
            explorers = page.locator(".attn-explorer")
            fallbacks = page.locator(".attn-explorer .attn-explorer-fallback")
            assert explorers.count() == fallbacks.count() > 0, f"{path}: an explorer has no fallback sentence"
            for k in range(fallbacks.count()):
                assert fallbacks.nth(k).is_visible(), f"{path}: fallback sentence {k + 1} is hidden with scripts off"
            assert page.locator("figure img").count() > 0, f"{path} has explorers but no figure"
            page.close()
    finally:
        context.close()


def test_explorers_on_the_fixture_page(browser, fixture_site, report):
    """One explorer of each kind with configs made here: explorers.js is checked for every kind even
    where a chapter has not delivered its explorer (those, PENDING, get the full keyboard and mouse
    treatment here; the others get it on the site), and at settings the chapters may not reach
    (scores of ±1000 at τ = 0.01)."""
    page, watch = open_page(browser, f"{fixture_site.url}/fixture.html")
    try:
        for kind, _ in fixture_configs():
            root = page.locator(f'.attn-explorer[data-kind="{kind}"]')
            config = json.loads(root.get_attribute("data-config"))
            exercise(page, root, kind, config, f"fixture-{kind}", report, full=kind in PENDING)
    finally:
        page.close()
    assert not watch.remote, watch.remote
    assert not watch.errors, "\n".join(watch.errors)
