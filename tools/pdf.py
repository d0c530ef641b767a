"""A PDF of each chapter, printed offline by Chromium from the built website (print stylesheet:
book/_static/site.css): wrapped code, no navigation, no solutions, explorers replaced by their figure.

    python -m tools.pdf [SITE_HTML_DIR] [OUTPUT_DIR]
        default: _build/html (make book) -> _build/pdf/<chapter stem>.pdf

Needs Debian's Chromium at /usr/bin/chromium and playwright (requirements.txt). Prints each
chapter's page count and the code or output blocks whose text is wider than their box in print
media (a cut line; there should be none).
"""
from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path

from tools.registry import ROOT, chapters

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CUT = """() => [...document.querySelectorAll('pre, .cell_output, div.highlight')]
  .filter((e) => e.getClientRects().length > 0 && e.scrollWidth > e.clientWidth + 1)
  .map((e) => e.textContent.trim().slice(0, 60))"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def build_pdfs(html_dir: Path, out_dir: Path) -> dict[str, dict]:
    from playwright.sync_api import sync_playwright
    out_dir.mkdir(parents=True, exist_ok=True)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html_dir)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    result = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 794, "height": 1123})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((url, "data:", "blob:")) else r.abort())
            for chapter in chapters():
                page.goto(f"{url}/notebooks/{chapter.stem}.html", wait_until="load")
                page.evaluate("async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise; }")
                page.emulate_media(media="print")
                cut = page.evaluate(CUT)
                target = out_dir / f"{chapter.stem}.pdf"
                page.pdf(path=str(target), format="A4", print_background=True, prefer_css_page_size=True)
                result[chapter.stem] = {"pages": _count_pages(target), "cut": cut, "path": str(target)}
                page.emulate_media(media="screen")
            browser.close()
    finally:
        httpd.shutdown()
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
        print(f"{r['path']}: {r['pages']} pages, {len(r['cut'])} cut blocks")
        for text in r["cut"][:5]:
            print(f"    cut: {text}")
        failed |= bool(r["cut"])
    sys.exit(1 if failed else 0)
