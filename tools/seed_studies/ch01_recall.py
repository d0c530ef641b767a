"""Seed study for chapter 1's bottleneck experiment (notebooks/01_bottleneck.ipynb).

Recall of the first 4 tokens against the sequence length T, read from the final GRU state only or
through attention over all states, for several training seeds; also the attention pattern at
T = 20 and the runs of exercise bottleneck_ex4. The model and training code are the notebook's own:
this script executes the notebook's cells that define them with the tests' notebook loader
(tools/nbdefs.py; it imports nothing else from the repository).

    .venv/bin/python tools/seed_studies/ch01_recall.py > tools/seed_studies/ch01_recall.txt
"""
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402 (the one notebook loader of the tests and the studies)
# the imports, the device (book_style) and the three definitions the study needs
NEEDED = ("import math", "# shared helper: book_style", "def random_sequences(", "class RecallNet(", "def train_recall(")
SEEDS = [0, 1, 2, 3, 4]
LENGTHS = [5, 10, 20, 40]

ns = load_notebook("01_bottleneck", only=NEEDED, module_name="ch01_seed_study")
train_recall, random_sequences = ns["train_recall"], ns["random_sequences"]
torch.set_num_threads(1)


def spread(values):
    values = list(values)
    return (f"mean {statistics.mean(values):6.1%}  sd {statistics.stdev(values):5.1%}  "
            f"min {min(values):6.1%}  max {max(values):6.1%}")


start = time.time()
print(f"Chapter 1 recall experiment, seeds {SEEDS}, torch {torch.__version__}, numpy {np.__version__}, "
      f"device {ns['device']}, 1 thread")
acc = {}
diag, out4_late = [], []
for seed in SEEDS:
    for T in LENGTHS:
        for readout in ("final", "attention"):
            model, acc[seed, T, readout] = train_recall(T, readout, seed=seed)
            if T == 20 and readout == "attention":
                tokens = random_sequences(1000, 20, torch.Generator().manual_seed(12345)).to(ns["device"])
                with torch.no_grad():
                    _, alpha = model(tokens)
                mean_alpha = alpha.mean(dim=0).cpu().numpy()
                diag.append(np.diag(mean_alpha[:4, :4]))
                out4_late.append(float(mean_alpha[3, 4:].sum()))
    print(f"seed {seed}: " + "  ".join(f"T={T}: final {acc[seed, T, 'final']:6.1%} attention {acc[seed, T, 'attention']:6.1%}"
                                      for T in LENGTHS), flush=True)

print("\nrecall of the first 4 tokens (80 steps, 1000 held-out sequences), over the seeds:")
for T in LENGTHS:
    for readout in ("final", "attention"):
        print(f"  T = {T:2d} {readout:>9}: {spread(acc[s, T, readout] for s in SEEDS)}")
drop = [acc[s, 5, 'final'] - acc[s, 40, 'final'] for s in SEEDS]
print(f"  final-state drop from T = 5 to T = 40: min {min(drop):.1%}, max {max(drop):.1%}")

diag = np.array(diag)
print("\nattention readout at T = 20: mean weight of output i on its own position i (rows: seeds)")
for seed, row, late in zip(SEEDS, diag, out4_late):
    print(f"  seed {seed}: outputs 1-4 on own position {np.round(row, 2)}; output 4 on positions 5-20: {late:.2f}")
print(f"  outputs 1-3 on own position: min {diag[:, :3].min():.2f}, max {diag[:, :3].max():.2f}")

print("\nexercise bottleneck_ex4 runs:")
for T, readout, steps in [(20, "final", 320), (40, "final", 320), (40, "attention", 40)]:
    runs = [train_recall(T, readout, steps=steps, seed=s)[1] for s in SEEDS]
    print(f"  T = {T:2d} {readout:>9}, {steps:3d} steps: {spread(runs)}   ({', '.join(f'{r:.1%}' for r in runs)})", flush=True)
print(f"\n(total {time.time() - start:.0f} s)", file=sys.stderr)
