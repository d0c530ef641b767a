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


def unusable() -> str | None:
    """Why bubblewrap cannot sandbox a kernel on this machine, or None when it can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian, Ubuntu: apt-get install bubblewrap)"
    import subprocess
    try:
        result = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True,
                                text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap does not start ({type(error).__name__})"
    if result.returncode != 0:
        return f"bubblewrap cannot make its namespaces here ({result.stderr.strip()[:200]})"
    return None


def install(prefix: str = sys.prefix) -> Path:
    reason = unusable()
    if reason:
        raise SystemExit(reason)
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
    """Whether the graders will use the sandbox (its kernel spec is here and bubblewrap is installed)."""
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
        why = unusable()
        if why:    # one sentence, and the course goes on without it (the graders fall back on python3)
            print(f"the grading sandbox is not installed: {why}; grading runs in the python3 kernel, which can "
                  f"read the course's files")
        else:
            print(f"installed the kernel spec {KERNEL_NAME} in {install()}")
    elif what == ["check"]:
        print(check())
    else:
        sys.exit(__doc__.split("\n\n")[1])
