"""Seed study for chapter 10's first-token measurement: how much attention each head of chapter 8's model (built
as the chapter's SharedKVGPT with 4 key-value heads and no window, trained with chapter 8's recipe) puts on <s>.

Run from the repository root:  python tools/seed_studies/ch10_first_token.py [first_seed] [n_seeds]
The chapter's cells are executed as the tests load them (tools/nbdefs.py), up to the exercises; each seed trains
the model and measures it with the chapter's `weight_on_first` on the 400 held-out sentences. The output is pasted
into ch10_first_token.txt.
"""
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402


def main():
    first = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    n_seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    import torch
    torch.set_num_threads(1)
    nb = load_notebook("10_shared_kv_and_windows", module_name="ch10_first_token", stop_before="# shared helper: check_helpers")
    rows = {}
    for seed in range(first, first + n_seeds):
        model = nb["train_lm"](nb["train_fr"], seed=seed, make_model=nb["SharedKVGPT"])[0]
        weights, even = nb["weight_on_first"](model, nb["test_fr"])
        rows[seed] = {"weights": np.round(weights.astype(float), 4).tolist(), "even": round(even, 4)}
        print(f"seed {seed}: {json.dumps(rows[seed])}", flush=True)
    heads = np.array([rows[s]["weights"] for s in sorted(rows)])          # (seeds, layers, heads)
    print(f"\n{len(rows)} seeds ({', '.join(map(str, sorted(rows)))})")
    print(f"weight on <s>, every head of every seed: {heads.min():.3f}-{heads.max():.3f}; "
          f"an even spread: {rows[first]['even']:.3f}")
    print(f"largest head per seed: {heads.reshape(len(rows), -1).max(axis=1).min():.3f}-{heads.max():.3f}")


if __name__ == "__main__":
    main()
