"""Chapter 9 (attention at scale): the notebook's definitions against independent computations.

The notebook is loaded with tests/nbdefs.load_notebook (timing and memory sweeps, and the widget, are
tagged `skip-in-tests`; a test below checks the tags). Expected values come from plain loops, from `torch.softmax` or PyTorch's own
`scaled_dot_product_attention`, or from arithmetic written out here; never from the code under test.
The largest differences found over all configurations are printed (`pytest -s` shows them).
"""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from nbdefs import load_notebook, notebook_path
from tools.grading import markers

STEM = "09_attention_at_scale"


@pytest.fixture(scope="module")
def ns():
    return load_notebook(STEM)


def _softmax_rows(scores):
    """Row-wise softmax with math.fsum, written out independently of the notebook."""
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    out = np.zeros_like(scores)
    for i, row in enumerate(scores):
        m = max(row)
        exps = [math.exp(s - m) if s != -math.inf else 0.0 for s in row]
        total = math.fsum(exps)
        out[i] = [e / total for e in exps]
    return out


def _attention_reference(Q, K, V, blocked=None):
    """Loop-built scaled dot-product attention in float64 (blocked: True = may not be attended to)."""
    Q, K, V = (np.asarray(x, dtype=float) for x in (Q, K, V))
    scores = np.array([[float(np.dot(q, k)) / math.sqrt(Q.shape[1]) for k in K] for q in Q])
    if blocked is not None:
        scores = np.where(blocked, -np.inf, scores)
    return _softmax_rows(scores) @ V


# --- the online softmax ---------------------------------------------------------------------------

HAND_K = np.array([[1, 2, 0, -1], [0, 1, 0, 3], [3, -1, 1, 0], [1, 0, 2, 2], [2, 1, 1, -2], [3, 1, 2, 0]], dtype=float)
HAND_Q = np.array([2.0, 0.0, 2.0, 0.0])
HAND_V = np.array([[1, 0], [0, 1], [-1, 0], [-1, 1], [0, 2], [1, 1]], dtype=float)


def test_hand_example_steps_follow_the_arithmetic_written_out(ns):
    scores = HAND_K @ HAND_Q / 2
    assert scores.tolist() == [1, 0, 4, 3, 3, 5]
    e = math.exp
    ell1 = 1 + e(-1)
    ell2 = e(-3) * ell1 + 1 + e(-1)
    ell3 = e(-1) * ell2 + e(-2) + 1
    o1 = np.array([1.0, e(-1)])
    o2 = e(-3) * o1 + np.array([-1.0, 0.0]) + e(-1) * np.array([-1.0, 1.0])
    o3 = e(-1) * o2 + e(-2) * np.array([0.0, 2.0]) + np.array([1.0, 1.0])
    steps = ns.online_softmax_steps(scores, HAND_V, 2)
    assert [s["m"] for s in steps] == [1, 4, 5]
    assert np.allclose([s["factor"] for s in steps], [0.0, e(-3), e(-1)], rtol=0, atol=1e-15)
    assert np.allclose([s["ell"] for s in steps], [ell1, ell2, ell3], rtol=0, atol=1e-14)
    for st, o in zip(steps, (o1, o2, o3)):
        assert np.allclose(st["o"], o, rtol=0, atol=1e-14)
    # the table's four-decimal numbers (and three-decimal outputs), here from the unrounded arithmetic
    assert [round(x, 4) for x in (ell1, ell2, ell3)] == [1.3679, 1.436, 1.6636]
    assert [round(x, 4) for x in (*o2, *o3)] == [-1.3181, 0.3862, 0.5151, 1.4127]
    assert np.round(o3 / ell3, 3).tolist() == [0.31, 0.849]
    weights = _softmax_rows(scores)[0]
    assert np.allclose(o3 / ell3, weights @ HAND_V, rtol=0, atol=1e-14)


def test_hand_table_adds_up_with_its_own_rounded_numbers(ns):
    """The table carries four decimals: redo every sum with Decimal arithmetic on the rounded numbers."""
    from decimal import ROUND_HALF_EVEN, Decimal

    def d4(x):
        x = x if isinstance(x, Decimal) else Decimal(repr(x))
        return x.quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN)

    e1, e2, e3 = d4(math.exp(-1)), d4(math.exp(-2)), d4(math.exp(-3))
    assert (e1, e2, e3) == (Decimal("0.3679"), Decimal("0.1353"), Decimal("0.0498"))
    ell1 = 1 + e1
    ell2 = d4(e3 * ell1) + 1 + e1
    o2 = [e3 - 1 - e1, d4(e3 * e1) + e1]
    ell3 = d4(e1 * ell2) + e2 + 1
    o3 = [d4(e1 * o2[0]) + 1, d4(e1 * o2[1]) + 2 * e2 + 1]
    assert [ell1, ell2, ell3] == [Decimal("1.3679"), Decimal("1.4360"), Decimal("1.6636")]
    assert o2 == [Decimal("-1.3181"), Decimal("0.3862")] and o3 == [Decimal("0.5151"), Decimal("1.4127")]
    # the notebook's carried table gives the same numbers
    carried = ns.hand_table_carried
    assert [float(x) for x in (ell1, ell2, ell3)] == [row[0] for row in carried]
    assert [float(x) for x in o3] == list(carried[2][1])


def test_online_softmax_attention_equals_one_shot_in_float64(ns):
    worst, count = 0.0, 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        for T in (1, 2, 5, 17, 64):
            for d_k, d_v in ((1, 1), (4, 2), (16, 7)):
                q, K, V = rng.normal(size=d_k) * 3, rng.normal(size=(T, d_k)) * 3, rng.normal(size=(T, d_v))
                expected = _attention_reference(q[None, :], K, V)[0]
                for block in (1, 2, 3, 7, 16, 100):
                    got = ns.online_softmax_attention(q, K, V, block)
                    assert got.shape == (d_v,)
                    worst, count = max(worst, float(np.abs(got - expected).max())), count + 1
    print(f"\nonline_softmax_attention vs one-shot (float64): {count} configurations, largest difference {worst:.1e}")
    assert worst <= 1e-12


def test_online_softmax_torch_equals_torch_softmax(ns):
    worst = 0.0
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        for T in (1, 6, 33):
            q, K, V = torch.randn(8, generator=g, dtype=torch.float64), torch.randn(T, 8, generator=g, dtype=torch.float64), \
                torch.randn(T, 3, generator=g, dtype=torch.float64)
            expected = torch.softmax(K @ q / math.sqrt(8), dim=0) @ V
            for block in (1, 4, 40):
                worst = max(worst, float((ns.online_softmax_attention_torch(q, K, V, block) - expected).abs().max()))
    assert worst <= 1e-12


@pytest.mark.parametrize("scale", [100.0, 1000.0, 5000.0])
def test_online_softmax_large_scores_stay_finite(ns, scale):
    rng = np.random.default_rng(7)
    q, K, V = rng.normal(size=8) * scale, rng.normal(size=(20, 8)), rng.normal(size=(20, 2))
    scores = K @ q / math.sqrt(8)
    assert np.abs(scores).max() > 50  # exp of these overflows or underflows without the running maximum
    got = ns.online_softmax_attention(q, K, V, 3)
    assert np.isfinite(got).all()
    assert np.allclose(got, _attention_reference(q[None, :], K, V)[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("args", [
    ("list", [1.0, 2.0]), ("q 2-D", np.ones((1, 4))), ("d_k mismatch", None), ("T mismatch", None),
    ("NaN", None), ("block 0", 0), ("block float", 2.0), ("block bool", True), ("empty K", None),
])
def test_online_softmax_attention_bad_input(ns, args):
    what, value = args
    q, K, V, block = np.ones(4), np.ones((6, 4)), np.ones((6, 2)), 2
    if what == "list":
        q = value
    elif what == "q 2-D":
        q = value
    elif what == "d_k mismatch":
        K = np.ones((6, 3))
    elif what == "T mismatch":
        V = np.ones((5, 2))
    elif what == "NaN":
        K = K.copy()
        K[2, 1] = np.nan
    elif what == "empty K":
        K, V = np.ones((0, 4)), np.ones((0, 2))
    else:
        block = value
    with pytest.raises(ValueError) as info:
        ns.online_softmax_attention(q, K, V, block)
    message = str(info.value)
    assert message.endswith(".") and len(message) < 250 and "\n" not in message


def test_online_softmax_state_for_the_explorer(ns):
    scores, values = np.array([1.0, 0.0, 4.0, 3.0, 3.0, 5.0]), HAND_V
    full = _softmax_rows(scores)[0]
    for block in range(1, 7):
        n_blocks = math.ceil(6 / block)
        start = ns.online_softmax_state(scores, values, block, 0)
        assert start["n_blocks"] == n_blocks and start["m"] == -math.inf and np.all(start["weights"] == 0)
        for step in range(1, n_blocks + 1):
            st = ns.online_softmax_state(scores, values, block, step)
            seen = min(step * block, 6)
            expected = np.zeros(6)
            expected[:seen] = _softmax_rows(scores[:seen])[0]
            assert st["m"] == scores[:seen].max()
            assert np.allclose(st["weights"], expected, rtol=0, atol=1e-14)
            assert np.allclose(st["output"], expected[:seen] @ values[:seen], rtol=0, atol=1e-14)
        assert np.allclose(st["weights"], full, rtol=0, atol=1e-14)


def test_online_config_has_the_explorer_fields(ns):
    config = ns.online_config
    assert set(config) == {"labels", "scores", "values", "block_size", "step"}
    T = len(config["scores"])
    assert len(config["labels"]) == T and np.shape(config["values"]) == (T, 2)
    assert 1 <= config["block_size"] <= T and 0 <= config["step"] <= math.ceil(T / config["block_size"])
    assert json.loads(json.dumps(config)) == config


# --- tiled attention --------------------------------------------------------------------------------

def _causal_top_left(T_q, T_k):
    return np.array([[j > i for j in range(T_k)] for i in range(T_q)])


def test_tiled_attention_numpy_against_loops(ns):
    worst, count = 0.0, 0
    rng = np.random.default_rng(11)
    for T_q, T_k in ((1, 1), (3, 8), (8, 3), (19, 19), (33, 20)):
        Q, K, V = rng.normal(size=(T_q, 5)), rng.normal(size=(T_k, 5)), rng.normal(size=(T_k, 2))
        for causal in (False, True):
            expected = _attention_reference(Q, K, V, _causal_top_left(T_q, T_k) if causal else None)
            for block, query_block in ((1, None), (4, None), (7, 3), (64, None), (5, T_q)):
                got = ns.tiled_attention(Q, K, V, block, causal, query_block=query_block)
                worst, count = max(worst, float(np.abs(got - expected).max())), count + 1
    print(f"\ntiled_attention (NumPy) vs loops: {count} configurations, largest difference {worst:.1e}")
    assert worst <= 1e-12


def _mask_cases(B, H, T_q, T_k, g):
    padding = torch.zeros(B, 1, 1, T_k, dtype=torch.bool)
    padding[0, ..., max(1, T_k - 2):] = True
    random_mask = torch.rand(B, H, T_q, T_k, generator=g) < 0.4
    random_mask[..., 0] = False
    per_query = torch.rand(T_q, T_k, generator=g) < 0.3  # broadcast over batch and heads
    per_query[:, 0] = False
    return [(False, None), (True, None), (False, padding), (False, random_mask), (True, padding),
            (True, random_mask), (False, per_query)]


def _sdpa(Q, K, V, causal, mask):
    blocked = None if mask is None else mask
    if causal:
        tri = torch.ones(Q.shape[-2], K.shape[-2], dtype=torch.bool).triu(1)  # is_causal's top-left alignment
        blocked = tri if blocked is None else (blocked | tri)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=None if blocked is None else ~blocked)


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
def test_flash_attention_equals_sdpa(ns, dtype, tol):
    shapes = [(1, 1, 1, 1, 3, 3), (2, 3, 9, 9, 8, 8), (1, 2, 17, 40, 16, 4), (2, 1, 40, 17, 16, 6), (1, 2, 70, 70, 32, 32)]
    worst, count = 0.0, 0
    for B, H, T_q, T_k, d_k, d_v in shapes:
        g = torch.Generator().manual_seed(T_q * 100 + T_k)
        Q = torch.randn(B, H, T_q, d_k, generator=g, dtype=dtype)
        K = torch.randn(B, H, T_k, d_k, generator=g, dtype=dtype)
        V = torch.randn(B, H, T_k, d_v, generator=g, dtype=dtype)
        for causal, mask in _mask_cases(B, H, T_q, T_k, g):
            expected = _sdpa(Q, K, V, causal, mask)
            if mask is None:  # the built-in causal flag agrees with the explicit top-left triangle
                assert torch.allclose(expected, F.scaled_dot_product_attention(Q, K, V, is_causal=causal), atol=tol)
            for block in (1, 5, 16, 64, 200):
                got = ns.flash_attention(Q, K, V, block_size=block, causal=causal, mask=mask)
                assert got.shape == (B, H, T_q, d_v) and got.dtype == dtype
                worst, count = max(worst, float((got - expected).abs().max())), count + 1
    print(f"\nflash_attention vs scaled_dot_product_attention ({dtype}): {count} configurations, largest difference {worst:.1e}")
    assert worst <= tol


def test_flash_attention_default_block_size_and_uneven_lengths(ns):
    g = torch.Generator().manual_seed(1)
    Q, K, V = torch.randn(1, 2, 150, 16, generator=g), torch.randn(1, 2, 97, 16, generator=g), torch.randn(1, 2, 97, 16, generator=g)
    for causal in (False, True):
        got = ns.flash_attention(Q, K, V, causal=causal)  # block_size 64: neither length is a multiple
        assert (got - F.scaled_dot_product_attention(Q, K, V, is_causal=causal)).abs().max() <= 1e-5


def test_flash_attention_large_scores(ns):
    g = torch.Generator().manual_seed(2)
    Q, K = 50 * torch.randn(1, 2, 30, 16, generator=g, dtype=torch.float64), 50 * torch.randn(1, 2, 45, 16, generator=g, dtype=torch.float64)
    V = torch.randn(1, 2, 45, 4, generator=g, dtype=torch.float64)
    assert float((Q @ K.transpose(-2, -1) / 4).abs().max()) > 1000
    reference = _attention_reference(Q[0, 1].numpy(), K[0, 1].numpy(), V[0, 1].numpy())
    for causal in (False, True):
        out64 = ns.flash_attention(Q, K, V, block_size=8, causal=causal)
        out32 = ns.flash_attention(Q.float(), K.float(), V.float(), block_size=8, causal=causal)
        assert torch.isfinite(out32).all() and torch.isfinite(out64).all()
        assert (out64 - F.scaled_dot_product_attention(Q, K, V, is_causal=causal)).abs().max() <= 1e-10
        assert (out32.double() - out64).abs().max() <= 1e-2  # float32 rounding of scores near 1000s
    assert np.allclose(ns.flash_attention(Q, K, V, block_size=8)[0, 1].numpy(), reference, rtol=0, atol=1e-10)


def _bad(kind):
    Q, K, V = torch.randn(1, 2, 5, 4), torch.randn(1, 2, 6, 4), torch.randn(1, 2, 6, 3)
    kwargs = {}
    if kind == "3-D Q":
        Q = Q[0]
    elif kind == "numpy K":
        K = K.numpy()
    elif kind == "integer V":
        V = V.long()
    elif kind == "dtype mismatch":
        V = V.double()
    elif kind == "d_k mismatch":
        K = torch.randn(1, 2, 6, 5)
    elif kind == "T_k mismatch":
        V = torch.randn(1, 2, 7, 3)
    elif kind == "heads mismatch":
        K, V = torch.randn(1, 3, 6, 4), torch.randn(1, 3, 6, 3)
    elif kind == "empty":
        Q = torch.randn(1, 2, 0, 4)
    elif kind.startswith("block"):
        kwargs["block_size"] = {"block 0": 0, "block -3": -3, "block 2.5": 2.5, "block True": True}[kind]
    elif kind == "causal string":
        kwargs["causal"] = "yes"
    elif kind == "mask float":
        kwargs["mask"] = torch.zeros(5, 6)
    elif kind == "mask shape":
        kwargs["mask"] = torch.zeros(4, 6, dtype=torch.bool)
    elif kind == "row fully blocked":
        mask = torch.zeros(5, 6, dtype=torch.bool)
        mask[3] = True
        kwargs["mask"] = mask
    elif kind == "causal blocks the open key":
        mask = torch.zeros(5, 6, dtype=torch.bool)
        mask[0, 0] = True  # query 0 sees only key 0 under the causal rule
        kwargs.update(mask=mask, causal=True)
    return Q, K, V, kwargs


@pytest.mark.parametrize("kind", ["3-D Q", "numpy K", "integer V", "dtype mismatch", "d_k mismatch", "T_k mismatch",
                                  "heads mismatch", "empty", "block 0", "block -3", "block 2.5", "block True",
                                  "causal string", "mask float", "mask shape", "row fully blocked",
                                  "causal blocks the open key"])
def test_flash_attention_bad_input_gets_one_sentence(ns, kind):
    Q, K, V, kwargs = _bad(kind)
    with pytest.raises(ValueError) as info:
        ns.flash_attention(Q, K, V, **kwargs)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300 and message.rstrip().endswith(".")


def test_flash_attention_stats(ns):
    """The working memory does not grow with T; the tile count is the number of (query tile, key tile) pairs visited."""
    peaks = []
    for T in (128, 256, 512):
        X = torch.randn(1, 2, T, 32)
        out, stats = ns.flash_attention(X, X, X, block_size=64, return_stats=True)
        assert set(stats) == {"counted_extra_bytes", "tiles"}
        n = math.ceil(T / 64)
        assert stats["tiles"] == n * n
        _, stats_c = ns.flash_attention(X, X, X, block_size=64, causal=True, return_stats=True)
        assert stats_c["tiles"] == n * (n + 1) // 2
        peaks.append(stats["counted_extra_bytes"])
        assert stats["counted_extra_bytes"] < T * T * 2 * 4 or T == 128
    assert peaks[0] == peaks[1] == peaks[2] > 64 * 64 * 2 * 4  # at least one tile of scores for two heads
    # uneven tiles: query tiles of 64, 64, 22 against key tiles of 64, 36
    _, stats = ns.flash_attention(torch.randn(1, 1, 150, 8), torch.randn(1, 1, 100, 8), torch.randn(1, 1, 100, 8),
                                  block_size=64, causal=True, return_stats=True)
    assert stats["tiles"] == 1 + 2 + 2


# --- the key-value cache ---------------------------------------------------------------------------

@pytest.mark.parametrize("num_heads, num_kv_heads, n_layers", [(4, 4, 2), (4, 2, 1), (4, 1, 3), (2, 1, 2)])
def test_cached_decoding_equals_recomputation(ns, num_heads, num_kv_heads, n_layers):
    torch.manual_seed(num_heads * 10 + num_kv_heads + n_layers)
    model = ns.TinyDecoder(vocab=11, d_model=16, num_heads=num_heads, num_kv_heads=num_kv_heads, n_layers=n_layers).eval()
    prompt = torch.tensor([[3, 1], [4, 4], [0, 9]])
    full, cached, worst, cache = ns.decode_both_ways(model, prompt, n_steps=6)
    assert torch.equal(full, cached) and full.shape == (3, 8)
    assert worst < 1e-5
    # independent check of the last step: the full model's logits for the final sequence, position by position
    with torch.no_grad():
        logits_all, _ = model(cached)
        step, cache2 = model(cached[:, :1])
        for t in range(1, cached.shape[1]):
            step, cache2 = model(cached[:, t:t + 1], cache2)
            assert (step[:, 0] - logits_all[:, t]).abs().max() < 1e-5
    d_k = 16 // num_heads
    assert len(cache) == n_layers
    assert all(k.shape == v.shape == (3, num_kv_heads, 8, d_k) for k, v in cache)  # prompt 2 + 6 generated
    assert sum(k.nbytes + v.nbytes for k, v in cache) == n_layers * 2 * 8 * num_kv_heads * d_k * 4 * 3


def test_decoder_refuses_bad_configurations(ns):
    with pytest.raises(ValueError):
        ns.TinyDecoder(num_heads=4, num_kv_heads=3)
    model = ns.TinyDecoder()
    _, cache = model(torch.tensor([[1, 2]]))
    with pytest.raises(ValueError):
        model(torch.tensor([[1, 2]]), cache)


def test_kv_cache_bytes(ns):
    assert ns.kv_cache_bytes(32, 32768, 32, 128, 2) == 16 * 2**30
    assert ns.kv_cache_bytes(32, 32768, 8, 128, 2) == 4 * 2**30
    assert ns.kv_cache_bytes(32, 32768, 1, 128, 2) == 2**29
    assert ns.kv_cache_bytes(2, 10, 3, 4, 4, batch=5) == 2 * 2 * 10 * 3 * 4 * 4 * 5


def _state(scores, values):
    """The online-softmax state (m, ell, o) of a set of keys, from its definition."""
    top = max(scores)
    return top, math.fsum(math.exp(x - top) for x in scores), np.exp(np.asarray(scores) - top) @ values


def test_merge_states_solution_handles_empty_states(ns):
    """The model answer of scale_ex1: an empty state (-inf, 0, 0) changes nothing, two of them merge to empty."""
    empty = (-math.inf, 0.0, np.zeros(3))
    m, ell, o = ns.merge_states(*empty, *empty)
    assert m == -math.inf and ell == 0 and np.array_equal(np.asarray(o), np.zeros(3))
    rng = np.random.default_rng(3)
    scores, values = rng.normal(size=5) * 4 + 2000, rng.normal(size=(5, 3))  # scores near 2000: exp overflows
    state = _state(scores, values)
    for merged in (ns.merge_states(*empty, *state), ns.merge_states(*state, *empty)):
        assert merged[0] == state[0] and merged[1] == pytest.approx(state[1], abs=1e-12)
        assert np.allclose(merged[2], state[2], rtol=0, atol=1e-12)
    halves = ns.merge_states(*_state(scores[:2], values[:2]), *_state(scores[2:], values[2:]))
    assert np.allclose(np.asarray(halves[2]) / halves[1], _softmax_rows(scores)[0] @ values, rtol=0, atol=1e-12)


# --- timing sweeps stay out of the tests ------------------------------------------------------------

def test_timing_and_memory_sweeps_are_skipped_in_tests():
    """tests/nbdefs.py must not run the sweeps to T = 4096: every cell that times, measures or reads their results is tagged."""
    cells = json.loads(notebook_path(STEM).read_text(encoding="utf-8"))["cells"]
    uses = ("peak_array_bytes(", "best_seconds(", "seconds_per_call(", "lengths_mem", "torch_rows", "memory_rows", "wall_rows")
    checked = 0
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or source.lstrip().startswith("def "):  # the helpers' definitions may run
            continue
        if any(u in source for u in uses):
            checked += 1
            assert "skip-in-tests" in cell["metadata"].get("tags", []), source[:80]
    assert checked >= 6


# --- the exercises' checks fail on stubs -----------------------------------------------------------

SOLUTION_NAMES = {"scale_ex1": ["merge_states"], "scale_ex2": ["causal_mask_bottom_right"],
                  "scale_ex3": ["cache_gib_mha", "cache_gib_gqa", "cache_gib_mqa", "longest_context_gqa"]}


def _exercise_cells():
    cells = json.loads(notebook_path(STEM).read_text(encoding="utf-8"))["cells"]
    by_id = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in cells if "nbgrader" in c["metadata"]}
    return by_id


def _stub(source):
    return re.sub(r"( *)### BEGIN SOLUTION.*?### END SOLUTION", r"\1raise NotImplementedError()", source, flags=re.S)


@pytest.mark.parametrize("label", sorted(SOLUTION_NAMES))
@pytest.mark.parametrize("hidden", [True, False])
def test_exercise_checks_fail_on_stubs_and_pass_on_solutions(ns, label, hidden):
    cells = _exercise_cells()
    check = cells[f"{label}_check"]
    if not hidden:  # what a student sees: the hidden tests removed
        check = markers.regions(check).visible
    solved = dict(ns)
    exec(compile(check, f"{label}_check", "exec"), solved)  # passes with the solution
    stubbed = {k: v for k, v in ns.items() if k not in SOLUTION_NAMES[label]}
    try:
        exec(compile(_stub(cells[f"{label}_solution"]), f"{label}_stub", "exec"), stubbed)
    except NotImplementedError:
        pass
    with pytest.raises(Exception):
        exec(compile(check, f"{label}_check", "exec"), stubbed)


def test_exercise_metadata():
    cells = _exercise_cells()
    for n in (1, 2, 3):
        assert f"scale_ex{n}_solution" in cells and f"scale_ex{n}_check" in cells
    assert "scale_ex3_answer" in cells and "scale_ex4_answer" in cells


# --- the prose's numbers against independent arithmetic and the stored outputs ------------------------

def _chapter_text(stem=STEM):
    """A chapter's MyST text copy with its white space collapsed (so a line break never hides a phrase)."""
    from tools.registry import ROOT

    return " ".join((ROOT / "notebooks" / "md" / f"{stem}.md").read_text(encoding="utf-8").split())


def _stored_output(source_start):
    """The stored stream output of the code cell whose source starts with `source_start`."""
    for cell in json.loads(notebook_path(STEM).read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith(source_start):
            return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    raise KeyError(source_start)


def _figure_text(name):
    for cell in json.loads(notebook_path(STEM).read_text(encoding="utf-8"))["cells"]:
        meta = cell.get("metadata", {}).get("mystnb", {})
        if meta.get("figure", {}).get("name") == name:
            return " ".join(meta["figure"]["caption"].split()), " ".join(meta["image"]["alt"].split())
    raise KeyError(name)


WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
         "eleven": 11, "twelve": 12}


def test_the_32k_and_cache_sizes_in_the_prose():
    """4 GiB per head and 128 GiB for 32 heads at T = 32768; the 16 GiB cache and its divisors, from eq. 9.3 written out."""
    text = _chapter_text()
    T = 2 ** 15
    head = T * T * 4 / 2**30
    assert f"A single head of a single layer needs {head:g} GiB for its scores, and 32 heads need {32 * head:g} GiB" in text
    mha = 32 * 2 * T * 4096 * 2
    assert f"32 × 2 × 32768 × 4096 × 2 bytes is {mha / 2**30:g} GiB for *one* sequence" in text
    gqa, mqa = 32 * 2 * T * 8 * 128 * 2, 32 * 2 * T * 1 * 128 * 2
    assert f"divides the cache by {mha // gqa}; one shared head, by {mha // mqa}" in text
    assert f"({mha / 2**30:g} GiB for one 32k-token sequence" in text  # the summary


def test_the_opening_states_chapter_6s_sentence_limit():
    """'Chapter 6's translator attended over sentences of at most 34 words': chapter 6's MAX_WORDS filter."""
    limit = int(re.search(r"^MAX_WORDS = (\d+)$", (notebook_path("06_toy_translator").parent / "md" / "06_toy_translator.md")
                          .read_text(encoding="utf-8"), re.M).group(1))
    assert f"Chapter 6's translator attended over sentences of at most {limit} words" in _chapter_text()


def test_the_causal_tile_fractions_are_counted():
    """The share of skipped key tiles under the causal mask, counted tile by tile (tiles of 128)."""
    text = _chapter_text()
    shares = {}
    for T in (512, 4096):
        n = T // 128
        skipped = sum(1 for i in range(n) for j in range(n) if j * 128 > (i + 1) * 128 - 1)  # every key after every query
        shares[T] = 100 * skipped / (n * n)
    assert f"{shares[512]:.1f} % at $T = 512$ and {shares[4096]:.1f} % at $T = 4096$" in text
    assert f"({shares[512]:.1f} % of the tiles at $T = 512$, {shares[4096]:.1f} % at $T = 4096$;" in text


def test_the_wall_prose_states_the_stored_table():
    """'the peak is three T x T float32 matrices at every length': the stored table's last column."""
    table = _stored_output("rng = np.random.default_rng(0)\nprint(\"    T | peak during the call")
    ratios = {float(row.split("|")[2]) for row in table.splitlines()[1:] if row.strip()}
    assert len(ratios) == 1
    words = {v: k for k, v in WORDS.items()}
    assert f"the peak is {words[round(ratios.pop())]} $T \\times T$ float32 matrices at every length" in _chapter_text()


def test_the_memory_comparison_states_the_stored_table():
    """Prose, caption and alt text of the NumPy memory comparison against the stored table of that run."""
    table = _stored_output("print(\"    T | plain: peak, time")
    rows = [[float(v) for v in re.findall(r"\d+(?:\.\d+)?", row)] for row in table.splitlines()[1:] if "|" in row]
    by_T = {int(r[0]): r for r in rows}  # T, plain MiB, plain ms, tiled MiB, tiled ms, ratio
    plain, tiled = by_T[4096][1], by_T[4096][3]
    ratio = plain / tiled
    words = {v: k for k, v in WORDS.items()}
    text = _chapter_text()
    assert (f"At $T = 4096$ the plain version holds about {words[round(ratio)]} times the memory of the tiled one "
            f"({plain:.0f} MiB against {tiled:.0f} MiB") in text
    gaps = [by_T[T][1] / by_T[T][3] for T in (1024, 2048, 4096)]
    assert all(1.8 < b / a < 2.2 for a, b in zip(gaps, gaps[1:]))
    assert f"from $T = 1024$ on the gap about doubles with every doubling of $T$ ({gaps[0]:.1f}, {gaps[1]:.1f} and {gaps[2]:.1f} times)" in text
    caption, alt = _figure_text("fig-scale-memory")
    sweep = _chapter_text().split("lengths_mem = (", 1)[1]  # the cell that ran the comparison
    d_k = int(re.search(r"X = rng\.standard_normal\(\(T, (\d+)\), dtype=np\.float32\) # \(T, d_k\)", sweep).group(1))
    assert f"d_k = {d_k}, float32 inputs" in caption and "d = " not in caption  # d is the encoder state's size
    stated = [float(v) for v in re.findall(r"reaches about (\d+) MiB", alt)]
    assert len(stated) == 2 and abs(stated[0] / plain - 1) < 0.1 and abs(stated[1] / tiled - 1) < 0.1


def test_exercise_3s_model_answer_adds_up():
    """The bytes a decoding step reads in scale_ex3 (c), from the model's sizes written out here."""
    from tools.registry import ROOT

    layers, d_model, d_k, d_ff = 80, 64 * 128, 128, 28672
    attention = {n_kv: layers * (2 * d_model**2 + 2 * d_model * d_k * n_kv) * 2 / 2**30 for n_kv in (64, 8)}
    cache = {n_kv: layers * 2 * 8192 * n_kv * d_k * 2 * 8 / 2**30 for n_kv in (64, 8)}
    mlp = layers * 3 * d_model * d_ff * 2 / 2**30
    text = _chapter_text()
    assert f"{attention[64]:g} GiB with 64 key–value heads, {attention[8]:g} GiB with 8" in text
    before, after = cache[64] + attention[64], cache[8] + attention[8]
    assert (f"from {cache[64]:g} + {attention[64]:g} = {before:g} GiB to {cache[8]:g} + {attention[8]:g} = {after:g} GiB, "
            f"at most {before / after:.1f} times less") in text
    assert f"{mlp:g} GiB), from {before + mlp:g} to {after + mlp:g} GiB, about {(before + mlp) / (after + mlp):.0f} times less" in text
    rubric = " ".join((ROOT / "tools" / "chapters.toml").read_text(encoding="utf-8").split())
    assert f"at most {before / after:.1f} times less with the attention projections alone, about {(before + mlp) / (after + mlp):.0f} times with the MLP" in rubric


def test_exercise_4s_model_answer_adds_up():
    """The running sums with the keys in reverse order, from the scores written out."""
    from tools.registry import ROOT

    e = math.exp
    ells = [1 + e(-2), 1 + 2 * e(-2) + e(-1), 1 + 2 * e(-2) + e(-1) + e(-5) + e(-4)]
    text = _chapter_text()
    assert f"$\\ell = 1 + e^{{-2}} \\approx {ells[0]:.3f}$" in text
    assert f"$\\ell = 1 + 2e^{{-2}} + e^{{-1}} \\approx {ells[1]:.3f}$" in text
    assert f"\\approx {ells[2]:.3f}$, the same denominator as before ({ells[2]:.4f} at four decimals)" in text
    rubric = " ".join((ROOT / "tools" / "chapters.toml").read_text(encoding="utf-8").split())
    assert f"ℓ = 1 + e^-2 ≈ {ells[0]:.4f}" in rubric and f"ℓ ≈ {ells[1]:.4f}" in rubric and f"ℓ ≈ {ells[2]:.4f}" in rubric


def test_the_decoder_states_how_it_differs_from_tinygpt():
    """'built like chapter 8's TinyGPT': each difference of the two models' code is named in the sentence."""
    from tools.registry import ROOT

    ch8 = (ROOT / "notebooks" / "md" / "08_language_model.md").read_text(encoding="utf-8")
    ch9 = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    act8 = re.search(r"self\.ffn = nn\.Sequential\(nn\.Linear\(d_model, d_ff\), nn\.(\w+)\(\)", ch8).group(1)
    act9 = re.search(r'"mlp": nn\.Sequential\(nn\.Linear\(d_model, 4 \* d_model\), nn\.(\w+)\(\)', ch9).group(1)
    sentence = re.search(r"it is built like chapter 8's `TinyGPT`[^.]*\.", " ".join(ch9.split())).group(0)
    assert "self.final_norm" in ch8 and "without its final layer norm" in sentence
    assert "@ self.embedding.weight.T" in ch8 and "not tied to the token embedding" in sentence
    if act8 != act9:
        names = {"ReLU": "ReLU", "GELU": "GELU"}
        assert names[act8] in sentence and names[act9] in sentence, sentence


def test_the_chapter_4_references_name_what_chapter_4_has():
    """V8 comes from note 003 (the chapter's own reference list says so), and chapter 4 calls it calculation V8."""
    text = _chapter_text()
    ch4 = _chapter_text("04_scoring_functions")
    note = re.search(r"Source note `(\d{3})` \(calculation V8", text).group(1)
    assert f"Note {note} closes with a warning, calculation V8 (checked in chapter 4)" in text
    assert "## Calculation V8" in ch4
    opening = re.search(r"doubling the context quadruples both their memory and the arithmetic that computes them \(([^)]*)\)", text).group(1)
    assert "chapter 4" in opening and "calculation V8" in opening, opening


@pytest.mark.parametrize("kind", ["list Q", "1-D K", "d_k mismatch", "T_k mismatch", "block 0", "block 2.5", "query_block 0"])
def test_tiled_attention_bad_input_gets_one_sentence(ns, kind):
    Q, K, V, kwargs = np.ones((5, 4)), np.ones((6, 4)), np.ones((6, 3)), {"block_size": 2}
    if kind == "list Q":
        Q = Q.tolist()
    elif kind == "1-D K":
        K = np.ones(4)
    elif kind == "d_k mismatch":
        K = np.ones((6, 5))
    elif kind == "T_k mismatch":
        V = np.ones((7, 3))
    elif kind == "block 0":
        kwargs["block_size"] = 0
    elif kind == "block 2.5":
        kwargs["block_size"] = 2.5
    else:
        kwargs["query_block"] = 0
    with pytest.raises(ValueError) as info:
        ns.tiled_attention(Q, K, V, **kwargs)
    message = str(info.value)
    assert "\n" not in message and len(message) < 250 and message.endswith(".")
    assert any(word in message for word in ("Q", "K", "V", "block_size", "query_block")), message


def test_decoder_refuses_more_tokens_than_positions(ns):
    model = ns.TinyDecoder(max_len=8).eval()
    with pytest.raises(ValueError) as info:
        model(torch.zeros(1, 9, dtype=torch.long))
    assert str(info.value).endswith(".") and "\n" not in str(info.value)
    with torch.no_grad():
        _, cache = model(torch.zeros(1, 8, dtype=torch.long))  # all eight positions: fine
    with pytest.raises(ValueError) as info:
        model(torch.zeros(1, 1, dtype=torch.long), cache)  # a ninth token through the cache
    assert str(info.value).endswith(".") and "\n" not in str(info.value)
