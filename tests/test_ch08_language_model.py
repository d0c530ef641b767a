"""Chapter 8 (attention in a language model): the notebook's attention, block and model against
PyTorch's own layers, RoPE against a rotation written with complex numbers, the sampling rules
against brute force, the n-gram models against formulas worked here, the grammar's checker and
its probabilities against the generator itself (a recording random source), and the measurements
of agreement and of heads against hand-built cases.

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
