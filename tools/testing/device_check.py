"""The device check: a CPU run that fails where the same notebook would fail on a GPU.

On a machine without CUDA, `device` is the CPU, so a chapter that forgets it still runs: a tensor
created without `device=device`, a model not moved with `.to(device)`, or `.numpy()` on a tensor
that would live on the GPU all pass here and break on Colab's GPU. This module follows, in a running
kernel, which tensors would live on the chosen device, as CUDA would place them:

- a tensor is *on the device* when it is created with `device=device` (the very object the chapter
  chose, or any tensor's `.device` of a tensor on the device), moved with `.to(device)`, `.cuda()` or
  `.to(tensor_on_the_device)`, is a parameter or buffer of a module moved with `.to(device)`, is a
  gradient of such a parameter, or comes out of any operation that takes a tensor on the device;
- it leaves the device with `.cpu()` or `.to("cpu")`.

and raises `DeviceError`, with the line of the notebook, where CUDA would raise:

- an operation that mixes a tensor on the device with a CPU tensor of more than one element
  (CUDA accepts CPU scalars, CPU index tensors in `t[idx]`, `copy_` across devices and the lengths of
  `pack_padded_sequence`, which must be on the CPU);
- `.numpy()` (or `np.asarray`, or matplotlib, which call it) on a tensor on the device.

It also counts, per kernel, the tensors the notebook's own lines create on the device and those they
create on the CPU (allowed: a CPU-only computation that never meets the device is portable), and the
operations seen. The chapter picks its device in one place, the shared `book_style` helper; the check
takes the `device` global of the kernel's namespace as the chosen device, so a chapter that picked
a second device elsewhere would have its tensors counted as CPU tensors and fail where they meet.

Activated in a kernel by `install()` (tests/test_device.py writes an IPython startup file that calls
it); `report()` gives the counts.
"""
from __future__ import annotations

import glob
import json
import linecache
import os
import sys

import torch
from torch import Tensor
from torch.overrides import TorchFunctionMode

ATTR = "_book_on_device"
TORCH_DIR = os.path.dirname(torch.__file__)
FACTORIES = {"tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
             "arange", "linspace", "logspace", "eye", "tril_indices", "triu_indices", "from_numpy",
             "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
             "scalar_tensor", "normal"}
MAY_MIX = {"copy_", "to", "__getitem__", "__setitem__", "_pack_padded_sequence", "index_put_", "__get__",
           "__set__", "cpu", "cuda", "numpy", "__array__", "tolist", "item", "__repr__", "__format__", "__str__"}


class DeviceError(RuntimeError):
    """Raised where CUDA would fail: a device tensor meets a CPU tensor, or leaves through .numpy()."""


def on(t) -> bool:
    return isinstance(t, torch.Tensor) and getattr(t, ATTR, False)


def mark(obj, value: bool):
    if isinstance(obj, torch.Tensor):
        try:
            setattr(obj, ATTR, value)
        except (AttributeError, RuntimeError):
            pass
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            mark(item, value)
    return obj


def tensors(obj, found=None):
    found = [] if found is None else found
    if isinstance(obj, torch.Tensor):
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            tensors(item, found)
    elif isinstance(obj, dict):
        for item in obj.values():
            tensors(item, found)
    return found


def in_notebook(name: str) -> bool:
    return name.startswith("<ipython-input") or "ipykernel_" in name


def notebook_line(depth: int = 2, direct: bool = False) -> str | None:
    """The notebook's line that called torch, through torch's own Python code unless `direct`
    (None when torch was called from another library)."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if in_notebook(name):
            return linecache.getline(name, frame.f_lineno).strip()
        if direct or not (name.startswith(TORCH_DIR) or name == __file__):
            return None
        frame = frame.f_back
    return None


class DeviceMode(TorchFunctionMode):
    def __init__(self, chosen):
        super().__init__()
        self.chosen = chosen                      # () -> the chapter's chosen torch.device, or None
        self.counts = {"operations": 0, "created on the device": 0, "created on the CPU": 0, "device errors": 0}
        self.cpu_lines: dict[str, int] = {}

    def is_chosen(self, device, chosen) -> bool:
        if device is None:
            return False
        if device is chosen:
            return True
        if isinstance(device, torch.Tensor):
            return on(device)
        text = str(device)
        return text.startswith("cuda") or (text == str(chosen) and text != "cpu")

    def fail(self, what: str):
        self.counts["device errors"] += 1
        line = notebook_line(3)
        where = f" in `{line}`" if line else ""
        raise DeviceError(f"device check: {what}{where}; on a GPU (`device` = cuda) this line fails.")

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        chosen = self.chosen()
        if chosen is None:
            return func(*args, **kwargs)
        self.counts["operations"] += 1
        name = func.__name__ if hasattr(func, "__name__") else ""
        # the tensors among the arguments, one level into lists and tuples (torch.cat, foreach ops)
        any_on, off = False, None
        for a in (*args, *kwargs.values()) if kwargs else args:
            if isinstance(a, Tensor):
                if getattr(a, ATTR, False):
                    any_on = True
                elif off is None and a.dim() > 0:
                    off = a
            elif a.__class__ is list or a.__class__ is tuple:
                for b in a:
                    if isinstance(b, Tensor):
                        if getattr(b, ATTR, False):
                            any_on = True
                        elif off is None and b.dim() > 0:
                            off = b
        if name == "__get__":                      # a property: .device, .grad, .data, .T, ...
            out = func(*args, **kwargs)
            if any_on:
                if getattr(getattr(func, "__self__", None), "__name__", "") == "device":
                    return chosen
                if isinstance(out, Tensor) and out is not args[0]:
                    mark(out, True)
            return out
        if any_on and (name == "numpy" or name == "__array__"):
            self.fail("`.numpy()` on a tensor on the device (call `.cpu()` first)")
        if any_on and off is not None and name not in MAY_MIX:
            self.fail(f"`{name}` mixes a tensor on the device with a CPU tensor of shape "
                      f"{tuple(off.shape)} (create it with `device=device`, or move it with `.to(device)`)")
        if name == "to" or name == "cuda" or name == "cpu":
            out = func(*args, **kwargs)
            if out is args[0]:
                out = out.view_as(out)             # a distinct tensor, as on CUDA where the move copies
            if name == "cuda":
                target = True
            elif name == "cpu":
                target = False
            else:
                target = next((self.is_chosen(a, chosen) for a in list(args[1:]) + [kwargs.get("device")]
                               if isinstance(a, (torch.device, str, Tensor))), on(args[0]))
                if any(isinstance(a, str) and a == "cpu" for a in args[1:]) or str(kwargs.get("device")) == "cpu":
                    target = False
            return mark(out, target)
        out = func(*args, **kwargs)
        if not any_on and name in FACTORIES:
            device = kwargs.get("device")
            placed = self.is_chosen(device, chosen) if device is not None else False
            line = notebook_line(2, direct=True)
            if line is not None:
                if placed:
                    self.counts["created on the device"] += 1
                else:
                    self.counts["created on the CPU"] += 1
                    self.cpu_lines[line] = self.cpu_lines.get(line, 0) + 1
            return mark(out, placed) if placed else out
        if any_on:
            if isinstance(out, Tensor):
                setattr(out, ATTR, True)
            else:
                mark(out, True)
        return out


MODE: DeviceMode | None = None
_original_module_to = torch.nn.Module.to
_original_module_cuda = torch.nn.Module.cuda
_original_module_cpu = torch.nn.Module.cpu


def _module_to(self, *args, **kwargs):
    result = _original_module_to(self, *args, **kwargs)
    chosen = MODE.chosen() if MODE is not None else None
    if chosen is not None:
        targets = [a for a in list(args) + [kwargs.get("device")] if isinstance(a, (torch.device, str, torch.Tensor))]
        if targets:
            placed = MODE.is_chosen(targets[0], chosen)
            for t in list(self.parameters()) + list(self.buffers()):
                mark(t, placed)
    return result


def _module_cuda(self, *args, **kwargs):
    result = _original_module_cuda(self, *args, **kwargs)
    for t in list(self.parameters()) + list(self.buffers()):
        mark(t, True)
    return result


def _module_cpu(self):
    result = _original_module_cpu(self)
    for t in list(self.parameters()) + list(self.buffers()):
        mark(t, False)
    return result


def install(namespace: dict | None = None, report_path: str | None = None) -> DeviceMode:
    """Start the check in this process; the chosen device is `namespace["device"]` (IPython's user namespace)."""
    global MODE
    if namespace is None:
        from IPython import get_ipython
        namespace = get_ipython().user_ns

    def chosen():
        device = namespace.get("device")
        return device if isinstance(device, torch.device) else None

    MODE = DeviceMode(chosen)
    MODE.__enter__()
    torch.nn.Module.to = _module_to
    torch.nn.Module.cuda = _module_cuda
    torch.nn.Module.cpu = _module_cpu
    if report_path:
        def write(*_):
            with open(report_path, "w", encoding="utf-8") as f:
                json.dump(report(), f)
        from IPython import get_ipython
        get_ipython().events.register("post_run_cell", write)
    return MODE


def uninstall() -> None:
    """Stop the check in this process (the unit tests' in-process runs)."""
    global MODE
    if MODE is not None:
        MODE.__exit__(None, None, None)
        MODE = None
    torch.nn.Module.to = _original_module_to
    torch.nn.Module.cuda = _original_module_cuda
    torch.nn.Module.cpu = _original_module_cpu


def report() -> dict:
    return {**MODE.counts, "CPU lines": MODE.cpu_lines} if MODE is not None else {}


STARTUP = """# the device check (tools/testing/device_check.py), started by the test session for every kernel
def _book_device_check(*_):
    import os, sys
    if "torch" not in sys.modules or getattr(_book_device_check, "done", False):
        return
    if {only_under!r} and not os.path.realpath(os.getcwd()).startswith({only_under!r}):
        return
    _book_device_check.done = True
    sys.path.insert(0, {root!r})
    from tools.testing.device_check import install
    # named after the notebook: its session's name in a Jupyter server, else its folder (nbval's lone copies)
    name = os.path.splitext(os.path.basename(os.environ.get("JPY_SESSION_NAME") or os.getcwd()))[0]
    install(get_ipython().user_ns, os.path.join({reports!r}, "%s-%d.json" % (name, os.getpid())))
get_ipython().events.register("post_run_cell", _book_device_check)
"""


def activate(folder: str, env=None, only_under: str = "") -> dict:
    """Make every IPython kernel started with `env` (default: this process's environment, and so its
    children's) run the check once it has imported torch, if its working folder is under
    `only_under` (when given): an IPython startup file in `folder`/ipython, reports in
    `folder`/reports. Returns the two variables set."""
    env = os.environ if env is None else env
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    startup = os.path.join(folder, "ipython", "profile_default", "startup")
    reports = os.path.join(folder, "reports")
    os.makedirs(startup, exist_ok=True)
    os.makedirs(reports, exist_ok=True)
    with open(os.path.join(startup, "00-device-check.py"), "w", encoding="utf-8") as f:
        f.write(STARTUP.format(root=root, reports=reports,
                               only_under=os.path.realpath(only_under) if only_under else ""))
    variables = {"IPYTHONDIR": os.path.join(folder, "ipython"), "BOOK_DEVICE_REPORTS": reports}
    env.update(variables)
    return variables


def check_report(reports: str, name: str, where: str) -> dict:
    """The counts of the latest report of the kernel that ran notebook `name` (reports are named
    `<name>-<pid>.json`); fails with one sentence unless it followed torch operations and found no
    device error. `where` names the run, for the message."""
    paths = sorted(glob.glob(os.path.join(reports, f"{name}-*.json")), key=os.path.getmtime)
    assert paths, f"{name}: the kernel of {where} wrote no device-check report"
    with open(paths[-1], encoding="utf-8") as f:
        counts = json.load(f)
    assert counts["operations"] > 0 and counts.get("device errors", 0) == 0, f"{name} ({where}): device check {counts}"
    return counts


def summary(folder: str) -> list[str]:
    """One line per kernel that ran torch code under the check (every `reports` folder under `folder`),
    for the end of the test session."""
    lines = []
    for path in sorted(glob.glob(os.path.join(folder, "**", "reports", "*.json"), recursive=True)):
        name = os.path.basename(path)[:-len(".json")]
        with open(path, encoding="utf-8") as f:
            counts = json.load(f)
        lines.append(f"{name.rsplit('-', 1)[0]}: {counts['operations']} torch operations, "
                     f"{counts['created on the device']} tensors created on the device, "
                     f"{counts['created on the CPU']} on the CPU (on {len(counts['CPU lines'])} lines), "
                     f"{counts.get('device errors', 0)} device errors")
    return lines
