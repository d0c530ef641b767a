"""Helpers for the explorer tests: the config contract, NumPy references, a local server.

Nothing here imports or mirrors the JavaScript: the references below are written from the
formulas of CONTRIBUTING.md ("Interactives"), so that a test compares explorers.js with an
independent computation.
"""
from __future__ import annotations

import functools
import http.server
import json
import math
import threading
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "_build" / "test-artifacts"

# The chapter that carries each kind (CONTRIBUTING.md, "Interactives").
KIND_CHAPTER = {
    "convex-hull": "02_soft_attention",
    "decoder-state": "03_bahdanau_by_hand",
    "softmax-sharpening": "04_scoring_functions",
    "dk-scaling": "04_scoring_functions",
    "head-query": "05_self_and_multihead_attention",
}

# Kinds whose chapter has not delivered its explorer yet: on the site their absence is skipped,
# not failed (tests/test_explorer_configs.py, tests/test_browser.py). Keep it up to date; the lead
# empties it when every chapter is in. A kind listed here whose explorer has appeared on the site
# fails test_each_kind_is_on_its_chapter_page, so that the list cannot go stale.
PENDING: set[str] = set()

# The fields of each kind's config, exactly as CONTRIBUTING.md lists them.
FIELDS = {
    "convex-hull": ["points", "labels", "scores", "score_min", "score_max", "score_step",
                    "log10_tau", "log10_tau_min", "log10_tau_max", "log10_tau_step"],
    "decoder-state": ["H", "labels", "W_a", "U_a", "v_a", "s", "s_min", "s_max", "s_step"],
    "softmax-sharpening": ["labels", "scores", "score_min", "score_max", "score_step", "log10_tau",
                           "log10_tau_min", "log10_tau_max", "log10_tau_step", "values"],
    "dk-scaling": ["labels", "q", "K", "dk_values", "dk_index"],
    "head-query": ["tokens", "X", "W_q", "W_k", "query", "head"],
}


# ---------------------------------------------------------------- the config contract

def _finite_array(config, name, ndim, problems):
    try:
        a = np.asarray(config[name], dtype=float)
    except (TypeError, ValueError):
        problems.append(f'"{name}" is not a numeric array')
        return None
    if a.ndim != ndim:
        problems.append(f'"{name}" should have {ndim} dimension(s), has shape {a.shape}')
        return None
    if not np.isfinite(a).all():
        problems.append(f'"{name}" contains a non-finite number')
    return a


def _number(config, name, problems):
    v = config[name]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        problems.append(f'"{name}" should be a finite number, got {v!r}')
        return None
    return float(v)


def _strings(config, name, problems):
    v = config[name]
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        problems.append(f'"{name}" should be a list of strings')
        return None
    return v


def _range(config, prefix, start, problems):
    lo, hi, step = (_number(config, f"{prefix}_{k}", problems) for k in ("min", "max", "step"))
    if None in (lo, hi, step):
        return
    if not (lo < hi and step > 0):
        problems.append(f'"{prefix}_min/_max/_step" should satisfy min < max and step > 0')
    for v in np.atleast_1d(start if start is not None else []):
        if not lo <= v <= hi:
            problems.append(f'the start value {v} is outside [{prefix}_min, {prefix}_max] = [{lo}, {hi}]')


def _index(config, name, length, problems):
    v = config[name]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < length:
        problems.append(f'"{name}" should be an integer index from 0 to {length - 1}, got {v!r}')


def config_problems(kind: str, config) -> list[str]:
    """Everything in which a config deviates from CONTRIBUTING.md (an empty list when it follows it)."""
    if kind not in FIELDS:
        return [f'unknown kind "{kind}" (known: {", ".join(FIELDS)})']
    if not isinstance(config, dict):
        return ["the config is not a JSON object"]
    missing = [f for f in FIELDS[kind] if f not in config]
    extra = [f for f in config if f not in FIELDS[kind]]
    problems = []
    if missing:
        problems.append("missing field(s): " + ", ".join(missing))
    if extra:
        problems.append("field(s) CONTRIBUTING.md does not list: " + ", ".join(extra))
    if missing:
        return problems
    p = problems
    if kind in ("convex-hull", "softmax-sharpening"):
        labels = _strings(config, "labels", p)
        scores = _finite_array(config, "scores", 1, p)
        vectors = _finite_array(config, "points" if kind == "convex-hull" else "values", 2, p)
        name = "points" if kind == "convex-hull" else "values"
        if labels is not None and scores is not None and len(scores) != len(labels):
            p.append(f'"scores" has {len(scores)} entries, "labels" {len(labels)}')
        if vectors is not None and labels is not None and vectors.shape != (len(labels), 2):
            p.append(f'"{name}" should have shape ({len(labels)}, 2), has {vectors.shape}')
        if kind == "softmax-sharpening" and labels is not None and not 4 <= len(labels) <= 6:
            p.append(f"softmax-sharpening should have 4 to 6 positions, has {len(labels)}")
        _range(config, "score", scores, p)
        _range(config, "log10_tau", _number(config, "log10_tau", p), p)
    elif kind == "decoder-state":
        labels = _strings(config, "labels", p)
        H = _finite_array(config, "H", 2, p)
        for name, shape in (("W_a", (2, 2)), ("U_a", (2, 2)), ("v_a", (2,)), ("s", (2,))):
            a = _finite_array(config, name, len(shape), p)
            if a is not None and a.shape != shape:
                p.append(f'"{name}" should have shape {shape}, has {a.shape}')
        if H is not None and labels is not None and H.shape != (len(labels), 2):
            p.append(f'"H" should have shape ({len(labels)}, 2), has {H.shape}')
        s = _finite_array(config, "s", 1, p)
        _range(config, "s", s, p)
    elif kind == "dk-scaling":
        labels = _strings(config, "labels", p)
        q = _finite_array(config, "q", 1, p)
        K = _finite_array(config, "K", 2, p)
        if q is not None and K is not None and labels is not None and K.shape != (len(labels), len(q)):
            p.append(f'"K" should have shape ({len(labels)}, {len(q)}) (T x d_max), has {K.shape}')
        dks = config["dk_values"]
        if (not isinstance(dks, list) or not dks or q is None
                or not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= len(q) for d in dks)):
            p.append(f'"dk_values" should be a non-empty list of integers from 1 to d_max, got {dks!r}')
        else:
            _index(config, "dk_index", len(dks), p)
    elif kind == "head-query":
        tokens = _strings(config, "tokens", p)
        X = _finite_array(config, "X", 2, p)
        Wq = _finite_array(config, "W_q", 3, p)
        Wk = _finite_array(config, "W_k", 3, p)
        if tokens is not None and X is not None and X.shape[0] != len(tokens):
            p.append(f'"X" has {X.shape[0]} rows, "tokens" {len(tokens)}')
        if Wq is not None and Wk is not None and X is not None:
            if Wq.shape != Wk.shape or Wq.shape[1] != X.shape[1]:
                p.append(f'"W_q" {Wq.shape} and "W_k" {Wk.shape} should both be (heads, d_model={X.shape[1]}, d_k)')
            else:
                _index(config, "head", Wq.shape[0], p)
        if tokens is not None:
            _index(config, "query", len(tokens), p)
    return problems


# ---------------------------------------------------------------- NumPy references

def softmax(x):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max())
    return e / e.sum()


def entropy(a):
    a = np.asarray(a, dtype=float)
    nz = a[a > 0]
    return float(-(nz * np.log(nz)).sum())


def slider_params(kind: str, config) -> list[str]:
    """The data-param of each slider an explorer of this kind has."""
    if kind in ("convex-hull", "softmax-sharpening"):
        return [f"score-{i}" for i in range(len(config["scores"]))] + ["log10_tau"]
    return {"decoder-state": ["s-0", "s-1"], "dk-scaling": ["dk_index"], "head-query": ["head", "query"]}[kind]


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
    raise ValueError(f"unknown kind {kind!r}")


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

def fixture_configs() -> list[tuple[str, dict]]:
    """One config of each kind, shaped as CONTRIBUTING.md says, numbers rounded as the chapters do."""
    rng = np.random.default_rng(8)
    r = lambda a, d=3: np.round(np.asarray(a, dtype=float), d).tolist()  # noqa: E731
    labels4 = ["the", "cat", "sat", "down"]
    out = [
        ("convex-hull", {
            "points": r(rng.normal(size=(4, 2))), "labels": labels4, "scores": [1.0, 2.0, 0.5, -1.0],
            "score_min": -5.0, "score_max": 5.0, "score_step": 0.1,
            "log10_tau": 0.0, "log10_tau_min": -2.0, "log10_tau_max": 1.0, "log10_tau_step": 0.05}),
        ("decoder-state", {
            "H": r(rng.normal(size=(5, 2))), "labels": ["le", "chat", "est", "assis", "<eos>"],
            "W_a": r(rng.normal(size=(2, 2))), "U_a": r(rng.normal(size=(2, 2))), "v_a": r(rng.normal(size=2)),
            "s": [0.5, -0.5], "s_min": -3.0, "s_max": 3.0, "s_step": 0.1}),
        ("softmax-sharpening", {
            "labels": ["a", "b", "c", "d", "e"], "scores": [3.0, 8.0, 8.0, 7.0, 0.0],
            "score_min": -1000.0, "score_max": 1000.0, "score_step": 0.5,
            "log10_tau": 0.0, "log10_tau_min": -2.0, "log10_tau_max": 2.0, "log10_tau_step": 0.1,
            "values": r(rng.normal(size=(5, 2)))}),
        ("dk-scaling", {
            "labels": labels4, "q": r(rng.normal(size=64)), "K": r(rng.normal(size=(4, 64))),
            "dk_values": [1, 2, 4, 8, 16, 32, 64], "dk_index": 3}),
        ("head-query", {
            "tokens": ["the", "cat", "sat", "on", "the", "mat"], "X": r(rng.normal(size=(6, 8))),
            "W_q": r(rng.normal(size=(2, 8, 4)) / math.sqrt(8)), "W_k": r(rng.normal(size=(2, 8, 4)) / math.sqrt(8)),
            "query": 2, "head": 1}),
    ]
    for kind, config in out:
        assert not config_problems(kind, config), (kind, config_problems(kind, config))
    return out


def explorer_div(kind: str, config: dict) -> str:
    """The placeholder div exactly as CONTRIBUTING.md's SiteExplorer writes it."""
    import html
    return (f'<div class="attn-explorer" data-kind="{kind}" '
            f'data-config="{html.escape(json.dumps(config), quote=True)}">'
            f'<p class="attn-explorer-fallback">This explorer needs JavaScript; '
            f'the figure next to it shows the same computation.</p></div>')


def write_fixture_site(folder: Path) -> Path:
    """A page with one explorer of each kind, loading the site's explorers.js/.css; returns the page."""
    import shutil
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("explorers.js", "explorers.css"):
        shutil.copy(ROOT / "book" / "_static" / name, folder / name)
    body = "\n".join(f"<section><h2>{kind}</h2>\n{explorer_div(kind, config)}</section>" for kind, config in fixture_configs())
    page = folder / "fixture.html"
    page.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>explorers fixture</title>'
        '<link rel="stylesheet" href="explorers.css"><script src="explorers.js"></script></head>'
        f'<body style="max-width:60rem;margin:1rem auto;font-family:sans-serif">\n{body}\n</body></html>',
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
