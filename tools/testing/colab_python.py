"""The interpreter of the Colab environment (.venv-colab): Colab's Python where this machine has it.

    python -m tools.testing.colab_python [FALLBACK]   # prints the interpreter's path; the reason on stderr

Colab runs Python 3.13 (tools/colab-constraints.txt, `# python:`). This prints the first of
`python3.13` on PATH and pyenv's 3.13 versions (`~/.pyenv/versions/3.13*`) for which pip would install
torch at the pinned version as a CPU build, and otherwise FALLBACK (default: this interpreter), saying
why on stderr. Why the CPU-build condition: on Linux x86_64, PyPI's torch 2.13.0 wheel for 3.13 is the
CUDA build, which requires 18 nvidia-*/cuda-* packages and triton (measured here: 4.7 GB installed,
2 min 39 s to install, for a suite that runs on CPU), and the wheel alone cannot be imported without them
(libtorch.so links cuBLAS, cuDNN, NCCL, ...). The CPU build (`+cpu`, 0.75 GB installed) comes from
PyTorch's own index or a local wheel; where one for 3.13 is configured, pip's dry run finds it and the
environment runs on 3.13. Only the standard library is used: this runs before any environment exists.
"""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

PINS = Path(__file__).resolve().parents[1] / "colab-constraints.txt"


def colab_version() -> str:
    """Colab's Python version, from the `# python: 3.13` line of tools/colab-constraints.txt."""
    match = re.search(r"^# python:\s*(\d+\.\d+)\s*$", PINS.read_text(encoding="utf-8"), re.M)
    if not match:
        raise SystemExit(f"{PINS} has no '# python: X.Y' line naming Colab's Python version.")
    return match.group(1)


def candidates(version: str) -> list[str]:
    found = [shutil.which(f"python{version}")]
    found += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}")), reverse=True)
    return list(dict.fromkeys(path for path in found if path))


def torch_requirements(python: str) -> list[str] | None:
    """What the torch wheel that pip would install for `python` requires (None: pip found none)."""
    run = subprocess.run([python, "-m", "pip", "--disable-pip-version-check", "install", "--dry-run",
                          "--no-deps", "--ignore-installed", "--quiet", "--report", "-", "-c", str(PINS), "torch"],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        return None
    install = json.loads(run.stdout).get("install", [])
    return install[0]["metadata"].get("requires_dist") or [] if install else None


def choose(fallback: str) -> tuple[str, str]:
    version = colab_version()
    paths = candidates(version)
    if not paths:
        return fallback, f"no Python {version} on PATH or under ~/.pyenv/versions"
    for python in paths:
        requires = torch_requirements(python)
        if requires is None:
            reason = f"pip finds no torch wheel for {python}"
            continue
        cuda = sorted({re.split(r"[\s;=<>\[!~]", r, maxsplit=1)[0] for r in requires
                       if r.startswith(("nvidia-", "cuda-", "triton"))})
        if not cuda:
            return python, f"Python {version} ({python}) with a CPU build of torch"
        reason = (f"the only torch wheel pip finds for Python {version} ({python}) is the CUDA build, which "
                  f"would pull {', '.join(cuda)} (several GB); configure a CPU build for {version} "
                  "(PyTorch's CPU index, or a local +cpu wheel in pip's find-links) to run the Colab "
                  f"environment on {version}")
    return fallback, reason


def main() -> int:
    fallback = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    python, reason = choose(fallback)
    if python == fallback:
        version = subprocess.run([fallback, "-c", "import sys; print(sys.version.split()[0])"],
                                 capture_output=True, text=True).stdout.strip()
        print(f"Colab environment: falling back to {fallback} (Python {version}): {reason}.", file=sys.stderr)
    else:
        print(f"Colab environment: {reason}.", file=sys.stderr)
    print(python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
