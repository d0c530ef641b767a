"""The chapters in the Jupyter front ends students open: JupyterLab 4 and Jupyter Notebook 7, in
Debian's Chromium through pytest-playwright.

One Jupyter server (loopback, token off, a throwaway root folder holding the `colab/` copies that
`make lab` and the README send students to, outputs cleared) serves both clients for the whole
module, so pytest-xdist (`--dist loadgroup`, group `frontends`) runs this file on one worker. For each chapter and
client the test opens the notebook, runs all cells from the Run menu, waits until every code cell
has its execution count (the copies are opened with their outputs cleared, so a count proves
the cell ran here), and that the only error outputs are in cells tagged `raises-exception`. Then it moves every
control of the chapter (sliders, dropdowns) by keyboard and waits until the output next to it
changes; no rendered markdown cell shows a raw MyST role, directive or option line; the browser
console shows no error.

JupyterLab runs every chapter, in the book's environment (`.venv`), under the device check
(tools/testing/device_check.py: the test reads the kernel's report, which must count the chapter's
torch operations and no device error). That run is also the suite's run of the chapter for its
stored outputs: the test saves the notebook (File > Save) and nbval compares the stored outputs of
`notebooks/` with it, cell by cell, with the suite's sanitizers (tools/testing/nbval_replay.py), so
`make test` does not execute the chapters a second time in `.venv` (tools/testing/stage_notebooks.py
stages none for nbval where Chromium is installed). Every chapter runs in full there but the
`long_training` chapters of the registry, whose training (their `skip-in-tests` cells, and the cells that use it; about 120 CPU-seconds) runs
once, in the Colab re-run under lowered dispatch and the device check (tests/test_portability.py), not
a second time here: nbval reports those cells as skipped, and fails on any other cell the run lacks.
Notebook 7 runs the `notebook7` chapter of the registry (a chapter with few controls) in full.

Notebook 7 and the keyboard: see NOTEBOOK7_KEYBOARD below and docs/decisions.md.
Without /usr/bin/chromium these tests are skipped (and nbval runs every chapter itself), and fail when
the environment variable CI is set.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from browser_helpers import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, DESKTOP, Watch
from prerequisites import missing
from tools.registry import ROOT, chapters
from tools.testing import device_check, nbval_replay
from tools.testing.stage_notebooks import TRAINING_ONLY_IN_THE_COLAB_RUN

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("frontends")]

JUPYTER = ROOT / ".venv" / "bin" / "jupyter"
SHOTS = ARTIFACTS / "frontends"
STEMS = [c.stem for c in chapters()]
NOTEBOOK7 = [c.stem for c in chapters() if c.notebook7]  # `notebook7` in tools/chapters.toml: a chapter with few sliders
RUN_TIMEOUT_MS = 600_000
# A raw MyST line in rendered markdown: a role, a directive fence or one of its option lines.
RAW_MYST = re.compile(r"\{(cite|cite:p|cite:t|doc|ref|numref|eq|math|exercise|solution|solution-start|"
                      r"solution-end|admonition|note|warning|figure|code-cell)\}|^\s*:(class|label|name|"
                      r"nonumber|dropdown):", re.M)
CONTROLS = ".widget-slider, .widget-dropdown"
# Notebook 7 keeps the arrow keys from a focused widget: upstream jupyter/notebook#7716 (docs/decisions.md).
NOTEBOOK7_KEYBOARD = "Notebook 7: arrow keys on a focused widget do not reach it"
# Errors that Notebook 7's page showed here with one chapter, none raised by the book's code: Notebook 7's
# own static fonts refused (403), and two uncaught exceptions that name no book code (a command of
# JupyterLab's file browser that Notebook 7's notebook page does not register, and a settings
# 'schema'). Not yet traced to their extension; docs/decisions.md keeps the list.
NOTEBOOK7_KNOWN_ERRORS = re.compile(r"403.*/static/notebook/[0-9a-f]+\.woff2?\b|"
                                    r"Command 'filebrowser:open-path' not registered|"
                                    r"Cannot read properties of undefined \(reading 'schema'\)")
TIMINGS: list[dict] = []


# ---------------------------------------------------------------- the server and the browser

@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright launches Debian's Chromium (playwright's own download is not used)."""
    if not CHROMIUM.is_file():
        missing("the front-end tests need Debian's Chromium at /usr/bin/chromium, which is missing; "
                "install it with `apt-get install -y chromium`")
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cleared_copy(stem: str, dest: Path, training: bool = True) -> None:
    """The Colab-ready copy, outputs cleared (so that a count proves the cell ran in this test); without
    `training`, without the cells tagged skip-in-tests (a cell that shows an explorer stays, and so does a
    training cell tagged explorer-data, whose model the explorer shows)."""
    nb = json.loads((ROOT / "colab" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    if not training:
        nb["cells"] = [c for c in nb["cells"] if not {"skip-in-tests"} & set(c.get("metadata", {}).get("tags", []))
                       or "explorer-data" in c.get("metadata", {}).get("tags", []) or "explorer" in "".join(c["source"])]
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    (dest / f"{stem}.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")


class JupyterServer:
    def __init__(self, folder: Path):
        self.root = folder / "root"
        self.root.mkdir()
        settings = folder / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True)
        # Every cell in the page (JupyterLab 4 and Notebook 7 otherwise draw only the cells in view).
        (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
        # No pop-up asking about Jupyter's news over the page (and no request for them).
        news = folder / "settings" / "@jupyterlab" / "apputils-extension"
        news.mkdir(parents=True)
        (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
        for client, stems in (("lab", STEMS), ("notebook", NOTEBOOK7)):  # a fresh copy per client
            (self.root / client).mkdir()
            for stem in stems:
                cleared_copy(stem, self.root / client, training=stem not in TRAINING_ONLY_IN_THE_COLAB_RUN)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(folder / "settings"),
               "JUPYTERLAB_WORKSPACES_DIR": str(folder / "workspaces"), "JUPYTER_RUNTIME_DIR": str(folder / "runtime")}
        run = os.environ.get("BOOK_DEVICE_CHECK_DIR", str(ROOT / "_build" / "device-check"))
        env.update(device_check.activate(os.path.join(run, "frontends"), env))
        self.device_reports = Path(env["BOOK_DEVICE_REPORTS"])
        self.log = open(folder / "server.log", "w")
        cmd = [str(JUPYTER), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
               "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
               "--ServerApp.disable_check_xsrf=True",  # the test's own DELETE of each chapter's kernel
               f"--ServerApp.root_dir={self.root}", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        self.process = subprocess.Popen(cmd, cwd=self.root, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/api/status", timeout=2)
                return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"Jupyter server did not start: {(folder / 'server.log').read_text()[-3000:]}")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser_type_launch_args):
    if not JUPYTER.is_file():
        missing(f"{JUPYTER} is missing: `make test` creates .venv")
    srv = JupyterServer(tmp_path_factory.mktemp("jupyter"))
    yield srv
    srv.stop()
    SHOTS.mkdir(parents=True, exist_ok=True)  # what the closing note of a change reports (pytest-xdist hides prints)
    (SHOTS / "timings.json").write_text(json.dumps(TIMINGS, indent=1) + "\n", encoding="utf-8")
    print("\nfront ends (client, chapter, seconds to run all, controls moved by keyboard, outputs changed):")
    for t in TIMINGS:
        print(f"  {t['client']:8s} {t['chapter']:38s} {t['seconds']:6.1f} s  {t['controls']} controls moved by "
              f"{t['by']}, {t['changed']} outputs changed")


# ---------------------------------------------------------------- driving a client

PROMPTS = "() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim())"
# Run All is over when no cell is queued or running ([*]) and the kernel is idle (a cell that fails
# without the raises-exception tag stops the run: the cells after it keep their empty prompt).
RUN_OVER = """() => { const p = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
  const k = document.querySelector('.jp-Notebook-ExecutionIndicator');
  return p.some(e => /\\[\\d+\\]/.test(e.textContent)) && !p.some(e => e.textContent.includes('*'))
         && k && k.dataset.status === 'idle'; }"""

OUTPUT_SNAPSHOT = """(cell) => {
  const out = cell.querySelector('.jp-OutputArea');
  if (!out) return '';
  const copy = out.cloneNode(true);
  copy.querySelectorAll('%s').forEach(e => e.remove());
  return copy.innerHTML;
}""" % CONTROLS

MARKDOWN_TEXT = """() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown')]
  .map(e => e.innerText)"""


def open_notebook(page, server, client, stem):
    # ?reset: a fresh JupyterLab workspace, so that the previous chapter's tab is not restored beside it
    path = f"/lab/tree/lab/{stem}.ipynb?reset" if client == "lab" else f"/notebooks/notebook/{stem}.ipynb"
    page.goto(server.url + path)
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=120_000)
    # The indicator reads idle before the kernel's session exists, then initializing, then idle:
    # wait until the kernel is named in the page and the indicator has read idle for a second.
    for _ in range(2):
        page.wait_for_function("""() => { const k = document.querySelector('.jp-Notebook-ExecutionIndicator');
                                          return k && k.dataset.status === 'idle'
                                                 && document.body.innerText.includes('Python 3 (ipykernel)'); }""",
                               timeout=120_000)
        page.wait_for_timeout(1000)


def run_all_from_the_menu(page):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator("li.lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    for _ in range(2):  # over, and still over a second later (the kernel is idle between two cells)
        page.wait_for_function(RUN_OVER, timeout=RUN_TIMEOUT_MS, polling=500)
        page.wait_for_timeout(1000)


ERRORS_PER_CELL = r"""() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')].map(cell =>
  [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(o => o.innerText).filter(t => /^-{20,}|Traceback \(most recent call last\)/m.test(t))
    .map(t => t.trim().split('\n').filter(l => /^\w*(Error|Exception)\b/.test(l)).pop() || t.slice(0, 200)))"""


def check_cells_ran(page, server, client, stem) -> int:
    """Every code cell has its execution count, and an error output only if it is tagged
    raises-exception, which must show one (an error output is the kernel's traceback, which ipykernel
    starts with a rule of dashes; a warning on stderr is not one). Returns the cells that raised."""
    nb = json.loads((server.root / client / f"{stem}.ipynb").read_text(encoding="utf-8"))
    tagged = ["raises-exception" in c.get("metadata", {}).get("tags", []) for c in nb["cells"] if c["cell_type"] == "code"]
    errors = page.evaluate(ERRORS_PER_CELL)
    assert len(errors) == len(tagged), f"{stem} in {client}: {len(errors)} code cells shown, {len(tagged)} in the notebook"
    # A folded cell (jupyter.source_hidden) shows no prompt; the counts of the others, and the last count
    # equal to the number of code cells (Run All sends each cell once), show that every cell ran.
    folded = [bool(c.get("metadata", {}).get("jupyter", {}).get("source_hidden")) for c in nb["cells"]
              if c["cell_type"] == "code"]
    prompts = page.evaluate(PROMPTS)
    counts = [int(m.group(1)) for p in prompts for m in [re.match(r"\[(\d+)\]", p)] if m]
    not_run = [i for i, p in enumerate(prompts) if not folded[i] and not re.match(r"\[\d+\]", p)]
    if max(counts, default=0) != len(tagged):
        not_run.append(f"(the last count is {max(counts, default=0)}, for {len(tagged)} code cells)")
    problems = [f"code cell {i} raised: {e[0]}" for i, (e, t) in enumerate(zip(errors, tagged)) if e and not t]
    problems += [f"code cells {not_run[:5]}{'...' if len(not_run) > 5 else ''} did not run"] if not_run else []
    problems += [f"code cell {i} is tagged raises-exception but raised nothing"
                 for i, (e, t) in enumerate(zip(errors, tagged)) if t and not e]
    assert not problems, f"{stem} in {client}: " + "; ".join(problems)
    return sum(tagged)


def move_every_control(page, stem, client, by="keyboard") -> tuple[int, int, list[str]]:
    """Each slider's handle and each dropdown, by keyboard (focus, one arrow key) or by mouse (drag the
    handle, pick an option): the control's value and the output next to it must change.
    Returns (controls moved, outputs changed, failures)."""
    moved = changed = 0
    failures = []
    cells = page.locator(".jp-Notebook .jp-CodeCell").filter(has=page.locator(CONTROLS))
    for c in range(cells.count()):
        cell = cells.nth(c)
        controls = cell.locator(CONTROLS)
        for i in range(controls.count()):
            control = controls.nth(i)
            control.scroll_into_view_if_needed()
            labels = control.locator(".widget-label")
            name = labels.first.inner_text() if labels.count() else f"#{i}"
            is_slider = "widget-slider" in (control.get_attribute("class") or "")
            target = control.locator(".noUi-handle").first if is_slider else control.locator("select").first
            value = (lambda: control.locator(".widget-readout").first.inner_text()) if is_slider else \
                (lambda: target.input_value())
            at_end = target.evaluate("""(e) => e.tagName === 'SELECT' ? e.selectedIndex === e.options.length - 1
                                       : Number(e.getAttribute('aria-valuenow')) >= Number(e.getAttribute('aria-valuemax'))""")
            before_value, before_out = value(), cell.evaluate(OUTPUT_SNAPSHOT)
            if by == "keyboard":
                how = ("ArrowLeft" if is_slider else "ArrowUp") if at_end else ("ArrowRight" if is_slider else "ArrowDown")
                target.focus()
                page.keyboard.press(how)
                if not is_slider:
                    page.wait_for_timeout(1500)
                    if value() == before_value:
                        # JupyterLab's command mode takes ArrowUp/ArrowDown from a focused dropdown (it moves
                        # the cell selection): the keyboard's other way opens the list, picks, and confirms.
                        print(f"{client} {stem}: dropdown {name!r}: {how} did not reach it; Alt+ArrowDown, {how}, Enter")
                        target.focus()
                        for key in ("Alt+ArrowDown", how, "Enter"):
                            page.keyboard.press(key)
                        how = f"Alt+ArrowDown, {how}, Enter"
            elif is_slider:
                how = "a drag of the handle"
                box = target.bounding_box()
                x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
                page.mouse.move(x, y)
                page.mouse.down()
                page.mouse.move(x + (-30 if at_end else 30), y, steps=5)
                page.mouse.up()
            else:
                how = "a click on another option"
                options = target.evaluate("(e) => [...e.options].map(o => o.value)")
                target.click()
                target.select_option(options[-2] if at_end else options[-1] if before_value == options[0] else options[0])
            deadline = time.time() + 3
            while time.time() < deadline and value() == before_value:
                page.wait_for_timeout(100)
            if value() == before_value:
                failures.append(f"control {name!r} (cell {c}) did not move by {how}")
                continue
            moved += 1
            deadline = time.time() + 15
            while time.time() < deadline and cell.evaluate(OUTPUT_SNAPSHOT) == before_out:
                page.wait_for_timeout(100)
            if cell.evaluate(OUTPUT_SNAPSHOT) == before_out:
                failures.append(f"control {name!r} (cell {c}) moved by {how}, but its output did not change")
            else:
                changed += 1
    return moved, changed, failures


def check_markdown_is_rendered(page, stem, client):
    raw = [text[:120] for text in page.evaluate(MARKDOWN_TEXT) if RAW_MYST.search(text)]
    assert not raw, f"{stem} in {client}: raw MyST in rendered markdown: {raw[:3]}"


PYTHON = ROOT / ".venv" / "bin" / "python"


def save(page, server, client, stem) -> Path:
    """Save the notebook from the File menu and wait until the file holds every count."""
    path = server.root / client / f"{stem}.ipynb"
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^File$")).click()
    page.locator("li.lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel",
                 has_text=re.compile(r"^Save( Notebook)?$")).click()
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            if all(c.get("execution_count") for c in cells if c["cell_type"] == "code"):
                return path
        except (OSError, ValueError):  # the server is writing it
            pass
        page.wait_for_timeout(300)  # (not time.sleep: the page's requests go through Watch's route, in this thread)
    raise AssertionError(f"{stem} in {client}: File > Save did not save the run (code cells without a count on disk)")


def check_stored_outputs(executed: Path, stem: str, folder: Path) -> None:
    """nbval compares the chapter's stored outputs (notebooks/) with this run's, cell by cell, with the
    suite's sanitizers (tools/testing/nbval_replay.py): this run is the suite's execution of the chapter
    in the book's environment, so nbval does not run it a second time."""
    folder.mkdir(parents=True, exist_ok=True)
    stored = folder / f"{stem}.ipynb"
    shutil.copy2(ROOT / "notebooks" / f"{stem}.ipynb", stored)
    shutil.copy2(executed, folder / "executed-in-jupyterlab.ipynb")
    left_out = "skip-in-tests" if stem in TRAINING_ONLY_IN_THE_COLAB_RUN else None
    result = subprocess.run(nbval_replay.command(PYTHON, "executed-in-jupyterlab.ipynb", stored.name, left_out),
                            cwd=folder, capture_output=True, text=True, env=nbval_replay.environment())
    assert result.returncode == 0, (f"{stem}: the run in JupyterLab does not reproduce the stored outputs "
                                    f"(nbval):\n{result.stdout[-6000:]}{result.stderr[-2000:]}")


def check_device_report(server, stem) -> None:
    """The kernel ran the chapter under the device check (tools/testing/device_check.py): its report
    names the chapter and counts the torch operations it followed, none an error."""
    if not any("import torch" in "".join(c["source"]) for c in
               json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]):
        return
    device_check.check_report(str(server.device_reports), stem, "JupyterLab")


def shut_down_kernels(server):
    """One chapter's kernel at a time: each holds PyTorch in memory."""
    with urllib.request.urlopen(f"{server.url}/api/kernels", timeout=10) as response:
        kernels = json.load(response)
    for kernel in kernels:
        request = urllib.request.Request(f"{server.url}/api/kernels/{kernel['id']}", method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


def drive(page, server, client, stem):
    # Not routed through the test (intercept=False): a routed page has no HTTP cache, so every chapter
    # would load and compile JupyterLab's scripts anew (about 2 CPU-seconds a chapter, measured).
    watch = Watch(page, intercept=False)
    try:
        return _drive(page, server, client, stem, watch)
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{client}-{stem}-failed.png"))
        raise
    finally:
        watch.close()
        shut_down_kernels(server)


def _drive(page, server, client, stem, watch):
    open_notebook(page, server, client, stem)
    start = time.perf_counter()
    run_all_from_the_menu(page)
    seconds = time.perf_counter() - start
    print(f"{client} {stem}: all cells ran in {seconds:.1f} s")
    check_cells_ran(page, server, client, stem)
    check_markdown_is_rendered(page, stem, client)
    if client == "lab":  # the suite's one run of the chapter in .venv: its outputs against the stored ones
        check_stored_outputs(save(page, server, client, stem), stem, server.root.parent / "replay" / stem)
        check_device_report(server, stem)
    moved, changed, failures = move_every_control(page, stem, client)
    by = "keyboard"
    if client == "notebook" and failures and moved == 0:
        # The known exception (NOTEBOOK7_KEYBOARD): no control moves by keyboard in Notebook 7; the mouse must.
        print(f"notebook {stem}: by keyboard, {len(failures)} controls did not move ({NOTEBOOK7_KEYBOARD}); "
              "checking the mouse")
        moved, changed, failures = move_every_control(page, stem, client, by="mouse")
        by = "mouse"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{client}-{stem}.png"))
    TIMINGS.append({"client": client, "chapter": stem, "seconds": seconds, "controls": moved, "changed": changed,
                    "by": by})
    assert not failures, f"{stem} in {client}: " + "; ".join(failures)
    errors = [e for e in watch.errors if not (client == "notebook" and NOTEBOOK7_KNOWN_ERRORS.search(e))]
    assert not errors, f"{stem} in {client}: browser errors: {errors[:5]}"
    assert not watch.remote, f"{stem} in {client}: requests to other hosts: {watch.remote[:5]}"
    return moved, changed


# ---------------------------------------------------------------- the tests

@pytest.fixture(scope="module")
def client_page(browser, server):
    """One browser tab for every chapter and both clients, as a student keeps one: its HTTP cache keeps
    JupyterLab's scripts between chapters (each chapter still opens with a fresh page load and a reset
    workspace). A failing chapter leaves a screenshot in _build/test-artifacts/frontends/."""
    context = browser.new_context(viewport=DESKTOP)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("stem", STEMS)
def test_chapter_runs_and_its_controls_move_in_jupyterlab(client_page, server, stem):
    client_page.set_viewport_size(DESKTOP)
    drive(client_page, server, "lab", stem)


@pytest.mark.parametrize("stem", NOTEBOOK7)
def test_chapter_runs_and_its_controls_move_in_notebook7(client_page, server, stem):
    client_page.set_viewport_size(DESKTOP)
    drive(client_page, server, "notebook", stem)
