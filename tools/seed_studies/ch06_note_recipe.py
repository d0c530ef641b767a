"""Seed study for calculation T1: note 004's toy recipe, as written and fixed, over several seeds.

Run from the repository root:  python tools/seed_studies/ch06_note_recipe.py [n_seeds]
Prints one line per seed and the k-of-n summary pasted into ch06_note_recipe.txt.
"""
import sys
import time

import numpy as np
import torch

from ch06_common import load_chapter6

ns = load_chapter6()
nn = torch.nn
n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
pairs, EOS = ns["note_pairs"], ns["NOTE_EOS"]
source = "the cat sat".split() + ["<EOS>"]
rows = []
t0 = time.perf_counter()
for seed in range(n_seeds):
    enc, dec, hist = ns["train_note_model"](nn.CrossEntropyLoss(ignore_index=EOS), seed=seed)
    nan_every_epoch = bool(np.isnan(hist[:, 3]).all() and np.isnan(hist.sum(axis=1)).all())
    stopped_asis = exact_asis = first3 = 0
    for en, fr in pairs:
        words, _, stopped = ns["note_greedy"](enc, dec, en, 4)
        stopped_asis += stopped
        exact_asis += words == fr.split() and stopped
        first3 += words[:3] == fr.split()
    words_asis, alpha_asis, _ = ns["note_greedy"](enc, dec, "the cat sat", 4)   # the note's 4-step limit
    looks_asis = [source[int(a.argmax())] for a in alpha_asis[:3]]                # le, chat, assis
    enc, dec, hist_fixed = ns["train_note_model"](nn.CrossEntropyLoss(), seed=seed)
    exact_fixed = 0
    for en, fr in pairs:
        words, _, stopped = ns["note_greedy"](enc, dec, en, 20)
        exact_fixed += words == fr.split() and stopped
    words, alpha, _ = ns["note_greedy"](enc, dec, "the cat sat", 20)
    looks = [source[int(a.argmax())] for a in alpha]
    rows.append((seed, nan_every_epoch, stopped_asis, exact_asis, first3, exact_fixed, looks,
                 [round(float(a.max()), 3) for a in alpha], looks_asis))
    print(f"seed {seed}: as written: loss nan at every epoch {nan_every_epoch}, stopped {stopped_asis}/8, "
          f"exact {exact_asis}/8, first three right {first3}/8, 'the cat sat' -> {' '.join(words_asis)}, "
          f"attends most to {looks_asis}; fixed: exact {exact_fixed}/8; "
          f"'the cat sat' -> {' '.join(words)}, attends most to {looks} (weights {rows[-1][7]})", flush=True)
n = len(rows)
print(f"\n{n} seeds, {time.perf_counter() - t0:.0f} s")
print(f"as written: loss nan at every epoch in {sum(r[1] for r in rows)}/{n}; some sentence stopped by itself in "
      f"{sum(r[2] > 0 for r in rows)}/{n}; all 8 with the first three words right in {sum(r[4] == 8 for r in rows)}/{n}")
print(f"fixed: all 8 exact and stopped in {sum(r[5] == 8 for r in rows)}/{n}")
for recipe, column in (("as written", 8), ("fixed", 6)):
    for k, word in enumerate(["le", "chat", "assis"]):
        counts = {}
        for r in rows:
            counts[r[column][k]] = counts.get(r[column][k], 0) + 1
        print(f"{recipe}: '{word}' attends most to: " + ", ".join(f"{w!r} in {c}/{n}"
                                                            for w, c in sorted(counts.items(), key=lambda kv: -kv[1])))
