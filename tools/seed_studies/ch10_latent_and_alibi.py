"""Seed study for chapter 10: multi-head latent attention, and ALiBi beside chapter 8's three position encodings.

Run from the repository root:  python tools/seed_studies/ch10_latent_and_alibi.py [first_seed] [n_seeds]
Seeds may run in several processes side by side; then
python tools/seed_studies/ch10_latent_and_alibi.py --summarize OUT1 OUT2 ... reads their per-seed lines
(JSON after "seed N: ") and prints the summary over all of them; the result is pasted into
ch10_latent_and_alibi.txt. The chapter's cells are executed as the tests load them (tools/nbdefs.py):
every code cell not tagged skip-in-tests, up to the exercises; each seed then trains, with the chapter's own
functions:

  LatentGPT with chapter 8's recipe (8 epochs), measured with the chapter's `measure` (held-out perplexity,
  agreement by kind, the grammatical share of 300 samples): latents of 32 and 64 numbers with learned positions,
  and of 24 and 56 numbers with a rotated part of 8 (the same cache sizes), beside chapter 8's TinyGPT with RoPE
  (the grouped-query models of equal cache are in ch10_shared_kv_and_windows.txt, same seeds, same recipe);
  chapter 8's train-short-test-long experiment (10 epochs on the sentences of at most 16 words) for learned,
  sinusoidal and rotary positions (TinyGPT) and ALiBi (ALiBiGPT, four key-value heads): perplexity on the short
  and the long held-out sentences, and on the long ones' first 17 predictions and the rest.
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ch10_common  # noqa: E402

LATENTS = {"latent32": (32, 0), "latent64": (64, 0), "latent24+rope8": (24, 8), "latent56+rope8": (56, 8)}
POSITIONS = ("learned", "sinusoidal", "rope", "alibi")


def rounded(result):
    return {"perplexity": round(result["perplexity"], 4), "grammatical": round(result["grammatical"], 4),
            "agreement": {kind: round(v, 4) for kind, v in result["agreement"].items()}}


def one_seed(nb, seed):
    row, train, measure = {}, nb["train_lm"], nb["measure"]
    t0 = time.perf_counter()
    row["rope_mha"] = {**rounded(measure(train(nb["train_fr"], seed=seed, positions="rope")[0])),
                       "seconds": round(time.perf_counter() - t0, 1)}
    for name, (d_latent, d_rope) in LATENTS.items():
        t0 = time.perf_counter()
        model = train(nb["train_fr"], seed=seed, make_model=nb["LatentGPT"], d_latent=d_latent, d_rope=d_rope)[0]
        row[name] = {**rounded(measure(model)), "seconds": round(time.perf_counter() - t0, 1)}
    for kind in POSITIONS:
        options = dict(make_model=nb["ALiBiGPT"]) if kind == "alibi" else dict(positions=kind)
        model = train(nb["short_train"], epochs=10, seed=seed, **options)[0]
        split = nb["split_perplexity"](nb["model_losses"](model, nb["held_long"]))
        row[f"short_{kind}"] = [round(nb["perplexity"](model, nb["held_short"]), 4),
                                round(nb["perplexity"](model, nb["held_long"]), 4), round(split[0], 4), round(split[1], 4)]
    return row


def summarize(rows):
    print(f"{len(rows)} seeds ({', '.join(str(s) for s in sorted(rows))})")
    span = lambda values, digits=3: f"{min(values):.{digits}f}-{max(values):.{digits}f}"
    first = next(iter(rows.values()))
    kinds = list(first["rope_mha"]["agreement"])
    for name in ["rope_mha", *LATENTS]:
        results = [rows[s][name] for s in sorted(rows)]
        ppl = [r["perplexity"] for r in results]
        line = f"{name}: perplexity {span(ppl)} (mean {np.mean(ppl):.3f}); grammatical {span([r['grammatical'] for r in results])}"
        for kind in kinds:
            line += f"; {kind.split(' (')[0]} {span([r['agreement'][kind] for r in results])}"
        print(line + f"; seconds {span([r['seconds'] for r in results], 1)}")
    for kind in POSITIONS:
        values = np.array([rows[s][f"short_{kind}"] for s in sorted(rows)])
        print(f"short_{kind}: short {span(values[:, 0])}; long {span(values[:, 1])}; long, first 17 "
              f"{span(values[:, 2])}; long, the rest {span(values[:, 3])}")
    best = [min(POSITIONS, key=lambda kind: rows[s][f"short_{kind}"][1]) for s in sorted(rows)]
    print("lowest long-sentence perplexity, per seed:", ", ".join(best))


if __name__ == "__main__":
    ch10_common.main(one_seed, summarize, "ch10_latent_study")
