"""Seed study for chapter 10: streaming with a window of recent keys and values, with and without the first tokens.

Run from the repository root:  python tools/seed_studies/ch10_streaming.py [first_seed] [n_seeds]
Seeds may run in several processes side by side; then
python tools/seed_studies/ch10_streaming.py --summarize OUT1 OUT2 ... reads their per-seed lines
(JSON after "seed N: ") and prints the summary over all of them; the result is pasted into ch10_streaming.txt.
The chapter's cells are executed as the tests load them (tools/nbdefs.py): every code cell not tagged
skip-in-tests, up to the exercises. Each seed then trains the chapter's ALiBiGPT (four key-value heads, no window)
with chapter 8's recipe (8 epochs) on the chapter's `stream_chunks` of the training sentences (shuffled with that
seed), and reads the chapter's `held_stream` (80 held-out sentences in a row) with every key, and through the
chapter's `streaming` with windows of 8 and 16 tokens and 0, 1 or 4 first tokens kept, and with windows of 12 and
20 alone (as many keys as a window of 8 or 16 and 4 first tokens): the perplexity over the whole stream and over its
predictions from position 64 on.
"""
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ch10_common  # noqa: E402

SETTINGS = {"every key": None, "window 8": (8, 0), "window 8, first 1": (8, 1), "window 8, first 4": (8, 4),
            "window 12": (12, 0), "window 16": (16, 0), "window 16, first 1": (16, 1), "window 16, first 4": (16, 4),
            "window 20": (20, 0)}
LATE = 64


def one_seed(nb, seed):
    import torch
    import torch.nn.functional as F
    t0 = time.perf_counter()
    chunks = nb["stream_chunks"](nb["train_fr"], seed=seed)
    model = nb["train_lm"](None, seed=seed, make_model=nb["ALiBiGPT"], batches=chunks.split(64), max_positions=2048)[0]
    row = {"seconds": round(time.perf_counter() - t0, 1), "tokens": int(nb["held_stream"].numel())}
    stream = nb["held_stream"]
    for name, setting in SETTINGS.items():
        reader = model if setting is None else nb["streaming"](model, *setting)
        with torch.no_grad():
            losses = F.cross_entropy(reader(stream[None, :-1])[0], stream[1:], reduction="none")   # position t predicts t + 1
        row[name] = [round(math.exp(float(losses.mean())), 4), round(math.exp(float(losses[LATE:].mean())), 4)]
    return row


def summarize(rows):
    print(f"{len(rows)} seeds ({', '.join(str(s) for s in sorted(rows))}); the held-out stream: "
          f"{next(iter(rows.values()))['tokens']} tokens")
    span = lambda values: f"{min(values):.3f}-{max(values):.3f}"
    for name in SETTINGS:
        values = np.array([rows[s][name] for s in sorted(rows)])
        print(f"{name}: whole {span(values[:, 0])}; from {LATE} on {span(values[:, 1])}")
    print(f"seconds {span([rows[s]['seconds'] for s in rows])}")


if __name__ == "__main__":
    ch10_common.main(one_seed, summarize, "ch10_stream_study")
