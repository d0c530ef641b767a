"""Seed study for chapter 7: what its heads align besides the French word they predict, and the time per epoch.

Run from the repository root:

    python tools/seed_studies/ch07_heads_and_time.py heads [first_seed] [n_seeds]
    python tools/seed_studies/ch07_heads_and_time.py time [first_seed] [n_seeds] [epochs]

`heads` trains the chapter's Transformer (train_transformer, 6 epochs of chapter 6's recipe, one thread) for
each seed and prints the alignment error rate of every cross-attention head read two ways (the row of decoder
position t as an alignment of French word t, the word it predicts, as in the chapter; and as one of French
word t - 1, the word fed in at t), beside the diagonal alignment that reads positions only. Its exact match
is printed too, to show that the run gives the same models as ch07_transformer.txt.

`time` measures the seconds per training epoch of chapter 6's GRU translator and of chapter 7's Transformer
interleaved in one process, one thread: for each seed both models are built, then trained epoch by epoch,
alternating which model goes first, so that a change of the machine's load falls on both alike. It prints
every epoch's seconds and the ratio GRU / Transformer of each pair of epochs, then its spread.
The result is pasted into ch07_heads_and_time.txt.
"""
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "heads"
first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
n_seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
if mode not in ("heads", "time"):
    sys.exit(f"the first argument is 'heads' or 'time', not {mode!r}")
ch07 = load_notebook("07_transformer", module_name="07_transformer_study")
import torch  # noqa: E402  (after the notebooks, which set one thread)

torch.set_num_threads(1)


def summary(name, values):
    v = np.array(values, dtype=float)
    sd = v.std(ddof=1) if len(v) > 1 else 0.0
    print(f"{name}: mean {v.mean():.4f}, sd {sd:.4f}, min {v.min():.4f}, max {v.max():.4f}", flush=True)


def heads():
    test_data = ch07["test_data"]
    diagonal = ch07["alignment_error_rate"](ch07["diagonal_links"](test_data), *ch07["gold_links_of"](test_data))
    print(f"diagonal alignment (positions only): AER {diagonal:.4f}", flush=True)
    rows = []
    for seed in range(first, first + n_seeds):
        model, losses = ch07["train_transformer"](seed=seed)
        hyp = ch07["translate_all"](model, test_data)
        exact = np.mean([h == fr for h, (en, fr, links) in zip(hyp, test_data)])
        aer = ch07["head_aer_table"](model, test_data)
        shifted = ch07["head_aer_table"](model, test_data, shift=1)
        rows.append((aer, shifted))
        print(f"seed {seed}: exact {exact:.1%}; AER per head, French word t: {aer.round(3).tolist()}; "
              f"as French word t - 1: {shifted.round(3).tolist()}", flush=True)
    aer, shifted = (np.array(a) for a in zip(*rows))                    # (seeds, layers, heads) each
    flat, flat_shifted = aer.reshape(len(rows), -1), shifted.reshape(len(rows), -1)
    summary("best head, French word t", flat.min(axis=1))
    summary("median head, French word t", np.median(flat, axis=1))
    summary("best head, French word t - 1", flat_shifted.min(axis=1))
    summary("median head, French word t - 1", np.median(flat_shifted, axis=1))
    print("heads below the diagonal's AER per seed, French word t:", (flat < diagonal).sum(axis=1).tolist(),
          "; as French word t - 1:", (flat_shifted < diagonal).sum(axis=1).tolist())
    print("heads better read as t - 1 than as t (lower AER) per seed:", (flat_shifted < flat).sum(axis=1).tolist())
    print("each head's better reading, min(t, t - 1), below 0.2 per seed:",
          (np.minimum(flat, flat_shifted) < 0.2).sum(axis=1).tolist())


def epoch_runner(model, make_batch, length_batches, train_data, loss_fn, seed, epochs, batch_size=64, lr=0.005):
    """Chapter 6's recipe (Adam, warm-up over one epoch then linear decay, clipping) one epoch per call."""
    import random
    from torch import nn
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [make_batch(train_data, idx) for idx in length_batches(train_data, batch_size)]
    n_batches, total = len(batches), epochs * len(batches)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda k: min(1.0, (k + 1) / n_batches) * max(0.02, 1 - k / total))
    order_rng = random.Random(seed)
    for _ in range(epochs):
        model.train()
        order_rng.shuffle(batches)
        t0 = time.perf_counter()
        for x, y_in, y in batches:
            logits, _ = model(x, y_in)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
        yield time.perf_counter() - t0


def timing():
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    ch06 = load_notebook("06_toy_translator", module_name="06_toy_translator_study")
    torch.set_num_threads(1)
    ratios, seconds = [], {"gru": [], "transformer": []}
    for seed in range(first, first + n_seeds):
        torch.manual_seed(seed)
        gru = ch06["Translator"](attention=True).to(ch06["device"])
        torch.manual_seed(seed)
        transformer = ch07["TransformerTranslator"]().to(ch07["device"])
        runs = {"gru": epoch_runner(gru, ch06["make_batch"], ch06["length_batches"], ch06["train_data"],
                                    ch06["loss_fn"], seed, epochs),
                "transformer": epoch_runner(transformer, ch07["make_batch"], ch07["length_batches"],
                                            ch07["train_data"], ch07["loss_fn"], seed, epochs)}
        for epoch in range(epochs):
            order = ("gru", "transformer") if (seed + epoch) % 2 == 0 else ("transformer", "gru")
            took = {name: next(runs[name]) for name in order}
            for name in took:
                seconds[name].append(took[name])
            ratios.append(took["gru"] / took["transformer"])
            print(f"seed {seed}, epoch {epoch + 1} ({order[0]} first): GRU {took['gru']:.1f} s, "
                  f"Transformer {took['transformer']:.1f} s, ratio {ratios[-1]:.2f}", flush=True)
    summary("GRU seconds per epoch", seconds["gru"])
    summary("Transformer seconds per epoch", seconds["transformer"])
    summary("ratio GRU / Transformer per pair of epochs", ratios)


heads() if mode == "heads" else timing()
