"""The website: a strict build, nothing loaded from another host, figures with captions and alt text."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from tools.registry import chapters
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
            self.figures.append({"caption": False})
        if tag == "figcaption" and self.figures:
            self.figures[-1]["caption"] = True
        for key, value in a.items():
            if key == "style" and value and re.search(r"url\(\s*['\"]?(https?:)?//", value):
                self.loads.append(("style", value))

    def handle_endtag(self, tag):
        if tag == "figure":
            self.figure_depth -= 1


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


def test_mathjax_is_served_by_the_site(built_site):
    """MathJax's own components, served by the site: TeX in, CommonHTML out, assistive MathML for
    screen readers; not the context menu (0.43 MB, and it made every formula a tab stop)."""
    mathjax = built_site / "_static" / "mathjax"
    for component in ["startup.js", "core.js", "input/tex.js", "output/chtml.js", "output/chtml/fonts/tex.js",
                      "a11y/assistive-mml.js", "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff"]:
        assert (mathjax / component).is_file(), f"_static/mathjax/{component} is missing"
    page = (built_site / "book" / "notation.html").read_text(encoding="utf-8")
    assert "_static/mathjax/startup.js" in page
    config = json.loads(re.search(r"window\.MathJax = (\{.*?\})</script>", page).group(1))
    assert config["loader"]["load"] == ["input/tex", "output/chtml", "a11y/assistive-mml"]
    assert {"vx", "softmax", "valpha"} <= set(config["tex"]["macros"]), "the MathJax macros of _config.yml are not on the page"


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
        for i, figure in enumerate(parsed.figures):
            if not figure["caption"]:
                problems.append(f"{chapter}: figure {i + 1} has no caption")
    assert not problems, "\n".join(problems)


def test_notebook_pages_have_launch_buttons(built_site):
    for chapter in CHAPTERS:
        page = (built_site / "notebooks" / f"{chapter}.html").read_text(encoding="utf-8")
        assert "colab.research.google.com/github/" in page, f"{chapter} has no Colab button"
        assert "mybinder.org" in page, f"{chapter} has no Binder button"
