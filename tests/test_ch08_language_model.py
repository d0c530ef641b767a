"""Chapter 8 (attention in a language model): the notebook's attention, block and model against
PyTorch's own layers, RoPE against a rotation written with complex numbers, the sampling rules
against brute force, the n-gram models against formulas worked here, the grammar's checker and
its probabilities against the generator itself (a recording random source), the measurements
of agreement and of heads against hand-built cases, and what the text states (the seed study's ranges,
the floor and its spread, the learning-rate schedule, one symbol for one meaning, the running time)
against tools/seed_studies/ch08_language_model.txt, the stored outputs and computations written here.

The notebook is loaded with tests/nbdefs.load_notebook (training and the trained results are tagged
`skip-in-tests`; nbval checks those against the seed study's bands). Expected values come from
`torch.nn` layers with copied weights, from loops over the definitions written out here, or from
chapter 6's generator; never from the code under test.
"""
from __future__ import annotations

import cmath
import itertools
import math
import random

import numpy as np
import pytest
import torch
from torch import nn

from nbdefs import load_notebook

STEM = "08_language_model"


@pytest.fixture(scope="module")
def ns():
    return load_notebook(STEM)


# ------------------------------------------------------------------ attention, block, model


@pytest.mark.parametrize("seed", range(6))
def test_attention_equals_pytorchs_with_a_causal_mask(ns, seed):
    rng = np.random.default_rng(seed)
    n_heads = int(rng.choice([1, 2, 4]))
    d_model = n_heads * int(rng.choice([2, 3, 8]))
    B, T = int(rng.integers(1, 4)), int(rng.integers(1, 10))
    torch.manual_seed(seed)
    ours = ns.CausalSelfAttention(d_model, n_heads).double()
    theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True).double()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)
        x = torch.randn(B, T, d_model, dtype=torch.float64)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        expected, weights = theirs(x, x, x, attn_mask=mask, average_attn_weights=False)
        assert torch.allclose(ours(x), expected, atol=1e-12)
        assert torch.allclose(ours.weights, weights, atol=1e-12)


def test_block_equals_pytorchs_pre_ln_layer(ns):
    torch.manual_seed(3)
    ours = ns.Block(16, 4, 40).double().eval()
    theirs = nn.TransformerEncoderLayer(16, 4, 40, dropout=0.0, batch_first=True, norm_first=True).double().eval()
    with torch.no_grad():
        for p in ours.parameters():
            p.add_(0.3 * torch.randn_like(p))
        a = ours.attn
        theirs.self_attn.in_proj_weight.copy_(torch.cat([a.W_q.weight, a.W_k.weight, a.W_v.weight]))
        theirs.self_attn.in_proj_bias.copy_(torch.cat([a.W_q.bias, a.W_k.bias, a.W_v.bias]))
        theirs.self_attn.out_proj.weight.copy_(a.W_o.weight)
        theirs.self_attn.out_proj.bias.copy_(a.W_o.bias)
        theirs.linear1.load_state_dict(ours.ffn[0].state_dict())
        theirs.linear2.load_state_dict(ours.ffn[2].state_dict())
        theirs.norm1.load_state_dict(ours.norm1.state_dict())
        theirs.norm2.load_state_dict(ours.norm2.state_dict())
        x = torch.randn(2, 9, 16, dtype=torch.float64)
        mask = torch.triu(torch.ones(9, 9, dtype=torch.bool), diagonal=1)
        assert torch.allclose(ours(x), theirs(x, src_mask=mask, is_causal=True), atol=1e-12)


@pytest.mark.parametrize("positions", ["learned", "sinusoidal", "rope"])
def test_a_later_token_never_changes_earlier_logits(ns, positions):
    torch.manual_seed(0)
    model = ns.TinyGPT(20, d_model=16, n_heads=2, n_layers=2, d_ff=32, positions=positions, max_positions=12).double().eval()
    tokens = torch.randint(0, 20, (3, 12))
    with torch.no_grad():
        base = model(tokens)
        for t in range(11):
            changed = tokens.clone()
            changed[:, t + 1] = (changed[:, t + 1] + 7) % 20
            out = model(changed)
            assert torch.equal(out[:, :t + 1], base[:, :t + 1]), f"{positions}: token {t + 1} changed the logits of position {t}"
            assert not torch.allclose(out[:, t + 1], base[:, t + 1])


def test_output_layer_is_the_embedding_and_the_count_follows_the_sizes(ns):
    for V, d, h, L, ff, P in [(57, 64, 4, 2, 256, 48), (10, 8, 2, 1, 5, 7), (33, 12, 3, 3, 20, 16)]:
        model = ns.TinyGPT(V, d_model=d, n_heads=h, n_layers=L, d_ff=ff, max_positions=P)
        per_block = 4 * (d * d + d) + (d * ff + ff + ff * d + d) + 2 * 2 * d
        assert sum(p.numel() for p in model.parameters()) == V * d + P * d + L * per_block + 2 * d
    torch.manual_seed(1)
    model = ns.TinyGPT(11, d_model=8, n_heads=2, n_layers=1, d_ff=16, max_positions=6).double().eval()
    tokens = torch.randint(0, 11, (2, 6))
    with torch.no_grad():
        x = model.embedding(tokens) + model.P[:6]
        for block in model.blocks:
            x = block(x)
        expected = model.final_norm(x) @ model.embedding.weight.T
        assert torch.allclose(model(tokens), expected, atol=1e-12)
        model.embedding.weight[3] += torch.randn(8, dtype=torch.float64)   # one row: its output scores change too
        assert not torch.allclose(model(tokens)[..., 3], expected[..., 3])
    with pytest.raises(ValueError, match="at most 6 tokens"):
        model(torch.zeros(1, 7, dtype=torch.long))
    with pytest.raises(ValueError, match="positions must be"):
        ns.TinyGPT(11, positions="alibi")


def test_lm_loss_is_the_mean_over_real_targets(ns):
    torch.manual_seed(2)
    model = ns.TinyGPT(ns.VOCAB).double().eval()
    batch = ns.sentence_batches(ns.test_fr[:5], 5)[0]
    with torch.no_grad():
        logits = model(batch[:, :-1])
        total, count = 0.0, 0
        for b in range(batch.shape[0]):
            for t in range(batch.shape[1] - 1):
                target = int(batch[b, t + 1])
                if target == ns.PAD:
                    continue
                total -= torch.log_softmax(logits[b, t], dim=0)[target].item()
                count += 1
        assert abs(ns.lm_loss(model, batch).item() - total / count) < 1e-10
    assert count == sum(len(s.split()) + 1 for s in ns.test_fr[:5])


# ------------------------------------------------------------------ RoPE


def _rope_complex(x, positions, base=10000.0):
    """Each adjacent pair as a complex number, times e^(i * position * omega)."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-2]):
        for t, m in enumerate(positions):
            for i in range(d // 2):
                z = complex(x[idx + (t, 2 * i)], x[idx + (t, 2 * i + 1)]) * cmath.exp(1j * m * base ** (-2 * i / d))
                out[idx + (t, 2 * i)], out[idx + (t, 2 * i + 1)] = z.real, z.imag
    return out


def test_rope_is_a_rotation_of_complex_pairs(ns):
    rng = np.random.default_rng(4)
    for shape, base in [((5, 4), 10000.0), ((2, 3, 8), 10000.0), ((7, 2), 100.0)]:
        x = rng.normal(size=shape)
        positions = rng.integers(0, 500, size=shape[-2])
        expected = _rope_complex(x, positions, base)
        assert np.allclose(ns.apply_rope(x, positions, base), expected, atol=1e-12)
        got = ns.apply_rope_torch(torch.tensor(x), torch.tensor(positions), base).numpy()
        assert np.allclose(got, expected, atol=1e-12)
    with pytest.raises(ValueError, match="d even"):
        ns.apply_rope(np.zeros((3, 5)), [0, 1, 2])


def test_rope_scores_depend_on_the_offset_only_and_rotate_half_is_a_permutation(ns):
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=16), rng.normal(size=16)
    for m, n, shift in itertools.product([0, 3, 50], [0, 9], [1, 13, 400]):
        a = ns.apply_rope(q[None], [m])[0] @ ns.apply_rope(k[None], [n])[0]
        b = ns.apply_rope(q[None], [m + shift])[0] @ ns.apply_rope(k[None], [n + shift])[0]
        assert abs(a - b) < 1e-10
    # rotate half, written from its definition: x * cos + rotate_half(x) * sin, frequencies repeated over the halves
    x = rng.normal(size=(6, 16))
    positions = np.arange(6) * 7
    omega = 10000.0 ** (-np.arange(0, 16, 2) / 16)
    angle = np.concatenate([positions[:, None] * omega] * 2, axis=1)
    rotate_half = np.concatenate([-x[:, 8:], x[:, :8]], axis=1)
    assert np.allclose(ns.apply_rope_half(x, positions), x * np.cos(angle) + rotate_half * np.sin(angle), atol=1e-12)


# ------------------------------------------------------------------ sampling rules


def _brute_force_distribution(z, tau, k, p):
    probs = np.exp(np.asarray(z) / tau - np.max(np.asarray(z) / tau))
    probs /= probs.sum()
    keep = set(range(len(z)))
    if k is not None:
        kth = sorted(z, reverse=True)[k - 1]
        keep = {j for j in keep if z[j] >= kth}
        probs = np.array([probs[j] if j in keep else 0.0 for j in range(len(z))])
        probs /= probs.sum()
    if p is not None:
        ranked = sorted(range(len(z)), key=lambda j: -probs[j])
        for size in range(1, len(z) + 1):               # the smallest prefix of the ranking reaching p
            if sum(probs[j] for j in ranked[:size]) >= p:
                break
        keep = set(ranked[:size])
        probs = np.array([probs[j] if j in keep else 0.0 for j in range(len(z))])
        probs /= probs.sum()
    return probs


def test_sampling_rules_against_brute_force(ns):
    rng = np.random.default_rng(6)
    for _ in range(300):
        z = list(rng.normal(size=int(rng.integers(2, 9))) * 2)
        tau = float(rng.uniform(0.2, 3))
        k = int(rng.integers(1, len(z) + 1)) if rng.random() < 0.6 else None
        p = float(rng.uniform(0.05, 0.99)) if rng.random() < 0.6 else None
        expected = _brute_force_distribution(z, tau, k, p)
        assert np.allclose(ns.sampling_distribution(z, tau, k, p), expected, atol=1e-12)
        got = ns.filter_logits(torch.tensor(z, dtype=torch.float64), tau, k, p).softmax(dim=-1).numpy()
        assert np.allclose(got, expected, atol=1e-12)
    tied = ns.sampling_distribution([1.0, 1.0, 0.0], 1.0, 1, None)      # both words tied at the top are kept
    assert np.allclose(tied, [0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="temperature must be positive"):
        ns.filter_logits(torch.zeros(3), 0.0)


class _Scripted(nn.Module):
    """Scores that put almost everything on a fixed next token for each position."""

    def __init__(self, script, vocab):
        super().__init__()
        self.script, self.vocab = script, vocab

    def forward(self, tokens):
        B, T = tokens.shape
        out = torch.full((B, T, self.vocab), -20.0)
        for t in range(T):
            out[:, t, self.script[min(t, len(self.script) - 1)]] = 20.0
        out[:, :, 1] = 30.0                                  # <s> is the best score: it must never be chosen
        return out


def test_generate_follows_the_scores_and_stops_at_the_end(ns):
    vocab = ns.VOCAB
    script = [ns.word_index["le"], ns.word_index["chat"], ns.word_index["a"], ns.word_index["dormi"], ns.EOS]
    model = _Scripted(script, vocab)
    assert ns.generate(model, 1, greedy=True) == ["le chat a dormi"]
    assert ns.generate(model, 3, temperature=1.0, seed=4) == ["le chat a dormi"] * 3


# ------------------------------------------------------------------ n-grams


def test_ngram_models_against_hand_worked_formulas(ns):
    sentences = ["a b", "a c", "b c"]
    # add-one bigram: p(b | a) = (c(a b) + 1) / (c(a) + |V|), vocabulary {a, b, c, </s>}
    add_one = ns.NGramLM(2, sentences, "add-one")
    assert add_one.prob(["a"], "b") == pytest.approx((1 + 1) / (2 + 4))
    assert add_one.prob([], "a") == pytest.approx((2 + 1) / (3 + 4))           # after <s>: "a" twice, "b" once
    # interpolated Kneser-Ney bigram, D = 0.75.
    kn = ns.NGramLM(2, sentences, "kneser-ney")
    # continuation counts: N1+(. w) over the bigram types (<s> a) (a b) (b </s>) (<s> a) (a c) (c </s>) (<s> b) (b c) (c </s>)
    cont = {"a": 1, "b": 2, "c": 2, "</s>": 2}                  # a after <s>; b after a, <s>; c after a, b; </s> after b, c
    types = sum(cont.values())                                   # 7 distinct bigram types
    uniform_share = 0.75 * 4 / types / 4                         # the lowest order also keeps D * N1+(types) / total for uniform
    unigram = {w: max(c - 0.75, 0) / types + uniform_share for w, c in cont.items()}
    # p(c | b): c(b c) = 1, c(b .) = 2 (b c, b </s>), followers of b: 2
    assert kn.prob(["b"], "c") == pytest.approx((1 - 0.75) / 2 + 0.75 * 2 / 2 * unigram["c"])
    # an unseen history backs off to the lowest order entirely
    assert kn.prob(["zzz"], "c") == pytest.approx(unigram["c"])
    assert sum(unigram.values()) == pytest.approx(1.0)


def test_ngram_distributions_sum_to_one_on_the_corpus(ns):
    rng = random.Random(0)
    for (n, smoothing), model in ns.ngrams.items():
        for _ in range(20):
            history = rng.sample(ns.train_fr, 1)[0].split()[: rng.randint(0, 6)]
            assert sum(model.prob(history, w) for w in model.vocabulary) == pytest.approx(1.0, abs=1e-12), (n, smoothing, history)


# ------------------------------------------------------------------ the grammar


class _RecordingRandom(random.Random):
    """chapter 6's generator's random source, recording the probability of every draw it makes."""

    def __init__(self, seed):
        super().__init__(seed)
        self.log_p = 0.0

    def choice(self, seq):
        value = super().choice(seq)
        self.log_p += math.log(list(seq).count(value) / len(seq))
        return value

    def getrandbits(self, k):                                     # defined, so that choice() draws bits, not random()
        return super().getrandbits(k)

    def random(self):
        value = super().random()
        self.log_p += math.log(0.5)                               # the generator only asks random() < 0.5
        return value


def test_grammar_probability_is_the_generators(ns):
    for seed in range(400):
        rng = _RecordingRandom(seed)
        english = ns.random_english(rng)
        french = ns.english_to_french(english)[0]
        if len(english.split()) > ns.MAX_WORDS:
            assert not ns.is_grammatical(french)
            continue
        assert ns.is_grammatical(french), french
        assert ns.grammar_log_prob(french) == pytest.approx(rng.log_p, abs=1e-9)


def test_the_checker_rejects_what_the_grammar_cannot_produce(ns):
    assert ns.is_grammatical("le chat noir était assis sur la table")
    bad = {
        "la chat a couru": "agreement",
        "le chat noire a couru": "agreement",
        "la vache était assis": "agreement",
        "le chat a vu": "article",                                  # a transitive verb without its object
        "le chat a couru le chien": "cannot follow",                # an intransitive verb with an object
        "le tapis a dormi": "cannot be a subject",
        "le chat a dormi sur le lit sur le lit sur le lit": "two prepositional phrases",
        " et ".join(["le chat a dormi"] * 5): "four clauses",
        "": "article",
        "le chat": "verb",
    }
    for sentence, reason in bad.items():
        why = ns.parse_french(sentence)[1]
        assert reason in why, (sentence, why)
    long = " et ".join(["le chat noir a vu le chien noir sur la table verte dans la maison verte"] * 3)
    assert "longer than the corpus allows" in ns.parse_french(long)[1]
    with pytest.raises(ValueError, match="not a sentence of the grammar"):
        ns.grammar_log_prob("la chat a couru")


def test_agreement_cases_by_hand(ns):
    sentences = ["le chat noir était assis", "la vache rouge était assise", "une souris est tombée sur un lit vert",
                 "le loup a dormi et la fille était assise"]
    cases = ns.agreement_cases(sentences)
    found = {(k, i, noun, good, bad, kind) for k, i, noun, good, bad, kind in cases}
    assert found == {
        (0, 2, 1, "noir", "noire", "adjective (distance 1)"),
        (0, 4, 1, "assis", "assise", "participle, another adjective between (distance 3)"),
        (1, 4, 1, "assise", "assis", "participle, 'rouge' between (distance 3)"),
        (2, 3, 1, "tombée", "tombé", "participle (distance 2)"),
        (2, 7, 6, "vert", "verte", "adjective (distance 1)"),
        (3, 8, 6, "assise", "assis", "participle (distance 2)"),
    }


# ------------------------------------------------------------------ induction


def test_repeated_batches_repeat_and_the_masks_mark_the_right_targets(ns):
    tokens, predictable, first, n = ns.repeated_batch(50, torch.Generator().manual_seed(3))
    for b in range(50):
        m = int(n[b])
        assert torch.equal(tokens[b, :m], tokens[b, m:2 * m])
        assert [t for t in range(tokens.shape[1] - 1) if predictable[b, t]] == list(range(m, 2 * m - 1))
        assert [t for t in range(tokens.shape[1] - 1) if first[b, t]] == list(range(0, m - 1))


def test_head_scores_on_perfect_patterns(ns):
    torch.manual_seed(0)
    model = ns.AttentionOnly()
    tokens, _, _, n = ns.repeated_batch(8, torch.Generator().manual_seed(5))
    T = tokens.shape[1] - 1
    previous = torch.zeros(8, 2, T, T)
    previous[:, 0, 0, 0] = 1.0
    for t in range(1, T):
        previous[:, 0, t, t - 1] = 1.0
    previous[:, 1] = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
    induction = torch.zeros(8, 2, T, T)
    for b in range(8):
        for t in range(T):
            m = int(n[b])
            induction[b, :, t, t - m + 1 if m <= t < 2 * m - 1 else t] = 1.0
    patterns = [previous, induction]

    def fake_forward(tokens_in):
        for layer, w in zip(model.layers, patterns):
            layer.weights = w
        return None

    model.forward = fake_forward
    prev_scores, prefix_scores = ns.head_scores(model, tokens, n)
    assert prev_scores[0] == pytest.approx(1.0)                        # rows 1..T-1, each all on t - 1
    assert prev_scores[1] == pytest.approx(float(np.mean([1 / (t + 1) for t in range(1, T)])))
    assert prefix_scores == pytest.approx([1.0, 1.0])


def test_ablating_a_head_equals_zeroing_its_values(ns):
    torch.manual_seed(0)
    model = ns.AttentionOnly().double()
    tokens, _, _, _ = ns.repeated_batch(4, torch.Generator().manual_seed(0))
    with torch.no_grad():
        for layer, head in [(0, 1), (1, 0)]:
            model.ablate({(layer, head)})
            ablated = model(tokens)
            model.ablate(set())
            attn = model.layers[layer]
            rows = slice(head * attn.d_k, (head + 1) * attn.d_k)
            saved = attn.W_v.weight[rows].clone(), attn.W_v.bias[rows].clone()
            attn.W_v.weight[rows] = 0.0
            attn.W_v.bias[rows] = 0.0
            assert torch.allclose(model(tokens), ablated, atol=1e-12)
            attn.W_v.weight[rows], attn.W_v.bias[rows] = saved


# ------------------------------------------------------------------ the sampling rules refuse what they cannot use


@pytest.mark.parametrize("options, words", [
    (dict(top_p=0.0), "top_p must be above 0"), (dict(top_p=-0.1), "top_p must be above 0"),
    (dict(top_p=1.5), "top_p must be above 0"), (dict(top_k=0), "top_k must be a whole number from 1"),
    (dict(top_k=7), "top_k must be a whole number from 1"), (dict(top_k=2.5), "top_k must be a whole number from 1"),
    (dict(top_k=True), "top_k must be a whole number from 1"), (dict(temperature=0.0), "temperature must be positive"),
])
def test_bad_sampling_options_get_one_sentence_in_both_versions(ns, options, words):
    z = np.array([2.0, 1.0, 0.0, -1.0, 0.5, 0.3])                      # 6 words
    with pytest.raises(ValueError, match=words):
        ns.sampling_distribution(z, **options)
    with pytest.raises(ValueError, match=words):
        ns.filter_logits(torch.tensor(z), **options)


def test_the_edges_of_the_sampling_options_are_accepted(ns):
    z = np.array([2.0, 1.0, 0.0, -1.0])
    softmax = np.exp(z) / np.exp(z).sum()
    for options in (dict(top_p=1.0), dict(top_k=4), dict(top_k=np.int64(4))):
        assert np.allclose(ns.sampling_distribution(z, **options), softmax, atol=1e-12)
        assert np.allclose(ns.filter_logits(torch.tensor(z), **options).softmax(dim=-1).numpy(), softmax, atol=1e-12)


@pytest.mark.parametrize("V, top_p, kept", [(6, 0.5, 3), (100, 0.05, 5), (100, 0.051, 6), (40, 1.0, 40)])
def test_the_nucleus_breaks_ties_by_index_in_both_versions(ns, V, top_p, kept):
    """V equal scores: the nucleus is the first words by index, as many as the documented rule takes
    (word j is kept when the mass ranked above it, j / V, is below top_p)."""
    expected = np.array([1.0 / kept if j < kept else 0.0 for j in range(V)])
    assert kept == sum(j / V < top_p for j in range(V))
    assert np.allclose(ns.sampling_distribution(np.zeros(V), top_p=top_p), expected, atol=1e-12)
    got = ns.filter_logits(torch.zeros(V, dtype=torch.float64), top_p=top_p).softmax(dim=-1).numpy()
    assert np.allclose(got, expected, atol=1e-12)
    assert "lower index" in ns.filter_logits.__doc__


def test_parse_french_returns_what_its_docstring_says(ns):
    clauses, why = ns.parse_french("le chat noir a vu une souris sur la table et la vache a dormi")
    assert why == "" and clauses == [(1, True, [True, False, False]), (0, False, [False])]
    assert all(len(clause) == 3 for clause in clauses)
    assert "English length;" not in ns.parse_french.__doc__ and "from which the English length" in ns.parse_french.__doc__


# ------------------------------------------------------------------ what the text states, against the study and the outputs


def _root():
    from tools.registry import ROOT
    return ROOT


def _text():
    return (_root() / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")


def _prose():
    """The text without its code cells, lines joined by spaces."""
    import re
    return " ".join(re.sub(r"```\{code-cell\}.*?```", "", _text(), flags=re.S).split())


def _study():
    """(per-seed rows, summary lines) of tools/seed_studies/ch08_language_model.txt."""
    import json
    import re
    text = (_root() / "tools" / "seed_studies" / "ch08_language_model.txt").read_text(encoding="utf-8")
    rows = {int(m[0]): json.loads(m[1]) for m in re.findall(r"^seed (\d+): (\{.*\})$", text, re.M)}
    return rows, text


def _stored(source_start):
    """The stored stream output of the code cell whose source starts with source_start."""
    import json
    from nbdefs import notebook_path
    nb = json.loads(notebook_path(STEM).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith(source_start):
            return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    raise KeyError(source_start)


def test_the_position_encodings_text_is_the_studys():
    """The positions table against the seed study, and the sentence on positions >= 17 against the
    trigram's stored perplexity there: every encoding is behind it in every seed."""
    import re
    rows, _ = _study()
    prose = _prose()
    trigram_rest = float(re.search(r"first 17 predictions and the rest: [\d.]+ and ([\d.]+)", _stored("SHORT = 16")).group(1))
    names = {"learned": "learned positions", "sinusoidal": "sinusoidal positions (eq. 7.1, added)", "rope": "RoPE"}
    for kind, label in names.items():
        columns = np.array([row["positions"][kind] for row in rows.values()])            # (seeds, 4)
        line = re.search(rf"\| {re.escape(label)} \|([^\n]*)\|\n", _text()).group(1)
        stated = np.array([[float(v) for v in cell.split("–")] for cell in line.split("|")])   # (4, 2): min, max
        # the study prints 4 decimals, the table 3: a last digit may round either way
        assert np.allclose(stated, np.stack([columns.min(axis=0), columns.max(axis=0)], axis=1), atol=0.00051), kind
        assert columns[:, 3].min() > trigram_rest                                         # behind the trigram, every seed
    rope = np.array([row["positions"]["rope"][3] for row in rows.values()])
    assert (f"every encoding falls behind the trigram ({trigram_rest:.3f}), which needs no positions" in prose
            and f"RoPE ({rope.min():.2f} to {rope.max():.2f}) by much less, but in every seed" in prose)
    floor_short = float(re.search(r"the floor: ([\d.]+) on the short", _stored("SHORT = 16")).group(1))
    short = np.array([row["positions"][kind][0] for row in rows.values() for kind in names])
    above = 100 * (short / floor_short - 1)
    assert f"{above.min():.1f} % to {above.max():.1f} % above the floor for short sentences" in prose


def test_the_position_comparison_states_its_epochs_as_the_code_and_the_study_run_them(ns):
    import re
    chapter = re.findall(r"train_lm\(short_train, epochs=(\d+),", _text())
    study = re.findall(r'\(nb\["short_train"\], epochs=(\d+),',
                       (_root() / "tools" / "seed_studies" / "ch08_language_model.py").read_text(encoding="utf-8"))
    assert len(chapter) == len(study) == 1 and chapter == study
    assert f"each trained for {chapter[0]} epochs (not the {ns.EPOCHS} above) on the training sentences" in _prose()


def test_the_floor_is_a_floor_on_average_and_its_spread_is_measured(ns):
    """The floor's spread over sets of 400 sentences, drawn here from chapter 6's generator with the
    generator's own probabilities (a recording random source), not the chapter's grammar_log_prob."""
    import re
    rng, pool = _RecordingRandom(123), []
    train = set(ns.train_fr)
    while len(pool) < 3000:
        rng.log_p = 0.0
        english = ns.random_english(rng)
        french = ns.english_to_french(english)[0]
        if len(english.split()) <= ns.MAX_WORDS and french not in train:
            pool.append((rng.log_p, len(french.split()) + 1))
    log_p = np.array([p for p, _ in pool]) - math.log(ns.p_kept - ns.p_training)
    tokens = np.array([n_tokens for _, n_tokens in pool])
    picks = np.random.default_rng(1).integers(0, len(pool), size=(2000, 400))
    floors = np.exp(-log_p[picks].sum(axis=1) / tokens[picks].sum(axis=1))
    assert 0.015 < floors.std(ddof=1) < 0.03
    stored = _stored("rng_floor, train_set_fr, pool")
    mean, sd = (float(v) for v in re.search(r"mean ([\d.]+), standard deviation ([\d.]+)", stored).groups())
    assert abs(mean - floors.mean()) < 0.01 and abs(sd - floors.std(ddof=1)) < 0.004
    prose = _prose()
    assert f"a standard deviation of about {sd:.2f}" in prose and f"below a typical set's {mean:.2f}" in prose
    assert "gives a floor under the perplexity any model can reach on average" in prose
    assert "It is a floor on average, not on every set of sentences" in prose
    assert ns.floor_ppl < ns.grammar_ppl


def test_the_floor_s_smaller_details_are_as_small_as_the_text_says(ns):
    """Each held-out sentence after the first is drawn with the training sentences, the fixed first one and the
    held-out sentences before it excluded; renormalising each draw by what is left (written out here) moves the
    floor by less than the text's bound, and the first sentence is the fixed example the text names."""
    log_p = [ns.grammar_log_prob(s) for s in ns.test_fr]
    tokens = sum(len(s.split()) + 1 for s in ns.test_fr)
    left = ns.p_kept - ns.p_training
    total = log_p[0] - math.log(left)                                        # the fixed first sentence, as the chapter
    left -= math.exp(log_p[0])
    for lp in log_p[1:]:
        total += lp - math.log(left)
        left -= math.exp(lp)
    sequential = math.exp(-total / tokens)
    assert 0 < ns.floor_ppl - sequential < 0.001
    prose = _prose()
    assert "which would lower the floor by less than 0.001" in prose
    assert ns.test_fr[0] == ns.english_to_french(ns.T2_ENGLISH)[0]
    assert f"the first of them is not a draw but chapter 6's fixed example, *{ns.test_fr[0]}*" in prose
    assert "the held-out sentences were really drawn from" not in prose


def test_the_perplexity_table_has_one_value_per_row_and_the_ranges_are_the_studys(ns):
    import re
    rows, _ = _study()
    text = _text()
    table = text.split("| model | held-out perplexity (400 sentences) |", 1)[1].split("\n\n", 1)[0]
    for line in table.strip().splitlines()[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 2 and all(cells), line
    ppl = np.array([row["ppl"] for row in rows.values()])
    assert f"| TinyGPT (106,816 parameters), 5 seeds | {ppl.min():.3f}–{ppl.max():.3f} (mean {ppl.mean():.3f}) |" in text
    floor = ns.floor_ppl                                                                  # unrounded, from the counts
    assert f"{floor:.3f} under the corpus's distribution" in _stored("def length_distribution")
    above = 100 * (ppl / floor - 1)
    nats = np.log(ppl) - math.log(floor)
    prose = _prose()
    assert f"TinyGPT is {above.min():.1f} % to {above.max():.1f} % above the floor" in prose
    assert f"{nats.min():.3f} to {nats.max():.3f} nats per token" in prose
    stored = float(re.search(r"trigram +kneser-ney +([\d.]+)", _stored("for (order, smoothing), m in ngrams.items():")).group(1))
    trigram_ppl = ns.ngrams[(3, "kneser-ney")].perplexity(ns.test_fr)
    assert f"{trigram_ppl:.3f}" == f"{stored:.3f}"
    trigram = math.log(trigram_ppl) - math.log(floor)
    assert f"| trigram, Kneser–Ney | {stored:.3f} |" in text and f"the best trigram is {trigram:.3f} nats above it" in prose
    closed = 1 - nats / trigram
    assert 0.75 < closed.min() and closed.max() < 0.85 and "the network has closed about four fifths" in prose


def test_the_induction_text_is_the_studys():
    rows, summary = _study()
    prose = _prose()
    first = np.array([row["induction_losses"][0] for row in rows.values()])
    gap = first - math.log(50)
    assert f"is {gap.min():.2f} to {gap.max():.2f} nats above $\\log 50$" in prose
    seconds = np.array([row["induction_seconds"] for row in rows.values()])
    assert f"after 800 steps ({seconds.min():.0f} s to {seconds.max():.0f} s each on one thread)" in prose
    # the previous-token score of a head that spreads its weight evenly: rows t = 1 .. T - 2 of the T - 1 queries
    T = 32
    even = float(np.mean([1 / (t + 1) for t in range(1, T - 1)]))
    assert f"(an even spread: {even:.3f})" in prose
    others = np.array([min(row["previous_token"]) for row in rows.values()])
    assert f"the other layer-1 head {others.min():.3f}–{others.max():.3f}" in prose
    below = int((others < even).sum())
    assert below == 4 and f"below an even spread's {even:.3f} in four seeds, and {others.max():.3f}" in prose
    assert "no more than an even spread" not in prose


def test_the_large_model_claim_is_olssons():
    """Elhage et al. study small attention-only models; the claim about large models is Olsson et al.'s, as the
    section's opening says."""
    prose = _prose()
    assert "Olsson et al. argue that heads like these, which they also find in large models" in prose
    assert "Elhage et al. and Olsson et al. argue" not in prose


def test_the_head_scores_docstring_names_the_rows_it_reads(ns):
    doc = " ".join(ns.head_scores.__doc__.split())
    assert "from each position of the second copy but its last" in doc


def test_the_learning_rate_schedule_as_the_text_states_it(ns):
    """The schedule written out from the text's formula; the prose's peak and floor against it."""
    import re
    n_batches = int(re.search(r"(\d+) batches per epoch", _stored("EPOCHS, BATCH_SIZE, LR")).group(1))
    assert n_batches == math.ceil(len(ns.train_fr) / ns.BATCH_SIZE)
    total = ns.EPOCHS * n_batches
    factors = [min(1.0, (k + 1) / n_batches) * max(0.02, 1 - k / total) for k in range(total)]
    assert factors == [ns.lr_factor(k, n_batches, total) for k in range(total)]
    train_lm_source = _text().split("def train_lm(", 1)[1].split("\n\n\n", 1)[0]
    assert "LambdaLR(optimizer, lambda update: lr_factor(update, n_batches, total))" in train_lm_source
    peak = int(np.argmax(factors))
    last = sum(f == 0.02 for f in factors)
    prose = _prose()
    assert (f"the rate peaks at the end of the first epoch (update {peak}) at {factors[peak]:.3f} × {ns.LR} = "
            f"{factors[peak] * ns.LR:.5f}" in prose and f"its floor of 2 % for the last {last} updates" in prose)
    assert f"with {n_batches} batches per epoch and {total} updates in all" in prose
    assert "a linear decay that starts at update 0, not after the warm-up" in prose


def test_the_text_says_where_the_blocks_differ_from_gpt2(ns):
    block = ns.Block(8, 2, 16)
    assert isinstance(block.ffn[1], nn.ReLU)
    prose = _prose()
    assert "with a ReLU between its two layers, where GPT-2's uses the GELU" in prose


def test_one_symbol_one_meaning_in_the_prose():
    """T counts a text's tokens, <s> and </s> included (4 in the hand example, as in its code); N is the
    number of blocks only; n is a key's position (RoPE) only; p without an argument is top-p's threshold;
    no undefined h_t."""
    import re
    text = _text()
    prose = _prose()
    assert "\\mathcal{L} = -\\frac{1}{T - 1} \\sum_{t=1}^{T-1}" in text and "$T = 4$ tokens, three of them predicted" in prose
    assert "tokens_hand = np.array([0, 1, 2, 3])" in text and "# (T,) = (4,)" in text
    assert "\\frac{1}{N}" not in text and "$N$ predicted" not in prose
    rope = prose.split("## Rotary positions", 1)[1].split("## The heads that copy", 1)[0]
    rope_exercise = prose.split("A score from one rotation", 1)[1].split("The temperature for a given confidence", 1)[0]
    outside = prose.replace(rope, "").replace(rope_exercise, "").replace("$m - n$", "")
    outside = re.sub(r"\$\$.*?\$\$", "", outside)
    inline = re.findall(r"\$([^$]+)\$", outside)                            # consumed left to right: the pairs stay aligned
    with_n = [span for span in inline if re.search(r"(?<![\w\\])n(?!\w)", span)]
    assert not with_n, with_n
    assert not re.search(r"\$p = ", prose.replace("$p = 0.9$", "").replace("$p = 0.5$", "").replace("$p = 0$", ""))
    assert "\\mathbf{h}_t" not in text


def test_equations_write_vectors_as_columns_as_the_notation_page_does():
    """The notation page: vectors are columns, a matrix stands left of the vector it maps. So no math span
    of the prose puts a vector (or LN(...) of one, or a positional encoding) left of a bold matrix: the tied
    output is W_E c_t, RoPE is R_m x, chapter 7's shift is R_m^T PE_pos (code keeps rows: x @ R_m.T)."""
    import re
    prose = _prose()
    display = re.findall(r"\$\$(.+?)\$\$", prose)
    inline = re.findall(r"\$([^$]+)\$", re.sub(r"\$\$.+?\$\$", "", prose))
    vector = r"(?:\\mathbf\{[a-z]\}(?:_\{[^}]*\}|_\w)?(?:\^\{\([^)]*\)\}_t)?|\\mathrm\{PE\}_\{pos\}|\))"
    row_products = [span for span in display + inline if re.search(vector + r"\s*(?:\\,)?\s*\\mathbf\{[A-Z]", span)]
    assert not row_products, row_products
    assert "$\\mathbf{W}_E \\operatorname{LN}(\\mathbf{x}^{(N)}_t)$" in prose
    assert "$\\operatorname{rope}(\\mathbf{x}, m) = \\mathbf{R}_m\\mathbf{x}$" in prose


def test_no_code_name_E_for_anything_but_scores():
    """The notation page keeps E for the scores and never names anything E in code: the hand example's
    embedding is W_E, in code W_E_hand (and W_E_t in PyTorch)."""
    import re
    code = "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", _text(), flags=re.S))
    assert not re.findall(r"(?<![\w.])E(?:_\w+)?\b(?!['\"])", code), re.findall(r"(?<![\w.])E(?:_\w+)?\b(?!['\"])", code)
    assert "W_E_hand = np.array(" in code


def test_the_running_time_line_holds_the_stored_training_times():
    """The Running time line's whole-run measurement is at least the training times the stored run
    printed (the language model and the attention-only model), and its "about" is that measurement
    to the nearest 5 s."""
    import re
    prose = _prose()
    about, measured = re.search(r"\*\*Running time\.\*\* About (\d+) s on a 2-core CPU \(([\d.]+) s measured", prose).groups()
    lm = float(re.search(r"trained in (\d+) s on", _stored('print("mean training loss per epoch:"')).group(1))
    induction = float(re.search(r"trained in ([\d.]+) s;", _stored("t0 = time.perf_counter()\ninduction_model")).group(1))
    assert lm + induction <= float(measured)
    assert int(about) == 5 * round(float(measured) / 5)
