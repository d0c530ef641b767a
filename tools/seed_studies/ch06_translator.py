"""Seed study for chapter 6's GRU translator: with attention, and without it at two budgets.

Run from the repository root:  python tools/seed_studies/ch06_translator.py [first_seed] [n_seeds]
For each seed: the translator with attention (6 epochs), the one without attention after the same
6 epochs, and the same model trained further until its validation loss stops improving (early
stopping, at most EXTRA more epochs). Prints one block per seed, then means and spreads; the result
is pasted into ch06_translator.txt.
"""
import sys
import time

import numpy as np

from ch06_common import load_chapter6

ns = load_chapter6()
EXTRA = 12
first = int(sys.argv[1]) if len(sys.argv) > 1 else 0
n_seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
test_data, valid_data, bins = ns["test_data"], ns["valid_data"], [(3, 8), (9, 14), (15, 20), (21, 26), (27, 34)]
lengths = np.array([len(en.split()) for en, fr, links in test_data])
auxiliaries = {aux for aux, m, f, obj in ns["VERBS"].values()}


def evaluate(model):
    hyp = ns["translate_all"](model, test_data)
    correct = np.array([h == fr for h, (en, fr, links) in zip(hyp, test_data)])
    per_bin = [correct[(lengths >= lo) & (lengths <= hi)].mean() for lo, hi in bins]
    return correct.mean(), per_bin


results = []
for seed in range(first, first + n_seeds):
    t0 = time.perf_counter()
    model, losses, _ = ns["train_translator"](attention=True, seed=seed)
    exact, per_bin = evaluate(model)
    predicted = ns["attention_links"](model, test_data)
    all_sure = [set(links) for en, fr, links in test_data]
    sp = [ns["sure_and_possible_links"](en) for en, fr, links in test_data]
    sure, possible = [s for s, p in sp], [p for s, p in sp]
    aer = ns["alignment_error_rate"]
    aer_all, aer_sure, aer_sp = aer(predicted, all_sure), aer(predicted, sure), aer(predicted, sure, possible)
    wrong = [fr.split()[t] for (en, fr, links), a, g in zip(test_data, predicted, all_sure) for j, t in a - g]
    aux_share = np.mean([w in auxiliaries for w in wrong]) if wrong else 0.0
    t2_words, t2_alpha = ns["translate"](test_data[0][0], model)
    t2_ok = [int(a.argmax()) for a in t2_alpha] == [j for j, t in sorted(test_data[0][2], key=lambda l: l[1])]
    t_att = time.perf_counter() - t0
    plain, plain_losses, _ = ns["train_translator"](attention=False, seed=seed)
    p_exact, p_bin = evaluate(plain)
    t0b = time.perf_counter()
    plain, more_losses, valid_losses = ns["train_translator"](attention=False, epochs=EXTRA, seed=seed,
                                                              valid=valid_data, patience=2, model=plain)
    best_extra = int(np.argmin(valid_losses)) + 1
    l_exact, l_bin = evaluate(plain)
    results.append(dict(seed=seed, exact=exact, per_bin=per_bin, aer_all=aer_all, aer_sure=aer_sure, aer_sp=aer_sp,
                        aux_share=aux_share, t2_ok=t2_ok, final_loss=losses[-1], p_exact=p_exact, p_bin=p_bin,
                        p_loss=plain_losses[-1], l_exact=l_exact, l_bin=l_bin, extra_run=len(valid_losses),
                        extra_best=best_extra, valid_losses=valid_losses))
    r = results[-1]
    print(f"seed {seed}: attention: exact {exact:.1%}, bins {[round(float(v), 3) for v in per_bin]}, "
          f"AER all-sure {aer_all:.3f}, sure-only {aer_sure:.3f}, sure+possible {aer_sp:.3f}, "
          f"wrong links on auxiliaries {aux_share:.1%}, T2 argmax = gold {t2_ok}, last loss {losses[-1]:.4f} ({t_att:.0f} s)")
    print(f"    no attention, 6 epochs: exact {p_exact:.1%}, bins {[round(float(v), 3) for v in p_bin]}, last loss {plain_losses[-1]:.4f}")
    print(f"    no attention, + up to {EXTRA} epochs with early stopping: ran {len(valid_losses)}, best at +{best_extra}, "
          f"exact {l_exact:.1%}, bins {[round(float(v), 3) for v in l_bin]}, "
          f"valid losses {[round(v, 4) for v in valid_losses]} ({time.perf_counter() - t0b:.0f} s)", flush=True)

n = len(results)


def summary(name, values):
    v = np.array(values, dtype=float)
    print(f"{name}: mean {v.mean():.4f}, sd {v.std(ddof=1) if n > 1 else 0:.4f}, min {v.min():.4f}, max {v.max():.4f}")


print(f"\n{n} seeds ({first}..{first + n - 1})")
summary("attention exact match", [r["exact"] for r in results])
summary("AER, every transducer link sure", [r["aer_all"] for r in results])
summary("AER, sure links only (P = S)", [r["aer_sure"] for r in results])
summary("AER, sure + possible", [r["aer_sp"] for r in results])
summary("share of wrong links on auxiliaries", [r["aux_share"] for r in results])
print(f"T2 argmax = gold links in {sum(r['t2_ok'] for r in results)}/{n}")
summary("no attention, 6 epochs, exact", [r["p_exact"] for r in results])
summary("no attention, early stopping, exact", [r["l_exact"] for r in results])
for k, (lo, hi) in enumerate(bins):
    summary(f"  {lo}-{hi} words: attention", [r["per_bin"][k] for r in results])
    summary(f"  {lo}-{hi} words: no attention, 6 epochs", [r["p_bin"][k] for r in results])
    summary(f"  {lo}-{hi} words: no attention, early stopping", [r["l_bin"][k] for r in results])
