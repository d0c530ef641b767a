"""Fixtures shared by the test files."""
from __future__ import annotations

from pathlib import Path

import pytest

from tools.sitebuild import ROOT, build_site


@pytest.fixture(scope="session")
def site_build():
    """Build the site once per session from the stored outputs; the build's result."""
    out = ROOT / "_build" / "test-site"
    result = build_site(out)
    return result, out / "_build" / "html"


@pytest.fixture(scope="session")
def built_site(site_build) -> Path:
    """The built site's HTML folder; the tests that use it fail if the strict build failed."""
    result, html = site_build
    if result.returncode != 0:
        pytest.fail("the site build failed:\n" + result.stderr[-3000:], pytrace=False)
    return html

