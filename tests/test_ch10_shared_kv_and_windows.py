"""Chapter 10 (shared keys and values, sliding windows): the notebook's definitions against independent computations,
and its trained claims against tools/seed_studies/ch10_shared_kv_and_windows.txt.

The notebook is loaded with tests/nbdefs.load_notebook (its training cells are tagged `skip-in-tests`; nbval checks
their outputs against the seed study's bands). Expected values come from loops written here, from PyTorch's own
`scaled_dot_product_attention(..., enable_gqa=True)`, from chapter 8's attention, or from arithmetic written out
here; never from the code under test.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from nbdefs import load_notebook, notebook_path

STEM = "10_shared_kv_and_windows"
ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "tools" / "seed_studies" / "ch10_shared_kv_and_windows.txt"


@pytest.fixture(scope="module")
def ns():
    return load_notebook(STEM)


def _attention_loops(Q, K, V, kv_of, blocked=None):
    """Per head, per query: scaled dot-product attention in float64 with plain loops; head h reads K[kv_of(h)]."""
    n_h, T_q, d_k = Q.shape
    out = np.zeros((n_h, T_q, V.shape[-1]))
    for h in range(n_h):
        g = kv_of(h)
        for t in range(T_q):
            scores = [float(np.dot(Q[h, t], K[g, j])) / math.sqrt(d_k) for j in range(K.shape[1])]
            if blocked is not None:
                scores = [-math.inf if blocked[t][j] else s for j, s in enumerate(scores)]
            m = max(scores)
            exps = [math.exp(s - m) if s != -math.inf else 0.0 for s in scores]
            total = math.fsum(exps)
            out[h, t] = sum((e / total) * V[g, j] for j, e in enumerate(exps))
    return out


def _band(T, w=None):
    """Eq. (10.3) written out: True = blocked."""
    return [[j > t or (w is not None and t - j >= w) for j in range(T)] for t in range(T)]


@pytest.mark.parametrize("n_h,n_kv,T_q,T_k", [(4, 4, 3, 5), (4, 2, 3, 5), (4, 1, 2, 6), (6, 3, 4, 4), (8, 2, 5, 5)])
def test_grouped_query_attention_equals_loops_with_head_h_reading_h_over_g(ns, n_h, n_kv, T_q, T_k):
    rng = np.random.default_rng(n_h * 10 + n_kv)
    Q, K, V = rng.normal(size=(n_h, T_q, 3)), rng.normal(size=(n_kv, T_k, 3)), rng.normal(size=(n_kv, T_k, 2))
    G = n_h // n_kv
    blocked = np.array([[j > T_k - T_q + t for j in range(T_k)] for t in range(T_q)])
    for mask in (None, blocked):
        got = ns.grouped_query_attention(Q, K, V, mask)
        assert np.allclose(got, _attention_loops(Q, K, V, lambda h: h // G, mask), atol=1e-12)


def test_grouped_query_attention_refuses_uneven_groups_in_one_sentence(ns):
    with pytest.raises(ValueError, match="cannot be split evenly"):
        ns.grouped_query_attention(np.zeros((3, 2, 2)), np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))


@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_window_mask_is_the_band_of_eq_10_3(ns, T):
    for w in (None, 1, 2, 3, T, T + 4):
        assert ns.window_mask(T, w).tolist() == _band(T, w), (T, w)


@pytest.mark.parametrize("n_kv,window", [(4, None), (2, None), (1, None), (2, 3), (1, 1), (4, 5)])
def test_the_layer_equals_pytorchs_fused_attention_with_enable_gqa(ns, n_kv, window):
    torch.manual_seed(n_kv)
    layer = ns.GroupedQueryAttention(24, 4, n_kv, window=window).double()
    x = torch.randn(3, 9, 24, dtype=torch.float64)
    with torch.no_grad():
        q = layer.W_q(x).view(3, 9, 4, 6).transpose(1, 2)
        k = layer.W_k(x).view(3, 9, n_kv, 6).transpose(1, 2)
        v = layer.W_v(x).view(3, 9, n_kv, 6).transpose(1, 2)
        allowed = ~torch.tensor(_band(9, window))
        fused = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=True)
        expected = layer.W_o(fused.transpose(1, 2).reshape(3, 9, 24))
        assert torch.allclose(layer(x), expected, atol=1e-12)
        # and the stored weights are the softmax that chapter 8's agreement measure reads
        assert torch.allclose(layer.weights.sum(-1), torch.ones(3, 4, 9, dtype=torch.float64), atol=1e-12)
        assert bool((layer.weights[..., torch.tensor(_band(9, window))] == 0).all())


def test_the_layer_with_every_head_is_chapter_8s_attention(ns):
    torch.manual_seed(5)
    theirs = ns.CausalSelfAttention(32, 4).double()
    ours = ns.GroupedQueryAttention(32, 4, 4).double()
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(2, 11, 32, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(ours(x), theirs(x), atol=1e-12)


@pytest.mark.parametrize("options,words", [(dict(n_kv_heads=3), "multiple of n_kv_heads"),
                                           (dict(windows=[2]), "one window per layer"),
                                           (dict(positions="rope"), "does not rotate"),
                                           (dict(windows=[0, 2]), "at least 1")])
def test_bad_options_get_one_sentence(ns, options, words):
    with pytest.raises(ValueError, match=words):
        ns.SharedKVGPT(ns.VOCAB, **options)


@pytest.mark.parametrize("n_kv,windows", [(4, None), (2, [3, None]), (1, [2, 2])])
def test_the_model_is_tinygpt_with_its_attention_replaced(ns, n_kv, windows):
    torch.manual_seed(0)
    model = ns.SharedKVGPT(ns.VOCAB, n_kv_heads=n_kv, windows=windows)
    assert isinstance(model, ns.TinyGPT) and len(model.blocks) == 2
    assert all(b.attn.n_kv_heads == n_kv for b in model.blocks)
    assert [b.attn.window for b in model.blocks] == (windows or [None, None])
    # the cache per token is what its key and value projections write: out_features numbers each, float32
    written = sum(b.attn.W_k.out_features + b.attn.W_v.out_features for b in model.blocks) * 4
    assert ns.cache_bytes_per_token(model) == written == 2 * 2 * n_kv * 16 * 4
    # a later token never changes an earlier position's scores
    tokens = torch.tensor([ns.encode(ns.test_fr[0])])
    other = tokens.clone()
    other[0, 5] = ns.word_index["vache"]
    model = model.double().eval()
    with torch.no_grad():
        assert torch.equal(model(tokens)[0, :5], model(other)[0, :5])


def test_mean_pooling_averages_consecutive_heads(ns):
    torch.manual_seed(4)
    model = ns.SharedKVGPT(ns.VOCAB).double().eval()
    for n_kv in (2, 1):
        pooled = ns.mean_pool_kv(model, n_kv).double()
        G = 4 // n_kv
        for block, pooled_block in zip(model.blocks, pooled.blocks):
            for name in ("W_k", "W_v"):
                W = getattr(block.attn, name).weight.detach().numpy()                 # (64, 64): head h = rows 16h..16h+15
                expected = np.vstack([np.mean([W[16 * (g * G + m):16 * (g * G + m + 1)] for m in range(G)], axis=0)
                                      for g in range(n_kv)])
                assert np.allclose(getattr(pooled_block.attn, name).weight.detach().numpy(), expected, atol=1e-12)
            assert torch.equal(pooled_block.attn.W_q.weight, block.attn.W_q.weight)
            assert torch.equal(pooled_block.attn.W_o.weight, block.attn.W_o.weight)
        assert torch.equal(pooled.embedding.weight, model.embedding.weight)
    with pytest.raises(ValueError, match="equal groups"):
        ns.mean_pool_kv(ns.mean_pool_kv(model, 2), 4)


@pytest.mark.parametrize("T,w,chunk", [(1, 1, 1), (10, 1, 3), (10, 3, 4), (37, 5, 8), (50, 60, 7), (64, 16, 16)])
def test_chunked_windowed_attention_equals_the_band_written_out(ns, T, w, chunk):
    rng = np.random.default_rng(T + w + chunk)
    Q, K, V = rng.normal(size=(T, 4)), rng.normal(size=(T, 4)), rng.normal(size=(T, 3))
    got, largest = ns.chunked_window_attention(Q, K, V, w, chunk)
    expected = _attention_loops(Q[None], K[None], V[None], lambda h: 0, _band(T, w))[0]
    assert np.allclose(got, expected, atol=1e-12)
    assert largest <= chunk * (chunk + w - 1)


@pytest.mark.parametrize("n_layers,w", [(1, 2), (3, 2), (2, 4)])
def test_the_reach_of_stacked_windows_is_eq_10_4(ns, n_layers, w):
    torch.manual_seed(1)
    model = ns.SharedKVGPT(ns.VOCAB, windows=[w] * n_layers, n_layers=n_layers).double().eval()
    reach = n_layers * (w - 1) + 1
    assert ns.reached_positions(model, T=16, seed=3) == list(range(16 - reach, 16))


def test_the_hand_example_follows_the_arithmetic_written_out():
    text = notebook_path(STEM).read_text(encoding="utf-8")
    e = math.exp(2 / math.sqrt(2))
    big, small = e / (2 * e + 1), 1 / (2 * e + 1)
    assert f"{e:.4f}" == "4.1133" and f"{2 * e + 1:.4f}" == "9.2265"
    assert f"{big:.4f}" == "0.4458" and f"{small:.4f}" == "0.1084"
    head1 = [2 * big, 2 * small + big]
    head2 = [small + big, 3 * big]
    assert [f"{v:.4f}" for v in head1 + head2] == ["0.8916", "0.6626", "0.5542", "1.3374"]
    for number in ("9.2265", "0.4458, 0.1084, 0.4458", "[0.8916, 0.6626]", "[0.5542, 1.3374]"):
        assert number in text, number


def test_the_exercise_3_numbers_the_solution_states_follow_from_the_sizes():
    """The model solution's comments state its answers; they must be what the exercise's sizes give."""
    per = 2 * 8 * 128 * 2
    alternating, all_global = 20 * 32768 * per + 20 * 4096 * per, 40 * 32768 * per
    longest = max(T for T in range(4096, 40000) if 20 * T * per + 20 * min(T, 4096) * per <= 2**31)
    text = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    solution = text[text.index("cache_bytes_alternating = cache_bytes_all_global"):text.index("### END SOLUTION",
                    text.index("cache_bytes_alternating = cache_bytes_all_global"))]
    for name, value in (("cache_bytes_alternating", alternating), ("cache_bytes_all_global", all_global),
                        ("longest_context_alternating", longest)):
        assert re.search(rf"^{name} = .*# {value:,}$", solution, re.MULTILINE), (name, value)


def test_the_training_cells_are_left_out_of_the_tests_and_their_outputs_of_comparison():
    nb = json.loads(notebook_path(STEM).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and re.search(r"\btrain_lm\(", source) and "def " not in source:
            tags = cell["metadata"].get("tags", [])
            assert "skip-in-tests" in tags and "nbval-ignore-output" in tags, source[:80]


# --- the seed study's numbers, as the chapter quotes them ------------------------------------------------------------

def _study(path: Path = STUDY) -> dict[str, dict[str, tuple[float, float]]]:
    """{variant: {measure: (lowest, highest)}} from the summary lines of a study's output."""
    found = {}
    for line in path.read_text(encoding="utf-8").split("--summarize", 1)[1].splitlines():
        match = re.match(r"^([\w+-]+): (.*)$", line)
        if not match:
            continue
        ranges = {}
        for part in match.group(2).split("; "):
            name, low, high = re.match(r"^(.*?) (-?[\d.]+)-([\d.]+)", part).groups()
            ranges[name] = (float(low), float(high))
        found[match.group(1)] = ranges
    return found


def _percent(low: float, high: float) -> str:
    """A range of shares as the chapter writes it: 98.6 %–100 %, or 100 % when both ends are 1."""
    show = lambda v: "100 %" if v == 1 else f"{100 * v:.1f} %"
    return show(low) if low == high else f"{show(low)}–{show(high)}"


def test_the_study_ran_every_variant_over_five_seeds():
    text = STUDY.read_text(encoding="utf-8")
    assert "5 seeds (0, 1, 2, 3, 4)" in text
    assert set(_study()) == {"kv4", "kv2", "kv1", "pooled2", "uptrained2", "pooled1", "uptrained1", "w2L1", "w3L1", "w4L1",
                             "w8L1", "wNoneL1", "w2L2", "w3L2", "w4L2", "w8L2", "local-global", "global-local"}


def test_the_chapters_copy_of_the_study_is_the_studys(ns):
    study = _study()
    names = {"4 key-value heads": "kv4", "2 key-value heads": "kv2", "1 key-value head": "kv1",
             "2 heads, pooled and uptrained": "uptrained2", "1 head, pooled and uptrained": "uptrained1",
             "window 8 in both layers": "w8L2", "window 4 in both layers": "w4L2", "window 3 in both layers": "w3L2",
             "window 2 in both layers": "w2L2", "window 2, then global": "local-global"}
    assert set(ns.STUDY) == set(names)
    for name, (n_kv, windows, ppl, grammatical) in ns.STUDY.items():
        assert ppl == study[names[name]]["perplexity"], name
        assert grammatical == study[names[name]]["grammatical"], name


def test_the_tables_in_the_text_are_the_studys():
    text = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    study = _study()
    rouge, distance_2 = "participle, 'rouge' between", "participle"
    for n_kv in (4, 2, 1):
        r = study[f"kv{n_kv}"]
        row = f"| {1024 * n_kv // 4:,} bytes | {r['perplexity'][0]:.3f}–{r['perplexity'][1]:.3f} | {_percent(*r[rouge])} | {_percent(*r['grammatical'])} |"
        assert row in text, row
    rows = [(1, "2", "w2L1"), (1, "3", "w3L1"), (2, "2", "w2L2"), (1, "4", "w4L1"), (2, "3", "w3L2"), (2, "4", "w4L2"),
            (1, "8", "w8L1"), (2, "8", "w8L2"), (1, "none", "wNoneL1"), (2, "none", "kv4"), (2, "2, then none", "local-global"),
            (2, "none, then 2", "global-local")]
    for layers, window, name in rows:
        r = study[name]
        row = (f"| {layers} | {window} | .*? | {r['perplexity'][0]:.3f}–{r['perplexity'][1]:.3f} | {_percent(*r[rouge])} | "
               f"{_percent(*r[distance_2])} | {_percent(*r['grammatical'])} |")
        assert re.search(re.escape(row).replace(re.escape(".*?"), ".*?"), text), row


def test_the_reach_column_is_eq_10_4():
    text = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    for layers, window, reach in re.findall(r"^\| (\d) \| (\d+) \| (\d+) \|", text, re.MULTILINE):
        assert int(reach) == int(layers) * (int(window) - 1) + 1, (layers, window, reach)


def test_every_perplexity_range_of_the_text_is_one_the_study_measured():
    """A range such as 5.804–6.193 anywhere in the chapter's text (tables, prose, captions) is a variant's lowest and
    highest seed in the study."""
    text = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    measured = {f"{low:.3f}–{high:.3f}" for r in _study().values() for low, high in [r["perplexity"]]}
    measured |= {f"{low:.3f}–{high:.3f}" for r in _latent_study().values() for name, (low, high) in r.items()
                 if name in ("perplexity", "short", "long", "long, first 17", "long, the rest")}
    streaming = (ROOT / "tools" / "seed_studies" / "ch10_streaming.txt").read_text(encoding="utf-8").split("--summarize", 1)[1]
    measured |= {f"{a}–{b}" for a, b in re.findall(r"(\d\.\d{3})-(\d\.\d{3})", streaming)}
    quoted = set(re.findall(r"\d\.\d{3}–\d\.\d{3}", text))
    assert len(quoted) >= 15 and quoted <= measured, sorted(quoted - measured)


def test_the_first_token_text_is_the_studys(ns):
    text = (ROOT / "tools" / "seed_studies" / "ch10_first_token.txt").read_text(encoding="utf-8")
    rows = [json.loads(line.split(": ", 1)[1]) for line in text.splitlines() if line.startswith("seed ")]
    assert len(rows) == 5
    heads = np.array([r["weights"] for r in rows])                         # (seeds, layers, heads)
    largest = heads.reshape(5, -1).max(axis=1)
    chapter = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    said = f"every head puts {heads.min():.3f} to {heads.max():.3f} of its weight on `<s>`, the largest head of each seed {largest.min():.3f} to {largest.max():.3f}"
    assert said in chapter, said
    # the even spread, computed here from the held-out sentences' lengths: the mean of 1 / (t + 1) over queries t >= 1
    lengths = [len(s.split()) + 1 for s in ns.test_fr]                    # tokens read: <s> and every word
    even = sum(1 / (t + 1) for T in lengths for t in range(1, T)) / sum(T - 1 for T in lengths)
    assert f"{even:.3f}" == "0.134" == f"{rows[0]['even']:.3f}" and "an even spread: 0.134" in text


# --- latent attention (eqs. 10.5 to 10.7) ----------------------------------------------------------------------------

def _rotate(x: np.ndarray, position: int, base: float = 10000.0) -> np.ndarray:
    """RoPE written with complex numbers: the pairs (x[2k], x[2k+1]) turned by position * base^(-2k/d)."""
    d = len(x)
    pairs = x[0::2] + 1j * x[1::2]
    turned = pairs * np.exp(1j * position * base ** (-np.arange(0, d, 2) / d))
    out = np.empty(d)
    out[0::2], out[1::2] = turned.real, turned.imag
    return out


def _latent_loops(layer, x: np.ndarray) -> np.ndarray:
    """One sequence x (T, d_model) through a LatentAttention layer's weights, query by query and head by head."""
    W = lambda name: getattr(layer, name).weight.detach().double().numpy()   # (out, in): y = W @ x
    n_h, d_k, d_r = layer.n_heads, layer.d_k, layer.d_rope
    T = x.shape[0]
    z = [W("W_dkv") @ x[j] for j in range(T)]                               # the latents
    out = np.zeros((T, n_h * d_k))
    for t in range(T):
        q_all = W("W_q") @ x[t] + layer.W_q.bias.detach().double().numpy()
        for h in range(n_h):
            rows = slice(h * d_k, (h + 1) * d_k)
            scores = []
            for j in range(t + 1):
                s = float(q_all[rows] @ (W("W_uk")[rows] @ z[j]))
                if d_r:
                    q_r = _rotate(W("W_qr")[h * d_r:(h + 1) * d_r] @ x[t], t)
                    s += float(q_r @ _rotate(W("W_kr") @ x[j], j))
                scores.append(s / math.sqrt(d_k + d_r))
            e = np.exp(np.array(scores) - max(scores))
            out[t, rows] = sum((e[j] / e.sum()) * (W("W_uv")[rows] @ z[j]) for j in range(t + 1))
    return out @ W("W_o").T + layer.W_o.bias.detach().double().numpy()


@pytest.mark.parametrize("d_model, n_h, d_c, d_r, T", [(16, 4, 6, 0, 5), (16, 4, 6, 4, 6), (12, 3, 2, 2, 4), (8, 1, 3, 8, 5)])
def test_latent_attention_equals_loops_with_rebuilt_keys_and_rotated_parts(ns, d_model, n_h, d_c, d_r, T):
    torch.manual_seed(d_model + d_r)
    layer = ns.LatentAttention(d_model, n_h, d_c, d_r).double()
    x = torch.randn(2, T, d_model, dtype=torch.float64)
    with torch.no_grad():
        ours = layer(x).numpy()
    for b in range(2):
        np.testing.assert_allclose(ours[b], _latent_loops(layer, x[b].numpy()), atol=1e-10)


@pytest.mark.parametrize("d_r", [0, 2, 6])
def test_decoding_from_the_cache_with_absorbed_matrices_equals_the_layer(ns, d_r):
    torch.manual_seed(7 + d_r)
    layer = ns.LatentAttention(24, 3, 5, d_r).double()
    x = torch.randn(1, 9, 24, dtype=torch.float64)
    with torch.no_grad():
        full = layer(x)[0]
        z, k_rope = layer.cache(x)
        assert z.shape == (1, 9, 5) and (k_rope is None) == (d_r == 0)
        for t in range(9):
            step = ns.absorbed_step(layer, x[0, t], t, z[0, :t + 1], k_rope[0, :t + 1] if d_r else None)
            torch.testing.assert_close(step, full[t], atol=1e-10, rtol=0)


@pytest.mark.parametrize("T, d_model, n_h, d_k, d_c", [(6, 8, 2, 4, 3), (5, 6, 3, 2, 1), (4, 10, 1, 5, 7)])
def test_numpy_latent_attention_direct_and_absorbed_equal_loops(ns, T, d_model, n_h, d_k, d_c):
    rng = np.random.default_rng(T + d_c)
    X = rng.normal(size=(T, d_model))
    W = dict(W_q=rng.normal(size=(d_model, n_h * d_k)), W_dkv=rng.normal(size=(d_model, d_c)),
             W_uk=rng.normal(size=(d_c, n_h * d_k)), W_uv=rng.normal(size=(d_c, n_h * d_k)), W_o=rng.normal(size=(n_h * d_k, d_model)))
    Z = X @ W["W_dkv"]
    per_head = lambda M: M.reshape(M.shape[0], n_h, d_k).transpose(1, 0, 2)      # (rows, n_h d_k) -> (n_h, rows, d_k)
    blocked = np.triu(np.ones((T, T), dtype=bool), k=1)
    heads = _attention_loops(per_head(X @ W["W_q"]), per_head(Z @ W["W_uk"]), per_head(Z @ W["W_uv"]), lambda h: h, blocked)
    expected = heads.transpose(1, 0, 2).reshape(T, n_h * d_k) @ W["W_o"]
    np.testing.assert_allclose(ns.latent_attention(X, **W, n_h=n_h, mask=blocked), expected, atol=1e-10)
    np.testing.assert_allclose(ns.latent_attention_absorbed(X, **W, n_h=n_h, mask=blocked), expected, atol=1e-10)


def test_latent_gpt_caches_n_times_d_c_plus_d_r_numbers_and_refuses_positions(ns):
    for d_c, d_r, positions in ((32, 0, "learned"), (24, 8, "rope")):
        model = ns.LatentGPT(ns.VOCAB, d_c, d_r)
        assert model.positions == positions and all(isinstance(b.attn, ns.LatentAttention) for b in model.blocks)
        assert ns.latent_cache_bytes_per_token(model) == 2 * (d_c + d_r) * 4 == 256
        assert not any(".attn.W_k." in name for name, _ in model.named_parameters())
    with pytest.raises(ValueError, match="sets its positions itself"):
        ns.LatentGPT(ns.VOCAB, 32, positions="sinusoidal")
    for bad in (dict(d_latent=0), dict(d_latent=8, d_rope=3)):
        with pytest.raises(ValueError, match="d_latent must be at least 1"):
            ns.LatentAttention(16, 4, **bad)


def test_the_latent_hand_example_follows_the_arithmetic_written_out():
    e = [math.exp(k / math.sqrt(2)) for k in (1, 2, 3)]
    weights = [v / sum(e) for v in e]
    assert [round(v, 4) for v in e] == [2.0281, 4.1133, 8.3421] and round(sum(e), 4) == 14.4835
    assert [round(w, 4) for w in weights] == [0.1400, 0.2840, 0.5760]
    assert round(sum(k * w for k, w in zip((1, 2, 3), weights)), 4) == 2.4359
    assert 2 * 128 * 128 == 32768 and (512 + 64) / (2 * 128) == 2.25


# --- ALiBi (eq. 10.8) ------------------------------------------------------------------------------------------------

def test_alibi_slopes_are_press_et_als_geometric_sequence(ns):
    assert ns.alibi_slopes(8).tolist() == [2.0 ** -k for k in range(1, 9)]
    assert ns.alibi_slopes(4).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256]
    bias = ns.alibi_bias(5, 4)
    for h, m in enumerate([1 / 4, 1 / 16, 1 / 64, 1 / 256]):
        for t in range(5):
            for j in range(5):
                assert float(bias[h, t, j]) == (-m * (t - j) if j <= t else 0.0)


@pytest.mark.parametrize("n_kv, window", [(4, None), (2, None), (1, 3)])
def test_alibi_attention_equals_loops_with_the_penalty_added(ns, n_kv, window):
    torch.manual_seed(11 + n_kv)
    layer = ns.ALiBiAttention(16, 4, n_kv, window).double()
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    with torch.no_grad():
        ours = layer(x)[0].numpy()
        split = lambda y, heads: y.view(6, heads, 4).transpose(0, 1).numpy()
        Q, K, V = split(layer.W_q(x)[0], 4), split(layer.W_k(x)[0], n_kv), split(layer.W_v(x)[0], n_kv)
    G = 4 // n_kv
    heads = np.zeros((4, 6, 4))
    for h in range(4):
        m = 2.0 ** (-8 * (h + 1) / 4)
        for t in range(6):
            keys = [j for j in range(t + 1) if window is None or t - j < window]
            scores = np.array([Q[h, t] @ K[h // G, j] / 2.0 - m * (t - j) for j in keys])
            e = np.exp(scores - scores.max())
            heads[h, t] = sum((e[k] / e.sum()) * V[h // G, j] for k, j in enumerate(keys))
    expected = heads.transpose(1, 0, 2).reshape(6, 16) @ layer.W_o.weight.detach().numpy().T + layer.W_o.bias.detach().numpy()
    np.testing.assert_allclose(ours, expected, atol=1e-10)


def test_alibi_gpt_adds_no_position_to_the_words(ns):
    model = ns.ALiBiGPT(ns.VOCAB)
    assert "P" not in dict(model.named_parameters()) and float(model.P.abs().sum()) == 0.0
    assert all(isinstance(block.attn, ns.ALiBiAttention) for block in model.blocks)
    tokens = torch.tensor([ns.encode(ns.test_fr[0])])
    with torch.no_grad():                                                   # the learned table would change the output
        model.P.fill_(1.0)
        changed = model(tokens)
        model.P.zero_()
        assert not torch.allclose(changed, model(tokens))


def test_the_alibi_hand_example_follows_the_arithmetic_written_out():
    e = [math.exp(-0.25 * d) for d in (3, 2, 1, 0)]
    assert [round(v, 4) for v in e] == [0.4724, 0.6065, 0.7788, 1.0] and round(sum(e), 4) == 2.8577
    assert [round(v / sum(e), 4) for v in e] == [0.1653, 0.2122, 0.2725, 0.3499]
    far = [math.exp(-d / 256) for d in (3, 2, 1, 0)]
    assert max(abs(v / sum(far) - 0.25) for v in far) < 0.003


# --- the second seed study and the explorer --------------------------------------------------------------------------

LATENT_STUDY_FILE = ROOT / "tools" / "seed_studies" / "ch10_latent_and_alibi.txt"


def _latent_study() -> dict[str, dict[str, tuple[float, float]]]:
    return _study(LATENT_STUDY_FILE)


def test_the_latent_and_alibi_study_ran_every_variant_over_five_seeds():
    assert "5 seeds (0, 1, 2, 3, 4)" in LATENT_STUDY_FILE.read_text(encoding="utf-8")
    assert set(_latent_study()) == {"rope_mha", "latent32", "latent64", "latent24+rope8", "latent56+rope8",
                                    "short_learned", "short_sinusoidal", "short_rope", "short_alibi"}


def test_the_chapters_copies_of_the_latent_and_position_studies_are_the_studys(ns):
    latent, kv = _latent_study(), _study()
    names = {"latent 32": ("latent32", 256), "latent 64": ("latent64", 512), "latent 24, rotated 8": ("latent24+rope8", 256),
             "latent 56, rotated 8": ("latent56+rope8", 512), "4 heads, RoPE": ("rope_mha", 1024),
             "1 key-value head": ("kv1", 256), "2 key-value heads": ("kv2", 512), "4 key-value heads": ("kv4", 1024)}
    assert set(ns.LATENT_STUDY) == set(names)
    for name, (size, ppl, grammatical) in ns.LATENT_STUDY.items():
        source, expected_size = names[name]
        r = latent.get(source) or kv[source]
        assert (size, ppl, grammatical) == (expected_size, r["perplexity"], r["grammatical"]), name
    columns = ("short", "long", "long, first 17", "long, the rest")
    assert list(ns.POSITION_STUDY) == ["learned", "sinusoidal", "RoPE", "ALiBi"]
    for name, ranges in ns.POSITION_STUDY.items():
        r = latent[f"short_{'rope' if name == 'RoPE' else name.lower()}"]
        assert list(ranges) == [r[c] for c in columns], name


def test_the_explorers_published_configurations_are_the_papers(ns):
    config = ns.cache_config                                                # the explorer's config (its cell is not run here)
    rows = {name: [config[f][i] for f in ("layers", "n_heads", "n_kv_heads", "d_k", "d_latent", "d_rope", "window",
                                          "windowed_layers")] for i, name in enumerate(config["names"])}
    assert rows["Llama 3 8B"] == [32, 32, 8, 128, 0, 0, 0, 0]
    assert rows["Mistral 7B"] == [32, 32, 8, 128, 0, 0, 4096, 32]
    assert rows["Gemma 2 9B"] == [42, 16, 8, 256, 0, 0, 4096, 21]
    assert rows["DeepSeek-V2"] == [60, 128, 0, 128, 512, 64, 0, 0]
    gemma = config["names"].index("Gemma 2 9B")
    assert ns.model_cache_bytes(config, gemma, 8192, 2) == (21 * 4096 + 21 * 8192) * 2 * 8 * 256 * 2
    deepseek = config["names"].index("DeepSeek-V2")
    assert ns.model_cache_bytes(config, deepseek, 131072, 2) == 60 * 131072 * 576 * 2


# --- streaming ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("T, window, sinks", [(12, 4, 0), (12, 4, 2), (15, 5, 3), (9, 20, 0)])
def test_the_streaming_layout_is_a_cache_of_the_first_and_the_last_tokens(ns, T, window, sinks):
    """Written out query by query: which keys the cache holds when query t arrives, and their places in it."""
    layer = ns.StreamingALiBiAttention(16, 4, 4, window, sinks)
    penalty, blocked = layer.penalty_and_mask(T, None)
    slopes = [2.0 ** (-8 * (h + 1) / 4) for h in range(4)]
    for t in range(T):
        kept = list(range(t + 1))
        while len(kept) > sinks + window:                                     # drop the oldest that is not a sink
            kept.pop(sinks)
        for j in range(T):
            assert bool(blocked[t, j]) == (j not in kept), (t, j)
            if j in kept:
                distance = len(kept) - 1 - kept.index(j)
                for h in range(4):
                    assert float(penalty[h, t, j]) == pytest.approx(-slopes[h] * distance, abs=1e-12), (t, j, h)


def test_the_streaming_decoder_equals_the_masked_run_on_a_random_model(ns):
    torch.manual_seed(21)
    model = ns.ALiBiGPT(ns.VOCAB, n_kv_heads=2, max_positions=64).double().eval()
    tokens = ns.stream_tokens(ns.test_fr[5:9])[:26]
    for window, sinks in ((5, 1), (7, 3), (3, 0)):
        with torch.no_grad():
            at_once = ns.streaming(model, window, sinks)(torch.tensor([tokens]))[0]
        torch.testing.assert_close(ns.stream_decode(model, tokens, window, sinks), at_once, atol=1e-10, rtol=0)


def test_the_stream_pieces_start_with_bos_and_follow_the_sentences_in_order(ns):
    chunks = ns.stream_chunks(ns.train_fr[:50], length=10, seed=None)
    assert chunks.shape[1] == 10 and bool((chunks[:, 0] == ns.BOS).all())
    body = [i for s in ns.train_fr[:50] for i in ns.encode(s)[1:]]           # words and </s>, sentence after sentence
    assert chunks[:, 1:].reshape(-1).tolist() == body[:chunks.shape[0] * 9]


def test_the_chapters_copy_of_the_streaming_study_is_the_studys(ns):
    text = (ROOT / "tools" / "seed_studies" / "ch10_streaming.txt").read_text(encoding="utf-8")
    assert "5 seeds (0, 1, 2, 3, 4); the held-out stream: 1423 tokens" in text
    found = {}
    for name, w0, w1, l0, l1 in re.findall(r"^(every key|window [\w ,]+): whole ([\d.]+)-([\d.]+); from 64 on ([\d.]+)-([\d.]+)$",
                                          text, re.MULTILINE):
        found[name] = ((float(w0), float(w1)), (float(l0), float(l1)))
    names = {"every key": "every key", "window 8": "window 8", "window 8 and the first token": "window 8, first 1",
             "window 8 and the first 4": "window 8, first 4", "window 12": "window 12", "window 16": "window 16",
             "window 16 and the first token": "window 16, first 1", "window 16 and the first 4": "window 16, first 4",
             "window 20": "window 20"}
    assert set(ns.STREAM_STUDY) == set(names)
    for name, ranges in ns.STREAM_STUDY.items():
        assert ranges == found[names[name]], name
    assert int(ns.held_stream.numel()) == 1423
    # the per-seed comparisons the text makes
    rows = [json.loads(line.split(": ", 1)[1]) for line in text.splitlines() if line.startswith("seed ")]
    assert len(rows) == 5
    assert all(r["window 8, first 4"][0] < r["window 8"][0] and r["window 16, first 4"][0] < r["window 16"][0] for r in rows)
    assert sum(r["window 12"][0] < r["window 8, first 4"][0] for r in rows) == 4
    assert sorted([sum(r["window 20"][0] < r["window 16, first 4"][0] for r in rows), 5 - sum(
        r["window 20"][0] < r["window 16, first 4"][0] for r in rows)]) == [2, 3]


def test_every_stream_range_in_the_text_is_the_studys():
    text = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    study = (ROOT / "tools" / "seed_studies" / "ch10_streaming.txt").read_text(encoding="utf-8")
    measured = {f"{a}–{b}" for a, b in re.findall(r"(\d\.\d{3})-(\d\.\d{3})", study.split("--summarize", 1)[1])}
    section = text.split("### Streaming: a window and the first tokens", 1)[1].split("## What the savings add up to", 1)[0]
    quoted = set(re.findall(r"\d\.\d{3}–\d\.\d{3}", section))
    assert len(quoted) >= 5 and quoted <= measured, sorted(quoted - measured)
