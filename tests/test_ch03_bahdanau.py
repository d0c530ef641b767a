"""Chapter 3: Bahdanau's additive attention.

What the notebook defines (`BahdanauAttention`, `additive_attention`, the encoder and the decoder
step, the decoder-state explorer) is checked against an independent NumPy implementation written
here with explicit loops, on random sizes and seeds; the worked example against the numbers the
note states (written out below, not taken from the notebook); padding against each sentence alone;
and wrong inputs against the error messages they must give.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from nbdefs import load_notebook


@pytest.fixture(scope="module")
def nb():
    return load_notebook("03_bahdanau_by_hand")


# The note's worked example ("Subah chai piyo") and the values it states.
H_NOTE = np.array([[0.6, 0.2], [0.4, 0.9], [0.5, 0.3]])
S0_NOTE = np.array([0.3, 0.7])
W_A_NOTE = np.array([[0.5, 0.1], [0.2, 0.5]])
U_A_NOTE = np.array([[0.4, 0.2], [0.1, 0.4]])
V_A_NOTE = np.array([1.0, 1.0])
STATED = {
    "Ws": [0.22, 0.41],
    "Uh": [[0.28, 0.14], [0.34, 0.40], [0.26, 0.17]],
    "sums": [[0.50, 0.55], [0.56, 0.81], [0.48, 0.58]],
    "tanh": [[0.462, 0.503], [0.508, 0.670], [0.447, 0.523]],
    "scores": [0.965, 1.178, 0.970],
    "exps": [2.625, 3.248, 2.638],
    "sum": 8.511,
    "alpha": [0.308, 0.382, 0.310],
    "terms": [[0.185, 0.062], [0.153, 0.344], [0.155, 0.093]],
    "context": [0.493, 0.499],
}
HALF_UNIT_2, HALF_UNIT_3 = 0.005, 0.0005
UNIT_3 = 0.001   # the rule: off by more than one unit in the last (third) decimal is beyond rounding


def reference(s, H, W_a, U_a, v_a, mask=None):
    """Independent NumPy Bahdanau attention with loops: s (B, n), H (B, T, 2d), mask True = padding."""
    B, T, _ = H.shape
    mask = np.zeros((B, T), dtype=bool) if mask is None else mask
    contexts, alphas, all_scores = [], [], []
    for b in range(B):
        scores = np.full(T, -np.inf)
        for j in range(T):
            if not mask[b, j]:
                scores[j] = sum(v_a[k] * np.tanh(W_a[k] @ s[b] + U_a[k] @ H[b, j]) for k in range(len(v_a)))
        finite = scores[np.isfinite(scores)]
        w = np.where(np.isfinite(scores), np.exp(scores - finite.max()), 0.0)
        alpha = w / w.sum()
        context = np.zeros(H.shape[2])
        for j in range(T):
            context += alpha[j] * H[b, j]
        contexts.append(context)
        alphas.append(alpha)
        all_scores.append(scores)
    return np.array(contexts), np.array(alphas), np.array(all_scores)


def loaded_module(nb, W_a, U_a, v_a):
    module = nb.BahdanauAttention(W_a.shape[1], U_a.shape[1], attn_dim=W_a.shape[0], dtype=torch.float64)
    with torch.no_grad():
        module.W_a.copy_(torch.tensor(W_a))
        module.U_a.copy_(torch.tensor(U_a))
        module.v_a.copy_(torch.tensor(v_a))
    return module


def t64(x):
    return torch.tensor(np.asarray(x), dtype=torch.float64)


# ------------------------------------------------------------------------------------------------
# The module against the independent implementation


@pytest.mark.parametrize("seed", range(6))
def test_module_matches_independent_numpy_on_random_sizes(nb, seed):
    rng = np.random.default_rng(seed)
    B, T, n, two_d, n_a = (int(rng.integers(1, k)) for k in (5, 8, 7, 9, 7))
    s, H = rng.normal(size=(B, n)), rng.normal(size=(B, T, two_d))
    W_a, U_a, v_a = rng.normal(size=(n_a, n)), rng.normal(size=(n_a, two_d)), rng.normal(size=n_a)
    lengths = rng.integers(1, T + 1, size=B)
    mask = np.arange(T)[None, :] >= lengths[:, None]
    module = loaded_module(nb, W_a, U_a, v_a)
    with torch.no_grad():
        context, alpha = module(t64(s), t64(H), torch.tensor(mask))
    exp_c, exp_a, _ = reference(s, H, W_a, U_a, v_a, mask)
    assert np.allclose(alpha.numpy(), exp_a, rtol=0, atol=1e-12)
    assert np.allclose(context.numpy(), exp_c, rtol=0, atol=1e-12)
    assert (alpha.numpy()[mask] == 0).all()


@pytest.mark.parametrize("seed", range(3))
def test_module_without_batch_axis_and_in_float32(nb, seed):
    rng = np.random.default_rng(100 + seed)
    T, n, two_d = int(rng.integers(1, 6)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    s, H = rng.normal(size=n), rng.normal(size=(T, two_d))
    W_a, U_a, v_a = rng.normal(size=(n, n)), rng.normal(size=(n, two_d)), rng.normal(size=n)
    exp_c, exp_a, _ = reference(s[None], H[None], W_a, U_a, v_a)
    with torch.no_grad():
        context, alpha = loaded_module(nb, W_a, U_a, v_a)(t64(s), t64(H))
        assert context.shape == (two_d,) and alpha.shape == (T,)
        assert np.allclose(context.numpy(), exp_c[0], atol=1e-12) and np.allclose(alpha.numpy(), exp_a[0], atol=1e-12)
        module32 = nb.BahdanauAttention(n, two_d)
        module32.load_state_dict({k: v.float() for k, v in loaded_module(nb, W_a, U_a, v_a).state_dict().items()})
        c32, a32 = module32(torch.tensor(s, dtype=torch.float32), torch.tensor(H, dtype=torch.float32))
    assert c32.dtype == torch.float32
    assert np.allclose(c32.numpy(), exp_c[0], atol=1e-5) and np.allclose(a32.numpy(), exp_a[0], atol=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_numpy_function_matches_independent_numpy(nb, seed):
    rng = np.random.default_rng(200 + seed)
    T, n, two_d, n_a = (int(rng.integers(1, k)) for k in (8, 6, 6, 6))
    s, H = rng.normal(size=n), rng.normal(size=(T, two_d))
    W_a, U_a, v_a = rng.normal(size=(n_a, n)), rng.normal(size=(n_a, two_d)), 5 * rng.normal(size=n_a)
    scores, alpha, context = nb.additive_attention(s, H, W_a, U_a, v_a)
    exp_c, exp_a, exp_e = reference(s[None], H[None], W_a, U_a, v_a)
    assert np.allclose(scores, exp_e[0], atol=1e-12)
    assert np.allclose(alpha, exp_a[0], atol=1e-12)
    assert np.allclose(context, exp_c[0], atol=1e-12)


def test_large_scores_give_no_nan(nb):
    module = loaded_module(nb, W_A_NOTE, U_A_NOTE, 1e4 * V_A_NOTE)
    with torch.no_grad():
        context, alpha = module(t64(S0_NOTE), t64(H_NOTE))
    assert torch.isfinite(context).all() and torch.isfinite(alpha).all()
    assert np.allclose(alpha.numpy(), [0, 1, 0], atol=1e-12)


# ------------------------------------------------------------------------------------------------
# The worked example against the note's stated numbers


def test_note_example_exact_steps_agree(nb):
    assert np.allclose(W_A_NOTE @ S0_NOTE, STATED["Ws"], atol=1e-12)
    assert np.allclose(H_NOTE @ U_A_NOTE.T, STATED["Uh"], atol=1e-12)
    assert np.allclose(W_A_NOTE @ S0_NOTE + H_NOTE @ U_A_NOTE.T, STATED["sums"], atol=1e-12)
    # the notebook's own step-by-step values (NumPy and PyTorch) equal the direct computation
    assert np.allclose(nb.steps_numpy["W_a s0"], W_A_NOTE @ S0_NOTE, atol=1e-12)
    assert np.allclose(nb.steps_torch["U_a h_j"].cpu().numpy(), H_NOTE @ U_A_NOTE.T, atol=1e-12)
    assert nb.verdict_M1 == "agrees" and nb.verdicts_M2 == ["agrees"] * 3 and nb.verdicts_M3_sums == ["agrees"] * 3


def test_note_example_module_reproduces_hand_calculation(nb):
    module = loaded_module(nb, W_A_NOTE, U_A_NOTE, V_A_NOTE)
    with torch.no_grad():
        context, alpha = module(t64(S0_NOTE), t64(H_NOTE))
        scores = module.scores(t64(S0_NOTE)[None], t64(H_NOTE)[None])[0]
    # to 1e-12 against the notebook's hand calculation, one step per cell
    assert np.abs(context.numpy() - nb.steps_numpy["context"]).max() <= 1e-12
    assert np.abs(alpha.numpy() - nb.steps_numpy["alpha"]).max() <= 1e-12
    assert np.abs(scores.numpy() - nb.steps_numpy["scores"]).max() <= 1e-12
    assert nb.module_vs_hand <= 1e-12
    # the note's weights and weighted terms agree within its rounding
    assert np.all(np.abs(alpha.numpy() - STATED["alpha"]) <= HALF_UNIT_3)
    assert np.all(np.abs(alpha.numpy()[:, None] * H_NOTE - STATED["terms"]) <= HALF_UNIT_3)
    # M6: c1[0] agrees, c1[1] = 0.498352 is 0.498, not 0.499: within one unit, a rounding
    assert abs(context[0].item() - STATED["context"][0]) <= HALF_UNIT_3
    assert HALF_UNIT_3 < abs(context[1].item() - STATED["context"][1]) <= UNIT_3
    assert abs(context[1].item() - 0.498) <= HALF_UNIT_3
    assert nb.verdict_M6_context == "rounding" and nb.verdicts_M6_terms == ["agrees"] * 3
    # ... and the note's 0.499 is the sum of its terms rounded to 3 decimals
    assert np.allclose(np.round(alpha.numpy()[:, None] * H_NOTE, 3).sum(axis=0), STATED["context"], atol=1e-9)


def test_note_example_errata_m3_m4_m5(nb):
    tanh = np.tanh(W_A_NOTE @ S0_NOTE + H_NOTE @ U_A_NOTE.T)
    off = np.abs(tanh - STATED["tanh"])
    # tanh(0.55): 0.503 is more than one unit off (an error); tanh(0.48): 0.447 within one unit (a rounding)
    assert off[0, 1] > UNIT_3 and HALF_UNIT_3 < off[2, 0] <= UNIT_3
    assert (np.delete(off.ravel(), [1, 4]) <= HALF_UNIT_3).all()
    scores = tanh @ V_A_NOTE
    assert abs(scores[0] - STATED["scores"][0]) > UNIT_3                    # e1 carries the tanh error
    assert abs(scores[1] - STATED["scores"][1]) <= HALF_UNIT_3
    # e3 is 1.09 units off, but equals the note's own (rounding) tanh values added up
    assert abs(scores[2] - STATED["scores"][2]) > UNIT_3
    assert abs(sum(STATED["tanh"][2]) - STATED["scores"][2]) < 1e-12
    exps = np.exp(scores)
    assert (np.abs(exps - STATED["exps"]) > HALF_UNIT_3).all()
    assert abs(exps.sum() - STATED["sum"]) > UNIT_3
    # the note's exponentials are exact for its own rounded scores
    assert np.allclose(np.round(np.exp(STATED["scores"]), 3), STATED["exps"], atol=1e-9)
    # the notebook asserts the same verdicts
    assert nb.verdicts_M3_tanh == ["error", "agrees", "rounding"] and nb.verdict_M4 == "error"
    assert nb.verdict_M5_exps == "error" and nb.verdict_M5_sum == "error" and nb.verdict_M5_alpha == "agrees"
    assert nb.shapes_match_M7 and nb.shapes_M7["U_a"] == (3, 4)


def test_broadcast_equals_step_by_step(nb):
    scores, alpha, context = nb.additive_attention(S0_NOTE, H_NOTE, W_A_NOTE, U_A_NOTE, V_A_NOTE)
    assert np.allclose(scores, nb.steps_numpy["scores"], rtol=0, atol=1e-12)
    assert np.allclose(alpha, nb.steps_numpy["alpha"], rtol=0, atol=1e-12)
    assert np.allclose(context, nb.steps_numpy["context"], rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------------
# Padding


@pytest.mark.parametrize("seed", range(4))
def test_padded_batch_equals_each_sentence_alone(nb, seed):
    rng = np.random.default_rng(300 + seed)
    B, T_max, n, two_d = 4, 6, 3, 4
    lengths = rng.integers(1, T_max + 1, size=B)
    lengths[0] = T_max
    sentences = [rng.normal(size=(L, two_d)) for L in lengths]
    H_pad = np.full((B, T_max, two_d), 1e3)                        # absurd padding, must get no weight
    for b, sent in enumerate(sentences):
        H_pad[b, : len(sent)] = sent
    mask = np.arange(T_max)[None, :] >= lengths[:, None]
    s = rng.normal(size=(B, n))
    module = nb.BahdanauAttention(n, two_d, dtype=torch.float64)
    with torch.no_grad():
        context, alpha = module(t64(s), t64(H_pad), torch.tensor(mask))
        for b, sent in enumerate(sentences):
            c_alone, a_alone = module(t64(s[b]), t64(sent))
            assert torch.allclose(context[b], c_alone, rtol=0, atol=1e-12)
            assert torch.allclose(alpha[b, : len(sent)], a_alone, rtol=0, atol=1e-12)
            assert (alpha[b, len(sent):] == 0).all()


def test_encoder_and_decoder_padding(nb):
    torch.manual_seed(1)
    enc = nb.BiGRUEncoder(6, 3, 2, dtype=torch.float64)
    dec = nb.AttentionDecoderStep(7, 3, 4, 2, 5, dtype=torch.float64)
    x = torch.tensor([[1, 2, 3, 4], [5, 2, 0, 0], [3, 0, 0, 0]])
    lengths = torch.tensor([4, 2, 1])
    with torch.no_grad():
        H = enc(x, lengths)
        s = dec.initial_state(H)
        y = torch.tensor([1, 2, 3])
        s1, probs, alpha, c = dec(s, y, H, x == 0)
        for b, L in enumerate(lengths.tolist()):
            H_b = enc(x[b: b + 1, :L])
            s1_b, probs_b, alpha_b, c_b = dec(dec.initial_state(H_b), y[b: b + 1], H_b)
            assert torch.allclose(H[b, :L], H_b[0], atol=1e-12)
            assert torch.allclose(c[b], c_b[0], atol=1e-12) and torch.allclose(probs[b], probs_b[0], atol=1e-12)
            assert torch.allclose(s1[b], s1_b[0], atol=1e-12)


# ------------------------------------------------------------------------------------------------
# Shapes of the encoder and the decoder step (M7)


@pytest.mark.parametrize("B,T,V_src,V_tgt,d_x,n,d,l", [(1, 3, 4, 8, 3, 2, 1, 4), (3, 5, 9, 11, 4, 6, 3, 2)])
def test_encoder_decoder_shapes(nb, B, T, V_src, V_tgt, d_x, n, d, l):
    torch.manual_seed(0)
    enc = nb.BiGRUEncoder(V_src, d_x, d)
    dec = nb.AttentionDecoderStep(V_tgt, d_x, n, d, l)
    x = torch.randint(0, V_src, (B, T))
    with torch.no_grad():
        H = enc(x)
        s0 = dec.initial_state(H)
        s1, probs, alpha, c = dec(s0, torch.randint(0, V_tgt, (B,)), H)
    assert H.shape == (B, T, 2 * d) and s0.shape == (B, n)
    assert s1.shape == (B, n) and probs.shape == (B, V_tgt) and alpha.shape == (B, T) and c.shape == (B, 2 * d)
    assert torch.allclose(probs.sum(-1), torch.ones(B)) and torch.allclose(alpha.sum(-1), torch.ones(B))
    assert tuple(dec.attention.W_a.shape) == (n, n) and tuple(dec.attention.U_a.shape) == (n, 2 * d)
    # the context is a convex combination of the annotations (independent check)
    assert torch.allclose(c, torch.einsum("bt,btk->bk", alpha, H), atol=1e-6)


# ------------------------------------------------------------------------------------------------
# Error messages


def test_errors_name_expected_and_given_shapes(nb):
    module = nb.BahdanauAttention(2, 2, dtype=torch.float64)
    s, H = torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, 3, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"decoder state s.*\(batch, 2\).*got shape \(2, 3\)"):
        module(torch.zeros(2, 3, dtype=torch.float64), H)
    with pytest.raises(ValueError, match=r"encoder states H.*\(2, T, 2\).*got shape \(2, 3, 4\)"):
        module(s, torch.zeros(2, 3, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"encoder states H.*\(T, 2\).*got shape \(3, 5\)"):
        module(torch.zeros(2, dtype=torch.float64), torch.zeros(3, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"mask should have shape \(2, 3\).*got shape \(2, 4\)"):
        module(s, H, torch.zeros(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask should have shape \(3,\).*got shape \(4,\)"):
        module(s[0], H[0], torch.zeros(4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\(3, T, 2\) to match"):
        module(torch.zeros(3, 2, dtype=torch.float64), H)
    with pytest.raises(TypeError, match="torch.Tensor, got a list"):
        module([0.3, 0.7], H[0])
    with pytest.raises(TypeError, match="bool"):
        module(s, H, torch.zeros(2, 3))
    with pytest.raises(ValueError, match="every position of sentence 1"):
        module(s, H, torch.tensor([[False, True, True], [True, True, True]]))
    with pytest.raises(ValueError, match="NaN"):
        module(s, torch.full((2, 3, 2), float("nan"), dtype=torch.float64))
    with pytest.raises(TypeError, match="float32.*float64"):
        module(s.float(), H.float())


def test_numpy_function_errors(nb):
    f = nb.additive_attention
    with pytest.raises(TypeError, match=r"H should be a NumPy array of shape \(T, 2\), got a list"):
        f(S0_NOTE, H_NOTE.tolist(), W_A_NOTE, U_A_NOTE, V_A_NOTE)
    with pytest.raises(ValueError, match=r"s should have shape \(2,\), got shape \(3,\)"):
        f(np.zeros(3), H_NOTE, W_A_NOTE, U_A_NOTE, V_A_NOTE)
    with pytest.raises(ValueError, match=r"H should have shape \(T, 2\), got shape \(3, 3\)"):
        f(S0_NOTE, np.zeros((3, 3)), W_A_NOTE, U_A_NOTE, V_A_NOTE)
    with pytest.raises(ValueError, match="NaN"):
        f(np.array([np.nan, 0.0]), H_NOTE, W_A_NOTE, U_A_NOTE, V_A_NOTE)


def test_decoder_rejects_bad_previous_word(nb):
    dec = nb.AttentionDecoderStep(5, 3, 2, 1, 4)
    H = torch.zeros(2, 3, 2)
    with pytest.raises(ValueError, match=r"y_prev should be a LongTensor of shape \(2,\).*got shape \(3,\)"):
        dec(torch.zeros(2, 2), torch.tensor([1, 2, 3]), H)


# ------------------------------------------------------------------------------------------------
# The decoder-state explorer (config read by the website's script)


def test_decoder_state_explorer_config(nb):
    explorer = nb.decoder_state_explorer()
    assert explorer.kind == "decoder-state"
    bundle = explorer._repr_mimebundle_()
    match = re.search(r'data-kind="decoder-state" data-config="([^"]*)"', bundle["text/html"])
    assert match
    import html as html_lib
    config = json.loads(html_lib.unescape(match.group(1)))
    assert set(config) == {"H", "labels", "W_a", "U_a", "v_a", "s", "s_min", "s_max", "s_step"}
    assert np.allclose(config["H"], H_NOTE) and np.allclose(config["W_a"], W_A_NOTE)
    assert np.allclose(config["U_a"], U_A_NOTE) and np.allclose(config["v_a"], V_A_NOTE)
    assert np.allclose(config["s"], S0_NOTE) and config["labels"] == ["Subah", "chai", "piyo"]
    assert config["s_min"] < config["s"][0] < config["s_max"] and config["s_step"] > 0
    # moving a slider updates the displayed numbers to the reference computation
    sliders = explorer.children[0].children
    view = explorer.children[1]
    sliders[0].value, sliders[1].value = -1.0, 2.0
    _, alpha, _ = reference(np.array([[-1.0, 2.0]]), H_NOTE[None], W_A_NOTE, U_A_NOTE, V_A_NOTE)
    for a in alpha[0]:
        assert f"<td>{a:.3f}</td>" in view.value


# ------------------------------------------------------------------------------------------------
# What the figures state: their numbers computed here with the reference above


def _figure_text(name):
    """The caption and the alt text of the figure called `name`, with their line breaks undone."""
    from nbdefs import notebook_path

    for cell in json.loads(notebook_path("03_bahdanau_by_hand").read_text(encoding="utf-8"))["cells"]:
        meta = cell.get("metadata", {}).get("mystnb", {})
        if meta.get("figure", {}).get("name") == name:
            return " ".join(meta["figure"]["caption"].split()), " ".join(meta["image"]["alt"].split())
    raise KeyError(f"no figure named {name!r} in chapter 3")


def _largest_weights(S):
    """Largest additive and largest dot-product weight for each decoder state (row of S)."""
    _, alpha, _ = reference(S, np.repeat(H_NOTE[None], len(S), axis=0), W_A_NOTE, U_A_NOTE, V_A_NOTE)
    dots = S @ H_NOTE.T
    w_dot = np.exp(dots - dots.max(axis=1, keepdims=True))
    return alpha.max(axis=1), (w_dot / w_dot.sum(axis=1, keepdims=True)).max(axis=1)


def test_the_scaling_figure_states_the_plotted_weights():
    """fig-bahdanau-additive-vs-dot plots the largest weight for lambda * s0, lambda from 0.1 to 100."""
    lambdas = np.logspace(-1, 2, 61)
    additive, dot = _largest_weights(lambdas[:, None] * S0_NOTE)
    _, alt = _figure_text("fig-bahdanau-additive-vs-dot")
    at = {lam: _largest_weights(np.array([lam * S0_NOTE]))[1][0] for lam in (0.1, 10.0, 100.0)}
    expected = (f"rises from about {at[0.1]:.2f} at lambda 0.1 to {at[10.0]:.2f} at lambda 10 and {at[100.0]:.1f} at 100; "
                f"the additive curve stays between {additive.min():.2f} and {additive.max():.2f}")
    assert expected in alt, f"the alt text should say: {expected}"
    assert abs(additive[-1] - 1 / 3) < 1e-3 and dot.max() > 0.999


def test_the_heat_map_states_the_plotted_range():
    """fig-bahdanau-decoder-state: the weight of 'chai' over the 121 x 121 grid of decoder states."""
    grid = np.linspace(-3, 3, 121)
    S = np.array([[a, b] for b in grid for a in grid])
    _, alpha, _ = reference(S, np.repeat(H_NOTE[None], len(S), axis=0), W_A_NOTE, U_A_NOTE, V_A_NOTE)
    chai = alpha[:, 1]
    caption, alt = _figure_text("fig-bahdanau-decoder-state")
    assert f"between {chai.min():.3f} and {chai.max():.3f}" in caption
    assert f"from about {chai.min():.2f} (dark) to {chai.max():.2f} (yellow)" in alt
    assert (alpha.argmax(axis=1) == 1).all() and "'Chai' gets the most weight everywhere" in caption
    corners = {name: chai[i] for name, i in (("top right", -1), ("bottom left", 0), ("top left", -121), ("bottom right", 120))}
    assert max(corners["top right"], corners["bottom left"]) < min(corners["top left"], corners["bottom right"])
    assert "from the top left to the bottom right" in alt


# ------------------------------------------------------------------------------------------------
# What the prose and a solution's working state about the code and the example, checked here


NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _cells03():
    from nbdefs import notebook_path

    return json.loads(notebook_path("03_bahdanau_by_hand").read_text(encoding="utf-8"))["cells"]


def _markdown03():
    """All markdown of chapter 3 as one string, line breaks kept."""
    return "\n".join("".join(c["source"]) for c in _cells03() if c["cell_type"] == "markdown")


def test_the_line_count_of_the_broadcast_function():
    """'the whole of equations (3.2)-(3.3) in N lines': the lines of `additive_attention` after its
    input checks and before its return, counted in the cell's source."""
    source = next("".join(c["source"]) for c in _cells03()
                  if c["cell_type"] == "code" and "def additive_attention(" in "".join(c["source"]))
    body = source[source.index("def additive_attention("):].splitlines()
    last_check = max(i for i, line in enumerate(body) if line.strip().startswith(("raise ", "_require_array(")))
    end = next(i for i, line in enumerate(body) if line.strip().startswith("return "))
    computing = [line for line in body[last_check + 1:end] if line.strip() and not line.strip().startswith("#")]
    said = re.search(r"\(3\.2\)–\(3\.3\) in (\w+) lines", _markdown03())
    assert said, "the text no longer says in how many lines the function computes (3.2)-(3.3)"
    assert NUMBER_WORDS.get(said.group(1)) == len(computing), (
        f"the text says {said.group(1)} lines; the function computes in {len(computing)}: {computing}")


def test_the_table_row_the_text_calls_the_tanh_is_the_bounded_one():
    """'The N-th row of the table, the tanh, ...' must name the row that says the score is bounded."""
    text = _markdown03()
    table = [line for line in text.splitlines() if line.startswith("| ") and "additive (Bahdanau)" not in line
             and not line.startswith("|---")]
    table = [row for row in table if row.split("|")[1].strip() in
             {"score", "parameters", "work per decoder step, $T$ source words", "shape of the score"}]
    said = re.search(r"The (\w+) row of the table, the (?:bounded )?\$\\tanh\$", text)
    assert said and len(table) == 4, "the sentence about the tanh's row of the comparison table is missing"
    ordinals = {"first": 0, "second": 1, "third": 2, "fourth": 3, "last": len(table) - 1}
    row = table[ordinals[said.group(1)]]
    assert "bounded" in row, f"the text calls the {said.group(1)} row the tanh's; that row is: {row}"


def test_the_first_exercise_solution_states_the_right_tanh_values():
    """bahdanau_ex1's working: the sums W_a s + U_a h_j at s = (0, -0.5) and their tanh, to the
    decimals the comment gives, against the note's matrices above."""
    source = next("".join(c["source"]) for c in _cells03()
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "bahdanau_ex1_solution")
    comment = next(line for line in source.splitlines() if line.startswith("# sums:"))
    sums_text, tanh_text = comment[len("# sums:"):].split("; tanh:")
    pairs = lambda text: [tuple(float(v) for v in p.split(",")) for p in re.findall(r"\(([^)]*)\)", text)]
    sums = W_A_NOTE @ np.array([0.0, -0.5]) + H_NOTE @ U_A_NOTE.T          # (3, 2), no rounding
    for stated, exact in zip(pairs(sums_text), sums):
        assert np.allclose(stated, exact, atol=1e-12), f"the comment's sum {stated} is {exact}"
    for stated, exact in zip(pairs(tanh_text), np.tanh(sums)):
        for said, value in zip(stated, exact):
            assert abs(said - value) <= 0.00005 + 1e-12, f"the comment says tanh = {said}; it is {value:.6f}"
