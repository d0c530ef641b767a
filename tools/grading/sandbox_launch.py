"""Start an IPython kernel inside a bubblewrap sandbox (the grading kernel `attention-sandbox`).

Installed as the kernel spec's launcher by `python -m tools.grading.sandbox install`; it imports nothing
of the book's, so that it runs from the kernel spec's folder. The kernel sees:

- the Python environment and the system's programs and libraries (/usr, /lib, /etc, ...), read-only;
- the folder of the notebook it grades (its working directory), read-write;
- its own connection file and the folder of its sockets (IPC transport: no network is needed), and
  ATTENTION_SANDBOX_SHARE when set (otter_run: the folder in which otter grades this one submission);
- an empty /tmp and an empty home, and nothing else of the machine: not the course's source/, not the
  gradebook, not other students' submissions, not the network (a network namespace of its own);

and it is limited, so that nothing it does reaches past its own run:

- its environment is cleared, then given only the variables of ENVIRONMENT (locale, threads, the SIMD
  switches, a home of its own): no token or key of the grader's environment reaches a student's cell;
- memory: at most ATTENTION_SANDBOX_MEMORY bytes of address space (default 6 GiB); its /tmp, which lives in
  memory, at most ATTENTION_SANDBOX_TMP bytes (default 512 MiB);
- a file it writes at most FILE_SIZE bytes, its CPU time at most CPU_SECONDS;
- at most TASKS processes and threads together, by a pids cgroup where this machine lets one be made
  (else by RLIMIT_NPROC, which the kernel does not apply to root);
- a session of its own (no terminal to type into), and it dies with the grader (--die-with-parent);
- Python starts isolated (-I): neither its working folder nor PYTHON* variables are on its path, so a file
  such as ipykernel_launcher.py handed in beside the notebook is never imported in its place.

    launch.py CONNECTION_FILE [KERNEL ARGUMENTS ...]     (e.g. --matplotlib=agg, as nbgrader_config.py passes)
"""
import json
import os
import resource
import shutil
import sys

MEMORY = int(os.environ.get("ATTENTION_SANDBOX_MEMORY", 6 * 2**30))
TMP = int(os.environ.get("ATTENTION_SANDBOX_TMP", 512 * 2**20))
FILE_SIZE = 64 * 2**20
CPU_SECONDS = 3600
TASKS = 256
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt")
# the grader's variables a kernel may see (when set); everything else, tokens and keys included, is dropped
ENVIRONMENT = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "MPLBACKEND",
               "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
               "OPENBLAS_L2_SIZE", "ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES", "CUDA_VISIBLE_DEVICES",
               "PYDEVD_DISABLE_FILE_VALIDATION", "JPY_SESSION_NAME")
PIDS = "/sys/fs/cgroup/pids"


def limit_tasks(tasks: int = TASKS) -> str:
    """Put this process (and so the kernel it becomes) in a pids cgroup of its own that allows `tasks`
    processes and threads; where no cgroup can be made, RLIMIT_NPROC. Says which."""
    try:
        for name in os.listdir(PIDS):       # the empty groups of kernels that have ended (a busy one refuses)
            if name.startswith("attention-sandbox-"):
                try:
                    os.rmdir(os.path.join(PIDS, name))
                except OSError:
                    pass
        group = os.path.join(PIDS, f"attention-sandbox-{os.getpid()}")
        os.makedirs(group, exist_ok=True)
        with open(os.path.join(group, "pids.max"), "w") as f:
            f.write(str(tasks))
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        return "cgroup"
    except OSError:     # RLIMIT_NPROC counts every task of this user, so it allows `tasks` more than now run
        resource.setrlimit(resource.RLIMIT_NPROC, (running_tasks() + tasks,) * 2)
        return "rlimit"


def running_tasks() -> int:
    """The processes and threads this user runs now."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == os.getuid():
                count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass
    return count


def main(connection_file: str, *kernel_arguments: str) -> None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        sys.exit("the grading sandbox needs bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)")
    connection_file = os.path.abspath(connection_file)
    with open(connection_file, encoding="utf-8") as f:
        info = json.load(f)
    if info.get("transport") != "ipc":
        sys.exit("the grading sandbox has no network: start it with the IPC transport (as the course's "
                 "nbgrader_config.py does with its IPCKernelManager, and otter_grading.install for otter)")
    work = os.getcwd()
    # (JPY_PARENT_PID, the grader's process id, is not passed: unseen in the kernel's own pid namespace)
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--proc", "/proc", "--dev", "/dev",
            "--size", str(TMP), "--tmpfs", "/tmp", "--dir", "/tmp/home", "--clearenv"]
    for name in ENVIRONMENT:
        if name in os.environ:
            args += ["--setenv", name, os.environ[name]]
    args += ["--setenv", "HOME", "/tmp/home", "--setenv", "TMPDIR", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp/home/mpl",
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
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE, FILE_SIZE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    limit_tasks()
    os.execv(bwrap, args + ["--", sys.executable, "-I", "-m", "ipykernel_launcher", "-f", connection_file,
                            *kernel_arguments])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    main(*sys.argv[1:])
