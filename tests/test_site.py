"""The website: a strict build, nothing loaded from another host, figures with captions and alt text."""
from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import yaml

from figure_text import text_problems
from tools.registry import chapters
from tools.sphinx_ext.prerender_math import tex_advice
from tools.site.sitebuild import ROOT

CHAPTERS = [c.stem for c in chapters()]


class Resources(HTMLParser):
    """Collects what a page loads (scripts, stylesheets, images, fonts, frames) and its figures."""

    LOADING = {"script": "src", "img": "src", "iframe": "src", "embed": "src", "source": "src",
               "audio": "src", "video": "src", "track": "src", "object": "data"}

    def __init__(self):
        super().__init__()
        self.loads: list[tuple[str, str]] = []
        self.images: list[dict] = []
        self.figure_depth = 0
        self.figures: list[dict] = []
        self.in_caption = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in self.LOADING and a.get(self.LOADING[tag]):
            self.loads.append((tag, a[self.LOADING[tag]]))
        if tag == "link" and a.get("href"):
            rel = (a.get("rel") or "").lower()
            if any(r in rel for r in ("stylesheet", "icon", "preload", "prefetch", "modulepreload", "manifest")):
                self.loads.append(("link", a["href"]))
        if tag == "img":
            self.images.append({"src": a.get("src", ""), "alt": a.get("alt"), "in_figure": self.figure_depth > 0})
        if tag == "figure":
            self.figure_depth += 1
            self.figures.append({"caption": None})       # None: no figcaption; else its text
        if tag == "figcaption" and self.figures:
            self.figures[-1]["caption"] = ""
            self.in_caption = True
        for key, value in a.items():
            if key == "style" and value and re.search(r"url\(\s*['\"]?(https?:)?//", value):
                self.loads.append(("style", value))

    def handle_endtag(self, tag):
        if tag == "figure":
            self.figure_depth -= 1
        if tag == "figcaption":
            self.in_caption = False

    def handle_data(self, data):
        if self.in_caption and self.figures:
            self.figures[-1]["caption"] += data


def is_remote(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") or url.startswith("//")


def pages(html_dir: Path) -> list[Path]:
    return sorted(p for p in html_dir.rglob("*.html") if "_static" not in p.parts)


def parse(page: Path) -> Resources:
    parser = Resources()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_site_builds_strictly(site_build):
    result, html = site_build
    assert result.returncode == 0, "the strict build (-W -n --keep-going) failed:\n" + result.stderr[-4000:]
    assert "WARNING" not in result.stderr, result.stderr[-4000:]
    for chapter in CHAPTERS:
        assert (html / "notebooks" / f"{chapter}.html").is_file(), f"{chapter} has no page"


def test_every_page_of_the_table_of_contents_is_built(built_site):
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    index = (built_site / "book" / "index.html").read_text(encoding="utf-8")
    for file in files:
        assert (built_site / f"{file}.html").is_file(), f"{file} is in _toc.yml but was not built"
        if file != toc["root"]:
            assert f"{Path(file).name}.html" in index, f"{file} is missing from the navigation"


def test_nothing_is_loaded_from_another_host(built_site):
    offenders = []
    for page in pages(built_site):
        for tag, url in parse(page).loads:
            if is_remote(url) or tag == "style":
                offenders.append(f"{page.relative_to(built_site)}: <{tag}> {url}")
    for css in built_site.rglob("*.css"):
        for match in re.finditer(r"(?:@import\s+|url\(\s*)['\"]?((?:https?:)?//[^'\")\s]+)", css.read_text(errors="ignore")):
            offenders.append(f"{css.relative_to(built_site)}: {match.group(1)}")
    assert not offenders, "resources from another host:\n" + "\n".join(offenders[:40])


def test_pages_leave_out_fontawesome_js_and_widget_state(built_site):
    """book/_templates/layout.html: the icons come from the theme's CSS and fonts; no page carries
    ipywidgets state (the site shows explorers.js, never a widget)."""
    for page in pages(built_site):
        text = page.read_text(encoding="utf-8")
        assert "fontawesome.js" not in text, f"{page.relative_to(built_site)} loads fontawesome.js"
        assert "application/vnd.jupyter.widget-state+json" not in text, f"{page.relative_to(built_site)} embeds widget state"
    css = (built_site / "_static" / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    assert "fa-bars" in css and "fa-solid-900.woff2" in css, "the theme's CSS no longer carries the Font Awesome icons"


def book_pages(html_dir: Path) -> list[Path]:
    """The pages of the book: those of _toc.yml, and Sphinx's index and search pages (not a stale
    page that an earlier build left in the output folder, nor a redirect from a renamed chapter's
    old address)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [html_dir / f"{f}.html" for f in files] + [html_dir / "genindex.html", html_dir / "search.html"]


def head_of(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    return text[: text.index("</head>")]


def stylesheets(page: Path, html_dir: Path) -> list[str]:
    """The stylesheets a page loads, relative to _static/, each bundle (page_speed.py) read as the
    files it holds (_static/bundles.json)."""
    manifest = html_dir / "_static" / "bundles.json"
    bundles = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    out = []
    for href in re.findall(r'<link[^>]*rel="stylesheet"[^>]*href="([^"?]+)', head_of(page)) + \
            re.findall(r'<link[^>]*href="([^"?]+)[^"]*"[^>]*rel="stylesheet"', head_of(page)):
        name = href.split("_static/", 1)[-1]
        if name in bundles:
            assert (html_dir / "_static" / name).is_file(), f"{page.name}: {name} is missing"
        out.extend(bundles.get(name, [name]))
    return out


def formula_named(inner: str) -> str:
    """A typeset formula as its author knows it: its equation number, else its first characters (the
    MathML that screen readers read, without its tags)."""
    tag = re.search(r'<mjx-mtd id="mjx-eqn:([^"]+)"', inner)
    if tag:
        return f"equation ({html.unescape(tag[1])})"
    tex = re.search(r'<mjx-container[^>]*data-tex="([^"]*)"', inner)    # one MathJax could not typeset
    if tex:
        return f"the formula {html.unescape(tex[1])}"
    mml = re.search(r"<mjx-assistive-mml[^>]*>(.*?)</mjx-assistive-mml>", inner, re.S)
    text = re.sub(r"<[^>]+>", " ", mml[1] if mml else inner)
    return 'the formula "' + " ".join(html.unescape(text).split())[:40] + '"'


def tex_error(inner: str) -> str:
    """MathJax's message for a formula it could not typeset, and which formula."""
    message = re.search(r'<mjx-merror[^>]*data-mjx-error="([^"]*)"', inner)
    return f"{html.unescape(message[1]) if message else 'a TeX error'} in {formula_named(inner)}"


def test_a_tex_error_or_a_wide_formula_is_named_with_what_to_do():
    """The messages of the two tests above and of the browser tests, on formulas typeset by the site's
    own MathJax (tools/sphinx_ext/mathjax/prerender.js): a \\tag inside split names its equation and
    says where the \\tag goes."""
    import shutil
    import subprocess
    import tempfile

    from tools.sphinx_ext.prerender_math import NODE_DIR, ensure_mathjax

    ensure_mathjax()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        page.write_text('<div class="math notranslate nohighlight">\\[\\begin{split} a &= b \\tag{3.9} \\end{split}\\]</div>\n'
                        '<div class="math notranslate nohighlight">\\[ q_t = \\frac{1}{2} \\]</div>\n', encoding="utf-8")
        config = Path(tmp) / "config.json"
        config.write_text(json.dumps({"pages": [str(page)], "css": str(Path(tmp) / "c.css"), "fontURL": "woff-v2",
                                      "tex": {"tags": "ams"}, "em": 16, "ex": 7, "cache": str(Path(tmp) / "cache.json")}))
        done = subprocess.run([shutil.which("node") or "nodejs", str(NODE_DIR / "prerender.js"), str(config)],
                              capture_output=True, text=True, check=True)
        (bad, good) = re.findall(r'<div class="math[^"]*"[^>]*>(.*?)</div>\n', page.read_text(encoding="utf-8"), re.S)
    (logged,) = json.loads(done.stdout.splitlines()[-1])["errors"]
    assert tex_advice(logged).endswith("put the \\tag after \\end{split}, inside the same $$ ... $$"), tex_advice(logged)
    assert tex_error(bad) == "\\tag not allowed in split environment in the formula \\begin{split} a &= b \\tag{3.9} \\end{split}", tex_error(bad)
    assert formula_named(good) == 'the formula "q t = 1 2"', formula_named(good)
    assert tex_advice("Undefined control sequence \\foo in equation (2.1)").startswith("Undefined control sequence")


def test_formulas_are_typeset_when_the_site_is_built(built_site):
    """tools/sphinx_ext/prerender_math.py: MathJax ran at build time. No page loads MathJax or
    configures it; every formula holds MathJax's CommonHTML output and the MathML that screen readers
    read, and no TeX is left; the book's macros of _config.yml were applied; the stylesheet and the
    fonts it names are served by the site."""
    formula = re.compile(r'<(span|div) class="math notranslate nohighlight"[^>]*>(.*?)</\1>', re.S)
    total = 0
    for page in book_pages(built_site):
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(built_site)
        assert "window.MathJax" not in text and "mathjax/startup.js" not in text and "tex-chtml" not in text, \
            f"{where} still loads or configures MathJax in the browser"
        found = formula.findall(text)
        for _, inner in found:
            assert inner.lstrip().startswith('<mjx-container class="MathJax" jax="CHTML"'), f"{where}: a formula was not typeset: {inner[:120]}"
            assert "<mjx-assistive-mml" in inner and "<math " in inner, f"{where}: a formula has no MathML for screen readers"
            assert "mjx-merror" not in inner, f"{where}: {tex_advice(tex_error(inner))}"
            assert "tabindex" not in inner, f"{where}: {formula_named(inner)} is a tab stop"
        if found:
            assert "mathjax/chtml.css" in stylesheets(page, built_site), f"{where} has formulas but not MathJax's stylesheet"
        total += len(found)
    assert total > 500, f"only {total} formulas on the whole site"
    # \valpha (a macro of _config.yml) on the notation page: a bold italic alpha in the MathML.
    notation = (built_site / "book" / "notation.html").read_text(encoding="utf-8")
    assert '<mi mathvariant="bold-italic">&#x3B1;</mi>' in notation or '<mi mathvariant="bold-italic">\u03b1</mi>' in notation, \
        "the macro \\valpha of _config.yml was not applied"
    css = (built_site / "_static" / "mathjax" / "chtml.css").read_text(encoding="utf-8")
    fonts = re.findall(r'url\("(woff-v2/[^"]+)"\)', css)
    assert fonts and all((built_site / "_static" / "mathjax" / f).is_file() for f in fonts), fonts
    assert "font-display: swap" in css and "calc(1ex / 0.442)" in css
    # every font list of MathJax's ends in the local fallback with MathJax's line metrics (prerender_math.py)
    lists = re.findall(r"font-family: (MJXZERO,[^;}!]*)", css)
    assert len(lists) > 10 and all(f.rstrip().endswith(", MJXLOCAL") for f in lists), lists
    assert re.search(r"@font-face \{font-family: MJXLOCAL; src: local\([^;]+; ascent-override: 50%; descent-override: 50%;", css)


def test_a_second_build_leaves_typeset_formulas_alone(tmp_path):
    """An incremental build (`make book` again) leaves unchanged pages as they were, formulas typeset,
    and tools/sphinx_ext/mathjax/prerender.js runs over every page again: a typeset formula must not
    be taken for TeX a second time (it was, and each build nested one more copy: 20 MB pages)."""
    import shutil
    import subprocess

    from tools.sphinx_ext.prerender_math import NODE_DIR, ensure_mathjax

    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "Node.js is missing: the site build needs it"
    ensure_mathjax()
    page = tmp_path / "page.html"
    page.write_text('<p>Inline <span class="math notranslate nohighlight">\\(\\alpha_{ij}\\)</span> and</p>\n'
                    '<div class="math notranslate nohighlight">\\[\\sum_j \\alpha_{ij} = 1\\]</div>\n', encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"pages": [str(page)], "css": str(tmp_path / "chtml.css"), "fontURL": "woff-v2", "tex": {},
                                  "em": 16, "ex": 7, "cache": str(tmp_path / "cache.json")}), encoding="utf-8")
    runs = []
    for _ in range(2):
        done = subprocess.run([node, str(NODE_DIR / "prerender.js"), str(config)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append((json.loads(done.stdout.strip().splitlines()[-1]), page.read_text(encoding="utf-8")))
    (first, once), (second, twice) = runs
    assert first["formulas"] == 2 and once.count("<mjx-container") == 2 and not first["errors"], (first, once[:300])
    assert second["formulas"] == 0 and twice == once, "the second run typeset the typeset formulas again"


def test_an_edited_static_file_reaches_the_site_in_an_incremental_build(tmp_path):
    """Sphinx copies `html_static_path` only after writing a page; with no page out of date it stops
    early, and `make book` after an edit of book/_static/site.js kept the old one. page_speed.py then
    marks every page out of date: they are written again, the static files copied, and each page's
    `?v=` checksum follows."""
    from types import SimpleNamespace

    from tools.sphinx_ext.page_speed import static_files_changed

    (tmp_path / "book" / "_static").mkdir(parents=True)
    (tmp_path / "out" / "_static").mkdir(parents=True)
    source, copy = tmp_path / "book" / "_static" / "site.js", tmp_path / "out" / "_static" / "site.js"
    app = SimpleNamespace(outdir=str(tmp_path / "out"), confdir=str(tmp_path),
                          config=SimpleNamespace(html_static_path=["book/_static"]))
    first = f"notebooks/{chapters()[0].stem}"
    env = SimpleNamespace(found_docs={"book/index", first})
    source.write_text("// edited", encoding="utf-8")
    copy.write_text("// as built", encoding="utf-8")
    assert static_files_changed(app, env, set(), set(), set()) == ["book/index", first]
    copy.write_text("// edited", encoding="utf-8")
    assert static_files_changed(app, env, set(), set(), set()) == [], "an unchanged static file rewrote every page"
    copy.unlink()
    assert static_files_changed(app, env, set(), set(), set()), "a new static file was not copied"


def test_the_themes_tab_stops_leave_skipped_cells_to_site_js(built_site):
    """pydata-sphinx-theme measures every code block on load; page_speed.py makes it leave the
    blocks the browser has not laid out yet to site.js (which judges them from their text)."""
    from tools.sphinx_ext.page_speed import TAB_STOPS, TAB_STOPS_LAZY, THEME_JS

    theme = (built_site / "_static" / THEME_JS).read_text(encoding="utf-8")
    assert TAB_STOPS_LAZY in theme and theme.count(TAB_STOPS) == 1, f"{THEME_JS} is not patched"
    assert "window.attnSkipped = skipped" in (built_site / "_static" / "site.js").read_text(encoding="utf-8")


def test_copy_buttons_are_added_in_slices_and_a_changed_script_is_reported(built_site, tmp_path, monkeypatch):
    """sphinx-copybutton's loop over the code blocks runs in slices of about 8 ms (page_speed.py);
    a copybutton.js without that loop (a new version) is left alone and reported."""
    from tools.sphinx_ext import page_speed

    script = (built_site / "_static" / page_speed.COPYBUTTON_JS).read_text(encoding="utf-8")
    assert page_speed.COPY_LOOP_SLICED in script and page_speed.COPY_LOOP not in script.replace(page_speed.COPY_LOOP_SLICED, ""), \
        "copybutton.js is not patched"
    (tmp_path / "copybutton.js").write_text("codeCells.map((codeCell) => {})", encoding="utf-8")
    warnings = []
    monkeypatch.setattr(page_speed.logger, "warning", lambda message, *a, **k: warnings.append(message))
    page_speed.copy_buttons_in_slices(tmp_path)
    assert (tmp_path / "copybutton.js").read_text(encoding="utf-8") == "codeCells.map((codeCell) => {})"
    assert len(warnings) == 1 and "copybutton.js no longer holds" in warnings[0], warnings


def test_the_themes_margin_note_query_goes_only_where_a_page_has_margin_content(built_site, tmp_path):
    """sphinx-book-theme looks for margin notes with a 28-selector query over the whole page on load;
    page_speed.py drops it when no built page has such a class, and puts it back when one does."""
    from tools.sphinx_ext import page_speed

    theme = (built_site / "_static" / page_speed.BOOK_THEME_JS).read_text(encoding="utf-8")
    classes = page_speed.page_classes(built_site)
    assert not classes & page_speed.MARGIN_CLASSES, "a page has margin content: this test needs a page without"
    assert page_speed.NO_MARGIN_QUERY in theme and page_speed.MARGIN_QUERY not in theme, "sphinx-book-theme.js is not patched"
    assert "sourceMappingURL" not in theme, "the patched sphinx-book-theme.js still points to its source map, which no longer matches"
    copy = tmp_path / page_speed.BOOK_THEME_JS
    copy.parent.mkdir(parents=True)
    copy.write_text(theme, encoding="utf-8")
    page_speed.margin_query(tmp_path, classes | {"margin"})
    restored = copy.read_text(encoding="utf-8")
    assert page_speed.MARGIN_QUERY in restored and page_speed.NO_MARGIN_QUERY not in restored
    page_speed.margin_query(tmp_path, classes)
    assert copy.read_text(encoding="utf-8") == theme


def test_code_token_spans_of_one_colour_are_merged_and_the_text_is_kept():
    """page_speed.py: neighbouring Pygments token spans drawn in one colour in both modes become one
    span; the characters stay; other neighbours, and classes styled elsewhere, stay apart."""
    from tools.sphinx_ext.page_speed import merge_same_colour_tokens

    groups = {"o": "green / lime", "s2": "green / lime", "si": "green / lime", "mi": "brown / gold", "mf": "brown / gold"}
    pre = ('<pre><span class="o">=</span> <span class="s2">&quot;a</span><span class="si">{</span>x'
           '<span class="si">}</span><span class="s2">b&quot;</span><span class="mi">1</span><span class="o">.</span>'
           '<span class="mf">5</span>\n<span class="gp">&gt;&gt;&gt; </span><span class="o">+</span></pre>')
    assert merge_same_colour_tokens(pre, groups) == (
        '<pre><span class="o">= &quot;a{</span>x<span class="si">}b&quot;</span><span class="mi">1</span>'
        '<span class="o">.</span><span class="mf">5</span>\n<span class="gp">&gt;&gt;&gt; </span><span class="o">+</span></pre>')
    outside = '<p><span class="o">=</span><span class="s2">a</span></p>'
    assert merge_same_colour_tokens(outside, groups) == outside   # only code blocks


def test_pygments_styles_are_read_once_for_both_uses(tmp_path):
    """page_speed.py reads pygments.css once (token_styles): .n/.p/.w may be unwrapped only when they are
    the code's own colour in both modes (not a background colour), and a class joins a colour group only
    with exactly one colour-only rule per mode, never a class styled elsewhere."""
    from tools.sphinx_ext.page_speed import plain_token_classes, same_colour_classes

    css = ('html[data-theme="light"] .highlight { background-color: #eeeeee; color: #111111 }\n'
           'html[data-theme="dark"] .highlight { background: #000000; color: #dddddd }\n'
           'html[data-theme="light"] .highlight .n { color: #111111 }\n'
           'html[data-theme="dark"] .highlight .n { color: #dddddd }\n'
           'html[data-theme="light"] .highlight .o { color: #00aa00 }\n'
           'html[data-theme="dark"] .highlight .o { color: #00ff00 }\n'
           'html[data-theme="light"] .highlight .k { color: #00aa00; font-weight: bold }\n'
           'html[data-theme="dark"] .highlight .k { color: #00ff00 }\n'
           'html[data-theme="light"] .highlight .gp { color: #555555 }\n'
           'html[data-theme="dark"] .highlight .gp { color: #aaaaaa }\n'
           'html[data-theme="light"] .highlight .s { color: #00aa00 }\n'
           'html[data-theme="light"] .highlight .s { color: #00aa01 }\n'
           'html[data-theme="dark"] .highlight .s { color: #00ff00 }\n')
    (tmp_path / "pygments.css").write_text(css, encoding="utf-8")
    assert plain_token_classes(tmp_path) is True
    assert same_colour_classes(tmp_path) == {"n": "color: #111111 / color: #dddddd", "o": "color: #00aa00 / color: #00ff00"}
    (tmp_path / "pygments.css").write_text(css.replace(".n { color: #dddddd }", ".n { color: #dddddd; font-style: italic }"),
                                           encoding="utf-8")
    assert plain_token_classes(tmp_path) is False
    assert plain_token_classes(tmp_path / "missing") is False and same_colour_classes(tmp_path / "missing") == {}


def test_code_blocks_have_no_neighbouring_spans_of_one_colour(built_site):
    """The built pages carry the merge: in no code block do two token spans of one colour group meet
    (with nothing but white space between), and the groups come from the theme's Pygments styles."""
    from tools.sphinx_ext.page_speed import PRE, same_colour_classes

    groups = same_colour_classes(built_site / "_static")
    assert len(set(groups.values())) < len(groups), "no two Pygments token classes share a colour: nothing to merge"
    pair = re.compile(r'<span class="([\w-]+)">[^<]*</span>\s*(?=<span class="([\w-]+)">)')
    for page in book_pages(built_site):
        for m in PRE.finditer(page.read_text(encoding="utf-8")):
            same = [(a, b) for a, b in pair.findall(m.group(2)) if a in groups and groups.get(b) == groups[a]]
            assert not same, f"{page.relative_to(built_site)}: neighbouring spans of one colour: {same[:3]}"


def test_theme_rules_no_page_can_use_are_cut():
    """page_speed.py: a rule goes only when each of its selectors needs a class that no page has and no
    script names; classes inside :not(), :is() or [...] do not count; @media is purged inside."""
    from tools.sphinx_ext.page_speed import purge_unused_rules

    css = ('/*! licence */:root{--x:1}.used{a:1}.gone{b:2}.used,.gone{c:3}.used .gone{d:4}'
           'p:not(.gone){e:5}[class*="gone-"]{f:6}.a\\:b{g:7}'
           '@media print{.gone{h:8}.used{i:9}}@media screen{.gone{j:10}}'
           '@font-face{font-family:x;src:url(a.woff2)}@keyframes k{0%{opacity:0}}.used::before{content:"{"}')
    assert purge_unused_rules(css, {"used", "p"}) == (
        '/*! licence */:root{--x:1}.used{a:1}.used{c:3}p:not(.gone){e:5}[class*="gone-"]{f:6}.a\\:b{g:7}'
        '@media print{.used{i:9}}@font-face{font-family:x;src:url(a.woff2)}@keyframes k{0%{opacity:0}}'
        '.used::before{content:"{"}')


def test_the_theme_stylesheet_is_cut_and_its_address_changed(built_site):
    """The theme's stylesheet is served cut (under half of the theme's file), and every page links it
    with the digest of what is served, so that no reader's browser keeps an older cut."""
    import hashlib

    import pydata_sphinx_theme
    from tools.sphinx_ext.page_speed import THEME_CSS

    served = (built_site / "_static" / THEME_CSS).read_text(encoding="utf-8")
    theme = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / THEME_CSS)
    assert len(served) < 0.5 * theme.stat().st_size, f"{THEME_CSS}: {len(served)} bytes served of {theme.stat().st_size}"
    digest = hashlib.sha256(served.encode("utf-8")).hexdigest()[:20]
    for page in book_pages(built_site):
        links = re.findall(r"pydata-sphinx-theme\.css\?digest=([0-9a-f]+)", page.read_text(encoding="utf-8"))
        assert links == [digest], f"{page.relative_to(built_site)} links the theme's stylesheet as {links}, served {digest}"


def test_no_script_blocks_rendering(built_site):
    """Every script file a page loads is deferred (or async, or a module): nothing stops the first
    paint. Inline scripts are allowed (they cost no request), Thebe's are gone, and none twice."""
    tag = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S)
    for page in book_pages(built_site):
        where = page.relative_to(built_site)
        text = page.read_text(encoding="utf-8")
        bodies = []
        for attrs, body in tag.findall(text):
            if "src=" in attrs:
                assert re.search(r"\b(defer|async)\b|type=\"module\"", attrs), f"{where}: a render-blocking <script{attrs}>"
            elif body.strip() and "application/json" not in attrs:
                assert body not in bodies, f"{where}: an inline script twice: {body.strip()[:80]}"
                bodies.append(body)
        assert "THEBE_JS_URL" not in text and "x-thebe-config" not in text and "sphinx-thebe" not in text, f"{where} loads Thebe"


def test_assets_only_where_a_page_uses_them(built_site):
    """The explorers' scripts and style only on pages with an explorer; sphinx-design's only where a
    page uses one of its components; the page's own stylesheets in one bundle."""
    for page in book_pages(built_site):
        where = page.relative_to(built_site)
        head = head_of(page)
        text = page.read_text(encoding="utf-8")
        css = stylesheets(page, built_site)
        has_explorer = '<div class="attn-explorer' in text
        for asset in ("explorers.js", "explorer-contract.js"):
            assert (asset in head) == has_explorer, f"{where}: {asset} {'missing' if has_explorer else 'loaded without an explorer'}"
        assert ("explorers.css" in css) == has_explorer, f"{where}: explorers.css {'missing' if has_explorer else 'loaded without an explorer'}"
        if not re.search(r'class="[^"]*\bsd-', text):
            assert not any("sphinx-design" in c for c in css) and "design-tabs.js" not in head, f"{where} loads sphinx-design unused"
        # The page's own stylesheets come in one file (page_speed.py): one request, not ten.
        own = re.findall(r'<link rel="stylesheet" type="text/css" href="([^"]+)"', head)
        assert len(own) <= 1, f"{where} loads {len(own)} stylesheets of its own: {own}"


def test_every_page_has_a_meta_description_from_its_content(built_site):
    """One <meta name="description"> per page, 50-160 characters, each page its own; on the
    book's pages, the opening words are words of the page's own text."""
    seen = {}
    for page in book_pages(built_site):
        where = page.relative_to(built_site).as_posix()
        found = re.findall(r'<meta name="description" content="([^"]*)"', head_of(page))
        assert len(found) == 1, f"{where} has {len(found)} meta descriptions"
        description = found[0]
        assert 50 <= len(description) <= 160, f"{where}: a description of {len(description)} characters: {description}"
        assert description not in seen.values(), f"{where} has the description of {[k for k, v in seen.items() if v == description]}"
        seen[where] = description
        if where.startswith(("notebooks/", "book/")) and "references" not in where:
            import html as _html
            body = page.read_text(encoding="utf-8")
            words = re.sub(r"\s+", " ", _html.unescape(re.sub(r"<[^>]+>", " ", body[body.index("<article"):])))
            opening = _html.unescape(description)[:40]
            assert opening in words, f"{where}: the description is not the page's text: {opening!r}"


def test_favicon_is_served(built_site):
    for page in book_pages(built_site):
        icon = re.search(r'<link rel="icon" href="([^"]+)"', head_of(page))
        assert icon, f"{page.relative_to(built_site)} names no icon (the browser then asks for /favicon.ico)"
        assert (page.parent / icon.group(1).split("?")[0]).resolve().is_file(), icon.group(1)


def test_figures_are_webp_with_their_size(built_site):
    """page_speed.py: each figure of a chapter is WebP where that is smaller (it is for matplotlib's
    plots), carries its width and height (the browser reserves its box: nothing shifts when it
    arrives), and all but a page's first load lazily."""
    figures = 0
    for chapter in CHAPTERS:
        page = built_site / "notebooks" / f"{chapter}.html"
        images = re.findall(r"<img\b[^>]*_images/[^>]*>", page.read_text(encoding="utf-8"))
        for k, img in enumerate(images):
            src = re.search(r'src="([^"]+)"', img).group(1)
            assert src.endswith(".webp"), f"{chapter}: {src} is not WebP"
            assert (page.parent / src).is_file(), f"{chapter}: {src} is missing"
            assert re.search(r'\bwidth="\d+"', img) and re.search(r'\bheight="\d+"', img), f"{chapter}: {src} has no size"
            assert ('loading="lazy"' in img) == (k > 0), f"{chapter}: image {k + 1} lazy={'loading=' in img}"
        figures += len(images)
    assert figures >= len(CHAPTERS), f"only {figures} figures"
    assert not list((built_site / "_images").glob("*.png")), "PNGs left in _images/ beside their WebP"


def test_only_the_search_page_loads_the_search_index(built_site):
    """The theme loads Sphinx's search scripts and index on every page for search-as-you-type
    (off here); book/_templates/layout.html keeps them to search.html."""
    assert "searchindex.js" in (built_site / "search.html").read_text(encoding="utf-8")
    for page in pages(built_site):
        if page.name != "search.html":
            assert "searchindex.js" not in page.read_text(encoding="utf-8"), f"{page.relative_to(built_site)} loads the search index"


def test_every_figure_has_alt_text_and_a_caption(built_site):
    problems = []
    for chapter in CHAPTERS:
        page = built_site / "notebooks" / f"{chapter}.html"
        parsed = parse(page)
        for image in parsed.images:
            if "logo" in image["src"]:
                continue
            if not (image["alt"] or "").strip() or image["alt"].strip().lower() in {"png", "image", "output"}:
                problems.append(f"{chapter}: image {image['src']} has no alt text")
            if not image["in_figure"]:
                problems.append(f"{chapter}: image {image['src']} is not in a captioned figure")
            problems += [f"{chapter}: image {image['src']}: {p}" for p in text_problems("alt text", image["alt"])]
        for i, figure in enumerate(parsed.figures):
            if figure["caption"] is None:
                problems.append(f"{chapter}: figure {i + 1} has no caption")
            else:
                problems += [f"{chapter}: figure {i + 1}: {p}" for p in text_problems("caption", figure["caption"])]
    assert not problems, "\n".join(problems)


def test_notebook_pages_have_launch_buttons(built_site):
    for chapter in CHAPTERS:
        page = (built_site / "notebooks" / f"{chapter}.html").read_text(encoding="utf-8")
        assert "colab.research.google.com/github/" in page, f"{chapter} has no Colab button"
        assert "mybinder.org" in page, f"{chapter} has no Binder button"


def test_each_old_address_of_a_moved_chapter_leads_to_it(built_site):
    """A chapter whose registry entry lists `moved_from` keeps a page at each old address
    (sphinx-reredirects, _config.yml): a refresh to the chapter's page, a link for readers whose browser
    ignores it, and nothing loaded from another host."""
    moved = [(old, c.stem) for c in chapters() for old in c.moved_from]
    assert moved, "no chapter has moved: this test checks nothing (remove it, or the registry lost moved_from)"
    for old, stem in moved:
        page = (built_site / "notebooks" / f"{old}.html").read_text(encoding="utf-8")
        target = f"{stem}.html"
        assert f'<meta http-equiv="refresh" content="0; url={target}">' in page, f"{old}.html does not send readers to {target}"
        assert f'<a href="{target}">' in page, f"{old}.html has no link to {target}"
        assert (built_site / "notebooks" / target).is_file()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), f"{old}.html loads from another host"


def test_the_theme_is_resolved_in_the_head_and_chapter_articles_are_marked(built_site):
    """page_speed.py: every page's inline <head> script resolves <html data-theme> to light or dark (not
    "auto", which the theme's script resolved on DOMContentLoaded, restyling the whole page); each
    chapter's article carries `attn-cells`, the class site.css's content-visibility rules for paragraphs
    and tables key on, and each of its tables is in a box of its own; the title page's article is not marked."""
    from tools.sphinx_ext.page_speed import CHAPTER_ARTICLE, TABLE_BOX, THEME_INIT, THEME_INIT_RESOLVED

    for chapter in chapters():
        page = (built_site / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
        assert CHAPTER_ARTICLE in page, f"{chapter.stem}: the article is not marked attn-cells"
        assert page.count('<div class="pst-scrollable-table-container">') == page.count(f'{TABLE_BOX}<div class="pst-scrollable-table-container">'), \
            f"{chapter.stem}: a table is not in a box of its own"
        assert THEME_INIT_RESOLVED in page and not THEME_INIT.search(page), f"{chapter.stem}: data-theme starts as 'auto'"
    title = (built_site / "book" / "index.html").read_text(encoding="utf-8")
    assert CHAPTER_ARTICLE not in title and THEME_INIT_RESOLVED in title
    css = (built_site / "_static" / "site.css").read_text(encoding="utf-8")
    assert ".bd-article.attn-cells section > :is(p" in css and ":has(div.cell)" not in css
