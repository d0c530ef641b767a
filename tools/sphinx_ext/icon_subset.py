"""Font Awesome cut down to the icons the site shows: a Sphinx extension that `make book` runs.

The theme ships Font Awesome's whole solid and brands fonts (0.27 MB on every page: 2,000 glyphs)
for the 20 or so icons of its buttons, and its stylesheet a class for each (77 kB). When the build
has finished, fontTools' own subsetter (the library behind pyftsubset, already installed with
matplotlib) rewrites each of the theme's Font Awesome fonts in the output with only the glyphs a
page can show, and the stylesheet keeps only their classes:

- every icon class (`fa-bars`, `fa-github`, ...) named in a built page or in a script the site
  serves, looked up in the class table of the theme's stylesheet;
- every code point a stylesheet writes outside that table (sphinx-book-theme's `content: "\\f107"`,
  the admonition icons of pydata-sphinx-theme's custom properties).

The theme's files are never touched: Sphinx copies the theme's originals on every build, and this
runs after it. tests/test_browser.py checks, in the browser, that every icon a page draws with
Font Awesome is in the subset font it loads.
"""
from __future__ import annotations

import re
from pathlib import Path

from fontTools import subset
from sphinx.util import logging
from fontTools.ttLib import TTFont

WEBFONTS = Path("_static") / "vendor" / "fontawesome" / "webfonts"
# The class table: `.fa-bars:before,.fa-navicon:before{content:"\f0c9"}`.
CLASS_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+::?before,?)+)\{content:"\\([0-9a-f]+)"\}')
CLASS_NAME = re.compile(r"\.(fa-[a-z0-9-]+)::?before")
# Any other Font Awesome code point a stylesheet writes, as an escape or as the character itself
# (pydata-sphinx-theme's `--pst-icon-info-circle: ""`): the private-use area.
ESCAPE = re.compile(r'"\\((?:e|f)[0-9a-f]{3})"')
PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
ICON_TOKEN = re.compile(r"\bfa-[a-z0-9-]+")
logger = logging.getLogger(__name__)


def class_table(css: str) -> dict[str, int]:
    """{"fa-bars": 0xF0C9, ...} from a stylesheet that carries Font Awesome's class table."""
    table = {}
    for selectors, code in CLASS_RULE.findall(css):
        for name in CLASS_NAME.findall(selectors):
            table[name] = int(code, 16)
    return table


def used_icons(outdir: Path, stylesheets: list[str]) -> tuple[dict[str, int], set[str], set[int]]:
    """(the class table, the icon classes in use, every code point a page can show), from the
    built pages and scripts in `outdir` and the text of every stylesheet the site serves."""
    static = outdir / "_static"
    table = {}
    for css in stylesheets:
        table.update(class_table(css))
    if not table:
        raise RuntimeError("no Font Awesome class table in the theme's stylesheets: "
                           "tools/sphinx_ext/icon_subset.py no longer matches the theme")
    points = set()
    for css in stylesheets:
        rest = CLASS_RULE.sub("", css)
        points |= {int(code, 16) for code in ESCAPE.findall(rest)} | {ord(c) for c in PRIVATE_USE.findall(rest)}
    # fontawesome.js (never loaded: book/_templates/layout.html) names every icon there is.
    scripts = [p for p in static.rglob("*.js") if p.name != "fontawesome.js" and "mathjax" not in p.parts]
    names = set()
    for path in [*outdir.rglob("*.html"), *scripts]:
        names |= {t for t in ICON_TOKEN.findall(path.read_text(encoding="utf-8", errors="replace")) if t in table}
    return table, names, points | {table[name] for name in names}


def prune_class_table(css: str, names: set[str]) -> str:
    """The stylesheet without the class-table rules of icons no page uses."""
    def keep(rule):
        return rule.group(0) if set(CLASS_NAME.findall(rule.group(1))) & names else ""

    return CLASS_RULE.sub(keep, css)


def subset_font(source: Path, path: Path, points: set[int]) -> tuple[int, int, int]:
    """Write the font `source` to `path` with only `points` (those it has); (bytes before, bytes
    after, glyphs kept)."""
    before = source.stat().st_size
    font = TTFont(source)
    keep = points & set(font.getBestCmap())
    options = subset.Options()
    options.flavor = font.flavor  # "woff2" for .woff2, None for .ttf
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=keep)
    subsetter.subset(font)
    font.save(path)
    return before, path.stat().st_size, len(keep)


def original(app, path: Path) -> Path:
    """The theme's own copy of an output file under _static (Sphinx copies static files only when
    it thinks they changed, so the output may already be cut down by an earlier build)."""
    relative = path.relative_to(Path(app.outdir) / "_static")
    for entry in app.builder.theme.get_theme_dirs():
        candidate = Path(entry) / "static" / relative
        if candidate.is_file():
            return candidate
    return path


def on_build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    fonts = sorted((outdir / WEBFONTS).glob("fa-*"))
    if not fonts:
        return
    stylesheets = {path: original(app, path).read_text(encoding="utf-8")
                   for path in (outdir / "_static").rglob("*.css")}
    table, names, points = used_icons(outdir, list(stylesheets.values()))
    for path, css in stylesheets.items():
        if class_table(css):
            path.write_text(prune_class_table(css, names), encoding="utf-8")
            logger.info("icon_subset: %s %d -> %d bytes (%d icon classes kept)",
                        path.name, len(css.encode()), path.stat().st_size, len(names))
    for path in fonts:
        before, after, kept = subset_font(original(app, path), path, points)
        logger.info("icon_subset: %s %d -> %d bytes (%d glyphs)", path.name, before, after, kept)


def setup(app):
    app.connect("build-finished", on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
