"""Seed study for chapter 10: chapter 8's TinyGPT with shared keys and values and with sliding windows.

Run from the repository root:  python tools/seed_studies/ch10_shared_kv_and_windows.py [first_seed] [n_seeds]
Seeds may run in several processes side by side; then
python tools/seed_studies/ch10_shared_kv_and_windows.py --summarize OUT1 OUT2 ... reads their per-seed lines
(JSON after "seed N: ") and prints the summary over all of them; the result is pasted into
ch10_shared_kv_and_windows.txt. The chapter's cells are executed as the tests load them (tools/nbdefs.py):
every code cell not tagged skip-in-tests, up to the exercises; each seed then trains, with the chapter's own
functions and chapter 8's recipe (8 epochs), and measures each model with the chapter's `measure` (held-out
perplexity, agreement by kind on the 2,000 further sentences, the grammatical share of 300 samples):

  key-value heads: 4, 2 and 1, two layers, no window;
  the 4-head model mean-pooled into 2 and into 1 key-value head, before and after one epoch of uptraining;
  windows: w = 2, 3, 4, 8 and none in one layer; w = 2, 3, 4 and 8 in two layers (none: the 4-head model);
  two layers, one local (w = 2) and one global: the local one first, and the global one first.
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ch10_common  # noqa: E402

WINDOWS_ONE_LAYER = [2, 3, 4, 8, None]
WINDOWS_TWO_LAYERS = [2, 3, 4, 8]
MIXED = {"local-global": [2, None], "global-local": [None, 2]}


def rounded(result):
    return {"perplexity": round(result["perplexity"], 4), "grammatical": round(result["grammatical"], 4),
            "agreement": {kind: round(v, 4) for kind, v in result["agreement"].items()}}


def one_seed(nb, seed):
    import copy
    row, train, measure = {}, nb["train_lm"], nb["measure"]
    kv_models = {}
    for n_kv in (4, 2, 1):
        t0 = time.perf_counter()
        kv_models[n_kv] = train(nb["train_fr"], seed=seed, make_model=nb["SharedKVGPT"], n_kv_heads=n_kv)[0]
        row[f"kv{n_kv}"] = {**rounded(measure(kv_models[n_kv])), "seconds": round(time.perf_counter() - t0, 1)}
    for n_kv in (2, 1):
        pooled = nb["mean_pool_kv"](kv_models[4], n_kv)
        row[f"pooled{n_kv}"] = rounded(measure(pooled))
        uptrained = train(nb["train_fr"], epochs=1, seed=seed, make_model=lambda vocab_size: copy.deepcopy(pooled))[0]
        row[f"uptrained{n_kv}"] = rounded(measure(uptrained))
    for layers, windows in ((1, WINDOWS_ONE_LAYER), (2, WINDOWS_TWO_LAYERS)):
        for w in windows:
            t0 = time.perf_counter()
            model = train(nb["train_fr"], seed=seed, make_model=nb["SharedKVGPT"], windows=[w] * layers, n_layers=layers)[0]
            row[f"w{w}L{layers}"] = {**rounded(measure(model)), "seconds": round(time.perf_counter() - t0, 1)}
    for name, windows in MIXED.items():
        model = train(nb["train_fr"], seed=seed, make_model=nb["SharedKVGPT"], windows=windows)[0]
        row[name] = rounded(measure(model))
    return row


def summarize(rows):
    kinds = list(next(iter(rows.values()))["kv4"]["agreement"])
    print(f"{len(rows)} seeds ({', '.join(str(s) for s in sorted(rows))})")
    names = list(next(iter(rows.values())).keys())
    for name in names:
        results = [rows[s][name] for s in sorted(rows)]
        span = lambda values, digits=3: f"{min(values):.{digits}f}-{max(values):.{digits}f}"
        ppl = [r["perplexity"] for r in results]
        line = f"{name}: perplexity {span(ppl)} (mean {np.mean(ppl):.3f}); grammatical {span([r['grammatical'] for r in results])}"
        for kind in kinds:
            line += f"; {kind.split(' (')[0]} {span([r['agreement'][kind] for r in results])}"
        if "seconds" in results[0]:
            line += f"; seconds {span([r['seconds'] for r in results], 1)}"
        print(line)


if __name__ == "__main__":
    ch10_common.main(one_seed, summarize, "ch10_study")
