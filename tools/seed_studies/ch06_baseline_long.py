"""How far the translator without attention gets with a long budget (chapter 6, "The bottleneck, measured").

Run from the repository root:  python tools/seed_studies/ch06_baseline_long.py [seed] [extra_epochs]
Trains the model without attention for 6 epochs, then further with early stopping on the validation
set (patience 3, at most extra_epochs more), and prints the held-out exact match by length at the
best epoch. The result is pasted into ch06_baseline_long.txt.
"""
import sys
import time

import numpy as np

from ch06_common import load_chapter6

ns = load_chapter6()
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
extra = int(sys.argv[2]) if len(sys.argv) > 2 else 40
test_data, bins = ns["test_data"], [(3, 8), (9, 14), (15, 20), (21, 26), (27, 34)]
lengths = np.array([len(en.split()) for en, fr, links in test_data])
t0 = time.perf_counter()
model, _, _ = ns["train_translator"](attention=False, seed=seed)
model, losses, valid_losses = ns["train_translator"](attention=False, epochs=extra, seed=seed, valid=ns["valid_data"],
                                                     patience=3, model=model)
hyp = ns["translate_all"](model, test_data)
correct = np.array([h == fr for h, (en, fr, links) in zip(hyp, test_data)])
print(f"seed {seed}: 6 epochs, then {len(valid_losses)} more (at most {extra}, patience 3); best after +{int(np.argmin(valid_losses)) + 1}")
print("validation loss per extra epoch:", [round(v, 4) for v in valid_losses])
print("training loss per extra epoch:  ", [round(v, 4) for v in losses])
print(f"held-out exact match {correct.mean():.1%}; by length:",
      ", ".join(f"{lo}-{hi}: {correct[(lengths >= lo) & (lengths <= hi)].mean():.1%}" for lo, hi in bins))
print(f"({time.perf_counter() - t0:.0f} s)")
