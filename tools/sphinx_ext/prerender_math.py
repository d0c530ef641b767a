"""Every formula typeset at build time by MathJax itself, so that no typesetting runs on page load.

A Sphinx extension that `make book` and tools/site/sitebuild.py run (`_config.yml`, local_extensions).
It registers a math renderer of its own, so that Sphinx writes each formula as its MathJax renderer
does (`<span class="math">\\(...\\)</span>`, `<div class="math">\\[...\\]</div>`) but adds no MathJax
script to any page. When the build has finished, tools/sphinx_ext/mathjax/prerender.js (Node) runs
MathJax 3.2.2 (npm `mathjax`, pinned in its package-lock.json, installed with `npm ci` on the first
build) over the built pages with the same components the browser used to load: TeX input with the
macros of `mathjax3_config.tex` in `_config.yml`, CommonHTML output, and the assistive MathML that
screen readers read. Each formula's TeX is replaced by MathJax's output in place; one stylesheet,
`_static/mathjax/chtml.css` (MathJax's CSS and the glyphs the site uses), and MathJax's web fonts
are written once for the site. The formulas stay selectable text in MathJax's own fonts.

Why MathJax and not KaTeX: the same engine, version and fonts as before give the same equations
(KaTeX's layout and fonts differ, and its TeX coverage is smaller); see docs/decisions.md
for the measurements (page weight, build time).

In the browser MathJax scales each formula so that its x-height matches the surrounding text's;
`mjx-container { font-size: calc(1ex / 0.442) }` in chtml.css does the same in CSS (0.442 em is the
x-height of MathJax's TeX fonts; an `ex` in font-size is the parent font's).

A TeX error is typeset as MathJax shows it in the browser (in red), logged with its page and
formula; tests/test_site.py fails on it.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from sphinx.ext import mathjax
from sphinx.errors import ExtensionError
from sphinx.util import logging

NODE_DIR = Path(__file__).resolve().parent / "mathjax"
MATHJAX = NODE_DIR / "node_modules" / "mathjax"
FONTS = MATHJAX / "es5" / "output" / "chtml" / "fonts" / "woff-v2"
CSS = Path("_static") / "mathjax" / "chtml.css"
X_HEIGHT = 0.442  # of MathJax's TeX fonts, in em (MathJax's font.params.x_height)
# The scale rule that replaces MathJax's in-browser measurement (see above); font-size-adjust is
# not used because it would also change the surrounding text's fallback.
SCALE_CSS = f"\nmjx-container.MathJax {{ font-size: calc(1ex / {X_HEIGHT}); }}\n"
# The height of a line that holds a formula comes from the first font of MathJax's lists that is
# there. MathJax's fonts have ascent = descent, which puts each glyph's baseline where MathJax's CSS
# (its paddings) expects it. Until they have arrived, the browser's default font stood in, with a
# larger ascent than descent: the glyphs sat lower, each such line was a pixel or two taller, and it
# shrank when the fonts came (6 px on chapter 5's first screen, a layout shift of 0.06). A local font
# with ascent = descent, last in every list, stands in now: the lines have their final height from
# the first frame. (Preloading MJXZERO did that too, but moved the largest paint past 2.5 s; as a
# data: URL it still arrived after the first layout.)
FALLBACK = "MJXLOCAL"
FALLBACK_FACE = ("@font-face {font-family: " + FALLBACK + "; src: " + ", ".join(
    f'local("{name}")' for name in ("DejaVu Serif", "Liberation Serif", "Noto Serif", "Times New Roman", "Georgia",
                                    "Roboto", "Arial", "Helvetica"))
                 + "; ascent-override: 50%; descent-override: 50%; line-gap-override: 0%;}\n")
MJX_FONTS = re.compile(r"(font-family: MJXZERO(?:, [\w-]+)+)")
logger = logging.getLogger(__name__)


def ensure_mathjax() -> None:
    """`npm ci` in tools/sphinx_ext/mathjax when node_modules is missing or older than the lock file."""
    stamp = NODE_DIR / "node_modules" / ".package-lock.json"
    lock = NODE_DIR / "package-lock.json"
    if (MATHJAX / "package.json").is_file() and stamp.is_file() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise ExtensionError("the site build typesets its formulas with MathJax in Node.js: install Node.js 18 or "
                             "later with npm (Debian: apt-get install -y nodejs npm)")
    logger.info("installing MathJax (npm ci in tools/sphinx_ext/mathjax) ...")
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True)
    if done.returncode != 0:
        raise ExtensionError("npm ci in tools/sphinx_ext/mathjax failed:\n" + done.stderr[-2000:])


# What to do about MathJax's commonest TeX errors, for the author who meets one (its message first).
TEX_ADVICE = (
    ("not allowed in split", "a split block is one equation with one number: put the \\tag after \\end{split}, "
                             "inside the same $$ ... $$"),
    ("Multiple \\tag", "one \\tag per equation: an aligned block with several numbers needs one equation each"),
    ("Misplaced &", "an & outside an aligned, split or array block: wrap the lines in \\begin{aligned} ... \\end{aligned}"),
    ("Undefined control sequence", "a macro MathJax does not know: spell it out, or define it under "
                                   "sphinx.config.mathjax3_config.tex.macros in _config.yml"),
    ("Missing close brace", "a { without its }"),
    ("Extra close brace", "a } without its {"),
)


def tex_advice(error: str) -> str:
    """`error` (MathJax's message, then where) followed by what to do about it."""
    for words, advice in TEX_ADVICE:
        if words in error:
            return f"{error}: {advice}"
    return f"{error}: correct the TeX (MathJax's message says what it could not read)"


def prerender(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    started = time.perf_counter()
    outdir = Path(app.outdir)
    pages = sorted(str(p) for p in outdir.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)
    ensure_mathjax()
    tex = dict((app.config.mathjax3_config or {}).get("tex") or {})
    em = 16.0
    config = {"pages": pages, "css": str(outdir / CSS), "fontURL": "woff-v2", "tex": tex,
              "em": em, "ex": em * X_HEIGHT, "cache": str(Path(app.doctreedir) / "prerender_math.json")}  # scale 1 here; the CSS rule above scales in the browser
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config, f)
    try:
        node = shutil.which("node") or shutil.which("nodejs")
        if node is None:
            raise ExtensionError("the site build typesets its formulas with MathJax in Node.js, which is missing")
        done = subprocess.run([node, str(NODE_DIR / "prerender.js"), f.name], capture_output=True, text=True)
    finally:
        Path(f.name).unlink()
    if done.returncode != 0:
        raise ExtensionError("MathJax could not typeset the pages:\n" + done.stderr[-3000:])
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for error in result["errors"]:
        # Shown on the page as MathJax shows it (red); tests/test_site.py fails on it, naming the page,
        # without stopping the whole strict build (which every other site test needs).
        logger.info("TeX error (shown on the page in red): %s", tex_advice(error))
    css = (outdir / CSS).read_text(encoding="utf-8")
    # Text in a formula shows in a fallback font until MathJax's font has arrived, instead of staying
    # invisible (the glyphs' boxes are sized by the stylesheet, and the lines' height by FALLBACK's
    # metrics, the same as MathJax's fonts': nothing moves at the swap).
    css = re.sub(r"@font-face (?:/\* \d+ \*/ )?\{", "@font-face {font-display: swap;", css)
    css = with_fallback_font(css)
    (outdir / CSS).write_text(re.sub(r"\n\s*", "", css) + SCALE_CSS, encoding="utf-8")
    shutil.copytree(FONTS, outdir / CSS.parent / "woff-v2", dirs_exist_ok=True)
    logger.info("MathJax typeset %d formulas at build time in %.1f s", result["formulas"], time.perf_counter() - started)


def with_fallback_font(css: str) -> str:
    """MathJax's CSS with FALLBACK (above) last in each of its font lists, and its @font-face."""
    css, found = MJX_FONTS.subn(r"\1, " + FALLBACK, css)
    if not found:
        raise ExtensionError("MathJax's stylesheet has no font list that starts with MJXZERO: check "
                             "tools/sphinx_ext/prerender_math.py against this MathJax version")
    return FALLBACK_FACE + css


def add_stylesheet(app, pagename, templatename, context, doctree) -> None:
    """The stylesheet, on the pages that have formulas."""
    if 'math notranslate nohighlight"' in context.get("body", ""):  # inline, display and amsmath blocks
        app.add_css_file("mathjax/chtml.css", priority=600)


def setup(app):
    # Sphinx picks a registered renderer other than its default (mathjax) on its own; this one
    # writes the same markup as sphinx.ext.mathjax, and installs no script.
    app.add_html_math_renderer("prerendered", (mathjax.html_visit_math, None),
                               (mathjax.html_visit_displaymath, None))
    app.connect("html-page-context", add_stylesheet)
    app.connect("build-finished", prerender)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
