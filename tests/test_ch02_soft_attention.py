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


# ---------------------------------------------------------------- what the text states

def _chapter_text():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "notebooks" / "md" / "02_soft_attention.md"
    return " ".join(path.read_text(encoding="utf-8").split())


def _stored_output(source_part):
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "notebooks" / "02_soft_attention.ipynb"
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code" and source_part in "".join(cell["source"]):
            return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    raise KeyError(source_part)


def test_the_training_steps_stated_are_those_of_the_chapters_settings(ns):
    """The text's batches and steps, from the chapter's own settings: its training set, EPOCHS and BATCH,
    cut the way train_classifier cuts them (torch.randperm(n).split(BATCH))."""
    import re

    n, batch, epochs = len(ns.train_data), ns.BATCH, ns.EPOCHS
    sizes = [len(b) for b in torch.randperm(n).split(batch)]                # one epoch's batches
    assert sizes == [min(batch, n - start) for start in range(0, n, batch)]
    full, rest = sizes.count(batch), [s for s in sizes if s != batch]
    text = _chapter_text()
    assert not re.search(r"\(\d+ steps of \d+ sentences\)", text), (
        f"every step of {batch} sentences? {n} sentences in batches of {batch} give {full} full batches and a last one of {rest[0] if rest else 'none'} per epoch")
    sentence = re.search(r"An epoch cuts the (\d+) sentences into batches of (\d+): (\w+) full batches and a last one of "
                         r"the (\d+) left over, so (\d+) epochs make (\d+) steps, (\d+) of (\d+) sentences and (\d+) of (\d+)\.", text)
    assert sentence, "the chapter should say how the training sentences are cut into batches (none found)"
    words = {"nine": 9, "ten": 10, "eight": 8}
    stated = [int(v) if v.isdigit() else words[v] for v in sentence.groups()]
    assert stated == [n, batch, full, rest[0], epochs, epochs * len(sizes), epochs * full, batch, epochs * len(rest), rest[0]]


def test_the_argmax_error_is_quoted_as_it_prints(ns):
    """The prose quotes autograd's message as the stored output prints it, and as PyTorch raises it here."""
    H = torch.tensor(ns.H_toy)
    scores = torch.tensor(ns.scores_np, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        torch.autograd.grad(H[torch.argmax(scores)].sum(), scores)
    first_sentence = str(info.value).split(".")[0]
    stored = _stored_output("argmax_has_gradient = True")
    assert f"autograd: {first_sentence}." in stored
    assert f'"{first_sentence}"' in _chapter_text(), f"the prose should quote {first_sentence!r}"


def test_the_classifier_states_have_2d_numbers(ns):
    """The BiLSTM's d per direction, its 2d-number states and the attention layer's 2d + 1 parameters,
    as the model reports them and as the text states them (the notation page's 2d)."""
    model = ns.SentimentClassifier("attention")
    d = model.lstm.hidden_size
    assert model.lstm.bidirectional and model.attention.d == 2 * d
    assert sum(p.numel() for p in model.attention.parameters()) == 2 * d + 1
    text = _chapter_text()
    assert f"$d = {d}$ hidden units per direction" in text
    assert f"$2d = {2 * d}$ numbers" in text and f"$2d + 1 = {2 * d + 1}$ parameters" in text
    assert f"$d = {2 * d}$" not in text, "the notation page's d is one direction; the BiLSTM state has 2d numbers"


def test_the_tanh_bound_is_approached_but_never_reached(ns):
    """Exercise 2 and S6: with tanh scores every weight stays below 1 / (1 + (T - 1) e^-2) and every ratio below
    e^2, and large scoring weights come arbitrarily close to both."""
    T = 5
    H = np.vstack([np.ones(2), -np.ones((T - 1, 2))])                        # one state apart from the others
    bound = 1 / (1 + (T - 1) * math.exp(-2))
    previous = 0.0
    for scale in [0.5, 2.0, 5.0]:
        _, alpha, _ = ns.soft_attention(H, scale * np.ones(2), 0.0)
        assert previous < alpha[0] < bound and alpha[0] / alpha[1] < math.exp(2)
        previous = alpha[0]
    assert bound - previous < 1e-7                                           # tanh(10) is 1 to about 4e-9
    assert math.isclose(ns.max_weight_tanh(T), bound, rel_tol=1e-12)
    text = _chapter_text()
    assert "is reached when its score is $1$" not in text and "differ by at most $e^{2}$" not in text
    assert "no finite $\\mathbf{w}$ and $b$ attain the bound" in text
    assert "is always less than $e^{2}$ = 7.39" in text


def _figure_text(name):
    """A figure's caption and alt text (each unfolded to one line), read from its cell's metadata."""
    import re

    text = _chapter_text()
    block = re.search(r"caption: ((?:(?!caption: ).)*?) name: " + re.escape(name) + r" image: alt: (.*?) (?:tags: |---)", text)
    assert block, f"figure {name} not found in the chapter"
    return block.group(1), block.group(2)


def test_the_adversarial_figure_states_what_the_search_stored():
    """The caption and alt text of the adversarial figure against the stored S8 output of seed 0: the search
    moves three of the four sentences far (JSD > 0.3) and one hardly at all, so "very different" for all four
    would be wrong; every number quoted is the stored one."""
    import re

    stored = _stored_output("jsd_n = js_divergence_torch")
    rows = re.findall(r"'([a-z ]+)': P\(positive\) learned ([\d.]+), adversarial ([\d.]+), JSD ([\d.]+)\n"
                      r"\s+learned\s+: (.*)\n\s+adversarial: (.*)", stored)
    assert len(rows) == 4, "the stored S8 cell should print the four sentences"
    weights = lambda line: dict((w, float(a)) for w, a in re.findall(r"([a-z]+) ([\d.]+)", line))
    far = [row for row in rows if float(row[3]) > 0.3]
    near = [row for row in rows if float(row[3]) <= 0.3]
    caption, alt = _figure_text("fig-adversarial-attention")
    assert "very different" not in caption + alt, "not every sentence's adversarial weights are far from the learned ones"
    assert all(abs(float(p) - float(q)) <= 0.01 for _, p, q, *_ in rows) and "by at most 0.01" in caption
    words = {1: "one", 2: "two", 3: "three", 4: "four"}
    jsd_far = sorted(float(row[3]) for row in far)
    assert f"For {words[len(far)]} sentences they are far from the learned ones (JSD {jsd_far[0]:.3f} to {jsd_far[-1]:.3f})" in caption
    assert len(near) == 1
    sentence, _, _, jsd, learned, adversarial = near[0]
    favourite = max(weights(learned), key=weights(learned).get)
    assert f"for '{sentence}' the search ends close to them (JSD {float(jsd):.3f})" in caption
    assert (f"sharpening the weight on '{favourite}' from {weights(learned)[favourite]:.2f} "
            f"to {weights(adversarial)[favourite]:.2f}") in caption
    assert f"both put most of the weight on {favourite} ({weights(learned)[favourite]:.2f} and {weights(adversarial)[favourite]:.2f})" in alt
    tops = []
    for _, _, _, _, learned, adversarial in far:
        top = max(weights(adversarial), key=weights(adversarial).get)
        assert top != max(weights(learned), key=weights(learned).get)
        tops.append(f"{top} {weights(adversarial)[top]:.2f}")
    assert f"In {words[len(far)]} charts" in alt and f"({', '.join(tops)})" in alt


def test_the_untrained_weights_quoted_are_the_stored_ones():
    """The untrained-attention numbers of the text and the heat map's alt text against the stored output, and the
    note's own untrained weights (note 003's printed table, copied here as the source states it) against 1/T."""
    import re

    stored = _stored_output("S7 untrained")
    values = [float(v) for v in re.findall(r"[a-z]+ (0\.\d{3})", stored)]
    assert len(values) == 4 + 4 + 5 + 4
    _, alt = _figure_text("fig-trained-attention")
    # the stored print has three decimals, so the alt text quotes them as printed (two decimals of 0.265 could be
    # 0.26 or 0.27: the figure's own labels round the unrounded weight, and show 0.26)
    assert f"(weights {min(values):.3f} to {max(values):.3f})" in alt, (min(values), max(values))
    deviation = float(re.search(r"= (0\.\d{3})", stored).group(1))
    text = _chapter_text()
    assert f"all within {deviation:.3f} of $1/T$ here" in text
    note_003_untrained = [[0.267, 0.253, 0.237, 0.244], [0.269, 0.255, 0.235, 0.241],
                          [0.208, 0.193, 0.193, 0.208, 0.197], [0.235, 0.228, 0.252, 0.284]]
    flat = [a for row in note_003_untrained for a in row]
    note_deviation = max(abs(a - 1 / len(row)) for row in note_003_untrained for a in row)
    assert f"the note's untrained weights ({min(flat):.3f} to {max(flat):.3f}) lie within {note_deviation:.3f} of $1/T$" in text


def test_one_symbol_one_meaning_in_the_derivations():
    """k is the softmax's summation index (2.2) and a position in the Kronecker delta of S4, so the tanh's slope has
    its own symbol (kappa_j, in the prose, the exercise's solution and its code); bold g is the Gumbel noise (2.7);
    bold beta is the layer norm's bias on the notation page; the coordinate index is i, as in exercise 3."""
    from pathlib import Path

    text = _chapter_text()
    assert "$k = 1 - e_j^2$" not in text and "$k_j = 1 - e_j^2$" not in text
    assert "$\\kappa_j = 1 - e_j^2$" in text
    assert "\\mathbf{g} = \\sum" not in text and "\\mathbf{g}^\\top" not in text
    assert "\\boldsymbol{\\beta}" not in text
    assert "\\boldsymbol{\\beta}" in (Path(__file__).resolve().parents[1] / "book" / "notation.md").read_text(encoding="utf-8")
    assert "for each coordinate $k$" not in text and "$c_i = \\max_j h_{j,i}$" in text and "(row $i$ holds the derivatives of $c_i$)" in text


def test_the_search_penalty_stated_is_the_codes(ns):
    """The S8 text's penalty threshold against adversarial_weights itself: its default max_change, the factor its
    penalty applies to it, and the 0.01 band that adversarial_summary counts as kept."""
    import inspect
    import re

    max_change = inspect.signature(ns.adversarial_weights).parameters["max_change"].default
    text = _chapter_text()                                  # the code cells' source is part of the text copy
    search = text[text.index("def adversarial_weights("):text.index("def adversarial_summary(")]
    factor = re.search(r"torch\.relu\(\(p_beta - p\)\.abs\(\) - ([\d.]+) \* max_change\)", search)
    assert factor, "adversarial_weights should penalise |p_beta - p| beyond a fixed share of max_change"
    threshold = float(factor.group(1)) * max_change
    kept = re.search(r"kept = \(\(p_beta - p\)\.abs\(\) <= ([\d.]+)\)", text)
    band = float(kept.group(1))
    assert (f'with a steep penalty whenever the probability of "positive" moves by more than {threshold:g} '
            f"from the model's own (half of the {band:g} that counts as kept below") in text
    assert math.isclose(threshold, band / 2)
