"""A test whose prerequisite is missing (Chromium, .venv-colab) is skipped and says why, except under
continuous integration (the environment variable CI set), where it fails: CI may not skip it."""
from __future__ import annotations

import os

import pytest


def missing(message: str):
    if os.environ.get("CI"):
        pytest.fail(message + " (CI is set: this test may not be skipped)", pytrace=False)
    pytest.skip(message)
