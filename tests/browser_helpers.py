"""Helpers for the browser tests: NumPy references of the explorers, the explorers on the built
site, a fixture page, a local server, and the JavaScript that audits a page in Chromium.

The references below are written from the formulas of the explorer schemas
(tools/explorers/schemas), not from the JavaScript, so that a test compares explorers.js with an
independent computation. A new kind adds its branch to `reference()`.

`python tests/browser_helpers.py SITE_HTML_DIR [OUT.json]` measures a built site (axe-core
violations by rule and page, page width at 390 px, tab presses to the first chapter slider, bytes
and requests per page) without pytest: the numbers the closing note of a change reports.
"""
from __future__ import annotations

import functools
import http.server
import json
import math
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools import explorers as contract  # noqa: E402
from tools.registry import chapters  # noqa: E402

ARTIFACTS = ROOT / "_build" / "test-artifacts"
AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
from tools.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the one place)
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def kind_chapter() -> dict[str, str]:
    """The chapter (notebook stem) that shows each kind, from tools/chapters.toml."""
    return {kind: c.stem for c in chapters() for kind in c.explorers}


# ---------------------------------------------------------------- NumPy references

def softmax(x):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max())
    return e / e.sum()


def entropy(a):
    a = np.asarray(a, dtype=float)
    nz = a[a > 0]
    return float(-(nz * np.log(nz)).sum())


def sinusoidal_encoding(T: int, d_model: int) -> np.ndarray:
    """Vaswani et al.'s encoding: PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...)."""
    pe = np.zeros((T, d_model))
    for pos in range(T):
        for k in range(d_model):
            angle = pos / 10000.0 ** (2 * (k // 2) / d_model)
            pe[pos, k] = math.sin(angle) if k % 2 == 0 else math.cos(angle)
    return pe


def is_sinusoidal(PE, atol=5e-4) -> bool:
    """Whether the rows of PE are the sinusoidal encoding (rounded to 3 decimals or more)."""
    PE = np.asarray(PE, dtype=float)
    return PE.ndim == 2 and PE.shape[1] % 2 == 0 and np.allclose(PE, sinusoidal_encoding(*PE.shape), rtol=0, atol=atol)


def reference(kind: str, config, params: dict[str, float]) -> dict[str, np.ndarray]:
    """What the explorer should display for the slider values `params`, by data-role."""
    if kind in ("convex-hull", "softmax-sharpening"):
        n = len(config["labels"])
        scores = np.array([params[f"score-{i}"] for i in range(n)])
        tau = 10.0 ** params["log10_tau"]
        alpha = softmax(scores / tau)
        if kind == "convex-hull":
            h = np.asarray(config["points"], dtype=float)
            c = alpha @ h
            return {"weight": alpha, "context": c, "context-norm": np.linalg.norm(c),
                    "max-norm": np.linalg.norm(h, axis=1).max()}
        c = alpha @ np.asarray(config["values"], dtype=float)
        return {"weight": alpha, "entropy": entropy(alpha), "context": c}
    if kind == "decoder-state":
        H = np.asarray(config["H"], dtype=float)
        W_a, U_a, v_a = (np.asarray(config[k], dtype=float) for k in ("W_a", "U_a", "v_a"))
        s = np.array([params["s-0"], params["s-1"]])
        scores = np.array([v_a @ np.tanh(W_a @ s + U_a @ h) for h in H])
        alpha = softmax(scores)
        return {"score": scores, "weight": alpha, "context": alpha @ H}
    if kind == "dk-scaling":
        d_k = config["dk_values"][int(round(params["dk_index"]))]
        q = np.asarray(config["q"], dtype=float)[:d_k]
        K = np.asarray(config["K"], dtype=float)[:, :d_k]
        raw = K @ q
        scaled = raw / math.sqrt(d_k)
        return {"dk": np.float64(d_k), "score-unscaled": raw, "score": scaled,
                "weight-unscaled": softmax(raw), "weight": softmax(scaled),
                "entropy-unscaled": entropy(softmax(raw)), "entropy": entropy(softmax(scaled))}
    if kind == "head-query":
        X = np.asarray(config["X"], dtype=float)
        h, i = int(round(params["head"])), int(round(params["query"]))
        W_q = np.asarray(config["W_q"], dtype=float)[h]
        W_k = np.asarray(config["W_k"], dtype=float)[h]
        d_k = W_q.shape[1]
        scores = (X[i] @ W_q) @ (X @ W_k).T / math.sqrt(d_k)
        alpha = softmax(scores)
        return {"score": scores, "weight": alpha, "entropy": entropy(alpha)}
    if kind == "online-softmax":
        # Independent of the page's running recurrence: after n tiles, the softmax of the keys seen
        # so far, computed in one shot, with m its maximum and ell its normaliser.
        s = np.asarray(config["scores"], dtype=float)
        V = np.asarray(config["values"], dtype=float)
        T = len(s)
        b = int(round(params["block_size"]))
        n = min(int(round(params["step"])), -(-T // b))
        full = softmax(s)
        out = {"score": s, "weight-full": full, "full-output": full @ V}
        if n == 0:  # nothing seen yet: the page shows m as -inf, and no factor or output
            return {**out, "weight": np.zeros(T), "ell": np.float64(0.0)}
        seen = min(T, n * b)
        m = s[:seen].max()
        e = np.exp(s[:seen] - m)
        w = np.zeros(T)
        w[:seen] = e / e.sum()
        m_prev = s[:(n - 1) * b].max() if n > 1 else -np.inf
        return {**out, "m": np.float64(m), "factor": np.float64(np.exp(m_prev - m)), "ell": np.float64(e.sum()),
                "weight": w, "output": w @ V}
    if kind == "positional-encoding":
        PE = np.asarray(config["PE"], dtype=float)
        p, j = int(round(params["position"])), int(round(params["dimension"]))
        return {"position": np.float64(p), "dimension": np.float64(j), "value": np.float64(PE[p, j]),
                "self-dot": np.float64(PE[p] @ PE[p]), "encoding": PE[p], "dot": PE @ PE[p], "wave": PE[:, j]}
    if kind == "next-word-temperature":
        i = int(round(params["temperature_index"]))
        p = softmax(np.asarray(config["logits"], dtype=float) / config["temperatures"][i])
        grammar = np.asarray(config["grammar"], dtype=float)
        order = sorted(range(len(p)), key=lambda j: (-config["logits"][j], j))[:config["shown"]]
        shown = np.append(p[order], 1 - p[order].sum())
        return {"probability": shown, "grammar": np.append(grammar[order], 1 - grammar[order].sum()),
                "entropy": entropy(p), "allowed": np.float64(p[grammar > 0].sum())}
    if kind == "kv-cache":
        T = config["contexts"][int(round(params["context_index"]))]
        b = config["bytes_per_number"][int(round(params["bytes_index"]))]
        per_token, total = [], []
        for i, layers in enumerate(config["layers"]):
            if config["d_latent"][i]:                       # a latent and its rotated key part per position
                numbers = config["d_latent"][i] + config["d_rope"][i]
            else:                                           # a key and a value per key-value head
                numbers = 2 * config["n_kv_heads"][i] * config["d_k"][i]
            held = [T] * layers                             # positions each layer holds
            if config["window"][i]:
                for layer in range(min(config["windowed_layers"][i], layers)):
                    held[layer] = min(T, config["window"][i])
            per_token.append(layers * numbers * b)
            total.append(sum(held) * numbers * b)
        total = np.array(total, dtype=float)
        return {"per-token-kib": np.array(per_token) / 1024, "cache-mib": total / 2 ** 20,
                "share": total / (config["memory_gib"] * 2 ** 30),
                "context": np.float64(T), "bytes": np.float64(b)}
    raise ValueError(f"tests/browser_helpers.py has no NumPy reference for the {kind!r} explorer: add its formulas to reference()")


# ---------------------------------------------------------------- the explorers on the built site

class _ExplorerFinder(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and "attn-explorer" in (a.get("class") or "").split():
            self.found.append((a.get("data-kind", ""), a.get("data-config")))


def explorers_in(page: Path) -> list[tuple[str, str | None]]:
    """(kind, raw data-config) of every explorer div of an HTML page, in page order."""
    finder = _ExplorerFinder()
    finder.feed(page.read_text(encoding="utf-8"))
    return finder.found


def site_pages(html_dir: Path) -> list[Path]:
    return sorted(p for p in html_dir.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def site_explorers(html_dir: Path) -> list[dict]:
    """Every explorer on the built site: page (relative path), position on the page, kind, config."""
    out = []
    for page in site_pages(html_dir):
        for k, (kind, raw) in enumerate(explorers_in(page)):
            out.append({"page": page.relative_to(html_dir).as_posix(), "position": k, "kind": kind, "raw": raw})
    return out



# ---------------------------------------------------------------- a fixture page with every kind

def explorer_div(kind: str, config: dict) -> str:
    """The placeholder div exactly as tools/shared/site_explorer.py writes it."""
    import html
    return (f'<div class="attn-explorer" data-kind="{kind}" '
            f'data-config="{html.escape(json.dumps(config), quote=True)}">'
            f'<p class="attn-explorer-fallback">This explorer needs JavaScript; '
            f'the figure next to it shows the same computation.</p></div>')


def write_fixture_site(folder: Path, broken: list[tuple[str, dict]] = ()) -> Path:
    """A page with one explorer of each kind (the schemas' examples), then the `broken` configs,
    loading the site's explorer-contract.js, explorers.js and explorers.css; returns the page."""
    import shutil
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("explorer-contract.js", "explorers.js", "explorers.css"):
        shutil.copy(ROOT / "book" / "_static" / name, folder / name)
    body = "\n".join(f"<section><h2>{kind}</h2>\n{explorer_div(kind, contract.example(kind))}</section>"
                     for kind in contract.kinds())
    body += "\n".join(f'<section class="broken">{explorer_div(kind, config)}</section>' for kind, config in broken)
    page = folder / "fixture.html"
    page.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>explorers fixture</title>'
        '<link rel="stylesheet" href="explorers.css"><script src="explorer-contract.js"></script>'
        '<script src="explorers.js"></script></head>'
        f'<body style="max-width:60rem;margin:1rem auto;font-family:sans-serif"><main>\n{body}\n</main></body></html>',
        encoding="utf-8")
    return page


# ---------------------------------------------------------------- a quiet local server

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class LocalServer:
    """Serves a folder on 127.0.0.1 (a free port) from a daemon thread."""

    def __init__(self, folder: Path):
        handler = functools.partial(_Quiet, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def site_pages_of_the_toc() -> list[str]:
    """Every page of _toc.yml, plus Sphinx's own genindex and search pages (linked from every page)."""
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [f"{f}.html" for f in files] + ["genindex.html", "search.html"]


# ---------------------------------------------------------------- what a page did

class Watch:
    """Requests to other hosts (aborted), JavaScript and console errors, bytes and requests.

    With intercept=False no request is routed through the test (a routed page has no HTTP cache, and
    each request waits on the test's thread): requests to other hosts are recorded, not aborted (the
    machines here reach no other host), which is enough for a page whose test asserts there are none.
    close() stops the watching, for a page that outlives it."""

    def __init__(self, page, known_error=None, stub_mathjax=False, intercept=True):
        self.page = page
        self.stub_mathjax = stub_mathjax
        self.known_error = known_error
        self.remote: list[str] = []
        self.errors: list[str] = []
        self.local_paths: list[str] = []
        self.intercept = intercept
        if intercept:
            page.route("**/*", self._route)
        self.handlers = {"pageerror": lambda err: self._error(f"uncaught exception: {err}"),
                         "console": self._console,
                         "response": lambda r: self._error(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None,
                         "requestfinished": self._finished}
        if not intercept:
            self.handlers["request"] = self._request
        for event, handler in self.handlers.items():
            page.on(event, handler)

    def close(self):
        if self.intercept:
            self.page.unroute("**/*", self._route)
        for event, handler in self.handlers.items():
            self.page.remove_listener(event, handler)

    @staticmethod
    def _local(url: str) -> bool:
        """A request that stays on this machine: the loopback server, or data: and blob: URLs."""
        return url.startswith(("data:", "blob:")) or urlparse(url).hostname == "127.0.0.1"

    def _request(self, request):
        if not self._local(request.url):
            self.remote.append(request.url)

    def _finished(self, request):
        if urlparse(request.url).hostname == "127.0.0.1":
            self.local_paths.append(urlparse(request.url).path)

    def weight(self, html_dir: Path) -> tuple[int, int]:
        """(requests, bytes): every file the page loaded from the site, at its size on disk (uncompressed)."""
        files = [html_dir / p.lstrip("/") for p in self.local_paths]
        return len(files), sum(f.stat().st_size for f in files if f.is_file())

    def transferred(self, html_dir: Path) -> int:
        """Bytes as a static host sends the files the page loaded: text (HTML, CSS, JavaScript, SVG,
        JSON) compressed with gzip at level 6 (nginx's and most hosts' setting), the rest as it is."""
        import gzip
        total = 0
        for p in self.local_paths:
            f = html_dir / p.lstrip("/")
            if not f.is_file():
                continue
            data = f.read_bytes()
            text = f.suffix in (".html", ".css", ".js", ".svg", ".json", ".txt", ".map")
            total += len(gzip.compress(data, compresslevel=6)) if text else len(data)
        return total

    def _route(self, route):
        url = route.request.url
        parsed = urlparse(url)
        if self.stub_mathjax and parsed.hostname == "127.0.0.1" and parsed.path.endswith("/mathjax/startup.js"):
            route.fulfill(status=200, content_type="application/javascript", body="/* stubbed by the test */")
        elif self._local(url):
            route.continue_()
        else:
            self.remote.append(url)
            route.abort()

    def _console(self, msg):
        if msg.type != "error":
            return
        url = (msg.location or {}).get("url", "")
        self._error(f"console.error: {msg.text} ({url})")

    def _error(self, text):
        if not (self.known_error and self.known_error.search(text)):
            self.errors.append(text)


# ---------------------------------------------------------------- page audits (JavaScript)

# The formulas arrive typeset (tools/sphinx_ext/prerender_math.py); MathJax's web fonts load as the
# page's text needs them: wait for them, and report whether they loaded.
MATH_STATE = r"""async () => {
  const math = document.querySelectorAll('.math').length;
  await document.fonts.ready;
  const mjxFonts = [...document.fonts].filter((f) => f.family.replace(/"/g, '').startsWith('MJX'));
  const raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => n.parentElement.closest('script, style, pre, code, textarea, mjx-container, .highlight')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
  while (walker.nextNode()) {
    const t = walker.currentNode.nodeValue;
    if (/\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{/.test(t)) raw.push(t.trim().slice(0, 100));
  }
  const containers = [...document.querySelectorAll('mjx-container')];
  // a formula named for the author: its equation number, else its first characters as a screen reader reads them
  const named = (m) => {
    const tag = m && m.querySelector('mjx-mtd[id^="mjx-eqn:"]');
    if (tag) return 'equation (' + tag.id.slice('mjx-eqn:'.length) + ')';
    if (m && m.dataset.tex) return 'the formula ' + m.dataset.tex;   // one MathJax could not typeset
    const mml = m && (m.querySelector('mjx-assistive-mml') || m);
    return 'the formula "' + (mml ? mml.textContent : '').replace(/\s+/g, ' ').trim().slice(0, 40) + '"';
  };
  return {
    math: math,
    mathjax: !!window.MathJax,
    // (the fonts of what is laid out: a page whose formulas all wait below the screen loads none yet; MATH_FONTS)
    math_font_ok: !mjxFonts.some((f) => f.status === 'error'),
    rendered: containers.length,
    tab_stops: containers.filter((m) => m.tabIndex >= 0).map(named),
    assistive_mml: containers.filter((m) => m.querySelector('mjx-assistive-mml math')).length,
    unrendered: [...document.querySelectorAll('.math')].filter((m) => !m.querySelector('mjx-container')).map((m) => m.textContent.slice(0, 100)),
    tex_errors: [...document.querySelectorAll('mjx-merror')].map((m) =>
      (m.getAttribute('data-mjx-error') || m.textContent) + ' in ' + named(m.closest('mjx-container'))),
    raw: raw,
    explorers: [...document.querySelectorAll('.attn-explorer')].map((e) => e.dataset.ready || 'not built'),
  };
}"""

# MathJax's web fonts, once every formula is laid out (site.js's measuring class, as the tests' hook
# attnMarkScrollers(true) uses it): they load, and none fails.
MATH_FONTS = r"""async () => {
  if (!document.querySelector('mjx-container')) return true;
  document.documentElement.classList.add('attn-measure-all');
  document.body.getBoundingClientRect();
  await document.fonts.ready;
  const fonts = [...document.fonts].filter((f) => f.family.replace(/"/g, '').startsWith('MJX'));
  document.documentElement.classList.remove('attn-measure-all');
  return fonts.some((f) => f.status === 'loaded') && !fonts.some((f) => f.status === 'error');
}"""

# Every icon a page draws with Font Awesome: [family, weight, code point] of each ::before/::after
# whose font is Font Awesome (the theme's buttons, admonition and exercise icons).
ICONS = r"""() => {
  const seen = new Set();
  for (const e of document.querySelectorAll('*')) for (const pseudo of ['::before', '::after']) {
    const st = getComputedStyle(e, pseudo);
    const m = /^"(.+)"$/u.exec(st.content);
    if (!/Font Awesome/.test(st.fontFamily) || !m) continue;
    for (const ch of m[1]) seen.add(JSON.stringify([st.fontFamily.replace(/"/g, ''), st.fontWeight, ch.codePointAt(0)]));
  }
  return [...seen].map((x) => JSON.parse(x));
}"""

# What sticks out sideways: the page's width and the widest elements past the right edge.
WIDTH = r"""() => {
  if (window.attnMarkScrollers) window.attnMarkScrollers(true);
  const vw = document.documentElement.clientWidth;
  const wide = [];
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width && r.right > vw + 1 && !e.closest('dialog:not([open])')) {
      let clipped = false;
      for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX;
        if (o !== 'visible' && p.getBoundingClientRect().right <= vw + 1) { clipped = true; break; }
      }
      if (!clipped) wide.push(`${e.tagName.toLowerCase()}.${[...e.classList].join('.')} ${Math.round(r.right)}px`);
    }
  }
  const page = document.documentElement.scrollWidth;
  return {viewport: vw, page: page, wide: page > vw ? wide.slice(0, 8) : []};
}"""

AXE_RUN = r"""async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
    targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' :: ' + (n.failureSummary || '').split(String.fromCharCode(10)).slice(0, 2).join(' '))}));
}"""

SET_MODE = r"""async (mode) => {
  document.documentElement.dataset.theme = mode;
  document.documentElement.dataset.mode = mode;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""

# Print media: every code and output block whose text is wider than its box (a cut line).
PRINT_CUT = r"""() => [...document.querySelectorAll('pre, .cell_output, div.highlight')].filter((e) => {
  if (!e.offsetParent && getComputedStyle(e).position !== 'fixed') return false;  // not printed
  return e.scrollWidth > e.clientWidth + 1;
}).map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}: ${e.scrollWidth} > ${e.clientWidth}: ${e.textContent.trim().slice(0, 60)}`)"""


def tabs_to_first_slider(page, limit=800) -> int | None:
    """Key presses from the top of the page until a range input has the focus (None: never): Tab,
    and Enter on the page's "skip to the first interactive explorer" link when it has the focus."""
    page.evaluate("""() => { window.scrollTo(0, 0); const b = document.body; b.setAttribute('tabindex', '-1');
      b.focus(); b.removeAttribute('tabindex'); }""")
    for n in range(1, limit + 1):
        focused = page.evaluate("() => document.activeElement ? document.activeElement.className : ''")
        page.keyboard.press("Enter" if "attn-skip-to-explorer" in str(focused) else "Tab")
        if page.evaluate("() => !!document.activeElement && document.activeElement.matches('input[type=range]')"):
            return n
    return None


# site.js's work after load is done, and so is explorers.js's (each explorer a task of its own) where
# a page has explorers.
EXPLORERS_BUILT = "() => !document.querySelector('.attn-explorer') || document.documentElement.dataset.attnExplorers === 'built'"
SITE_READY = f"() => document.documentElement.dataset.attnReady === '1' && ({EXPLORERS_BUILT})()"


def load(page, url, wait_math=True):
    """Open a page of the site and wait for site.js's work after load (tab stops, accessible names,
    figure links: in short tasks after the first frame, then <html data-attn-ready>) and for its
    explorers (each built in a task of its own, then <html data-attn-explorers="built">)."""
    page.goto(url, wait_until="load")
    page.wait_for_function(SITE_READY, timeout=30_000)
    return page.evaluate(MATH_STATE) if wait_math else None


FINITE_ANIMATIONS_DONE = """() => Promise.race([
  Promise.all(document.getAnimations()
    .filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity)
    .map((a) => a.finished.catch(() => null))),
  new Promise((resolve) => setTimeout(resolve, 5000)),
])"""


def axe_violations(page, modes=("light", "dark"), viewports=(DESKTOP, PHONE)) -> dict:
    """{"1280x900 light": [violations], ...} on an open page (axe injected once)."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    out = {}
    for vp in viewports:
        page.set_viewport_size(vp)
        page.wait_for_timeout(600)  # the theme marks scrollable code and tables 300 ms after a resize
        page.evaluate("() => window.attnMarkScrollers && window.attnMarkScrollers(true)")
        for mode in modes:
            page.evaluate(SET_MODE, mode)
            # Let the theme's colour transitions end first: mid-transition colours are no one's page.
            # Only animations that end (an infinite one, e.g. a loading indicator, would make this wait
            # forever: it hung a whole suite run once), and never longer than 5 s.
            page.evaluate(FINITE_ANIMATIONS_DONE)
            out[f"{vp['width']}x{vp['height']} {mode}"] = page.evaluate(AXE_RUN, AXE_TAGS)
    return out


# ---------------------------------------------------------------- measuring a site without pytest

def measure(html_dir: Path) -> dict:
    """The numbers of a built site (see the module docstring)."""
    from playwright.sync_api import sync_playwright
    out = {}
    with LocalServer(html_dir) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for path in site_pages_of_the_toc():
            context = browser.new_context(viewport=DESKTOP)
            page = context.new_page()
            watch = Watch(page)
            state = load(page, f"{server.url}/{path}")
            requests, size = watch.weight(html_dir)
            entry = {"requests": requests, "bytes": size, "math_tab_stops": state["tab_stops"],
                     "mjx": state["rendered"], "assistive_mml": state["assistive_mml"], "remote": len(watch.remote)}
            if "02_" in path:
                entry["tabs_to_first_slider"] = tabs_to_first_slider(page)
            entry["axe"] = axe_violations(page)
            page.set_viewport_size(PHONE)
            page.wait_for_timeout(300)
            entry["width_390"] = page.evaluate(WIDTH)
            out[path] = entry
            print(path, json.dumps({k: v for k, v in entry.items() if k != "axe"}),
                  {k: {x["id"]: x["nodes"] for x in v} for k, v in entry["axe"].items()}, flush=True)
            context.close()
        browser.close()
    return out




if __name__ == "__main__":
    result = measure(Path(sys.argv[1]))
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(result, indent=1), encoding="utf-8")
