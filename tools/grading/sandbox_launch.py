"""Start an IPython kernel inside a bubblewrap sandbox (the grading kernel `attention-sandbox`).

Installed as the kernel spec's launcher by `python -m tools.grading.sandbox install`; it imports nothing
of the book's, so that it runs from the kernel spec's folder. The kernel sees:

- the Python environment and the system's programs and libraries (/usr, /lib, /etc, ...), read-only;
- the folder of the notebook it grades (its working directory), read-write;
- its own connection file and the folder of its sockets (IPC transport: no network is needed), and
  ATTENTION_SANDBOX_SHARE when set (otter_run: the folder in which otter grades this one submission);
- an empty /tmp and an empty home, and nothing else of the machine: not the course's source/, not the
  gradebook, not other students' submissions, not the network (a network namespace of its own);

and it may use at most ATTENTION_SANDBOX_MEMORY bytes of memory (default 6 GiB, address space).

    launch.py CONNECTION_FILE [KERNEL ARGUMENTS ...]     (e.g. --matplotlib=agg, as nbgrader_config.py passes)
"""
import json
import os
import resource
import shutil
import sys

MEMORY = int(os.environ.get("ATTENTION_SANDBOX_MEMORY", 6 * 2**30))
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt")


def main(connection_file: str, *kernel_arguments: str) -> None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        sys.exit("the grading sandbox needs bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)")
    connection_file = os.path.abspath(connection_file)
    with open(connection_file, encoding="utf-8") as f:
        info = json.load(f)
    if info.get("transport") != "ipc":
        sys.exit("the grading sandbox has no network: start it with the IPC transport (as the course's "
                 "nbgrader_config.py does with its IPCKernelManager, and cell_time_limit.install for otter)")
    work = os.getcwd()
    # (JPY_PARENT_PID: the grader's process id, which the kernel watches; unseen in its own pid namespace)
    args = [bwrap, "--die-with-parent", "--unshare-all", "--unsetenv", "JPY_PARENT_PID", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--dir", "/tmp/home", "--setenv", "HOME", "/tmp/home", "--setenv", "MPLCONFIGDIR", "/tmp/home/mpl",
            "--setenv", "IPYTHONDIR", "/tmp/home/.ipython", "--setenv", "JUPYTER_CONFIG_DIR", "/tmp/home/.jupyter"]
    for path in SYSTEM:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    python = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)))}
    python.add(sys.prefix)
    for path in sorted(python):
        if not path.startswith(SYSTEM):
            args += ["--ro-bind", path, path]
    sockets = os.path.dirname(os.path.abspath(info["ip"]))
    args += ["--bind", sockets, sockets, "--ro-bind", connection_file, connection_file,
             "--bind", work, work, "--chdir", work]
    share = os.environ.get("ATTENTION_SANDBOX_SHARE")    # otter_run: the submission's own grading folder
    if share and os.path.isdir(share):
        args += ["--bind", share, share]
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    os.execv(bwrap, args + ["--", sys.executable, "-m", "ipykernel_launcher", "-f", connection_file, *kernel_arguments])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    main(*sys.argv[1:])
