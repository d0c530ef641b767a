"""Every chapter under Google Colab's package versions, and the explorer on ipywidgets 7.

These tests run only in the environment that pins Colab's runtime, `.venv-colab`, built from
tools/colab-constraints.txt (the one place that records Colab's versions) by `make test-colab`,
which runs them. In any other environment they are skipped. Python there is 3.11 with the local
CPU torch build: what these pins test is the widget, IPython and kernel-protocol versions, numpy
and matplotlib; the notebooks' own code is the same on Colab's Python.

- the kernel that runs the notebooks has exactly the pinned versions;
- every chapter notebook runs top to bottom alone in an empty folder (cells tagged
  `raises-exception` may raise), as "Runtime > Run all" does on Colab;
- `SiteExplorer` (tools/shared/site_explorer.py, copied into the notebooks) keeps its config and
  builds its display bundle on ipywidgets 7.7.1, whose widgets have no `_repr_mimebundle_`.
"""
from __future__ import annotations

import html
import json
import re
from importlib import metadata
from pathlib import Path

import nbformat
import pytest

from tools.registry import ROOT, chapters

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
pytestmark = pytest.mark.skipif(not IN_COLAB_VENV, reason=(
    "Colab's pinned versions are not installed here; `make test-colab` runs these tests in .venv-colab"))

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


@pytest.mark.parametrize("chapter", chapters(), ids=lambda c: c.stem)
def test_chapter_runs_alone_on_colabs_versions(chapter, tmp_path):
    folder = tmp_path / "empty"
    nb = nbformat.read(chapter.notebook, as_version=4)
    widget = "application/vnd.jupyter.widget-view+json"
    explorers = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                 and any(widget in o.get("data", {}) for o in c.outputs)]
    assert bool(explorers) == bool(chapter.explorers), f"{chapter.stem}: stored explorer outputs {explorers}, registry {chapter.explorers}"
    run_alone(nb, folder)
    assert sorted(p.name for p in folder.iterdir()) == [], "the notebook wrote files"
    # the cells that show an explorer in the stored outputs show a live widget here too
    silent = [i for i in explorers if not any(widget in o.get("data", {}) for o in nb.cells[i].outputs)]
    assert not silent, f"{chapter.stem}: cells {silent} show no widget on ipywidgets {pins()['ipywidgets']}"


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
    assert bundle["text/plain"]
