"""Stored outputs are portable: they reproduce on another CPU and on Colab's package versions, and
hand calculations stay checked.

`make test` compares every notebook's stored outputs with a clean run in the book's environment (the
JupyterLab run of tests/test_frontends.py, compared by nbval; without Chromium, nbval on a lone copy,
tools/testing/stage_notebooks.py). This file adds what makes "verified" mean verified on any machine:

* every notebook is executed once more, alone in an empty folder, in `.venv-colab` (Google Colab's
  numpy, matplotlib, ipywidgets 7, IPython, ipykernel and jupyter_client, pinned in
  tools/colab-constraints.txt), with PyTorch's and NumPy's SIMD kernels lowered to their portable
  baseline and one thread, and must reproduce the same stored outputs and write no file (the
  differences that Colab, a GPU, an ARM laptop or an older CPU make show up here; the `long_training`
  chapters run under the device check too, since their training runs only here). ipywidgets 7
  sends no text/html with a widget; tools/testing/nbval_ipywidgets7.py checks the widget instead;
* in the same environment, tests/colab_runtime_checks.py: the kernel has exactly Colab's versions,
  and the explorer helper works on ipywidgets 7;
* at most 20 % of the code cells that have outputs are exempt from comparison;
* the lines that state a hand calculation's verdict are compared digit for digit (no sanitizer
  touches them and their cell is not exempt), and a changed digit does make nbval fail.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from prerequisites import missing
from tools.registry import ROOT, chapters
from tools.testing import device_check
from tools.testing import nbval_replay
from tools.testing.stage_notebooks import TRAINING_ONLY_IN_THE_COLAB_RUN

SANITIZE = ROOT / "tools" / "testing" / "nbval_sanitize.cfg"
COLAB_PYTHON = ROOT / ".venv-colab" / "bin" / "python"
WIDGETS_7_PLUGIN = ROOT / "tools" / "testing" / "nbval_ipywidgets7.py"
# Lowered dispatch: PyTorch's generic CPU kernels, NumPy without its AVX2/AVX-512 loops, one thread.
LOWERED = {
    "ATEN_CPU_CAPABILITY": "default",
    "NPY_DISABLE_CPU_FEATURES": "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL "
                                "AVX512_SPR X86_V4 AVX2 FMA3 X86_V3",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
EXEMPT = ("nbval-ignore-output", "nbval-skip")   # nbval's tags: outputs not compared, cell not run
VERDICT_LINE = re.compile(r"^(?:SA|MH|[A-Z])\d+\b.*-> (?:agrees|rounding|error|illustrative|inconsistent)\s*$", re.M)
STEMS = [c.stem for c in chapters()]


def sanitizers() -> list[tuple[re.Pattern, str]]:
    pairs, regex = [], None
    for line in SANITIZE.read_text(encoding="utf-8").splitlines():
        if line.startswith("regex:"):
            regex = re.compile(line[len("regex:"):].strip())
        elif line.startswith("replace:") and regex is not None:
            pairs.append((regex, line[len("replace:"):].strip()))
            regex = None
    return pairs


def code_cells(stem: str) -> list[dict]:
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def text_of(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append("".join(out["text"]))
        elif "text/plain" in out.get("data", {}):
            parts.append("".join(out["data"]["text/plain"]))
    return "\n".join(parts)


def nbval(notebook, env=None, python=sys.executable, plugins=()) -> subprocess.CompletedProcess:
    cmd = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-o", "addopts=",
           *[arg for plugin in plugins for arg in ("-p", plugin)],
           "--nbval", "--nbval-current-env", "--nbval-cell-timeout=900",
           "--nbval-sanitize-with", str(SANITIZE), notebook.name]
    return subprocess.run(cmd, cwd=notebook.parent, env={**os.environ, **(env or {})},
                          capture_output=True, text=True)


def colab_python() -> Path:
    if not COLAB_PYTHON.is_file():
        missing(".venv-colab (Colab's pinned versions) is missing: `make test` builds it from "
                "tools/colab-constraints.txt")
    return COLAB_PYTHON


def reproduce_on_colabs_versions_under_lowered_dispatch(stem, tmp_path):
    python = colab_python()
    folder = tmp_path / stem   # alone in it (the device check's report, where there is one, is named after it)
    folder.mkdir()
    copy = folder / f"{stem}.ipynb"
    shutil.copy2(ROOT / "notebooks" / f"{stem}.ipynb", copy)
    shutil.copy2(WIDGETS_7_PLUGIN, folder / WIDGETS_7_PLUGIN.name)
    before = sorted(p.name for p in folder.iterdir())
    env = dict(LOWERED)
    if stem in TRAINING_ONLY_IN_THE_COLAB_RUN:
        # its training runs only here (JupyterLab leaves it out, tests/test_frontends.py): under the device check
        run = os.environ.get("BOOK_DEVICE_CHECK_DIR", str(ROOT / "_build" / "device-check"))
        env.update(device_check.activate(os.path.join(run, f"colab-{stem}"), env))
    result = nbval(copy, env, python=python, plugins=[WIDGETS_7_PLUGIN.stem])
    assert result.returncode == 0, (
        f"{stem} does not reproduce its stored outputs on Colab's versions with {LOWERED}:\n" + result.stdout[-6000:])
    written = sorted(set(p.name for p in folder.iterdir()) - set(before) - {"__pycache__"})
    assert not written, f"{stem} wrote files next to itself: {written}"
    if stem in TRAINING_ONLY_IN_THE_COLAB_RUN:
        device_check.check_report(env["BOOK_DEVICE_REPORTS"], stem, "the Colab re-run")


@pytest.mark.parametrize("stem", [pytest.param(s, marks=pytest.mark.xdist_group(f"colab-runtime:{s}")) for s in STEMS])
def test_stored_outputs_reproduce_on_colabs_versions_under_lowered_dispatch(stem, tmp_path):
    """A group per chapter: pytest-xdist (`--dist loadgroup`) spreads the re-runs over its workers."""
    reproduce_on_colabs_versions_under_lowered_dispatch(stem, tmp_path)


def test_colab_venv_has_colabs_versions_and_the_explorer_works_there():
    """tests/colab_runtime_checks.py, run by .venv-colab's own Python."""
    result = subprocess.run([str(colab_python()), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
                             str(ROOT / "tests" / "colab_runtime_checks.py")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


@pytest.mark.parametrize("stem", STEMS)
def test_at_most_a_fifth_of_the_output_cells_are_exempt(stem):
    with_output = [c for c in code_cells(stem) if c.get("outputs")]
    exempt = [c for c in with_output if set(EXEMPT) & set(c.get("metadata", {}).get("tags", []))]
    assert len(exempt) <= 0.2 * len(with_output), (
        f"{stem}: {len(exempt)} of {len(with_output)} code cells with outputs are exempt from comparison")


@pytest.mark.parametrize("stem", STEMS)
def test_hand_calculation_verdicts_are_compared_digit_for_digit(stem):
    problems = []
    for cell in code_cells(stem):
        lines = VERDICT_LINE.findall(text_of(cell))
        if not lines:
            continue
        if set(EXEMPT) & set(cell.get("metadata", {}).get("tags", [])):
            problems.append(f"a cell printing {lines[0][:40]!r} is exempt from comparison")
        for line in lines:
            sanitized = line
            for regex, replacement in sanitizers():
                sanitized = regex.sub(replacement, sanitized)
            if sanitized != line:
                problems.append(f"a sanitizer changes the verdict line {line!r}")
    assert not problems, f"{stem}: " + "; ".join(problems)


def test_a_changed_digit_of_a_hand_calculation_fails_nbval(tmp_path):
    """Mutation test on the quickest chapter with hand calculations: nbval must notice one digit."""
    stem = min((c for c in chapters() if c.calculations),
               key=lambda c: (c.notebook.stat().st_size, c.number)).stem
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    for index, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", []))
            match = VERDICT_LINE.search(text)
            digit = re.search(r"computed \[?-?\d+\.\d*([0-9])", match.group(0)) if match else None
            if digit:
                start = match.start() + digit.start(1)
                changed = str((int(text[start]) + 1) % 10)
                out["text"] = text[:start] + changed + text[start + 1:]
                break
        else:
            continue
        break
    else:
        pytest.fail(f"{stem} prints no verdict line with a computed value to mutate")
    nb["cells"] = nb["cells"][:index + 1]  # the notebook up to the changed output: nothing after it matters
    copy = tmp_path / f"{stem}.ipynb"
    copy.write_text(json.dumps(nb), encoding="utf-8")
    # nbval with the suite's sanitizers compares the changed notebook with a run whose outputs are the
    # stored ones (tools/testing/nbval_replay.py: no kernel; that the chapter's own run gives the stored
    # outputs is what the JupyterLab and Colab re-runs check)
    shutil.copy2(ROOT / "notebooks" / f"{stem}.ipynb", tmp_path / "run.ipynb")
    result = subprocess.run(nbval_replay.command(sys.executable, "run.ipynb", copy.name), cwd=tmp_path,
                            capture_output=True, text=True, env=nbval_replay.environment())
    assert result.returncode != 0 and "failed" in result.stdout, (
        f"nbval passed {stem} although a digit of a hand calculation was changed")
    assert "1 failed" in result.stdout and "mismatch" in result.stdout.lower(), result.stdout[-3000:]
