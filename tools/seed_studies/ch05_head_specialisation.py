"""Seed study for chapter 5's "heads that specialise" experiment.

Trains the chapter's TwoRelationModel with 1, 2 and 4 heads for SEEDS seeds each, exactly as the
notebook does (100 steps of 256 fresh sequences, one CPU thread, deterministic algorithms), and
prints, per head count, the partner-digit accuracy of every seed, how many seeds solve the task
(partner accuracy >= 0.95), and for the two-head models which head follows which relation.

The model code is not imported from the repository: the script executes the notebook's own cells
(imports, book_style, the module and the task), found by what they define.

    .venv/bin/python tools/seed_studies/ch05_head_specialisation.py > tools/seed_studies/ch05_head_specialisation.txt
"""
import pathlib
import platform
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402 (the one notebook loader of the tests and the studies)
WANTED = ("import numpy as np", "# shared helper: book_style", "def _check_tensor(", "class MultiHeadAttention(",
          "def make_batch(", "class TwoRelationModel(")
SEEDS = range(10)
HEADS = (1, 2, 4)
SOLVED = 0.95

ns = load_notebook("05_self_and_multihead_attention", only=WANTED, module_name="ch05_seed_study")
torch = ns["torch"]

torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
test_batch = ns["make_batch"](2000, seed=7)
tokens_test, _, _, partner_pos_test = test_batch
rows = torch.arange(1, ns["T_SEQ"])
start = time.perf_counter()
print(f"# Python {platform.python_version()}, PyTorch {torch.__version__}, {platform.machine()}; "
      f"seeds {list(SEEDS)}; solved = partner accuracy >= {SOLVED}")
print("heads | seed | previous digit | partner digit | both | head on previous / head on partner (2 heads)")
summary = {}
for n_h in HEADS:
    partner = []
    for seed in SEEDS:
        model = ns["train_two_relation"](n_h, seed=seed)
        p, m, b = ns["accuracies"](model, *test_batch[:3])
        partner.append(m)
        extra = ""
        if n_h == 2:
            with torch.no_grad():
                _, _, w = model(tokens_test)  # (N, heads, T, T)
            on_prev = w[:, :, rows, rows - 1].mean(dim=(0, 2))
            on_partner = torch.gather(w[:, :, rows, :], 3, partner_pos_test[:, None, 1:, None].expand(-1, 2, -1, 1)).mean(dim=(0, 2, 3))
            extra = " | " + ", ".join(f"head {h + 1}: prev {on_prev[h]:.2f} partner {on_partner[h]:.2f}" for h in range(2))
        print(f"{n_h:5d} | {seed:4d} | {p:14.4f} | {m:13.4f} | {b:.4f}{extra}", flush=True)
    solved = [m for m in partner if m >= SOLVED]
    summary[n_h] = (len(solved), len(partner), min(partner), max(partner), min(solved) if solved else None,
                    max(solved) if solved else None, [m for m in partner if m < SOLVED])
print()
print("heads | solved (k of n) | partner accuracy min-max | among solved min-max | unsolved")
for n_h, (k, n, lo, hi, slo, shi, unsolved) in summary.items():
    solved_range = f"{slo:.4f}-{shi:.4f}" if k else "-"
    print(f"{n_h:5d} | {k:2d} of {n:2d}        | {lo:.4f}-{hi:.4f}            | {solved_range:<20} | "
          f"{', '.join(f'{m:.4f}' for m in unsolved) or '-'}")
print(f"# {time.perf_counter() - start:.0f} s")
