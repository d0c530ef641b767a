"""The grading sandbox: a Jupyter kernel spec, `attention-sandbox`, whose kernel runs in bubblewrap.

    python -m tools.grading.sandbox install    # into this Python environment (sys.prefix/share/jupyter/kernels)
    python -m tools.grading.sandbox check [PATH ...]   # what its kernel gets for each path (default: your
                                                       # home and this folder) and for the network

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


# What a snooping student's cell tries: to read PATHS (set before it) and to reach the network. It prints
# one line, SNOOP {path: a listing, a size, or the name of the exception it met; "network": ...}. The tests
# run it through both graders and in run() below; `check` runs it here.
SNOOP = """import json, os, socket
found = {}
for path in PATHS:
    try:
        found[path] = sorted(os.listdir(path)) if os.path.isdir(path) else len(open(path, "rb").read())
    except OSError as error:
        found[path] = type(error).__name__
try:
    socket.create_connection(("pypi.org", 443), timeout=3).close()
    found["network"] = "reachable"
except OSError as error:
    found["network"] = type(error).__name__
print("SNOOP " + json.dumps(found))"""


def snooped(text: str) -> dict:
    """What SNOOP printed, from the text of its output."""
    for line in text.splitlines():
        if line.startswith("SNOOP "):
            return json.loads(line[len("SNOOP "):])
    raise AssertionError("the snooping code printed nothing")


def reached(found: dict) -> dict:
    """What SNOOP could reach: a listing or a size, or the network (what it could not reach gives the
    name of the exception it met)."""
    return {path: what for path, what in found.items() if not isinstance(what, str) or what == "reachable"}


def run(code: str, folder: str, timeout: int = 60) -> str:
    """Run `code` in a new sandboxed kernel started as the graders start it (IPC sockets in a folder of
    their own, `folder` as its working directory); what it printed."""
    import os
    import tempfile

    from jupyter_client.manager import KernelManager
    with tempfile.TemporaryDirectory(prefix="attention-kernel-") as sockets:
        manager = KernelManager(kernel_name=KERNEL_NAME)
        manager.transport, manager.ip = "ipc", os.path.join(sockets, "ipc")
        manager.start_kernel(cwd=folder)
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=120)
            out = []
            client.execute_interactive(code, output_hook=lambda m: out.append(m["content"].get("text", "")),
                                       timeout=timeout)
            return "".join(out)
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def check(paths: list[str]) -> dict:
    """What a sandboxed kernel gets for each of `paths` and the network."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        return snooped(run(f"PATHS = {paths!r}\n" + SNOOP, folder))


if __name__ == "__main__":
    what = sys.argv[1:] or ["install"]
    if what == ["install"]:
        why = unusable()
        if why:    # one sentence, and the course goes on without it (the graders fall back on python3)
            print(f"the grading sandbox is not installed: {why}; grading runs in the python3 kernel, which can "
                  f"read the course's files")
        else:
            print(f"installed the kernel spec {KERNEL_NAME} in {install()}")
    elif what[0] == "check":
        import os
        paths = what[1:] or [os.path.expanduser("~"), os.getcwd()]
        print(json.dumps(check([os.path.abspath(p) for p in paths]), indent=1))
    else:
        sys.exit(__doc__.split("\n\n")[1])
