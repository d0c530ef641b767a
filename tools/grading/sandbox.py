"""The grading sandbox: a Jupyter kernel spec, `attention-sandbox`, whose kernel runs in bubblewrap.

    python -m tools.grading.sandbox install    # into this Python environment (sys.prefix/share/jupyter/kernels)
    python -m tools.grading.sandbox check      # start it once and say what its kernel can see

Both graders use it when it is installed: nbgrader through the course's nbgrader_config.py
(`c.Execute.kernel_name`), otter through tools/grading/otter_run.py. What the kernel sees is said in
tools/grading/sandbox_launch.py, the launcher the spec runs (copied next to kernel.json). bubblewrap is
Debian's and Ubuntu's `bubblewrap` package; it needs either root or unprivileged user namespaces.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

KERNEL_NAME = "attention-sandbox"
LAUNCHER = Path(__file__).with_name("sandbox_launch.py")


def spec_folder(prefix: str = sys.prefix) -> Path:
    return Path(prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME


def install(prefix: str = sys.prefix) -> Path:
    if shutil.which("bwrap") is None:
        raise SystemExit("the grading sandbox needs bubblewrap: apt-get install bubblewrap (Debian, Ubuntu)")
    folder = spec_folder(prefix)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(LAUNCHER, folder / "launch.py")
    spec = {"argv": [sys.executable, "{resource_dir}/launch.py", "{connection_file}"],
            "display_name": "Python 3 (grading sandbox)", "language": "python",
            # bubblewrap does not pass SIGINT on: a time limit interrupts the kernel by a message instead
            "interrupt_mode": "message", "metadata": {"debugger": False}}
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return folder


def installed(prefix: str = sys.prefix) -> bool:
    return (spec_folder(prefix) / "kernel.json").is_file() and shutil.which("bwrap") is not None


PROBE = """
import os, socket
seen = {}
for path in ("/etc/hostname", "/root", "/work", "/home", "/tmp", "/var"):
    try:
        seen[path] = sorted(os.listdir(path))[:5] if os.path.isdir(path) else "readable"
    except OSError as error:
        seen[path] = type(error).__name__
try:
    socket.create_connection(("pypi.org", 443), timeout=3)
    seen["network"] = "reachable"
except OSError as error:
    seen["network"] = type(error).__name__
print(seen)
"""


def check() -> str:
    from jupyter_client.manager import KernelManager
    manager = KernelManager(kernel_name=KERNEL_NAME, transport="ipc")
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        out = []
        client.execute_interactive(PROBE, output_hook=lambda m: out.append(m["content"].get("text", "")), timeout=30)
        return "".join(out).strip()
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    what = sys.argv[1:] or ["install"]
    if what == ["install"]:
        print(f"installed the kernel spec {KERNEL_NAME} in {install()}")
    elif what == ["check"]:
        print(check())
    else:
        sys.exit(__doc__.split("\n\n")[1])
