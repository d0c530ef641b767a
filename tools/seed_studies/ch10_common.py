"""What chapter 10's seed studies share: loading the chapter as the tests load it (tools/nbdefs.py), running
seeds, and reading back the per-seed lines of several processes for the summary.

Each study script defines `one_seed(nb, seed) -> dict` and `summarize(rows)` and calls `main(...)`:
  python tools/seed_studies/ch10_X.py [first_seed] [n_seeds]       prints "seed N: {json}" per seed
  python tools/seed_studies/ch10_X.py --summarize OUT1 OUT2 ...     the summary over the seeds in those outputs
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402


def read_rows(paths):
    """{seed: row} from the "seed N: {json}" lines of the given output files."""
    rows = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.startswith("seed "):
                seed, data = line[5:].split(": ", 1)
                rows[int(seed)] = json.loads(data)
    return rows


def main(one_seed, summarize, module_name, argv=None):
    """--summarize OUT...: summarize(rows) of those outputs; else [first_seed] [n_seeds] (0 and 5): one line per seed."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--summarize"]:
        summarize(read_rows(argv[1:]))
        return
    first = int(argv[0]) if argv else 0
    n_seeds = int(argv[1]) if len(argv) > 1 else 5
    import torch
    torch.set_num_threads(1)
    nb = load_notebook("10_shared_kv_and_windows", module_name=module_name, stop_before="# shared helper: check_helpers")
    for seed in range(first, first + n_seeds):
        print(f"seed {seed}: {json.dumps(one_seed(nb, seed))}", flush=True)
