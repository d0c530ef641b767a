"""`make bench-site`: Lighthouse on every page of the built site, served with compression.

    .venv/bin/python -m tools.site.bench [--site DIR] [--out DIR] [--pages a.html,b.html] [--runs N]

The site (default `_build/html`, as `make book` builds it; when it is missing, it is built from the
notebooks' stored outputs with tools/site/sitebuild.py into `_build/bench/site`) is served by Debian's
nginx on 127.0.0.1 with gzip on, as a static host serves it. Lighthouse (npm `lighthouse`, pinned
in tools/site-bench/package-lock.json and installed here with `npm ci`) loads each page in Debian's
Chromium with its mobile preset and default simulated throttling (a mid-range phone on a slow 4G
network, CPU slowed 4x). Written to `--out` (default `_build/bench/`): one Lighthouse JSON report
per page, `lighthouse.json` (the numbers) and `lighthouse.md` (the table: performance,
accessibility, best practices, SEO, FCP, LCP, TBT, CLS, bytes transferred), with the machine's load
average at the start and end: on a shared machine the timing metrics are noisy.

With `--runs N` each page is measured N times and the median run (by performance score) is kept.
Then each page is loaded `--runs` times more in Chromium (playwright) at a phone's size (390 x 844), with a
trace of the renderer's main thread: its CPU time from the request to 2 s after the load event (the sum
of its top-level tasks; other processes on the machine do not count in it), and how many of the page's
elements the browser has laid out then (the rest wait, content-visibility: auto, until they come near
the screen); medians, in the same table.

Chromium runs with paint holding off (`--disable-features=PaintHolding`). With it on, about half of
the runs here stall: the page's first frame is committed 0.1-0.3 s after the request, but the next
frames are not drawn until a whole second later (observed first paint at 1.2 or 2.2 s, with the main
thread idle in between; Lighthouse issue GoogleChrome/lighthouse#17148 reports the same bimodal stall
in headless runs and on PageSpeed Insights). Lighthouse's simulation counts the main thread's layout
work before the observed first paint into FCP and LCP, and no task before it into TBT, so a stalled
run and a clean run of the same page differ by 5-8 points and the median of three is a coin toss.
(The flag is one of those chrome-launcher, which Lighthouse uses, lists for tools: "don't defer paint
commits"; its docs/chrome-flags-for-tools.md in node_modules.) The table gives each run's observed
first paint (`paint s`), so that a stall, should one still happen, shows. `--paint-holding` runs
with Chromium's default, to see the stall.

This is a measurement, not a test: it exits 0 whatever the numbers (1 if a page fails to load).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "site-bench"  # package.json, package-lock.json, node_modules
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.chromium import CHROMIUM
CHROME_FLAGS = "--headless --no-sandbox --disable-gpu --disable-background-networking"
NO_PAINT_HOLDING = " --disable-features=PaintHolding"  # see the docstring: a headless stall of whole seconds
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  sendfile on;
  # What a static host does: gzip for text (HTML, CSS, JavaScript, JSON, SVG, fonts without it).
  gzip on;
  gzip_comp_level 6;
  gzip_min_length 256;
  gzip_types text/css application/javascript text/javascript application/json image/svg+xml
             application/xml text/plain font/ttf application/vnd.ms-fontobject;
  server {{
    listen 127.0.0.1:{port};
    root {root};
    index index.html;
    etag on;
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """Debian's nginx serving `root` on a free loopback port (gzip on), as a child process."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.port = free_port()
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-nginx-"))
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            sys.exit("make bench-site needs Debian's nginx: apt-get install -y nginx-light (or nginx)")
        conf = self.tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=self.tmp, port=self.port, root=self.root))
        self.proc = subprocess.Popen([nginx, "-p", str(self.tmp), "-c", str(conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    sys.exit("nginx did not start: " + self.proc.stderr.read().decode()[-2000:])
                time.sleep(0.05)
        sys.exit("nginx did not open its port")

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.tmp, ignore_errors=True)


def lighthouse_bin() -> Path:
    """node_modules/.bin/lighthouse, installed with `npm ci` from the committed lock file when missing."""
    binary = HERE / "node_modules" / ".bin" / "lighthouse"
    stamp = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    if not binary.exists() or not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    return binary


def site_dir(given: str | None, out: Path) -> Path:
    if given:
        return Path(given)
    html = ROOT / "_build" / "html"
    if (html / "book" / "index.html").is_file():
        return html
    from tools.site.sitebuild import build_site
    target = out / "site"
    print(f"no site in {html}: building it from the stored outputs into {target} ...", flush=True)
    result = build_site(target)
    if result.returncode != 0:
        sys.exit("the site build failed:\n" + result.stderr[-3000:])
    return target / "_build" / "html"


def all_pages() -> list[str]:
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [f"{f}.html" for f in files] + ["genindex.html", "search.html"]


def run_lighthouse(binary: Path, url: str, report: Path, flags: str = CHROME_FLAGS + NO_PAINT_HOLDING) -> dict:
    env = {**os.environ, "CHROME_PATH": str(CHROMIUM)}
    cmd = [str(binary), url, "--quiet", "--output=json", f"--output-path={report}",
           f"--only-categories={','.join(CATEGORIES)}", f"--chrome-flags={flags}"]
    subprocess.run(cmd, env=env, check=True, timeout=300)
    data = json.loads(report.read_text(encoding="utf-8"))
    if data.get("runtimeError"):
        raise RuntimeError(f"{url}: {data['runtimeError']}")
    audits = data["audits"]
    row = {c: round(100 * (data["categories"][c]["score"] or 0)) for c in CATEGORIES}
    row.update({
        "fcp_s": audits["first-contentful-paint"]["numericValue"] / 1000,
        "lcp_s": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "tbt_ms": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "kib": audits["total-byte-weight"]["numericValue"] / 1024,
        "dom": (audits.get("dom-size") or {}).get("numericValue"),
        # what the browser did, before Lighthouse's simulation: its first contentful paint
        "observed_paint_s": audits["metrics"]["details"]["items"][0]["observedFirstContentfulPaint"] / 1000,
        "failed": sorted(k for c in CATEGORIES for k in
                         (r["id"] for r in data["categories"][c]["auditRefs"] if r["weight"] > 0)
                         if audits[k]["score"] is not None and audits[k]["score"] < 1
                         and audits[k]["scoreDisplayMode"] == "binary"),
    })
    return row


# Elements of the page, and those the browser has laid out (outside a skipped content-visibility box).
LAID_OUT = """() => {
  const all = [...document.body.querySelectorAll('*')];
  return {elements: all.length, laid_out: all.filter((e) => e.checkVisibility({contentVisibilityAuto: true})).length,
          formulas: all.filter((e) => e.tagName.startsWith('MJX-')).length};
}"""


def main_thread(url: str, runs: int) -> dict:
    """Median main-thread CPU (ms) of loading `url` at a phone's size, and the elements laid out 2 s after load."""
    import statistics

    from playwright.sync_api import sync_playwright

    from tools.chromium import CHROMIUM_ARGS

    found = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(runs):
            page = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2).new_page()
            browser.start_tracing(page=page, categories=["toplevel", "devtools.timeline"])
            page.goto(url, wait_until="load")
            page.wait_for_timeout(2000)
            counts = page.evaluate(LAID_OUT)
            events = json.loads(browser.stop_tracing())["traceEvents"]
            main = {(e["pid"], e["tid"]) for e in events
                    if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
            cpu = sum(e.get("tdur", e.get("dur", 0)) for e in events
                      if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X"
                      and e.get("name") in ("RunTask", "ThreadControllerImpl::RunTask")) / 1000
            found.append({"cpu_ms": cpu, **counts})
            page.context.close()
        browser.close()
    return {k: statistics.median(r[k] for r in found) for k in found[0]}


TABLE_HEAD = ("| page | perf | a11y | best pr. | SEO | FCP s | LCP s | TBT ms | CLS | KiB | paint s | main thread ms | "
              "laid out / elements |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")


def table(rows: dict[str, dict]) -> str:
    lines = [f"| {p} | {r['performance']} | {r['accessibility']} | {r['best-practices']} | {r['seo']} | "
             f"{r['fcp_s']:.1f} | {r['lcp_s']:.1f} | {r['tbt_ms']:.0f} | {r['cls']:.3f} | {r['kib']:.0f} | "
             f"{', '.join(f'{x:.1f}' for x in r.get('paint_runs', [r['observed_paint_s']]))} | {r.get('cpu_ms', 0):.0f} | {r.get('laid_out', 0):.0f} / {r.get('elements', 0):.0f} |"
             for p, r in rows.items()]
    return TABLE_HEAD + "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", help="built site (default: _build/html, else built from stored outputs)")
    parser.add_argument("--out", default=str(ROOT / "_build" / "bench"))
    parser.add_argument("--pages", help="comma-separated page paths (default: every page)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--paint-holding", action="store_true",
                        help="Chromium's default paint holding (about half the runs stall for a second or two)")
    args = parser.parse_args(argv)
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop nginx on the way out
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    html = site_dir(args.site, out)
    binary = lighthouse_bin()
    pages = args.pages.split(",") if args.pages else all_pages()
    load_start = os.getloadavg()
    rows, failed = {}, False
    with Nginx(html) as server:
        for path in pages:
            runs = []
            for k in range(args.runs):
                report = out / "reports" / f"{path.replace('/', '_').removesuffix('.html')}.{k}.json"
                report.parent.mkdir(parents=True, exist_ok=True)
                try:
                    runs.append(run_lighthouse(binary, f"{server.url}/{path}", report,
                                               CHROME_FLAGS + ("" if args.paint_holding else NO_PAINT_HOLDING)))
                except (subprocess.SubprocessError, RuntimeError) as err:
                    print(f"{path}: Lighthouse failed: {err}", flush=True)
                    failed = True
            if not runs:
                continue
            runs.sort(key=lambda r: r["performance"])
            row = dict(runs[len(runs) // 2])
            if len(runs) > 1:
                row["performance_runs"] = [r["performance"] for r in runs]
                row["tbt_runs"] = [round(r["tbt_ms"]) for r in runs]
                row["paint_runs"] = [r["observed_paint_s"] for r in runs]
            row.update(main_thread(f"{server.url}/{path}", args.runs))
            rows[path] = row
            print(f"{path}: perf {row['performance']} a11y {row['accessibility']} bp {row['best-practices']} "
                  f"seo {row['seo']} FCP {row['fcp_s']:.1f}s LCP {row['lcp_s']:.1f}s TBT {row['tbt_ms']:.0f}ms "
                  f"CLS {row['cls']:.3f} {row['kib']:.0f} KiB  main thread {row['cpu_ms']:.0f} ms, laid out "
                  f"{row['laid_out']:.0f} of {row['elements']:.0f} elements  failing: {', '.join(row['failed']) or '-'}",
                  flush=True)
    load_end = os.getloadavg()
    meta = {"site": str(html), "runs": args.runs, "cores": os.cpu_count(), "paint_holding": args.paint_holding,
            "load_start": [round(x, 2) for x in load_start], "load_end": [round(x, 2) for x in load_end],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    (out / "lighthouse.json").write_text(json.dumps({"meta": meta, "pages": rows}, indent=1), encoding="utf-8")
    md = (f"Lighthouse {json.loads((HERE / 'node_modules' / 'lighthouse' / 'package.json').read_text())['version']}, "
          f"mobile, simulated throttling; nginx with gzip on loopback; paint holding "
          f"{'on (Chromium default)' if args.paint_holding else 'off'}; {meta['date']}; {meta['cores']} cores, "
          f"load average {meta['load_start'][0]:.2f} at the start, {meta['load_end'][0]:.2f} at the end; "
          f"median of {args.runs} run(s).\n\n" + table(rows))
    (out / "lighthouse.md").write_text(md, encoding="utf-8")
    print("\n" + md + f"\nwritten to {out / 'lighthouse.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
