"""What a page loads, cut to what it uses: a Sphinx extension that `make book` runs (_config.yml).

On every page (Sphinx's html-page-context, after the theme and the other extensions):

- No script blocks rendering: every script file is loaded with `defer` (they run in document order
  after parsing, before DOMContentLoaded, as they did before, only without stopping the first
  paint). The one inline script that the deferred ones depend on at parse time, Sphinx's
  documentation_options.js (0.4 kB), is written into the page instead.
- The explorers' scripts and stylesheet (explorer-contract.js, explorers.js, explorers.css) only on
  pages that show an explorer; sphinx-design's stylesheet and script only on pages that use one of
  its components; sphinx-exercise's stylesheet only where there is an exercise.
- No Thebe: Jupyter Book adds sphinx-thebe's script, stylesheet and configuration to every page
  although the book has no live-code button; its inline `const THEBE_JS_URL` is written twice into
  every page, which was the console error `Identifier 'THEBE_JS_URL' has already been declared`.
  Inline scripts written twice (sphinx-togglebutton's selector) are kept once.
- A meta description: the first paragraph of the page's own text (not the "Chapter N of" line),
  cut at a word before 160 characters; for Sphinx's index and search pages, a sentence saying what
  they hold.

When the build has finished, each page's own stylesheets (after the theme's) become one file,
`_static/bundle-<hash>.css` (`_static/bundles.json` lists what each holds): one request on the
critical path of the first paint instead of up to ten. Every figure of `_images/` (matplotlib's PNGs) is written as lossless
WebP where that is smaller (about 60 % smaller for these plots; every browser the site supports
shows WebP), and each page's <img> gets the file, its width and height (so that the browser
reserves its box before it arrives: nothing shifts), `decoding="async"`, and `loading="lazy"` for
all but a page's first figure.

Four third-party scripts of `_static` are patched at the end, each for time on load (a warning, which
fails the strict build, when the text patched is gone): pydata-sphinx-theme leaves the cells the
browser skips to site.js, its bootstrap.js makes its tooltips after load and reads the header's box
at the first scroll, sphinx-copybutton adds its buttons in slices of 8 ms, and sphinx-book-theme
drops its margin-note query when no page has margin content.
"""
from __future__ import annotations

import html
import json
import os
import re
import time
from pathlib import Path

import tinycss2
from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)
DESCRIPTION_LENGTH = 160
EXPLORER = re.compile(r'<div class="attn-explorer[" ]')
DESIGN = re.compile(r'class="[^"]*\bsd-')
EXERCISE = re.compile(r'class="[^"]*\b(exercise|solution)\b')
IMG = re.compile(r'<img\b[^>]*?\bsrc="([^"]*_images/[^"]+\.png)"[^>]*?/?>')
SPECIAL = {"genindex": "The index of {title}: every term and name the chapters define, with links to where.",
           "search": "Search the pages of {title}: the chapters, the notation, the errata and the guide for instructors."}


# ---------------------------------------------------------------- meta description

def _text(node) -> str:
    """A paragraph's words, with each formula's TeX reduced to its letters and digits."""
    out = []
    for n in node.findall(lambda n: isinstance(n, (nodes.Text, nodes.math))):
        if isinstance(n, nodes.math):
            out.append(re.sub(r"\\[A-Za-z]+|[{}_^\\]", "", n.astext()).strip())
        elif not isinstance(n.parent, nodes.math):
            out.append(n.astext())
    return re.sub(r"\s+", " ", "".join(out)).strip()


def description(doctree) -> str:
    """The first paragraph of the page's text that says something (at least 60 characters, not the
    'Chapter N of' line), outside admonitions, figures and code output, cut at a word."""
    skip = (nodes.Admonition, nodes.figure, nodes.literal_block, nodes.table, nodes.footnote, nodes.citation,
            nodes.list_item)
    for para in doctree.findall(nodes.paragraph):
        parent, inside = para.parent, False
        while parent is not None:
            if isinstance(parent, skip) or "cell_output" in (parent.get("classes") or []):
                inside = True
                break
            parent = parent.parent
        if inside:
            continue
        text = _text(para)
        if len(text) < 60 or text.startswith("Chapter "):
            continue
        return cut(text)
    return ""


def cut(text: str) -> str:
    if len(text) > DESCRIPTION_LENGTH:
        text = text[:DESCRIPTION_LENGTH - 1].rsplit(" ", 1)[0].rstrip(",;:—–-") + "…"
    return text


def body_text(body: str) -> str:
    """The words of a page's HTML body, after its heading (for a page without a paragraph of prose,
    such as the bibliography)."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    body = re.sub(r"<h1\b.*?</h1>", " ", body, count=1, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    return re.sub(r"\s+", " ", text).strip()


# ---------------------------------------------------------------- what a page loads

def _inline_documentation_options(app, context) -> str:
    """Sphinx's documentation_options.js, rendered from its own template with the page's context."""
    import sphinx
    source = Path(sphinx.__file__).parent / "themes" / "basic" / "static" / "documentation_options.js.jinja"
    return app.builder.templates.render_string(source.read_text(encoding="utf-8"), context)


THEBE_BODY = re.compile(r'\s*<script type="text/x-thebe-config">.*?</script>\s*|<script>kernelName = [^<]*</script>\s*', re.S)


def page_context(app, pagename, templatename, context, doctree) -> None:
    body = context["body"] = THEBE_BODY.sub("\n", context.get("body", ""))
    has_explorer = bool(EXPLORER.search(body))
    has_design = bool(DESIGN.search(body))
    scripts, bodies = [], set()
    for js in context.get("script_files", []):
        name = os.fspath(js.filename or "") if hasattr(js, "filename") else str(js)
        attrs = dict(js.attributes) if hasattr(js, "attributes") else {}
        asset = type(js) if hasattr(js, "filename") else None   # Sphinx's script class, not imported (private)
        inline = attrs.get("body", "")
        if "thebe" in name or "THEBE" in inline or attrs.get("type") == "text/x-thebe-config" \
                or inline.strip().startswith("kernelName"):
            continue
        if name.endswith(("explorer-contract.js", "explorers.js")) and not has_explorer:
            continue
        if name.endswith("design-tabs.js") and not has_design:
            continue
        if not name:
            if inline in bodies:
                continue
            bodies.add(inline)
            scripts.append(js)
            continue
        if name.endswith("documentation_options.js"):
            scripts.append(asset("", priority=js.priority, body=_inline_documentation_options(app, context).strip()))
            continue
        if "async" not in attrs and "defer" not in attrs and attrs.get("type") != "module":
            attrs["defer"] = "defer"
        scripts.append(asset(name, priority=js.priority, **attrs) if asset else js)
    context["script_files"] = scripts

    css = []
    for sheet in context.get("css_files", []):
        name = os.fspath(sheet.filename or "") if hasattr(sheet, "filename") else str(sheet)
        if "thebe" in name:
            continue
        if name.endswith("explorers.css") and not has_explorer:
            continue
        if "sphinx-design" in name and not has_design:
            continue
        if name.endswith("exercise.css") and not EXERCISE.search(body):
            continue
        css.append(sheet)
    context["css_files"] = css

    book = context.get("docstitle") or app.config.html_title
    if pagename in SPECIAL:
        text = SPECIAL[pagename].format(title=book)
    else:
        text = description(doctree) if doctree is not None else ""
        if not text and body_text(body):
            page_title = re.sub(r"<[^>]+>", "", context.get("title", "")).strip()
            text = cut(f"{page_title} of {book}: {body_text(body)}")
    if text:
        context["metatags"] = context.get("metatags", "") + \
            f'\n    <meta name="description" content="{html.escape(text, quote=True)}" />'
    elif pagename not in ("index",):
        logger.warning("%s: no paragraph of at least 60 characters for its meta description", pagename,
                       type="page_speed", subtype="description")


# ---------------------------------------------------------------- code: fewer elements

PLAIN_TOKEN = re.compile(r'<span class="(?:n|p|w)">([^<]*)</span>')
PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)


def token_styles(static: Path) -> dict[str, dict[str, list[str]]]:
    """Pygments' rules in pygments.css, read once for both uses below: {mode: {token class: the
    declarations of each of its rules}}, light and dark, with "" for the `.highlight` block itself
    (the code's own colour)."""
    css = (static / "pygments.css").read_text(encoding="utf-8") if (static / "pygments.css").is_file() else ""
    styles: dict[str, dict[str, list[str]]] = {"light": {}, "dark": {}}
    selector = re.compile(r'html\[data-theme="(light|dark)"\] \.highlight(?: \.([\w-]+))?')
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if rule.type != "qualified-rule":
            continue
        found = selector.fullmatch(" ".join(tinycss2.serialize(rule.prelude).split()))
        if found:
            styles[found[1]].setdefault(found[2] or "", []).append(tinycss2.serialize(rule.content).strip())
    return styles


def plain_token_classes(static: Path) -> bool:
    """Whether Pygments' name, punctuation and whitespace tokens (.n, .p, .w) are drawn exactly as
    the code around them, in both colour modes: the same colour as `.highlight`, nothing else."""
    styles = token_styles(static)
    for mode in ("light", "dark"):
        base = next((m for body in styles[mode].get("", []) if (m := re.search(r"(?:^|;)\s*color: (#[0-9A-Fa-f]+)", body))), None)
        if not base:
            return False
        for token in ("n", "p", "w"):
            bodies = styles[mode].get(token, [])
            if bodies and bodies[0] != f"color: {base.group(1)}":
                return False
    return True


def unwrap_plain_tokens(text: str) -> str:
    """Inside <pre>, the spans of Pygments' name, punctuation and whitespace tokens become plain text
    (a third of a chapter page's elements; the style and layout work of every page load shrinks with them)."""
    return PRE.sub(lambda m: m.group(1) + PLAIN_TOKEN.sub(r"\1", m.group(2)) + m.group(3), text)


# Token classes that other stylesheets style beyond their colour (basic.css: the prompt's user-select,
# the highlighted line's background): never merged.
STYLED_ELSEWHERE = {"gp", "hll", "linenos"}


def same_colour_classes(static: Path) -> dict[str, str]:
    """{token class: its colour group}: the Pygments token classes whose only declaration is a colour,
    keyed by that colour in both modes. Two classes of one group are drawn alike in light and dark
    mode (pydata-sphinx-theme's styles give operators, strings and f-string braces one colour)."""
    styles = token_styles(static)
    both = {token: styles["light"][token] + styles["dark"].get(token, []) for token in styles["light"] if token}
    return {token: " / ".join(bodies) for token, bodies in both.items()
            if len(bodies) == 2 and token not in STYLED_ELSEWHERE
            and all(re.fullmatch(r"color: #[0-9A-Fa-f]{3,8}", b) for b in bodies)}


TOKEN_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')


def merge_same_colour_tokens(text: str, groups: dict[str, str]) -> str:
    """Inside <pre>, neighbouring token spans of one colour group (nothing but white space between
    them) become one span: the same characters in the same colour, fewer elements."""
    def in_pre(m):
        pieces = TOKEN_SPAN.split(m.group(2))   # text, class, content, text, class, content, ..., text
        out, open_class, open_text = [], None, ""
        for k in range(0, len(pieces), 3):
            between = pieces[k]
            if open_class is not None and (between.strip() or k + 1 >= len(pieces)
                                           or groups.get(pieces[k + 1]) != groups[open_class]):
                out.append(f'<span class="{open_class}">{open_text}</span>')
                open_class = None
            if open_class is not None:               # same group next, white space between: one span
                open_text += between + pieces[k + 2]
                continue
            out.append(between)
            if k + 1 < len(pieces):
                cls, content = pieces[k + 1], pieces[k + 2]
                if cls in groups:
                    open_class, open_text = cls, content
                else:
                    out.append(f'<span class="{cls}">{content}</span>')
        return m.group(1) + "".join(out) + m.group(3)
    return PRE.sub(in_pre, text)


# ---------------------------------------------------------------- the theme's stylesheet: rules in use

THEME_CSS = "styles/pydata-sphinx-theme.css"


def used_tokens(outdir: Path) -> set[str]:
    """Every class and tag name of every built page, and every word of every script the site ships
    (a class a script adds at run time is a string in it): what a rule of the theme may need."""
    used: set[str] = set()
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="ignore")
        for value in re.findall(r'\bclass="([^"]*)"', text):
            used.update(value.split())
        used.update(re.findall(r"<([a-zA-Z][\w-]*)", text))
    for script in outdir.rglob("*.js"):
        used.update(re.findall(r"[A-Za-z_][\w-]*", script.read_text(encoding="utf-8", errors="ignore")))
    return used


def _selectors(prelude: list) -> list[list]:
    """A rule's selector list, split at its top-level commas (tinycss2 nests what is inside () and [])."""
    parts: list[list] = [[]]
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def selector_may_match(selector: list, used: set[str]) -> bool:
    """False only when the selector needs a class that no page has and no script names. Classes inside
    :not(), :is(), :where(), :has() or [...] do not count (a missing one there can still match: they are
    nested blocks in tinycss2's tokens, not looked into), and a selector with an escaped character is kept."""
    if "\\" in tinycss2.serialize(selector):
        return True
    classes = [b.value for a, b in zip(selector, selector[1:])
               if a.type == "literal" and a.value == "." and b.type == "ident"]
    return all(c in used for c in classes)


def _without_comments(tokens: list) -> str:
    return tinycss2.serialize([t for t in tokens if t.type != "comment"])


def purge_unused_rules(css, used: set[str]) -> str:
    """The stylesheet (text, or tinycss2's tokens) without the rules whose every selector needs a class
    that nothing uses, and without those selectors in the other rules; comments go, but a /*! licence */.
    @media, @supports, @layer and @container blocks are purged inside (and dropped when empty);
    @font-face, @keyframes and the others stay whole. Parsed with tinycss2 (CSS Syntax Level 3)."""
    out = []
    for node in tinycss2.parse_stylesheet(css, skip_comments=False, skip_whitespace=False):
        if node.type == "comment":
            if node.value.startswith("!"):
                out.append(node.serialize())
        elif node.type == "whitespace":
            out.append(node.serialize())
        elif node.type == "at-rule":
            if node.lower_at_keyword in ("media", "supports", "layer", "container") and node.content is not None:
                inner = purge_unused_rules(node.content, used)
                if inner.strip():
                    out.append(f"@{node.at_keyword}{tinycss2.serialize(node.prelude)}{{{inner}}}")
            else:
                out.append(node.serialize())
        elif node.type == "qualified-rule":
            kept = [sel for sel in _selectors(node.prelude) if selector_may_match(sel, used)]
            if kept:
                out.append(",".join(tinycss2.serialize(sel) for sel in kept) + "{" + _without_comments(node.content) + "}")
        else:                                    # a parse error: keep the text as it was
            out.append(node.serialize())
    return "".join(out)


def purge_theme_stylesheet(outdir: Path) -> str | None:
    """Cut the theme's stylesheet in the output to the rules the site can use, and return its digest
    for the pages' links. Sphinx copies the theme's original on every build (icon_subset.py, which runs
    first, relies on it too), so an incremental build starts from all of it."""
    import hashlib

    target = outdir / "_static" / THEME_CSS
    if not target.is_file():
        logger.warning("page_speed: %s not found; nothing to cut", target, type="page_speed", subtype="theme_css")
        return None
    original = target.read_text(encoding="utf-8")
    purged = purge_unused_rules(original, used_tokens(outdir))
    target.write_text(purged, encoding="utf-8")
    logger.info("page_speed: %s %.0f -> %.0f kB (rules no page or script can use)", THEME_CSS,
                len(original) / 1000, len(purged) / 1000)
    return hashlib.sha256(purged.encode("utf-8")).hexdigest()[:20]


THEME_CSS_LINK = re.compile(r'(href="[^"]*_static/styles/pydata-sphinx-theme\.css)\?digest=[0-9a-f]+"')


# ---------------------------------------------------------------- stylesheets: one request

CSS_LINK = re.compile(r'<link rel="stylesheet" type="text/css" href="([^"?]+)(?:\?[^"]*)?" />')
CSS_RUN = re.compile(r'(?:<link rel="stylesheet" type="text/css" href="[^"]+" />\s*){2,}')
CSS_URL = re.compile(r'url\(\s*(["\']?)(?!data:|https?:|/|#)([^"\')]+)\1\s*\)')
MANIFEST = "bundles.json"


def bundle_text(static: Path, members: list[str]) -> str:
    """The stylesheets in order, each one's relative url()s rewritten for the bundle's place (_static/)."""
    parts = []
    for member in members:
        source = static / member
        css = source.read_text(encoding="utf-8")
        folder = Path(member).parent

        def moved(m, folder=folder):
            target = os.path.normpath((folder / m.group(2)).as_posix())
            return f'url("{target}")'
        parts.append(f"/* {member} */\n" + (CSS_URL.sub(moved, css) if folder != Path(".") else css))
    return "\n".join(parts) + "\n"


def bundle_stylesheets(text: str, page: Path, static: Path, bundles: dict) -> str:
    """The page's own run of stylesheets (after the theme's two) as one file, `_static/bundle-<hash>.css`:
    one request instead of ten on the critical path of the first paint (each costs a round trip on a
    phone's network; the cascade is the same, in the same order)."""
    import hashlib
    run = CSS_RUN.search(text[: text.find("</head>")])
    if not run:
        return text
    hrefs = CSS_LINK.findall(run.group(0))
    prefix = os.path.relpath(static, page.parent).replace(os.sep, "/") + "/"
    if not all(h.startswith(prefix) for h in hrefs):
        return text
    members = [h[len(prefix):] for h in hrefs]
    name = "bundle-" + hashlib.sha1("\n".join(members).encode()).hexdigest()[:12] + ".css"
    bundles[name] = members
    link = f'<link rel="stylesheet" type="text/css" href="{prefix}{name}" />\n'
    return text[: run.start()] + link + text[run.end():]


# ---------------------------------------------------------------- the theme's tab stops

THEME_JS = Path("scripts") / "pydata-sphinx-theme.js"
# pydata-sphinx-theme 0.17 (constraints.txt), on load: every code block, output and table gets
# tabIndex 0 when it scrolls, else -1; measuring each makes the browser lay out every cell it skips
# (site.css, content-visibility: auto). Skipped blocks are left to site.js, which judges them from
# their text and measures them when they are laid out.
TAB_STOPS = "e.tabIndex=e.scrollWidth>e.clientWidth||e.scrollHeight>e.clientHeight?0:-1"
TAB_STOPS_LAZY = "(window.attnSkipped&&window.attnSkipped(e))||(" + TAB_STOPS + ")"


def patch_script(static: Path, script: Path, old: str, new: str, why: str) -> None:
    """Replace `old` (present exactly once) by `new` in a third-party script of _static; a warning
    (which fails the strict build) when `old` is gone, as it would be in a new version. The patched
    script loses its source-map comment: the map no longer matches it (browsers report its mappings
    as out of bounds)."""
    path = static / script
    if not path.is_file():
        return
    original = path.read_text(encoding="utf-8")
    text = original
    if new not in text:
        if text.count(old) != 1:
            logger.warning(f"page_speed: {script} no longer holds `{old}` once (a new version?): {why}")
            return
        text = text.replace(old, new)
    text = SOURCE_MAP.sub("\n", text)
    if text != original:
        path.write_text(text, encoding="utf-8")


SOURCE_MAP = re.compile(r"\n//# sourceMappingURL=\S+\s*$")


def theme_tab_stops(static: Path) -> None:
    patch_script(static, THEME_JS, TAB_STOPS, TAB_STOPS_LAZY,
                 "its tab-stop script measures every skipped cell on load; see site.js")


# pydata-sphinx-theme 0.17's bootstrap.js (constraints.txt), run while the page is still parsed:
# besides Bootstrap itself, it makes a Bootstrap tooltip of each of the header's buttons (13 on a
# chapter page, 7 ms), and reads the header's box for its back-to-top button, which makes the browser
# lay out what the parser has added so far (7 ms). Both were in one task of 14-29 ms on chapter 3's
# page on a phone (at Lighthouse's 4x CPU slowdown, 0.06-0.12 s in which a tap waits). The tooltips
# are made after load, in a task of their own (they show after half a second's hover anyway); the
# header's box is read at the first scroll (the header is sticky: its bottom is the same then).
BOOTSTRAP_JS = Path("scripts") / "bootstrap.js"
TOOLTIPS = ("go(function(){[].slice.call(document.querySelectorAll('[data-bs-toggle=\"tooltip\"]')).map(function(t)"
            "{return new ps(t,{delay:{show:500,hide:100}})})})")
TOOLTIPS_AFTER_LOAD = ("go(function(){var f=function(){setTimeout(function(){[].slice.call(document.querySelectorAll("
                       "'[data-bs-toggle=\"tooltip\"]')).map(function(t){return new ps(t,{delay:{show:500,hide:100}})})},0)};"
                       "\"complete\"===document.readyState?f():window.addEventListener(\"load\",f)})")
HEADER_BOX = ('var e=document.getElementsByClassName("bd-header")[0].getBoundingClientRect();'
              'window.addEventListener("scroll",function(){')
HEADER_BOX_AT_SCROLL = ('var e=null;window.addEventListener("scroll",function(){'
                        'e=e||document.getElementsByClassName("bd-header")[0].getBoundingClientRect();')


def theme_start_after_load(static: Path) -> None:
    patch_script(static, BOOTSTRAP_JS, TOOLTIPS, TOOLTIPS_AFTER_LOAD, "its tooltips are made while the page is parsed")
    patch_script(static, BOOTSTRAP_JS, HEADER_BOX, HEADER_BOX_AT_SCROLL, "it lays the page out while it is parsed")


# sphinx-copybutton 0.5.2 (constraints.txt) adds a button to each code block, all in one task when the
# deferred script runs: parsing each button's icon from a string, 20-58 ms on a chapter page with a
# hundred blocks (0.1-0.2 s at Lighthouse's 4x CPU slowdown, a tap waits that long). The same calls,
# in slices of about 8 ms, each slice a task of its own; ClipboardJS listens on the document, so a
# button added later copies as well. The first slice too comes after the script's own task.
COPYBUTTON_JS = Path("copybutton.js")
COPY_LOOP = "codeCells.forEach((codeCell, index) => {"
COPY_LOOP_SLICED = (";((list, f) => { let i = 0; const slice = () => { const t = performance.now(); "
                    "while (i < list.length && performance.now() - t < 8) { f(list[i], i); i++; } "
                    "if (i < list.length) setTimeout(slice, 0); else document.documentElement.dataset.attnCopyButtons = String(i); }; "
                    "setTimeout(slice, 0); })(codeCells, (codeCell, index) => {")


def copy_buttons_in_slices(static: Path) -> None:
    patch_script(static, COPYBUTTON_JS, COPY_LOOP, COPY_LOOP_SLICED,
                 "its buttons are added in one long task on load")


# sphinx-book-theme 1.3 (constraints.txt) hides the right-hand contents while a margin note or a
# full-width block is on screen: on DOMContentLoaded its script looks for them with one query of 28
# class selectors over the whole page (13 ms of chapter 3's page, which has 12,500 elements). No page
# of the book has one; the build checks every page, and the query stays where one does.
BOOK_THEME_JS = Path("scripts") / "sphinx-book-theme.js"
MARGIN_QUERY = 'document.querySelectorAll(n.join(", ")).forEach((e=>{t.observe(e)}))'
NO_MARGIN_QUERY = '[].forEach((e=>{t.observe(e)}))'
MARGIN_KINDS = ["marginnote", "sidenote", "margin", "margin-caption", "full-width", "sidebar", "popout"]
MARGIN_CLASSES = {f"{tag}{k}" for k in MARGIN_KINDS for tag in ("", "tag_")} | \
                 {f"{tag}{k.replace('-', '_')}" for k in MARGIN_KINDS for tag in ("", "tag_")}


def page_classes(outdir: Path) -> set[str]:
    """Every class of every built page."""
    found: set[str] = set()
    for page in outdir.rglob("*.html"):
        for value in re.findall(r'\bclass="([^"]*)"', page.read_text(encoding="utf-8", errors="ignore")):
            found.update(value.split())
    return found


def margin_query(static: Path, classes: set[str]) -> None:
    """The theme's margin-note query only where a page has margin content (else none)."""
    present = sorted(classes & MARGIN_CLASSES)
    if not present:
        patch_script(static, BOOK_THEME_JS, MARGIN_QUERY, NO_MARGIN_QUERY, "its margin-note query runs on every page")
        return
    path = static / BOOK_THEME_JS
    if path.is_file() and NO_MARGIN_QUERY in (text := path.read_text(encoding="utf-8")):
        path.write_text(text.replace(NO_MARGIN_QUERY, MARGIN_QUERY), encoding="utf-8")
    logger.info(f"page_speed: a page has margin content ({', '.join(present)}): the theme's margin-note query is kept")


# ---------------------------------------------------------------- a chapter's article

ARTICLE = '<article class="bd-article">'
CHAPTER_ARTICLE = '<article class="bd-article attn-cells">'
CELL = re.compile(r'<div class="cell[ "]')
TABLE = re.compile(r'<div class="pst-scrollable-table-container">\s*<table\b.*?</table>\s*</div>', re.S)
TABLE_BOX = '<div class="attn-table-box">'


def mark_chapter_article(text: str) -> str:
    """The article of a page with notebook cells gets the class `attn-cells`, which site.css's
    content-visibility rules for paragraphs and tables key on. As `.bd-article:has(div.cell)` they
    made Chromium check the article again at each element the parser added (122 times before one
    style update on chapter 3's page). Each table's scrolling box goes into a box of its own
    (`attn-table-box`), the one the browser may skip: a skipped box keeps its estimated height, so the
    scrolling box itself would scroll its rows up and down inside it (axe-core: a scrolling region
    that is not a tab stop)."""
    if not CELL.search(text) or CHAPTER_ARTICLE in text:
        return text
    text = TABLE.sub(lambda m: f"{TABLE_BOX}{m.group(0)}</div>", text)
    return text.replace(ARTICLE, CHAPTER_ARTICLE, 1)


# The theme's inline script in <head> sets <html data-theme> to the theme last stored, or to "auto"
# (a first visit), which no stylesheet rule knows: the page is parsed and painted light, and on
# DOMContentLoaded the theme's script resolves "auto" to the system's light or dark, which restyles
# the whole page (886 elements, 30 ms on chapter 3's page, 0.12 s at Lighthouse's 4x CPU slowdown) and
# shows a reader whose system is dark a light page first. Resolved here as that script resolves it:
# the mode (light, dark or auto, stored by the theme switch) decides, auto follows the system.
THEME_INIT = re.compile(r'document\.documentElement\.dataset\.theme = localStorage\.getItem\("theme"\) \|\| "[a-z]*";')
THEME_INIT_RESOLVED = ('document.documentElement.dataset.theme = ["light", "dark"].includes(document.documentElement.dataset.mode) '
                       '? document.documentElement.dataset.mode : matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";')


def resolve_theme_early(text: str) -> str:
    return THEME_INIT.sub(lambda m: THEME_INIT_RESOLVED, text, count=1)


# ---------------------------------------------------------------- figures

def figures(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from PIL import Image
    started = time.perf_counter()
    outdir = Path(app.outdir)
    images = outdir / "_images"
    sizes, webp = {}, {}
    manifest = outdir / "_static" / MANIFEST
    bundles = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    plain = plain_token_classes(outdir / "_static")
    groups = same_colour_classes(outdir / "_static")
    theme_digest = purge_theme_stylesheet(outdir)
    theme_tab_stops(outdir / "_static")
    copy_buttons_in_slices(outdir / "_static")
    theme_start_after_load(outdir / "_static")
    margin_query(outdir / "_static", page_classes(outdir))
    if not plain:
        logger.info("page_speed: Pygments' .n/.p/.w tokens have colours of their own; their spans are kept")
    for png in sorted(images.glob("*.png")) if images.is_dir() else []:
        with Image.open(png) as im:
            sizes[png.name] = im.size
            target = png.with_suffix(".webp")
            # MyST-NB names an output image by the hash of its content: a WebP of the same name from
            # an earlier build is this image's (an incremental build re-encodes nothing).
            if not (re.fullmatch(r"[0-9a-f]{64}", png.stem) and target.is_file()):
                im.save(target, "WEBP", lossless=True, method=6)
        if target.stat().st_size < png.stat().st_size:
            webp[png.name] = target.name
        else:
            target.unlink()
    saved = 0
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        original = text
        if plain:
            text = unwrap_plain_tokens(text)
        if groups:
            text = merge_same_colour_tokens(text, groups)
        if theme_digest:  # a changed stylesheet gets a new address: no reader keeps a stale copy
            text = THEME_CSS_LINK.sub(rf'\1?digest={theme_digest}"', text)
        count = 0

        def rewrite(m):
            nonlocal count
            tag, src = m.group(0), m.group(1)
            name = src.rsplit("/", 1)[1]
            if name not in sizes:
                return tag
            count += 1
            w, h = sizes[name]
            new = src[: -len(name)] + webp.get(name, name)
            extra = f' width="{w}" height="{h}" decoding="async"' + (' loading="lazy"' if count > 1 else "")
            tag = tag.replace(f'src="{src}"', f'src="{new}"')
            tag = re.sub(r'\s(width|height|loading|decoding)="[^"]*"', "", tag)
            return re.sub(r"\s*/?>$", extra + " />", tag)

        text = IMG.sub(rewrite, text)
        text = mark_chapter_article(text)
        text = resolve_theme_early(text)
        text = bundle_stylesheets(text, page, outdir / "_static", bundles)
        if text != original:
            page.write_text(text, encoding="utf-8")
    # Every bundle any page names, rewritten from the current stylesheets (an incremental build keeps
    # the pages it did not rewrite, with their bundle's name).
    for name, members in bundles.items():
        (outdir / "_static" / name).write_text(bundle_text(outdir / "_static", members), encoding="utf-8")
    manifest.write_text(json.dumps(bundles, indent=1), encoding="utf-8")
    pages_text = "".join(p.read_text(encoding="utf-8") for p in outdir.rglob("*.html") if "_static" not in p.parts)
    for png_name in [n for n in webp if n not in pages_text]:  # a PNG still linked somewhere stays
        png = images / png_name
        saved += png.stat().st_size - (images / webp[png_name]).stat().st_size
        png.unlink()
    logger.info("figures: %d of %d written as WebP (%.0f kB smaller) in %.1f s", len(webp), len(sizes), saved / 1000,
                time.perf_counter() - started)


# ---------------------------------------------------------------- static files of an incremental build

def static_files_changed(app, env, added, changed, removed):
    """Every page is written again when a file of `html_static_path` differs from its copy in the
    output (book/_static/site.js edited, say). Sphinx copies static files only after writing at least
    one page: with no page out of date it stops early ("no targets are out of date") and the site kept
    the old site.js; each page's `?v=` checksum of a stylesheet or script changes with it too."""
    out = Path(app.outdir) / "_static"
    for folder in app.config.html_static_path:
        base = Path(app.confdir) / folder
        for source in base.rglob("*") if base.is_dir() else []:
            copy = out / source.relative_to(base)
            if source.is_file() and (not copy.is_file() or copy.read_bytes() != source.read_bytes()):
                shown = source.relative_to(app.confdir) if source.is_relative_to(app.confdir) else source  # (an extension's own)
                logger.info(f"page_speed: {shown} changed: every page is written again")
                return sorted(env.found_docs)
    return []


def setup(app):
    app.connect("env-get-outdated", static_files_changed)
    app.connect("html-page-context", page_context, priority=900)
    # after the theme's own build-finished handlers (pydata-sphinx-theme writes pygments.css there)
    app.connect("build-finished", figures, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
