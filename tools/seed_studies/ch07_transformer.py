"""Seed study for chapter 7: the Transformer translator against chapter 6's GRU translator with attention.

Run from the repository root:  python tools/seed_studies/ch07_transformer.py [first_seed] [n_seeds] [which] [threads]
which = both (default), transformer or gru; threads = CPU threads for torch (default 1, as the chapters);
a fifth argument trains both models for that many epochs instead of the chapters' 6 (a second
budget). Seeds may run in several processes side by side; then
python tools/seed_studies/ch07_transformer.py --summarize OUT1 OUT2 ... reads their per-seed lines
and prints the summary over all of them. Both models train on chapter 6's corpus and split with
chapter 6's recipe for the same number of epochs (the stated budget); for each seed
it prints held-out exact match, exact match by English length, the last training loss, parameters,
training seconds, and for the Transformer the alignment error rate (sure + possible links, chapter 6's
definitions) of every cross-attention head. Then means and spreads; the result is pasted into
ch07_transformer.txt. The chapters' cells are executed as the tests load them (tools/nbdefs.py):
every code cell not tagged skip-in-tests.
"""
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402


def load(stem):
    return load_notebook(stem, module_name=f"{stem}_study")


def parse_seed_lines(paths):
    """The per-seed results printed by earlier runs (their output files), as the `results` dict below."""
    import re
    out = {"transformer": [], "gru": []}
    pattern = re.compile(r"^seed (\d+): (Transformer|GRU with attention): exact ([\d.]+)%, bins (\[[^\]]*\]), "
                         r"last loss ([\d.]+), (\d+) parameters, trained in (\d+) s(?:; AER per head \(layers x heads\) (.*))?$")
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            m = pattern.match(line)
            if m:
                row = dict(seed=int(m[1]), exact=float(m[3]) / 100, per_bin=json.loads(m[4]), loss=float(m[5]),
                           params=int(m[6]), seconds=float(m[7]))
                if m[8]:
                    row["aer"] = np.array(json.loads(m[8]))
                out["transformer" if m[2] == "Transformer" else "gru"].append(row)
    for rows in out.values():
        rows.sort(key=lambda r: r["seed"])
    return out


summarize_only = len(sys.argv) > 1 and sys.argv[1] == "--summarize"
first = 0 if summarize_only else int(sys.argv[1]) if len(sys.argv) > 1 else 0
n_seeds = 0 if summarize_only else int(sys.argv[2]) if len(sys.argv) > 2 else 5
which = sys.argv[3] if len(sys.argv) > 3 else "both"
if summarize_only:
    which, n_seeds = "none", 0
ch07 = load("07_transformer")
ch06 = load("06_toy_translator") if which in ("both", "gru") else None
import torch  # noqa: E402  (after the notebooks, which set one thread)

threads = int(sys.argv[4]) if len(sys.argv) > 4 and not summarize_only else 1
torch.set_num_threads(threads)
epochs = int(sys.argv[5]) if len(sys.argv) > 5 and not summarize_only else ch07["EPOCHS"]
test_data = ch07["test_data"]
assert ch06 is None or [p[:2] for p in ch06["test_data"]] == [p[:2] for p in test_data], "the two chapters' splits differ"
bins = [(3, 8), (9, 14), (15, 20), (21, 26), (27, 34)]
lengths = np.array([len(en.split()) for en, fr, links in test_data])
print(f"{torch.get_num_threads()} CPU thread(s); budget: {epochs} epochs of chapter 6's recipe for each model; "
      f"Transformer d_model={ch07['D_MODEL']}, heads={ch07['N_HEADS']}, layers={ch07['N_LAYERS']}, d_ff={ch07['D_FF']}", flush=True)


def evaluate(ns, model):
    hyp = ns["translate_all"](model, test_data)
    correct = np.array([h == fr for h, (en, fr, links) in zip(hyp, test_data)])
    return correct.mean(), [correct[(lengths >= lo) & (lengths <= hi)].mean() for lo, hi in bins]


results = parse_seed_lines(sys.argv[2:]) if summarize_only else {"transformer": [], "gru": []}
for seed in range(first, first + n_seeds):
    if which in ("both", "transformer"):
        t0 = time.perf_counter()
        model, losses = ch07["train_transformer"](epochs=epochs, seed=seed)
        seconds = time.perf_counter() - t0
        exact, per_bin = evaluate(ch07, model)
        aer = ch07["head_aer_table"](model, test_data)
        params = sum(p.numel() for p in model.parameters())
        results["transformer"].append(dict(exact=exact, per_bin=per_bin, loss=losses[-1], seconds=seconds, aer=aer, params=params))
        print(f"seed {seed}: Transformer: exact {exact:.1%}, bins {[round(float(v), 3) for v in per_bin]}, "
              f"last loss {losses[-1]:.4f}, {params} parameters, trained in {seconds:.0f} s; "
              f"AER per head (layers x heads) {aer.round(3).tolist()}", flush=True)
    if which in ("both", "gru"):
        t0 = time.perf_counter()
        model, losses, _ = ch06["train_translator"](attention=True, epochs=epochs, seed=seed)
        seconds = time.perf_counter() - t0
        exact, per_bin = evaluate(ch06, model)
        params = sum(p.numel() for p in model.parameters())
        results["gru"].append(dict(exact=exact, per_bin=per_bin, loss=losses[-1], seconds=seconds, params=params))
        print(f"seed {seed}: GRU with attention: exact {exact:.1%}, bins {[round(float(v), 3) for v in per_bin]}, "
              f"last loss {losses[-1]:.4f}, {params} parameters, trained in {seconds:.0f} s", flush=True)


def summary(name, values):
    v = np.array(values, dtype=float)
    sd = v.std(ddof=1) if len(v) > 1 else 0.0
    print(f"{name}: mean {v.mean():.4f}, sd {sd:.4f}, min {v.min():.4f}, max {v.max():.4f}")


for name, rows in results.items():
    if not rows:
        continue
    print(f"\n{name}, {len(rows)} seeds ({', '.join(str(r.get('seed', first + k)) for k, r in enumerate(rows))})")
    summary(f"{name} exact match", [r["exact"] for r in rows])
    summary(f"{name} last training loss", [r["loss"] for r in rows])
    summary(f"{name} training seconds", [r["seconds"] for r in rows])
    print(f"{name} parameters: {rows[0]['params']}")
    for k, (lo, hi) in enumerate(bins):
        summary(f"  {lo}-{hi} words: {name}", [r["per_bin"][k] for r in rows])
    if name == "transformer":
        aer = np.array([r["aer"] for r in rows])                     # (seeds, layers, heads)
        for layer in range(aer.shape[1]):
            for head in range(aer.shape[2]):
                summary(f"  AER layer {layer + 1} head {head + 1}", aer[:, layer, head])
        summary("best head's AER per seed", aer.reshape(len(rows), -1).min(axis=1))
        print("best head per seed (layer, head):",
              [tuple(int(i) + 1 for i in np.unravel_index(a.argmin(), a.shape)) for a in aer])
