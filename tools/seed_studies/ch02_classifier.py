"""Seed study for chapter 2 (notebooks/02_soft_attention.ipynb): the trained sentiment classifier.

The chapter trains one seed to stay within its time budget; this script trains seeds 0-7 with the
chapter's own code and prints what the chapter quotes as spreads:

  * held-out accuracy of attention, mean and max pooling after each epoch (all / with 'not' / without),
  * the trained attention weights on note 003's four sentences (the words its table lists) (S7),
  * the S8 search for very different weights that keep the prediction, and the accuracy with the
    learned weights replaced by uniform or permuted ones.

It imports nothing from the repository but the notebook loader of the tests (tools/nbdefs.py): it
executes the notebook's code cells (all but those tagged `skip-in-tests`, up to the Exercises).

    .venv/bin/python tools/seed_studies/ch02_classifier.py > tools/seed_studies/ch02_classifier.txt
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402 (the one notebook loader of the tests and the studies)
SEEDS = list(range(8))
POOLINGS = ["attention", "mean", "max"]
# The words whose weights note 003's table lists: (index into the notebook's note_sentences, word).
NOTE_WORDS_BY_INDEX = [(0, "great"), (1, "terrible"), (2, "not"), (2, "great"), (3, "loved"), (0, "was"), (0, "the")]


def load_notebook_definitions() -> dict:
    """The chapter's definitions up to its Exercises, loaded as the tests load them."""
    return load_notebook("02_soft_attention", stop_before="# shared helper: check_helpers",
                         module_name="ch02_seed_study")


def spread(values) -> str:
    v = np.asarray(values, dtype=float)
    return f"mean {v.mean():.3f}  sd {v.std(ddof=1):.3f}  min {v.min():.3f}  max {v.max():.3f}"


def main() -> None:
    start = time.perf_counter()
    ns = load_notebook_definitions()
    NOTE_WORDS = [(ns["note_sentences"][k], word) for k, word in NOTE_WORDS_BY_INDEX]
    torch = ns["torch"]
    print(f"chapter 2 seed study: seeds {SEEDS[0]}-{SEEDS[-1]} ({len(SEEDS)}), {ns['EPOCHS']} epochs, "
          f"{len(ns['train_data'])} training / {len(ns['test_data'])} held-out sentences, device {ns['device']}, "
          f"torch {torch.__version__}")
    acc = {p: [] for p in POOLINGS}                  # pooling -> list of (epochs, 3) histories
    weights = {key: [] for key in NOTE_WORDS}
    probs = {s: [] for s in ns["note_sentences"]}
    s8 = []
    replaced = {name: [] for name in ["learned", "uniform", "permuted"]}
    for seed in SEEDS:
        for pooling in POOLINGS:
            model, history = ns["train_classifier"](pooling, seed=seed)
            acc[pooling].append(history)
            if pooling == "attention":
                p, alpha = ns["attention_on"](model, ns["note_X"], ns["note_lengths"])
                for k, sentence in enumerate(ns["note_sentences"]):
                    probs[sentence].append(p[k])
                for sentence, word in NOTE_WORDS:
                    k = ns["note_sentences"].index(sentence)
                    weights[(sentence, word)].append(alpha[k, sentence.split().index(word)])
                s8.append(ns["adversarial_summary"](model, ns["X_test"], ns["len_test"]))
                for name, value in ns["accuracy_with_weights"](model, ns["X_test"], ns["len_test"], ns["y_test"],
                                                               ns["neg_test"]).items():
                    replaced[name].append(value)
        print(f"seed {seed}: final held-out accuracy " + ", ".join(
            f"{p} {acc[p][-1][-1, 0]:.3f}" for p in POOLINGS), file=sys.stderr, flush=True)

    print("\n== held-out accuracy (all 500 sentences), per seed, after epochs 6 and 10")
    for pooling in POOLINGS:
        for epoch in (6, ns["EPOCHS"]):
            row = [h[epoch - 1, 0] for h in acc[pooling]]
            print(f"{pooling:>10} epoch {epoch:2d}: " + " ".join(f"{v:.3f}" for v in row) + f"  | {spread(row)}")
    print("\n== mean held-out accuracy over seeds, by epoch (all sentences)")
    for pooling in POOLINGS:
        curve = np.mean([h[:, 0] for h in acc[pooling]], axis=0)
        print(f"{pooling:>10}: " + " ".join(f"{v:.3f}" for v in curve))
    print(f"\n== after {ns['EPOCHS']} epochs: all / with 'not' / without")
    for pooling in POOLINGS:
        final = np.array([h[-1] for h in acc[pooling]])
        print(f"{pooling:>10} all      {spread(final[:, 0])}")
        print(f"{pooling:>10} with not {spread(final[:, 1])}")
        print(f"{pooling:>10} without  {spread(final[:, 2])}")
        print(f"{pooling:>10} seeds at 100 % (all): {int(np.sum(final[:, 0] == 1.0))} of {len(SEEDS)}")
    print("\n== S7: trained attention weights on note 003's sentences (note's value in brackets)")
    note = {s: t for s, t in zip(ns["note_sentences"], ns["note_trained"])}
    for (sentence, word), values in weights.items():
        print(f"'{sentence}' {word:>8} [{note[sentence][word]:.2f}]: " + " ".join(f"{v:.3f}" for v in values)
              + f"  | {spread(values)}")
    for sentence, values in probs.items():
        print(f"'{sentence}' P(positive): " + " ".join(f"{v:.3f}" for v in values) + f"  | {spread(values)}")
    print("\n== S8: adversarial weights on the 500 held-out sentences")
    for key in ["kept", "same_label", "median_jsd", "far"]:
        values = [r[key] for r in s8]
        print(f"{key:>11}: " + " ".join(f"{v:.3f}" for v in values) + f"  | {spread(values)}")
    print("\n== S8: held-out accuracy with the attention model's weights replaced (all, with 'not')")
    for name, values in replaced.items():
        v = np.array(values)
        print(f"{name:>9} all      {spread(v[:, 0])}")
        print(f"{name:>9} with not {spread(v[:, 1])}")
    drop_uniform = np.array(replaced["learned"])[:, 0] - np.array(replaced["uniform"])[:, 0]
    drop_permuted = np.array(replaced["learned"])[:, 0] - np.array(replaced["permuted"])[:, 0]
    print("learned - uniform   " + " ".join(f"{v:.3f}" for v in drop_uniform) + f"  | {spread(drop_uniform)}")
    print("learned - permuted  " + " ".join(f"{v:.3f}" for v in drop_permuted) + f"  | {spread(drop_permuted)}")
    print(f"seeds losing nothing with uniform weights: {int(np.sum(drop_uniform <= 0))} of {len(SEEDS)}; "
          f"with permuted weights: {int(np.sum(drop_permuted <= 0))} of {len(SEEDS)}")
    print(f"\n(study ran in {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
