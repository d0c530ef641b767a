"""Seed study for chapter 8: the small GPT trained on the French side of chapter 6's corpus.

Run from the repository root:  python tools/seed_studies/ch08_language_model.py [first_seed] [n_seeds]
Seeds may run in several processes side by side; then
python tools/seed_studies/ch08_language_model.py --summarize OUT1 OUT2 ... reads their per-seed lines
(JSON after "seed N: ") and prints the summary over all of them; the result is pasted into
ch08_language_model.txt. The chapter's cells are executed as the tests load them (tools/nbdefs.py):
every code cell not tagged skip-in-tests; each seed then repeats the chapter's skip-in-tests
experiments with the chapter's own functions and settings:

  TinyGPT (learned positions), trained with that seed: held-out perplexity, the share of 300 samples
  at temperature 1 that the grammar accepts (sampling seed 1, as the chapter), agreement accuracy by
  kind and the attention of each head to the subject's noun, the model's probability mass on the
  grammar's 11 words after "la vache", the temperature curve (200 samples per temperature, sampling
  seed 2) with top-k = 5 and top-p = 0.9;
  the three position encodings trained on the sentences of at most 16 words (10 epochs) and their
  perplexity on short and long held-out sentences;
  the attention-only model on repeated random tokens: the two losses, the head scores, the ablations.
The n-gram models are counts, the same for every seed; the chapter prints them.
"""
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root, for tools.nbdefs
from tools.nbdefs import load_notebook  # noqa: E402


def one_seed(nb, seed):
    import torch
    row = {}
    t0 = time.perf_counter()
    gpt, losses = nb["train_lm"](nb["train_fr"], seed=seed)
    row["seconds"] = round(time.perf_counter() - t0, 1)
    row["last_loss"] = round(losses[-1], 4)
    row["ppl"] = round(nb["perplexity"](gpt, nb["test_fr"]), 4)
    samples = nb["generate"](gpt, 300, seed=1)
    row["grammatical_t1"] = round(float(np.mean([nb["is_grammatical"](s) for s in samples])), 4)
    agreement, to_noun, uniform = nb["agreement_accuracy"](gpt, nb["agreement_fr"], nb["cases"])
    row["agreement"] = {k: round(v, 4) for k, v in agreement.items()}
    row["head_to_noun"] = np.round(to_noun, 4).tolist()
    row["uniform_to_noun"] = round(uniform, 4)
    words, word_index, grammar_p = nb["words"], nb["word_index"], nb["grammar_p"]
    with torch.no_grad():
        ids = torch.tensor([[nb["BOS"]] + [word_index[w] for w in nb["PREFIX"].split()]], device=nb["device"])
        scores = gpt(ids)[0, -1].cpu().double()
    candidates = list(range(2, nb["VOCAB"]))
    p = scores[candidates].softmax(dim=0).numpy()
    row["next_word_mass"] = round(float(sum(p[k] for k, j in enumerate(candidates) if words[j] in grammar_p)), 4)
    curve = {}
    for t in nb["CURVE_TEMPERATURES"]:
        drawn = nb["generate"](gpt, 200, temperature=t, seed=2)
        curve[str(t)] = [round(float(np.mean([nb["is_grammatical"](s) for s in drawn])), 4), round(len(set(drawn)) / len(drawn), 4)]
    for name, options in [("top_k=5", dict(top_k=5)), ("top_p=0.9", dict(top_p=0.9))]:
        drawn = nb["generate"](gpt, 200, seed=2, **options)
        curve[name] = [round(float(np.mean([nb["is_grammatical"](s) for s in drawn])), 4), round(len(set(drawn)) / len(drawn), 4)]
    greedy = nb["generate"](gpt, 1, greedy=True)[0]
    curve["greedy"] = [float(nb["is_grammatical"](greedy)), greedy]
    row["curve"] = curve
    positions = {}
    for kind in ("learned", "sinusoidal", "rope"):
        model_short, _ = nb["train_lm"](nb["short_train"], epochs=10, seed=seed, positions=kind)
        split = nb["split_perplexity"](nb["model_losses"](model_short, nb["held_long"]))
        positions[kind] = [round(nb["perplexity"](model_short, nb["held_short"]), 4), round(nb["perplexity"](model_short, nb["held_long"]), 4),
                           round(split[0], 4), round(split[1], 4)]
    row["positions"] = positions
    t0 = time.perf_counter()
    model, history = nb["train_induction"](seed=seed)
    row["induction_seconds"] = round(time.perf_counter() - t0, 1)
    tokens, predictable, first, n = nb["repeated_batch"](512, torch.Generator().manual_seed(1000))
    row["induction_losses"] = [round(v, 4) for v in nb["copy_losses"](model, tokens, predictable, first)]
    row["induction_history"] = [[s, round(a, 3), round(b, 3)] for s, a, b in history]
    with torch.no_grad():
        probs = model(tokens[:, :-1]).softmax(dim=-1)
    already = torch.zeros_like(probs, dtype=torch.bool)
    for t in range(tokens.shape[1] - 1):
        already[:, t].scatter_(1, tokens[:, :t + 1], True)
    row["first_copy_on_seen"] = round((probs * already).sum(dim=-1)[first].mean().item(), 4)
    row["first_copy_uniform_seen"] = round((already.sum(dim=-1)[first].double() / probs.shape[-1]).mean().item(), 4)
    previous, prefix = nb["head_scores"](model, tokens, n)
    row["previous_token"] = np.round(previous, 4).tolist()
    row["prefix_matching"] = np.round(prefix, 4).tolist()
    ablation = {}
    for l in range(2):
        for h in range(2):
            model.ablate({(l, h)})
            ablation[f"{l + 1}.{h + 1}"] = round(nb["copy_losses"](model, tokens, predictable, first)[1], 4)
    model.ablate({(1, 0), (1, 1)})
    ablation["layer 2"] = round(nb["copy_losses"](model, tokens, predictable, first)[1], 4)
    model.ablate(set())
    row["ablation"] = ablation
    return row


def spread(values):
    values = np.asarray(values, dtype=float)
    return f"mean {values.mean():.4f}, min {values.min():.4f}, max {values.max():.4f}"


def summarize(rows):
    seeds = [r["seed"] for r in rows]
    print(f"{len(rows)} seeds ({', '.join(map(str, seeds))})")
    print("held-out perplexity:", spread([r["ppl"] for r in rows]))
    print("last training loss:", spread([r["last_loss"] for r in rows]))
    print("training seconds:", spread([r["seconds"] for r in rows]))
    print("grammatical at tau = 1 (300 samples):", spread([r["grammatical_t1"] for r in rows]))
    for kind in rows[0]["agreement"]:
        print(f"agreement, {kind}:", spread([r["agreement"][kind] for r in rows]))
    heads = np.array([r["head_to_noun"] for r in rows])
    print("largest head weight on the noun:", spread(heads.reshape(len(rows), -1).max(axis=1)),
          "| best head per seed (layer.head):", [f"{int(h.argmax()) // h.shape[1] + 1}.{int(h.argmax()) % h.shape[1] + 1}" for h in heads])
    print("even spread over the prefix:", spread([r["uniform_to_noun"] for r in rows]))
    print("mass on the grammar's words after 'la vache':", spread([r["next_word_mass"] for r in rows]))
    for key in rows[0]["curve"]:
        if key == "greedy":
            print("greedy sentence grammatical:", [r["curve"]["greedy"][0] for r in rows], [r["curve"]["greedy"][1] for r in rows])
            continue
        print(f"curve {key}: grammatical {spread([r['curve'][key][0] for r in rows])}; distinct {spread([r['curve'][key][1] for r in rows])}")
    for kind in ("learned", "sinusoidal", "rope"):
        print(f"positions {kind}: short {spread([r['positions'][kind][0] for r in rows])}; long {spread([r['positions'][kind][1] for r in rows])}")
        print(f"  long, first 17 predictions {spread([r['positions'][kind][2] for r in rows])}; the rest {spread([r['positions'][kind][3] for r in rows])}")
    wins = sum(min(r["positions"], key=lambda k: r["positions"][k][1]) == "rope" for r in rows)
    print(f"RoPE has the lowest long-sentence perplexity in {wins} of {len(rows)} seeds")
    print("induction: first copy", spread([r["induction_losses"][0] for r in rows]), "| second copy", spread([r["induction_losses"][1] for r in rows]))
    print("induction seconds:", spread([r["induction_seconds"] for r in rows]))
    print("first copy, probability on tokens already in the sequence:", spread([r["first_copy_on_seen"] for r in rows]),
          "| a uniform guess:", spread([r["first_copy_uniform_seen"] for r in rows]))
    wins_seen = sum(min(r["positions"], key=lambda k: r["positions"][k][2]) == "rope" for r in rows)
    print(f"RoPE has the lowest perplexity on the long sentences' first 17 predictions in {wins_seen} of {len(rows)} seeds")
    print("best previous-token score (layer 1):", spread([max(r["previous_token"]) for r in rows]))
    print("best prefix-matching score (layer 2):", spread([max(r["prefix_matching"]) for r in rows]))
    prev_head = [int(np.argmax(r["previous_token"])) + 1 for r in rows]
    print("second-copy loss with the best previous-token head off:",
          spread([r["ablation"][f"1.{h}"] for r, h in zip(rows, prev_head)]))
    print("second-copy loss with the other layer-1 head off:",
          spread([r["ablation"][f"1.{3 - h}"] for r, h in zip(rows, prev_head)]))
    print("second-copy loss with one layer-2 head off:", spread([r["ablation"][k] for r in rows for k in ("2.1", "2.2")]))
    print("second-copy loss with both layer-2 heads off:", spread([r["ablation"]["layer 2"] for r in rows]))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--summarize":
        rows = []
        for path in sys.argv[2:]:
            for line in Path(path).read_text(encoding="utf-8").splitlines():
                if line.startswith("seed ") and ": {" in line:
                    rows.append(dict(seed=int(line.split(":")[0].split()[1]), **json.loads(line.split(": ", 1)[1])))
        summarize(sorted(rows, key=lambda r: r["seed"]))
        sys.exit(0)
    first = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    n_seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    nb = load_notebook("08_language_model", module_name="ch08_study")
    import torch  # noqa: E402  (after the notebook, which set one thread)
    torch.set_num_threads(1)
    rows = []
    for seed in range(first, first + n_seeds):
        row = one_seed(nb, seed)
        print(f"seed {seed}: {json.dumps(row)}", flush=True)
        rows.append(dict(seed=seed, **row))
    summarize(rows)
