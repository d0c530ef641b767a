"""A PDF of each chapter, printed offline by Chromium from the built website (print stylesheet:
book/_static/site.css): wrapped code, no navigation, no solutions, explorers replaced by their figure.

    python -m tools.site.pdf [SITE_HTML_DIR] [OUTPUT_DIR]
        default: _build/html (make book) -> _build/pdf/<chapter stem>.pdf

Needs Debian's Chromium at /usr/bin/chromium and playwright (requirements.txt). Prints each
chapter's page count and the code or output blocks whose text is wider than their box in print
media (a cut line; there should be none), and the formulas MathJax left untypeset (none).
"""
from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path

from tools.registry import ROOT, chapters

from tools.chromium import CHROMIUM, CHROMIUM_ARGS as ARGS
CUT = """() => [...document.querySelectorAll('pre, .cell_output, div.highlight')]
  .filter((e) => e.getClientRects().length > 0 && e.scrollWidth > e.clientWidth + 1)
  .map((e) => e.textContent.trim().slice(0, 60))"""


# The formulas come typeset by the site build (tools/sphinx_ext/prerender_math.py); a site built
# without it typesets in the browser: wait (up to 20 s) for that, then for the fonts; the number of
# formulas left as raw TeX.
RENDERED = """async () => {
  const left = () => [...document.querySelectorAll('.math')].filter((m) => !m.querySelector('mjx-container')).length;
  const t0 = performance.now();
  while (left() && performance.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 100));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;  // MathJax's fonts (font-display: swap): print the formulas in them
  return left();
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def build_pdfs(html_dir: Path, out_dir: Path, stems: list[str] | None = None, browser=None) -> dict[str, dict]:
    """Print the chapters (those in `stems`, or all) to out_dir; {stem: {pages, cut, unrendered, path}}.
    `browser`: a playwright Browser to use (the tests pass pytest-playwright's); else Chromium is launched."""
    out_dir.mkdir(parents=True, exist_ok=True)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html_dir)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        if browser is not None:
            return _print(browser, url, out_dir, stems)
        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                return _print(browser, url, out_dir, stems)
            finally:
                browser.close()
    finally:
        httpd.shutdown()


def _print(browser, url: str, out_dir: Path, stems) -> dict[str, dict]:
    result = {}
    context = browser.new_context(viewport={"width": 794, "height": 1123})
    page = context.new_page()
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((url, "data:", "blob:")) else r.abort())
    for chapter in chapters():
        if stems is not None and chapter.stem not in stems:
            continue
        page.goto(f"{url}/notebooks/{chapter.stem}.html", wait_until="load")
        unrendered = page.evaluate(RENDERED)
        page.emulate_media(media="print")
        cut = page.evaluate(CUT)
        target = out_dir / f"{chapter.stem}.pdf"
        page.pdf(path=str(target), format="A4", print_background=True, prefer_css_page_size=True)
        result[chapter.stem] = {"pages": _count_pages(target), "cut": cut, "unrendered": unrendered, "path": str(target)}
        page.emulate_media(media="screen")
    context.close()
    return result


def _count_pages(pdf: Path) -> int:
    try:
        from pypdf import PdfReader
        return len(PdfReader(str(pdf)).pages)
    except ImportError:
        import re
        return len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes()))


if __name__ == "__main__":
    html_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html"
    out_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "_build" / "pdf"
    if not (html_dir / "notebooks").is_dir():
        sys.exit(f"{html_dir} has no built chapters: run `make book` first")
    failed = False
    for stem, r in build_pdfs(html_dir, out_dir).items():
        print(f"{r['path']}: {r['pages']} pages, {len(r['cut'])} cut blocks, {r['unrendered']} formulas not typeset")
        for text in r["cut"][:5]:
            print(f"    cut: {text}")
        failed |= bool(r["cut"]) or bool(r["unrendered"])
    sys.exit(1 if failed else 0)
