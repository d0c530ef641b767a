"""Every torch chapter is ready for the GPU a student picks on Colab.

* The device is picked in one place: the shared `book_style` cell (`device = torch.device("cuda" if
  torch.cuda.is_available() else "cpu")`); no other cell of a chapter assigns `device` or builds a
  `torch.device`.
* The device check (tools/testing/device_check.py) follows, on this CPU, which tensors would live on
  the GPU and raises where CUDA would: a device tensor meeting a CPU tensor, `.numpy()` on a device
  tensor, a module not moved to the device. It runs in nbval's kernels (tests/conftest.py: one full
  run of every chapter, no execution of its own) and in the Jupyter front ends' kernels; the test
  session ends with its counts per chapter. The tests below show that it fails where it should, that
  it passes portable code, and that a kernel started by this session is under it.
* On a machine with CUDA, every torch chapter runs top to bottom on the GPU with the same in-cell
  bands, printing the device and its seconds. Without CUDA this is skipped, and says so.
"""
from __future__ import annotations

import ast
import json
import time

import numpy as np
import pytest
import torch

from tools.registry import ROOT, chapters
from tools.testing import device_check
from tools.testing.device_check import DeviceError

STEMS = [c.stem for c in chapters()]


def code_cells(stem):
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def torch_stems():
    return [s for s in STEMS if any("import torch" in "".join(c["source"]) for c in code_cells(s))]


@pytest.mark.parametrize("stem", torch_stems())
def test_the_device_is_picked_in_one_place(stem):
    picks = []
    for index, cell in enumerate(code_cells(stem)):
        source = "".join(cell["source"])
        if source.startswith("# shared helper: book_style"):
            picks.append(index)
            continue
        for node in ast.walk(ast.parse(source)):
            names = [t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)]
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and "device" in names:
                pytest.fail(f"{stem}: code cell {index} assigns `device` (line {node.lineno}); "
                            "the book_style cell picks it")
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("torch.device", "torch.cuda.set_device"):
                pytest.fail(f"{stem}: code cell {index} builds a device (line {node.lineno}); use `device`")
    assert len(picks) == 1, f"{stem}: {len(picks)} book_style cells (the device must be picked once)"


@pytest.fixture
def checked():
    namespace = {"device": torch.device("cpu")}
    mode = device_check.install(namespace)
    yield namespace["device"], mode
    device_check.uninstall()


def test_check_raises_where_cuda_would(checked):
    device, _ = checked
    on_device = torch.zeros(3, device=device)
    with pytest.raises(DeviceError, match="numpy"):
        on_device.numpy()
    with pytest.raises(DeviceError, match="numpy"):
        np.asarray(on_device * 2)
    with pytest.raises(DeviceError, match="mixes"):
        on_device + torch.ones(3)                        # a CPU tensor created without device=device
    with pytest.raises(DeviceError, match="mixes"):
        torch.nn.Linear(3, 2)(on_device)                 # a module not moved with .to(device)
    model = torch.nn.Linear(3, 2).to(device)
    with pytest.raises(DeviceError, match="mixes"):
        model(torch.randn(4, 3))
    with pytest.raises(DeviceError, match="numpy"):
        model(on_device).detach().numpy()


def test_check_passes_portable_code_and_counts(checked):
    device, mode = checked
    x = torch.randn(4, 3, device=device)
    model = torch.nn.GRU(3, 5, batch_first=True).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    out, _ = model(x[None])
    loss = out.pow(2).mean() + torch.tensor(1.0)         # a CPU scalar is fine on CUDA too
    loss.backward()
    optimizer.step()
    moved = torch.ones(3).to(device) + torch.zeros(3, device=x.device)
    assert np.allclose(moved.cpu().numpy(), 1.0)
    assert out.detach().cpu().numpy().shape == (1, 4, 5)
    assert torch.tensor([1.0, 2.0]).numpy().sum() == 3.0  # a CPU-only computation never meets the device
    assert x[torch.tensor([0, 2])].shape == (2, 3)       # CPU index tensors are fine on CUDA too
    assert mode.counts["operations"] > 20 and mode.counts["device errors"] == 0


def test_a_kernel_of_nbval_runs_under_the_check(tmp_path):
    """The activation of tests/conftest.py reaches a kernel started where nbval starts its kernels."""
    from jupyter_client.manager import start_new_kernel
    import os
    folder = ROOT / "_build" / "nbval" / "_device_check_probe"
    folder.mkdir(parents=True, exist_ok=True)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(folder), env=dict(os.environ))
    errors = []
    try:
        for code in ["import torch", 'device = torch.device("cpu")', "t = torch.zeros(2, device=device)",
                     "t.numpy()"]:
            kc.execute_interactive(code, timeout=120, output_hook=lambda m: errors.append(m["content"]["ename"])
                                   if m["msg_type"] == "error" else None)
    finally:
        km.shutdown_kernel(now=True)
        folder.rmdir()
    assert errors == ["DeviceError"], f"the kernel was not under the device check: errors {errors}"


@pytest.mark.parametrize("stem", torch_stems())
def test_chapter_runs_on_cuda(stem, tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine (torch.cuda.is_available() is False): "
                    "the chapters were not run on a GPU here")
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if o.get("output_type") == "stream"]
    assert any("cuda" in text for text in printed), f"{stem} did not print a CUDA device"
    print(f"{stem}: ran on {torch.cuda.get_device_name(0)} in {time.perf_counter() - start:.1f} s")
