"""Chapter 2 (soft attention): the notebook's definitions against independent computations.

The notebook's code cells (all but those tagged `skip-in-tests`: training and the S8 search) are
executed by tests/nbdefs.py; every expected value here is computed independently (plain loops,
PyTorch's own functions, autograd), never copied from the notebook.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from nbdefs import load_notebook


@pytest.fixture(scope="module")
def ns():
    return load_notebook("02_soft_attention")


SHAPES = [(1, 1), (1, 4), (2, 3), (5, 2), (9, 7), (40, 16)]


def reference_attention(H, w, b, squash=True):
    """Independent: explicit loops and math.exp, in float64."""
    T = H.shape[0]
    z = [sum(H[t, k] * w[k] for k in range(H.shape[1])) + b for t in range(T)]
    e = [math.tanh(v) if squash else v for v in z]
    top = max(e)
    ex = [math.exp(v - top) for v in e]
    alpha = np.array([v / sum(ex) for v in ex])
    context = sum(alpha[t] * H[t] for t in range(T))
    return np.array(e), alpha, context


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("T,d", SHAPES)
@pytest.mark.parametrize("squash", [True, False])
def test_soft_attention_matches_independent_loops(ns, T, d, seed, squash):
    rng = np.random.default_rng(seed)
    H, w, b = rng.normal(size=(T, d)) * 3, rng.normal(size=d) * 2, float(rng.normal())
    scores, alpha, context = ns.soft_attention(H, w, b, squash=squash)
    e_ref, a_ref, c_ref = reference_attention(H, w, b, squash)
    assert scores.shape == (T,) and alpha.shape == (T,) and context.shape == (d,)
    assert np.allclose(scores, e_ref) and np.allclose(alpha, a_ref) and np.allclose(context, c_ref)


@pytest.mark.parametrize("T,d", SHAPES)
def test_torch_module_matches_torch_functional(ns, T, d):
    torch.manual_seed(T * 100 + d)
    layer = ns.SoftAttention(d)
    H = torch.randn(3, T, d)
    context, alpha = layer(H)
    e = torch.tanh(torch.nn.functional.linear(H, layer.score.weight, layer.score.bias)).squeeze(-1)
    alpha_ref = torch.nn.functional.softmax(e, dim=-1)
    assert torch.allclose(alpha, alpha_ref, atol=1e-6)
    assert torch.allclose(context, torch.einsum("bt,btd->bd", alpha_ref, H), atol=1e-5)


def test_torch_module_agrees_with_numpy_function(ns):
    rng = np.random.default_rng(7)
    H, w, b = rng.normal(size=(6, 5)), rng.normal(size=5), 0.3
    layer = ns.SoftAttention(5).double()
    with torch.no_grad():
        layer.score.weight.copy_(torch.tensor(w).reshape(1, 5))
        layer.score.bias.fill_(b)
    context, alpha = layer(torch.tensor(H))
    _, a_np, c_np = ns.soft_attention(H, w, b)
    assert np.allclose(alpha.detach().numpy(), a_np) and np.allclose(context.detach().numpy(), c_np)


def test_mask_gives_exactly_zero_weight(ns):
    """The book's convention: True = blocked (padding); blocked positions get weight exactly 0."""
    layer = ns.SoftAttention(4, squash=False)
    H = torch.randn(2, 5, 4)
    blocked = torch.tensor([[False, False, True, False, True], [False, True, True, True, True]])
    context, alpha = layer(H, blocked)
    assert torch.all(alpha[blocked] == 0) and torch.all(alpha[~blocked] > 0)
    assert torch.allclose(alpha.sum(-1), torch.ones(2))
    assert torch.allclose(context[1], H[1, 0], atol=1e-6)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 50.0, 1e4])
def test_weights_are_a_distribution(ns, scale):
    rng = np.random.default_rng(11)
    for T in [1, 2, 5, 30]:
        scores = rng.normal(size=T) * scale
        alpha = ns.softmax(scores)
        assert np.all(np.isfinite(alpha)) and np.all(alpha >= 0)
        assert abs(alpha.sum() - 1) < 1e-12
        assert np.allclose(alpha, torch.softmax(torch.tensor(scores), dim=0).numpy())


def test_softmax_temperature_limits(ns):
    scores = np.array([0.1, 2.0, -1.0, 1.9])
    assert np.allclose(ns.softmax(scores, 1e-4), [0, 1, 0, 0], atol=1e-6)
    assert np.allclose(ns.softmax(scores, 1e6), np.full(4, 0.25), atol=1e-5)


def in_hull_by_support(point, points, n_directions=720):
    """Independent hull test: the point is in the hull iff, in every direction u, u.point <= max_t u.h_t."""
    angles = np.linspace(0, 2 * np.pi, n_directions, endpoint=False)
    U = np.stack([np.cos(angles), np.sin(angles)], axis=1)    # (n, 2)
    return bool(np.all(U @ point <= (points @ U.T).max(axis=0) + 1e-9))


def test_hull_property_in_2d(ns):
    rng = np.random.default_rng(12)
    for _ in range(300):
        T = int(rng.integers(1, 10))
        H = rng.normal(size=(T, 2)) * rng.uniform(0.1, 4)
        w = rng.normal(size=2) * 10 ** rng.uniform(-2, 2)
        _, alpha, context = ns.soft_attention(H, w, float(rng.normal()), squash=False)
        assert in_hull_by_support(context, H)
        assert np.linalg.norm(context) <= np.linalg.norm(H, axis=1).max() + 1e-12
        if T >= 3:
            assert ns.inside_hull(context, ns.convex_hull_2d(H), tol=1e-9)


def test_convex_hull_2d_against_support_points(ns):
    rng = np.random.default_rng(13)
    for _ in range(50):
        P = rng.normal(size=(12, 2))
        hull = ns.convex_hull_2d(P)
        angles = np.linspace(0, 2 * np.pi, 360, endpoint=False)
        U = np.stack([np.cos(angles), np.sin(angles)], axis=1)
        extreme = {int(i) for i in (P @ U.T).argmax(axis=0)}      # points that are the farthest in some direction
        assert {tuple(np.round(P[i], 12)) for i in extreme} <= {tuple(np.round(h, 12)) for h in hull}
        outside = hull.mean(axis=0) + 10 * (P.max(axis=0) - P.min(axis=0))
        assert not ns.inside_hull(outside, hull)


@pytest.mark.parametrize("d", [1, 2, 16, 100, 300])
def test_parameter_count_is_d_plus_1_for_any_length(ns, d):
    layer = ns.SoftAttention(d)
    for T in [1, 7, 200]:
        layer(torch.zeros(T, d))
        assert sum(p.numel() for p in layer.parameters()) == d + 1
    assert ns.count_parameters(layer) == d + 1


@pytest.mark.parametrize("T,d", [(1, 3), (2, 2), (4, 5), (10, 3)])
def test_jacobian_closed_form_matches_autograd(ns, T, d):
    rng = np.random.default_rng(T + d)
    H, w, b = rng.normal(size=(T, d)), rng.normal(size=d), float(rng.normal())

    def f(X):
        return torch.softmax(torch.tanh(X @ torch.tensor(w) + b), dim=0) @ X

    J = torch.autograd.functional.jacobian(f, torch.tensor(H, dtype=torch.float64))   # (d, T, d)
    for j in range(T):
        identity_term, score_term = ns.context_jacobian_closed(H, w, b, j)
        assert np.allclose(J[:, j, :].numpy(), identity_term + score_term, atol=1e-12, rtol=0)


def test_argmax_attention_has_no_gradient_and_gumbel_does(ns):
    scores = torch.tensor([0.2, 1.0, -0.5], requires_grad=True)
    H = torch.randn(3, 2, dtype=torch.float32)
    with pytest.raises(RuntimeError):
        torch.autograd.grad(H[torch.argmax(scores)].sum(), scores)
    u = torch.tensor([0.3, 0.6, 0.9])
    y = ns.gumbel_softmax_torch(scores, 0.5, u)
    (g,) = torch.autograd.grad((y @ H).sum(), scores)
    assert torch.all(torch.isfinite(g)) and g.abs().sum() > 0


def test_gumbel_softmax_matches_definition_and_temperature(ns):
    rng = np.random.default_rng(14)
    scores = rng.normal(size=6)
    for _ in range(20):
        u = rng.uniform(0.01, 0.99, size=6)
        g = -np.log(-np.log(u))
        for tau in [0.05, 1.0, 20.0]:
            y = ns.gumbel_softmax(scores, tau, u)
            ref = torch.softmax(torch.tensor((scores + g) / tau), dim=0).numpy()
            assert np.allclose(y, ref) and abs(y.sum() - 1) < 1e-12
        assert ns.gumbel_softmax(scores, 1e-3, u).max() > 0.99 or np.sort(scores + g)[-1] - np.sort(scores + g)[-2] < 0.01
        assert np.allclose(ns.gumbel_softmax(scores, 1e4, u), 1 / 6, atol=1e-3)


def test_js_divergence(ns):
    jsd = ns.js_divergence
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.3, 0.1])
    m = (p + q) / 2
    ref = 0.5 * np.sum(p * np.log(p / m)) + 0.5 * np.sum(q * np.log(q / m))
    assert math.isclose(jsd(p, q), ref, rel_tol=1e-12)
    assert jsd(p, p) == 0 and math.isclose(jsd(np.array([1.0, 0]), np.array([0, 1.0])), math.log(2))
    t = ns.js_divergence_torch(torch.tensor(np.array([p, q])), torch.tensor(np.array([q, p])))
    assert np.allclose(t.numpy(), [ref, ref])


def test_dataset_is_deterministic_and_negation_flips(ns):
    a, b = ns.make_dataset(50, seed=3), ns.make_dataset(50, seed=3)
    assert a == b
    positive = {"great", "excellent", "good", "loved", "love"}
    for tokens, label in ns.make_dataset(400, seed=4):
        if "but" in tokens or "and" in tokens:
            continue
        polarity = any(w in positive for w in tokens)
        assert label == int(polarity != ("not" in tokens)), " ".join(tokens)
    held = ns.make_dataset(100, seed=5, exclude={" ".join(t) for t, _ in a})
    assert not {" ".join(t) for t, _ in held} & {" ".join(t) for t, _ in a}


def test_classifier_shapes_for_each_pooling(ns):
    X, lengths, y, neg = ns.encode([(s.split(), 1) for s in ["the movie was great", "i did not love the plot at all"]])
    for pooling in ["attention", "mean", "max"]:
        torch.manual_seed(0)
        model = ns.SentimentClassifier(pooling).to(X.device)
        logits, alpha = model(X, lengths)
        assert logits.shape == (2, 2)
        if alpha is not None:
            assert torch.allclose(alpha.sum(1), torch.ones(2, device=alpha.device), atol=1e-6)
            assert torch.all(alpha[0, 4:] == 0)                   # padding gets no weight
    with pytest.raises(ValueError, match="pooling"):
        ns.SentimentClassifier("sum")


def test_classifier_pooling_ignores_padding(ns):
    """Mean and max pooling read only the real positions (mask: True = padding)."""
    X, lengths, _, _ = ns.encode([(s.split(), 1) for s in ["the movie was great", "i did not love the plot at all"]])
    for pooling in ["mean", "max"]:
        torch.manual_seed(1)
        model = ns.SentimentClassifier(pooling).to(X.device).eval()
        with torch.no_grad():
            H, blocked = model.states(X, lengths)
            assert torch.equal(blocked, X == 0)
            real = H[0, :4]                                             # the first sentence has 4 words
            summary = real.mean(0) if pooling == "mean" else real.max(0).values
            logits, _ = model(X, lengths)
            assert torch.allclose(logits[0], model.head(summary), atol=1e-5)


def reference_pooling(H, blocked):
    """Independent: loops over the real positions."""
    B, T, d = H.shape
    mean, maximum = np.zeros((B, d)), np.zeros((B, d))
    for b in range(B):
        real = [H[b, j] for j in range(T) if not blocked[b, j]]
        mean[b] = np.sum(real, axis=0) / len(real)
        maximum[b] = np.max(real, axis=0)
    return mean, maximum


def test_masked_pooling_solution(ns):
    rng = np.random.default_rng(15)
    H = rng.normal(size=(4, 6, 3))
    blocked = np.arange(6)[None, :] >= np.array([6, 1, 3, 5])[:, None]
    mean, maximum = ns.masked_pooling(H, blocked)
    mean_ref, max_ref = reference_pooling(H, blocked)
    assert np.allclose(mean, mean_ref) and np.allclose(maximum, max_ref)


def test_context_grad_w_solution_matches_autograd(ns):
    rng = np.random.default_rng(16)
    for T, d in [(1, 3), (4, 2), (7, 5)]:
        H, w, b = rng.normal(size=(T, d)), rng.normal(size=d), float(rng.normal())
        H_t = torch.tensor(H)
        J = torch.autograd.functional.jacobian(lambda v: torch.softmax(torch.tanh(H_t @ v + b), 0) @ H_t,
                                               torch.tensor(w))
        assert np.allclose(ns.context_grad_w(H, w, b), J.numpy(), atol=1e-12)


def test_max_weight_tanh_solution(ns):
    for T in [1, 3, 50]:
        expected = math.exp(1) / (math.exp(1) + (T - 1) * math.exp(-1))
        assert math.isclose(ns.max_weight_tanh(T), expected, rel_tol=1e-12)


def test_the_two_jacobian_terms_can_cancel(ns):
    """Where (1 - e_j^2) w^T (h_j - c) = -1, d c / d h_j is singular (found here by an independent search)."""
    w, b = np.array([1.0, 0.5]), 0.2
    H = np.array([[0.0, 0.0], [2.0, 1.0], [2.5, -0.5]])

    def gap(x):
        H2 = H.copy()
        H2[0, 0] = x
        e, _, c = ns.soft_attention(H2, w, b)
        return (1 - e[0] ** 2) * (w @ (H2[0] - c)) + 1

    lo, hi = -0.2, 2.0
    assert gap(lo) < 0 < gap(hi)
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
    H[0, 0] = (lo + hi) / 2
    identity_term, score_term = ns.context_jacobian_closed(H, w, b, 0)
    assert abs(np.linalg.det(identity_term + score_term)) < 1e-10
    assert np.linalg.svd(identity_term, compute_uv=False).min() > 0.01


def test_explorer_config_matches_the_contract(ns):
    explorer = ns.make_hull_explorer(ns.hull_config)
    assert explorer.kind == "convex-hull"
    config = explorer.config
    assert list(config) == ["points", "labels", "scores", "score_min", "score_max", "score_step",
                            "log10_tau", "log10_tau_min", "log10_tau_max", "log10_tau_step"]
    n = len(config["labels"])
    assert np.asarray(config["points"]).shape == (n, 2) and len(config["scores"]) == n
    assert config["score_min"] <= min(config["scores"]) and max(config["scores"]) <= config["score_max"]
    assert config["log10_tau_min"] <= config["log10_tau"] <= config["log10_tau_max"]
    alpha, context, c_norm, h_max = ns.hull_view(np.asarray(config["points"]), np.asarray(config["scores"]), 0.0)
    assert abs(alpha.sum() - 1) < 1e-12 and c_norm <= h_max


@pytest.mark.parametrize("bad, error, words", [
    (lambda ns: ns.soft_attention([[1.0, 2.0]], np.ones(2)), TypeError, "NumPy array"),
    (lambda ns: ns.soft_attention(np.ones(3), np.ones(3)), ValueError, "shape (T, d)"),
    (lambda ns: ns.soft_attention(np.ones((3, 2)), np.ones(3)), ValueError, "length 2"),
    (lambda ns: ns.soft_attention(np.array([[1.0, np.nan]]), np.ones(2)), ValueError, "NaN"),
    (lambda ns: ns.softmax(np.ones(3), tau=0), ValueError, "tau"),
    (lambda ns: ns.softmax([1.0, 2.0]), TypeError, "NumPy array"),
    (lambda ns: ns.SoftAttention(3)(np.ones((2, 3))), TypeError, "torch tensor"),
    (lambda ns: ns.SoftAttention(3)(torch.ones(2, 4)), ValueError, "(T, 3)"),
    (lambda ns: ns.SoftAttention(3)(torch.tensor([[1.0, float("nan"), 0.0]])), ValueError, "NaN"),
    (lambda ns: ns.gumbel_softmax(np.ones(3), 1.0, np.array([0.5, 0.0, 0.2])), ValueError, "strictly between"),
    (lambda ns: ns.js_divergence(np.array([0.5, 0.5]), np.array([1.0, 0.0, 0.0])), ValueError, "same length"),
    (lambda ns: ns.convex_hull_2d(np.ones((4, 3))), ValueError, "(n, 2)"),
])
def test_bad_input_gives_one_clear_error(ns, bad, error, words):
    with pytest.raises(error) as info:
        bad(ns)
    message = str(info.value)
    assert words in message and message.endswith(".") and "\n" not in message


def test_the_seed_study_numbers_in_the_notebook_are_those_of_the_study_file():
    """The notebook cannot read tools/seed_studies/ch02_classifier.txt, so it copies the S7 spreads;
    the copy must say what the study printed."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "tools" / "seed_studies" / "ch02_classifier.txt").read_text()
    printed = {}
    for sentence, word, mean, sd, low, high in re.findall(
            r"^'([^']+)'\s+(\w+) \[[\d.]+\]:.*\| mean ([\d.]+)\s+sd ([\d.]+)\s+min ([\d.]+)\s+max ([\d.]+)", text, re.M):
        printed[(word, sentence)] = tuple(float(v) for v in (mean, sd, low, high))
    copied = load_notebook("02_soft_attention").SEED_STUDY_S7
    assert printed and copied == printed
