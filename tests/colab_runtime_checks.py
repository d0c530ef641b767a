"""Checks that run inside `.venv-colab`, the environment pinned to Google Colab's runtime.

`.venv-colab` is built by `make test` from tools/colab-constraints.txt (the one place that records
Colab's versions); tests/test_portability.py runs this file there with that environment's Python,
and runs every chapter there against its stored outputs. The file is not named test_*.py, so the
main suite does not collect it. Python there is 3.11 with the local CPU torch build: what the pins
test is the widget, IPython and kernel-protocol versions, numpy and matplotlib; the notebooks' own
code is the same on Colab's Python.

- the kernel that runs the notebooks has exactly the pinned versions;
- `SiteExplorer` (tools/shared/site_explorer.py, copied into the notebooks) keeps its config and
  builds its display bundle on ipywidgets 7.7.1, whose widgets have no `_repr_mimebundle_`, and
  its text is the same as on ipywidgets 8 (ipywidgets 7 shows `repr()`).
"""
from __future__ import annotations

import html
import json
import re
from importlib import metadata
from pathlib import Path

import nbformat
import pytest

from tools.registry import ROOT

CONSTRAINTS = ROOT / "tools" / "colab-constraints.txt"


def pins() -> dict[str, str]:
    found = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            found[name.strip().lower().replace("_", "-")] = version.strip()
    return found


def installed(name: str) -> str | None:
    try:
        return metadata.version(name).split("+")[0]  # 2.13.0+cpu -> 2.13.0
    except metadata.PackageNotFoundError:
        return None


IN_COLAB_VENV = all(installed(name) == version for name, version in pins().items())
if not IN_COLAB_VENV:
    pytest.fail("tests/colab_runtime_checks.py runs in .venv-colab (Colab's pinned versions), "
                "which `make test` builds; here other versions are installed", pytrace=False)

PROBE = """import importlib.metadata as m, sys
print({k: m.version(k).split('+')[0] for k in %r})"""


def run_alone(nb, folder: Path, timeout: int = 900):
    from nbclient import NotebookClient

    folder.mkdir(parents=True, exist_ok=True)
    client = NotebookClient(nb, kernel_name="python3", timeout=timeout, allow_errors=False,
                            resources={"metadata": {"path": str(folder)}})
    client.execute()  # raises CellExecutionError at the first unexpected error
    return nb


def test_the_kernel_has_colabs_versions(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE % sorted(pins()))])
    run_alone(nb, tmp_path)
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert eval(text, {}) == pins(), f"the notebook kernel runs other versions than {CONSTRAINTS.name}: {text}"


def test_site_explorer_on_ipywidgets_7():
    import ipywidgets

    assert ipywidgets.__version__ == pins()["ipywidgets"]
    namespace: dict = {}
    exec((ROOT / "tools" / "shared" / "site_explorer.py").read_text(encoding="utf-8"), namespace)
    config = {"scores": [2.0, 1.0, 0.5], "label": "a <b> & 'c'"}
    slider = ipywidgets.FloatSlider(value=1.0)
    explorer = namespace["SiteExplorer"]("softmax-sharpening", config, [slider])
    assert explorer.config == config and explorer.kind == "softmax-sharpening"
    assert list(explorer.children) == [slider]
    bundle = explorer._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.model_id
    m = re.search(r'data-kind="([^"]+)" data-config="([^"]*)"', bundle["text/html"])
    assert m and m.group(1) == "softmax-sharpening"
    assert json.loads(html.unescape(m.group(2))) == config
    assert bundle["text/plain"] == repr(explorer) == "<softmax-sharpening explorer>"
