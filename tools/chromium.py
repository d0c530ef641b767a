"""Where the browser is: Debian's Chromium (package `chromium`), the one browser the tools and tests drive.

A playwright-downloaded browser cannot be had here (no network but the package registries), so every
tool and test that drives a browser (site PDFs, Lighthouse, the browser and front-end tests) takes it
from this one place. CHROMIUM (environment variable) points elsewhere.
"""
from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# headless, as root, no GPU, and no background requests to hosts this machine cannot reach
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
