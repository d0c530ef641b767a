"""Fixtures shared by the test files."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from filelock import FileLock

from tools.site.sitebuild import ROOT, build_site
from tools.grading import grading_runtime, sandbox

# Grading refuses to start without the bubblewrap sandbox unless the instructor allows it explicitly. Where
# the sandbox cannot run (bubblewrap missing, or no user namespaces), the suite allows it, and says so once.
if not sandbox.installed():
    os.environ[grading_runtime.WITHOUT_SANDBOX] = "1"
    print(f"the grading sandbox cannot run here ({sandbox.unusable()}): the graders' tests run without it")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright launches Debian's Chromium (playwright's own download is not used), for every
    test that drives a browser (tests/test_browser.py, tests/test_frontends.py)."""
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS
    from prerequisites import missing

    if not CHROMIUM.is_file():
        missing("the browser tests need Debian's Chromium at /usr/bin/chromium, which is missing; "
                "install it with `apt-get install -y chromium`")
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def site_build(request, tmp_path_factory):
    """Build the site once per test run from the stored outputs: (result, html folder), where
    result has the build's returncode, stdout and stderr.

    Under pytest-xdist every worker asks for it; a file lock in the run's shared temporary folder
    lets the first worker build and the others reuse its result (pytest-xdist's documented pattern).
    """
    out = ROOT / "_build" / "test-site"
    html = out / "_build" / "html"
    if not hasattr(request.config, "workerinput"):  # not under xdist: just build
        result = build_site(out)
        return SimpleNamespace(returncode=result.returncode, stdout=result.stdout, stderr=result.stderr), html
    shared = tmp_path_factory.getbasetemp().parent  # one folder for all workers of this run
    record = shared / "site-build.json"
    with FileLock(str(shared / "site-build.lock")):
        if not record.exists():
            result = build_site(out)
            record.write_text(json.dumps({"returncode": result.returncode, "stdout": result.stdout[-6000:],
                                          "stderr": result.stderr[-6000:]}))
    return SimpleNamespace(**json.loads(record.read_text())), html


@pytest.fixture(scope="session")
def built_site(site_build) -> Path:
    """The built site's HTML folder; the tests that use it fail if the strict build failed."""
    result, html = site_build
    if result.returncode != 0:
        pytest.fail("the site build failed:\n" + result.stderr[-3000:], pytrace=False)
    return html


DEVICE_CHECK = ROOT / "_build" / "device-check"


def pytest_configure(config):
    """pytest-playwright: artifacts under _build/, a screenshot of each failing browser test.
    The suite's full run of every chapter in the book's environment runs under the device check
    (tools/testing/device_check.py): JupyterLab's kernels (tests/test_frontends.py), or nbval's in
    _build/nbval where Chromium is missing; the `long_training` chapters' training, which JupyterLab leaves out,
    runs under it in the Colab re-run (tests/test_portability.py). A line that would fail on a GPU fails
    its cell; the counts are printed at the end. The other runs (the rest of the Colab re-run, the
    graders) are not slowed by it."""
    from tools.testing import device_check
    # The kernels the tests start draw figures as a reader's do (the stored outputs hold them): a
    # matplotlib backend chosen in the shell (MPLBACKEND) would change their outputs.
    os.environ.pop("MPLBACKEND", None)
    # One folder per test run, shared by its xdist workers (they inherit the controller's environment),
    # so that two sessions in one working tree do not remove each other's startup file or reports.
    if "BOOK_DEVICE_CHECK_DIR" not in os.environ:
        run = DEVICE_CHECK / f"run-{os.getpid()}"
        shutil.rmtree(run, ignore_errors=True)
        os.environ["BOOK_DEVICE_CHECK_DIR"] = str(run)
    device_check.activate(os.environ["BOOK_DEVICE_CHECK_DIR"], only_under=str(ROOT / "_build" / "nbval"))
    config.addinivalue_line("markers", "benchmark: measures and reports (printed, browser-report.json); asserts no time")
    if getattr(config.option, "output", None) == "test-results":
        config.option.output = str(ROOT / "_build" / "test-artifacts" / "playwright")
    if getattr(config.option, "screenshot", None) == "off":
        config.option.screenshot = "only-on-failure"


def pytest_terminal_summary(terminalreporter):
    """What the device check counted in every kernel that ran torch code."""
    from tools.testing import device_check
    if hasattr(terminalreporter.config, "workerinput"):
        return
    lines = device_check.summary(os.environ.get("BOOK_DEVICE_CHECK_DIR", str(DEVICE_CHECK)))
    if lines:
        terminalreporter.write_sep("-", f"device check: {len(lines)} kernels ran torch code")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_report_header(config):
    """The nbval mode in force (NBVAL_MODE: replay of the JupyterLab run, or lone copies)."""
    from tools.testing.stage_notebooks import describe, nbval_mode
    try:
        return describe(nbval_mode())
    except SystemExit as stop:
        return str(stop)
