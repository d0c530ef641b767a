"""Chapter 5: self-attention and multi-head attention.

The notebook's definitions (loaded by tests/nbdefs.py, without the training and timing cells) are
checked against independent computations: torch.nn.MultiheadAttention for the module, plain
loops and math.exp for the note's numbers, written out here rather than copied from the notebook.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from nbdefs import load_notebook


@pytest.fixture(scope="module")
def ns():
    return load_notebook("05_self_and_multihead_attention")


def exp_softmax(scores):
    """The textbook softmax with math.exp, for small scores."""
    z = [math.exp(s) for s in scores]
    return np.array([v / sum(z) for v in z])


# ------------------------------------------------------------------ the module against PyTorch

def _compare(ns, E, H, bias, T_q, T_k, B, mask_kind, seed, need_weights=True, average=False, is_causal=False):
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(E, H, bias=bias, batch_first=True).eval()
    ours = ns.MultiHeadAttention.from_torch(ref)
    q = torch.randn(B, T_q, E)
    k = torch.randn(B, T_k, E)
    v = torch.randn(B, T_k, E)
    kpm = attn_mask = None
    g = torch.Generator().manual_seed(seed)
    if mask_kind in ("padding", "both"):
        lengths = torch.randint(1, T_k + 1, (B,), generator=g)
        kpm = torch.arange(T_k)[None, :] >= lengths[:, None]
    if mask_kind in ("causal", "both"):
        attn_mask = torch.triu(torch.ones(T_q, T_k, dtype=torch.bool), diagonal=1)
    if mask_kind == "random3d":
        attn_mask = torch.rand(B * H, T_q, T_k, generator=g) < 0.4
        attn_mask[..., 0] = False  # no fully masked row
    if mask_kind == "float":
        attn_mask = torch.randn(T_q, T_k, generator=g)
    options = dict(key_padding_mask=kpm, attn_mask=attn_mask, need_weights=need_weights,
                   average_attn_weights=average, is_causal=is_causal)
    with torch.no_grad():
        out_ref, w_ref = ref(q, k, v, **options)
        out, w = ours(q, k, v, **options)
    return out, w, out_ref, w_ref, kpm, attn_mask


GRID = [(E, H, bias, mask)
        for (E, H), bias, mask in itertools.product(
            [(4, 1), (8, 2), (12, 3), (16, 4), (32, 8), (24, 6)], [True, False],
            [None, "padding", "causal", "both", "random3d", "float"])]


CALLS = [(True, True, False), (True, False, False), (False, True, False), (True, True, True), (False, False, True)]
# (need_weights, average_attn_weights, is_causal); is_causal only where the mask is the causal one


@pytest.mark.parametrize("E,H,bias,mask_kind", GRID)
def test_from_torch_agrees_with_torch_multihead_attention(ns, E, H, bias, mask_kind):
    for T_q, T_k, B in [(5, 5, 2), (1, 1, 1), (3, 7, 3)]:
        for need_weights, average, is_causal in CALLS:
            if (mask_kind in ("causal", "both") and T_q > T_k) or (is_causal and mask_kind != "causal"):
                continue
            out, w, out_ref, w_ref, _, _ = _compare(ns, E, H, bias, T_q, T_k, B, mask_kind, seed=E * 10 + H,
                                                    need_weights=need_weights, average=average, is_causal=is_causal)
            assert out.shape == out_ref.shape == (B, T_q, E)
            if not need_weights:
                assert w is None and w_ref is None
            else:
                assert w.shape == w_ref.shape == ((B, T_q, T_k) if average else (B, H, T_q, T_k))
                assert torch.allclose(w, w_ref, atol=1e-5, equal_nan=True)
            assert torch.allclose(out, out_ref, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_blocked_rows_as_pytorch_returns_them(ns, need_weights):
    """A query whose keys are all blocked: NaN when weights are computed, zero attention (the output bias) when not.

    PyTorch is run in training mode (dropout 0), so that need_weights=False takes its general fused path rather
    than the inference fast path (which returns NaN for such rows)."""
    torch.manual_seed(5)
    ref = nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():
        ref.out_proj.bias.normal_()  # a non-zero output bias, so that 'just the bias' is visible
    ours = ns.MultiHeadAttention.from_torch(ref)
    x = torch.randn(2, 4, 8)
    kpm = torch.zeros(2, 4, dtype=torch.bool)
    kpm[1] = True  # every key of the second sentence blocked
    row = torch.zeros(4, 4, dtype=torch.bool)
    row[2] = True  # query 2 of every sentence blocked from every key
    for options in (dict(key_padding_mask=kpm), dict(attn_mask=row), dict(key_padding_mask=kpm, attn_mask=row)):
        with torch.no_grad():
            out_ref, w_ref = ref(x, x, x, need_weights=need_weights, **options)
            out, w = ours(x, x, x, need_weights=need_weights, **options)
        assert torch.allclose(out, out_ref, atol=1e-5, equal_nan=True)
        assert torch.isnan(out_ref).any() == need_weights  # the two behaviours really differ
        if need_weights:
            assert torch.allclose(w, w_ref, atol=1e-5, equal_nan=True)


def test_is_causal_needs_the_mask_as_in_pytorch(ns):
    ref = nn.MultiheadAttention(8, 2, batch_first=True)
    ours = ns.MultiHeadAttention.from_torch(ref)
    x = torch.randn(1, 3, 8)
    with pytest.raises(RuntimeError):
        ref(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="attn_mask"):
        ours(x, x, x, is_causal=True)


@pytest.mark.parametrize("options, named", [
    (dict(dropout=0.5, batch_first=True), "dropout"), (dict(batch_first=False), "batch_first"),
    (dict(kdim=4, batch_first=True), "kdim"), (dict(vdim=4, batch_first=True), "kdim or vdim"),
    (dict(add_bias_kv=True, batch_first=True), "add_bias_kv"), (dict(add_zero_attn=True, batch_first=True), "add_zero_attn"),
])
def test_from_torch_refuses_what_it_cannot_reproduce(ns, options, named):
    with pytest.raises(ValueError, match=named):
        ns.MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, **options))


def test_constructor_refuses_dropout_and_batch_first_false(ns):
    with pytest.raises(ValueError, match="dropout"):
        ns.MultiHeadAttention(8, 2, dropout=0.1)
    with pytest.raises(ValueError, match="batch_first"):
        ns.MultiHeadAttention(8, 2, batch_first=False)


def test_from_torch_copies_weights_exactly(ns):
    torch.manual_seed(1)
    ref = nn.MultiheadAttention(6, 2, batch_first=True)
    ours = ns.MultiHeadAttention.from_torch(ref)
    E = 6
    assert torch.equal(ours.W_q, ref.in_proj_weight[:E].T)
    assert torch.equal(ours.W_v, ref.in_proj_weight[2 * E:].T)
    assert torch.equal(ours.b_k, ref.in_proj_bias[E:2 * E])
    assert torch.equal(ours.W_o, ref.out_proj.weight.T)
    no_bias = ns.MultiHeadAttention.from_torch(nn.MultiheadAttention(6, 3, bias=False, batch_first=True))
    assert no_bias.b_q is None and no_bias.b_o is None


def test_masked_weights_are_exactly_zero_and_rows_sum_to_one(ns):
    torch.manual_seed(2)
    mha = ns.MultiHeadAttention(8, 2)
    x = torch.randn(3, 6, 8)
    kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] + [True] * 5])
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    with torch.no_grad():
        _, w = mha(x, x, x, key_padding_mask=kpm, attn_mask=causal, average_attn_weights=False)
    forbidden = kpm[:, None, None, :] | causal[None, None]
    assert (w[forbidden.expand_as(w)] == 0).all()
    assert torch.allclose(w.sum(-1), torch.ones(3, 2, 6), atol=1e-6)


def test_padded_batch_equals_unpadded_sentences(ns):
    torch.manual_seed(3)
    mha = ns.MultiHeadAttention(12, 3)
    lengths = [7, 4, 1]
    sents = [torch.randn(1, n, 12) for n in lengths]
    batch = torch.zeros(3, 7, 12) + 5.0  # padding with arbitrary content
    for b, s in enumerate(sents):
        batch[b, :lengths[b]] = s[0]
    kpm = torch.arange(7)[None, :] >= torch.tensor(lengths)[:, None]
    with torch.no_grad():
        out, w = mha(batch, batch, batch, key_padding_mask=kpm, average_attn_weights=False)
        for b, s in enumerate(sents):
            alone, w_alone = mha(s, s, s, average_attn_weights=False)
            n = lengths[b]
            assert torch.allclose(out[b, :n], alone[0], atol=1e-6)
            assert torch.allclose(w[b, :, :n, :n], w_alone[0], atol=1e-6)


def test_numpy_masks_and_padding(ns):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(5, 4))
    W_q, W_k, W_v = rng.normal(size=(3, 4, 3))
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    out, alpha = ns.self_attention(X, W_q, W_k, W_v, mask=causal)
    assert (alpha[causal] == 0).all()
    # independent: row i is the softmax over the first i+1 keys only
    for i in range(5):
        s = (X[i] @ W_q) @ (X[: i + 1] @ W_k).T / math.sqrt(3)
        w = np.exp(s - s.max())
        w /= w.sum()
        assert np.allclose(alpha[i, : i + 1], w)
        assert np.allclose(out[i], w @ (X[: i + 1] @ W_v))


def test_loop_equals_matrix_form_numpy_and_torch(ns):
    for seed, (T, d, d_k) in enumerate([(1, 2, 2), (3, 2, 2), (6, 5, 3), (9, 4, 8)]):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(T, d))
        W_q, W_k = rng.normal(size=(2, d, d_k))
        W_v = rng.normal(size=(d, 4))
        A_loop, alpha_loop = ns.self_attention_loop(X, W_q, W_k, W_v)
        A, alpha = ns.self_attention(X, W_q, W_k, W_v)
        assert np.allclose(A_loop, A) and np.allclose(alpha_loop, alpha)
        t = lambda a: torch.tensor(a, dtype=torch.float64)
        A_t, alpha_t = ns.self_attention_torch(t(X), t(W_q), t(W_k), t(W_v))
        assert np.allclose(A_t.numpy(), A) and np.allclose(alpha_t.numpy(), alpha)
        # and against PyTorch's own scaled dot-product attention
        ref = torch.nn.functional.scaled_dot_product_attention(t(X @ W_q)[None], t(X @ W_k)[None], t(X @ W_v)[None])
        assert np.allclose(ref[0].numpy(), A)


# ------------------------------------------------------------------ the note's numbers

def test_SA1_agrees_with_the_note(ns):
    assert np.allclose(ns.alpha_I, exp_softmax([2, 8, 4]))
    assert np.allclose(np.round(exp_softmax([2, 8, 4]), 3), [0.002, 0.98, 0.018], atol=0.0005)
    assert ns.verdict_SA1 == "agrees"


def test_SA2_is_an_erratum(ns):
    exact = exp_softmax([5, 2, 9])
    assert np.allclose(ns.alpha_love, exact)
    assert np.allclose(np.round(exact, 3), [0.018, 0.001, 0.981])
    assert abs(exact[0] - 0.1) > 0.05  # the note's 0.1 is not the softmax
    assert ns.verdict_SA2 == "error"
    # the stated weights are close to a softmax at some temperature: find it by brute force, independently
    grid = [1 + k / 1000 for k in range(2001)]
    gap = lambda tau: max(abs(a - b) for a, b in zip(exp_softmax([5 / tau, 2 / tau, 9 / tau]), [0.1, 0.02, 0.88]))
    best = min(grid, key=gap)
    assert gap(best) < 0.001  # a temperature really does reproduce the note's numbers
    assert abs(ns.tau_best - best) < 0.002


def test_SA3_is_illustrative_and_inconsistent(ns):
    assert ns.verdict_SA3_numbers == "illustrative" and ns.verdict_SA3_passages == "inconsistent"


def test_MH1_scores_weights_and_output(ns):
    X = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 2.0]])
    scores = [float(X[1] @ x) for x in X]
    assert scores == [2.0, 5.0, 2.0]
    w = exp_softmax(scores)
    out = w @ X
    assert np.allclose(ns.a_mh1, out)
    assert np.allclose(out, [1.86416, 1.0], atol=1e-5)
    assert np.allclose(np.round(w, 3), [0.045, 0.909, 0.045])
    # the note's 1.87: one unit in the last digit from 1.864, and the note's rounded weights give 0.045 + 2 * 0.91 = 1.865
    assert abs(1.87 - out[0]) <= 0.01 + 1e-12 and abs(1.87 - (0.045 + 2 * 0.91)) <= 0.005 + 1e-12
    assert (ns.verdict_MH1_scores, ns.verdict_MH1_weights, ns.verdict_MH1) == ("agrees", "agrees", "rounding")


def test_MH2_MH3_MH4(ns):
    w1 = exp_softmax([1 * 1 + 1 * 1, 1 * 1 + 1 * 2, 1 * 0 + 1 * 1])
    a1 = w1 @ np.array([[1, 0], [2, 1], [0, 1]])
    w2 = exp_softmax([1 * 0 + 3 * 1, 1 * 1 + 3 * 1, 1 * 1 + 3 * 3])
    a2 = w2 @ np.array([[1, 1], [2, 0], [5, 5]])
    assert np.allclose(a1, [1.57521, 0.75527], atol=1e-5)
    assert np.allclose(a2, [4.98895, 4.98401], atol=1e-5)
    assert np.allclose(ns.a_concat, np.concatenate([a1, a2]))
    # MH2's weights: 0.24 and 0.66 are the exact weights cut off after two decimals, 0.10 the remainder;
    # correctly rounded weights would already sum to 1
    assert [math.floor(100 * x) / 100 for x in w1[:2]] == [0.24, 0.66] and round(sum(round(x, 2) for x in w1), 2) == 1.0
    assert np.allclose(np.array([0.24, 0.66, 0.10]) @ np.array([[1, 0], [2, 1], [0, 1]]), [1.56, 0.76])
    assert abs(1.56 - a1[0]) > 0.01  # more than one unit off: only the rounded weights explain it
    assert (ns.verdict_MH2_weights, ns.verdict_MH2) == ("rounding", "rounding")
    assert (ns.verdict_MH3_weights, ns.verdict_MH3) == ("agrees", "rounding")
    assert ns.verdict_MH4 == "rounding"


def test_note_heads_inside_the_module(ns):
    """The hand-made heads as projection weights reproduce MH2/MH3 for 'love'; W_O = I gives MH4's concatenation."""
    mha = ns.note_mha
    X_note = ns.X_note
    with torch.no_grad():
        W_o = mha.W_o.detach().clone()
        mha.W_o.copy_(torch.eye(4, dtype=torch.float64))
        out, w = mha(X_note, X_note, X_note, average_attn_weights=False)
        mha.W_o.copy_(W_o)
    assert np.allclose(w[0, 0, 1].numpy(), exp_softmax([2, 3, 1]))
    assert np.allclose(w[0, 1, 1].numpy(), exp_softmax([3, 4, 10]))
    assert np.allclose(out[0, 1].numpy(), [1.57521, 0.75527, 4.98895, 4.98401], atol=1e-5)


# ------------------------------------------------------------------ errors

def test_embed_dim_not_divisible_names_both_numbers(ns):
    with pytest.raises(ValueError, match=r"embed_dim \(10\).*num_heads \(3\)"):
        ns.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError):
        ns.MultiHeadAttention(0, 1)


@pytest.mark.parametrize("which,mask,expected", [
    ("key_padding_mask", torch.zeros(2, 4, dtype=torch.bool), r"\(2, 4\).*\(2, 5\)"),
    ("key_padding_mask", torch.zeros(5, dtype=torch.bool), r"\(5,\).*\(2, 5\)"),
    ("attn_mask", torch.zeros(5, 4, dtype=torch.bool), r"\(5, 4\).*\(5, 5\).*\(4, 5, 5\)"),
    ("attn_mask", torch.zeros(2, 5, 5, dtype=torch.bool), r"\(2, 5, 5\)"),
])
def test_masks_of_the_wrong_shape_name_the_shapes(ns, which, mask, expected):
    mha = ns.MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=expected):
        mha(x, x, x, **{which: mask})


def test_wrong_inputs_raise_clear_errors(ns):
    mha = ns.MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(TypeError, match="torch.Tensor"):
        mha(x.tolist(), x, x)
    with pytest.raises(ValueError, match=r"\(5, 8\)"):
        mha(x[0], x[0], x[0])
    with pytest.raises(ValueError, match=r"\(2, 5, 6\)"):
        mha(torch.randn(2, 5, 6), x, x)
    with pytest.raises(TypeError, match="boolean"):
        mha(x, x, x, key_padding_mask=torch.zeros(2, 5, dtype=torch.int64))
    with pytest.raises(TypeError, match="MultiheadAttention"):
        ns.MultiHeadAttention.from_torch(nn.Linear(4, 4))


# ------------------------------------------------------------------ the head/query explorer

def test_head_query_explorer_config_and_weights(ns):
    rng = np.random.default_rng(9)
    tokens = ["a", "b", "c", "d", "e"]
    X = rng.normal(size=(5, 6))
    W_q, W_k = rng.normal(size=(2, 3, 6, 2))
    explorer = ns.head_query_explorer(tokens, X, W_q, W_k, query=2, head=1)
    assert explorer.kind == "head-query"
    config = explorer.config
    assert list(config) == ["tokens", "X", "W_q", "W_k", "query", "head"]
    assert config["tokens"] == tokens and config["query"] == 2 and config["head"] == 1
    assert np.array(config["W_q"]).shape == (3, 6, 2) and np.array(config["X"]).shape == (5, 6)
    assert np.array_equal(np.array(config["X"]), np.round(X, 3))
    bundle = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == "<head-query explorer>" and 'data-kind="head-query"' in bundle["text/html"]
    # the weights the explorer computes, against an independent computation from the config
    Xc, Wq, Wk = (np.array(config[k]) for k in ("X", "W_q", "W_k"))
    for h in range(3):
        for i in range(5):
            s = (Xc[i] @ Wq[h]) @ (Xc @ Wk[h]).T / math.sqrt(2)
            w = np.exp(s - s.max())
            assert np.allclose(ns.head_query_weights(Xc, Wq, Wk, i, h), w / w.sum())
    with pytest.raises(ValueError, match="query"):
        ns.head_query_weights(Xc, Wq, Wk, 5, 0)
    # the ipywidgets view: choosing another head and query redraws the bars with the new weights
    query_box, head_box = explorer.children[0].children
    bars = explorer.children[1]
    for h, i in [(1, 2), (0, 4), (2, 0)]:
        head_box.value, query_box.value = h, i
        for a in ns.head_query_weights(Xc, Wq, Wk, i, h):
            assert f"{a:.3f}" in bars.value


# ------------------------------------------------------------------ the synthetic task

def test_two_relation_task_targets(ns):
    tokens, prev_digit, partner_digit, partner_pos = ns.make_batch(50, seed=0)
    letters = "AaBbCcDd"
    for b in range(50):
        names = ns.token_names(tokens[b])
        for t in range(8):
            if t > 0:
                assert int(names[t - 1][1]) == prev_digit[b, t]
            partner = letters[letters.index(names[t][0]) ^ 1]
            j = [n[0] for n in names].index(partner)
            assert j == partner_pos[b, t] and int(names[j][1]) == partner_digit[b, t]
