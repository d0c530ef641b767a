"""Where the attention of chapter 6's translator differs from the gold links, for chosen seeds.

Run from the repository root:  python tools/seed_studies/ch06_alignment_detail.py SEED [SEED ...]
Trains the translator with attention (6 epochs) and prints T2's argmax row against the gold links,
and, over the held-out pairs, how far (in English positions) the attended word lies from the sure
link for the French words that have one. The result is pasted into ch06_alignment_detail.txt.
"""
import sys
from collections import Counter

from ch06_common import load_chapter6

ns = load_chapter6()
test_data = ns["test_data"]
for seed in [int(a) for a in sys.argv[1:]]:
    model, losses, _ = ns["train_translator"](attention=True, seed=seed)
    words, alpha = ns["translate"](test_data[0][0], model)
    gold = [j for j, t in sorted(test_data[0][2], key=lambda l: l[1])]
    print(f"seed {seed}: T2 {' '.join(words)}; argmax {[int(a.argmax()) for a in alpha]}, gold {gold}")
    predicted = ns["attention_links"](model, test_data)
    offsets, n_sure = Counter(), 0
    for (en, fr, links), a in zip(test_data, predicted):
        sure, possible = ns["sure_and_possible_links"](en)
        to_en = {t: j for j, t in a}
        for j, t in sure:
            n_sure += 1
            offsets[to_en[t] - j] += 1
    print(f"    sure links: {n_sure}; attended position minus sure position: "
          + ", ".join(f"{k:+d}: {v}" for k, v in sorted(offsets.items(), key=lambda kv: -kv[1])[:6]), flush=True)
