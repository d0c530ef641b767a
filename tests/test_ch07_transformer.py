"""Chapter 7 (the Transformer): the notebook's layers against PyTorch's own and against a NumPy layer
written here, the positional encoding against its formula, the translator's masks and decoding, and
the copies of chapters 5's and 6's code.

The notebook is loaded with tests/nbdefs.load_notebook (training and the trained results are tagged
`skip-in-tests`; nbval checks those against the seed study's bands). Expected values come from
`torch.nn.TransformerEncoderLayer` / `TransformerDecoderLayer` with the same weights, from loops over
the formulas written out here, or from the other chapters' notebooks; never from the code under test.
"""
from __future__ import annotations

import ast
import json
import math
import re

import numpy as np
import pytest
import torch
from torch import nn

from nbdefs import ROOT, load_notebook, notebook_path

STEM = "07_transformer"


@pytest.fixture(scope="module")
def ns():
    return load_notebook(STEM)


# ------------------------------------------------------------------ the layers against PyTorch's


def _random_layer_config(rng):
    nhead = int(rng.choice([1, 2, 3, 4]))
    d_model = nhead * int(rng.choice([2, 3, 4, 8]))
    return dict(d_model=d_model, nhead=nhead, dim_feedforward=int(rng.integers(1, 40)),
                activation=str(rng.choice(["relu", "gelu"])), norm_first=bool(rng.integers(2)),
                bias=bool(rng.integers(2)), layer_norm_eps=float(rng.choice([1e-5, 1e-3])))


def _padding(rng, B, T, as_float):
    lengths = rng.integers(1, T + 1, size=B)
    mask = torch.arange(T)[None, :] >= torch.as_tensor(lengths)[:, None]            # (B, T), True = padding
    return torch.zeros(B, T, dtype=torch.float64).masked_fill(mask, float("-inf")) if as_float else mask


def _causal(T, as_float):
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)                # (T, T), True = future
    return torch.zeros(T, T, dtype=torch.float64).masked_fill(mask, float("-inf")) if as_float else mask


def _torch_layer(kind, config, seed):
    torch.manual_seed(seed)
    cls = nn.TransformerEncoderLayer if kind == "encoder" else nn.TransformerDecoderLayer
    layer = cls(config["d_model"], config["nhead"], config["dim_feedforward"], dropout=0.0,
                activation=config["activation"], layer_norm_eps=config["layer_norm_eps"], batch_first=True,
                norm_first=config["norm_first"], bias=config["bias"]).double().eval()
    with torch.no_grad():                                   # non-trivial layer-norm gains and biases
        for p in layer.parameters():
            if p.dim() == 1:
                p.add_(0.3 * torch.randn_like(p))
    return layer


N_CONFIGS = 120


def encoder_inputs(rng, d_model):
    """A random batch for an encoder layer, with the mask combinations PyTorch accepts."""
    B, T = int(rng.integers(1, 4)), int(rng.integers(1, 9))
    x = torch.randn(B, T, d_model, dtype=torch.float64)
    kwargs = {}
    if rng.random() < 0.8:
        kwargs["src_key_padding_mask"] = _padding(rng, B, T, as_float=False)
    if rng.random() < 0.5:
        kwargs["src_mask"] = _causal(T, as_float=bool(rng.integers(2)))
        kwargs["is_causal"] = True
    if kwargs.get("src_mask") is not None and kwargs["src_mask"].is_floating_point() and "src_key_padding_mask" in kwargs:
        kwargs["src_key_padding_mask"] = _padding(rng, B, T, as_float=True)   # PyTorch wants both masks of one kind
    return (x,), kwargs


def decoder_inputs(rng, d_model):
    """A random target batch and memory for a decoder layer, causal or not, padded or not."""
    B, T_y, T_x = int(rng.integers(1, 4)), int(rng.integers(1, 8)), int(rng.integers(1, 9))
    y = torch.randn(B, T_y, d_model, dtype=torch.float64)
    memory = torch.randn(B, T_x, d_model, dtype=torch.float64)
    as_float = bool(rng.integers(2))
    kwargs = {"tgt_mask": _causal(T_y, as_float), "tgt_is_causal": True}
    if rng.random() < 0.7:
        kwargs["memory_key_padding_mask"] = _padding(rng, B, T_x, as_float=False)
    if rng.random() < 0.5:
        kwargs["tgt_key_padding_mask"] = _padding(rng, B, T_y, as_float)
        kwargs["tgt_key_padding_mask"][:, 0] = 0.0 if as_float else False     # the first word is never padding
    if rng.random() < 0.3:
        del kwargs["tgt_mask"], kwargs["tgt_is_causal"]                      # no causal mask at all
        kwargs.pop("tgt_key_padding_mask", None)
    return (y, memory), kwargs


@pytest.mark.parametrize("kind, inputs, rng_seed", [("encoder", encoder_inputs, 2024), ("decoder", decoder_inputs, 2025)])
def test_layer_matches_pytorch_on_random_configurations(ns, kind, inputs, rng_seed):
    rng = np.random.default_rng(rng_seed)
    worst = 0.0
    for seed in range(N_CONFIGS):
        config = _random_layer_config(rng)
        theirs = _torch_layer(kind, config, seed)
        ours = ns.layer_from_torch(theirs)
        args, kwargs = inputs(rng, config["d_model"])
        with torch.no_grad():
            expected, got = theirs(*args, **kwargs), ours(*args, **kwargs)
        gap = (got - expected).abs().max().item()
        assert gap <= 1e-6, f"{kind} configuration {seed} {config} {sorted(kwargs)}: differs by {gap:.1e}"
        worst = max(worst, gap)
    print(f"{kind} layer: {N_CONFIGS} configurations, largest difference {worst:.1e}")


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_float32_layers_match_pytorch(ns, kind, norm_first):
    torch.manual_seed(3)
    cls = nn.TransformerEncoderLayer if kind == "encoder" else nn.TransformerDecoderLayer
    theirs = cls(16, 4, 32, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    ours = ns.layer_from_torch(theirs)
    x = torch.randn(2, 6, 16)
    pad = torch.tensor([[False] * 6, [False] * 3 + [True] * 3])
    with torch.no_grad():
        if kind == "encoder":
            gap = (ours(x, src_key_padding_mask=pad) - theirs(x, src_key_padding_mask=pad)).abs().max().item()
        else:
            y, causal = torch.randn(2, 4, 16), _causal(4, as_float=False)
            gap = (ours(y, x, tgt_mask=causal, memory_key_padding_mask=pad)
                   - theirs(y, x, tgt_mask=causal, memory_key_padding_mask=pad)).abs().max().item()
    assert gap <= 1e-5


# ------------------------------------------------------------------ an independent NumPy layer


def _np_layer_norm(x, gamma, beta, eps):
    mu = x.mean(-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) + beta


def _np_attention(xq, xkv, W_q, W_k, W_v, W_o, b, nhead, blocked):
    """Multi-head attention with loops over the heads, W as (E, E) applied as x @ W; blocked (T_q, T_k)."""
    E = xq.shape[1]
    d_k = E // nhead
    Q, K, V = xq @ W_q + b[0], xkv @ W_k + b[1], xkv @ W_v + b[2]
    heads = []
    for h in range(nhead):
        cols = slice(h * d_k, (h + 1) * d_k)
        scores = Q[:, cols] @ K[:, cols].T / math.sqrt(d_k)
        scores = np.where(blocked, -np.inf, scores)
        w = np.exp(scores - scores.max(1, keepdims=True))
        heads.append((w / w.sum(1, keepdims=True)) @ V[:, cols])
    return np.concatenate(heads, axis=1) @ W_o + b[3]


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_a_numpy_layer_written_here(ns, norm_first):
    torch.manual_seed(5)
    layer = ns.TransformerEncoderLayer(8, 2, 12, norm_first=norm_first).double().eval()
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    P = {k: v.detach().numpy() for k, v in layer.named_parameters()}
    attn = [P[f"self_attn.{n}"] for n in ("W_q", "W_k", "W_v", "W_o")]
    biases = [P[f"self_attn.{n}"] for n in ("b_q", "b_k", "b_v", "b_o")]
    x = np.random.default_rng(0).normal(size=(5, 8))
    lengths = 3
    blocked = np.zeros((5, 5), dtype=bool)
    blocked[:, lengths:] = True
    ln1 = lambda v: _np_layer_norm(v, P["norm1.weight"], P["norm1.bias"], 1e-5)
    ln2 = lambda v: _np_layer_norm(v, P["norm2.weight"], P["norm2.bias"], 1e-5)
    sa = lambda v: _np_attention(v, v, *attn, biases, 2, blocked)
    ff = lambda v: np.maximum(0, v @ P["ff.linear1.weight"].T + P["ff.linear1.bias"]) @ P["ff.linear2.weight"].T + P["ff.linear2.bias"]
    if norm_first:
        h = x + sa(ln1(x))
        expected = h + ff(ln2(h))
    else:
        h = ln1(x + sa(x))
        expected = ln2(h + ff(h))
    with torch.no_grad():
        got = layer(torch.tensor(x)[None], src_key_padding_mask=torch.tensor(blocked[:1]))[0].numpy()
    assert np.abs(got - expected).max() < 1e-10


# ------------------------------------------------------------------ what the layers refuse


@pytest.mark.parametrize("make, error, words", [
    (lambda ns: ns.TransformerEncoderLayer(8, 2, 16, dropout=0.1), ValueError, "dropout"),
    (lambda ns: ns.TransformerDecoderLayer(8, 2, 16, batch_first=False), ValueError, "batch_first=True"),
    (lambda ns: ns.TransformerEncoderLayer(8, 2, 16, activation=torch.tanh), ValueError, "'relu' or 'gelu'"),
    (lambda ns: ns.TransformerEncoderLayer(8, 3, 16), ValueError, "divisible"),
    (lambda ns: ns.TransformerEncoderLayer(8, 2, 0), ValueError, "dim_feedforward"),
    (lambda ns: ns.TransformerDecoderLayer(8, 2, 16, norm_first="yes"), ValueError, "norm_first"),
    (lambda ns: ns.layer_from_torch(nn.Linear(3, 3)), TypeError, "TransformerEncoderLayer"),
    (lambda ns: ns.layer_from_torch(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.1, batch_first=True)), ValueError, "dropout=0.1"),
    (lambda ns: ns.layer_from_torch(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)), ValueError, "batch_first=False"),
    (lambda ns: ns.TransformerEncoderLayer(8, 2, 16)(torch.randn(1, 3, 8), is_causal=True), ValueError, "causal mask"),
    (lambda ns: ns.positional_encoding(5, 7), ValueError, "even"),
    (lambda ns: ns.positional_encoding_torch(0, 8), ValueError, "positive integer"),
    (lambda ns: ns.positional_encoding_torch("5", 8), ValueError, "positive integer"),   # "the same clear errors"
    (lambda ns: ns.positional_encoding_torch(2.5, 8), ValueError, "positive integer"),   # as positional_encoding,
    (lambda ns: ns.positional_encoding_torch(True, 8), ValueError, "positive integer"),  # for a wrong type too
    (lambda ns: ns.positional_encoding_torch(5, 8.0), ValueError, "even integer"),
])
def test_unsupported_options_get_one_clear_sentence(ns, make, error, words):
    with pytest.raises(error) as info:
        make(ns)
    message = str(info.value)
    assert words in message and message.endswith(".") and "\n" not in message


# ------------------------------------------------------------------ positional encoding


@pytest.mark.parametrize("T, d_model", [(1, 2), (7, 4), (30, 10), (64, 64)])
def test_positional_encoding_is_the_formula(ns, T, d_model):
    expected = np.zeros((T, d_model))
    for pos in range(T):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            expected[pos, 2 * i], expected[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)
    assert np.abs(ns.positional_encoding(T, d_model) - expected).max() < 1e-12
    got_t = ns.positional_encoding_torch(T, d_model, dtype=torch.float64, device="cpu").numpy()
    assert np.abs(got_t - expected).max() < 1e-12


@pytest.mark.parametrize("d_model", [2, 8, 16])
def test_a_shift_is_a_rotation(ns, d_model):
    """Eq. 7.2 in both of the chapter's forms: rows in code (PE[pos + k] = PE[pos] @ R_k), columns in the
    equations (PE_{pos+k} = R_k^T PE_pos), with R_k built here from cos and sin."""
    PE = ns.positional_encoding(60, d_model)
    for k in (1, 3, 17):
        R_k = ns.shift_matrix(k, d_model)
        expected = np.zeros((d_model, d_model))
        for i in range(d_model // 2):
            angle = k / 10000 ** (2 * i / d_model)
            expected[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
        assert np.abs(R_k - expected).max() < 1e-15
        assert np.abs(PE[k:] - PE[:60 - k] @ R_k).max() < 1e-12
        assert all(np.abs(PE[pos + k][:, None] - R_k.T @ PE[pos][:, None]).max() < 1e-12 for pos in range(60 - k))
        assert np.abs(R_k @ R_k.T - np.eye(d_model)).max() < 1e-14
    text = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    assert r"\mathrm{PE}_{pos+k} = \mathbf{R}_k^\top\,\mathrm{PE}_{pos}" in text and "`PE[pos + k] = PE[pos] @ R_k`" in text


def test_the_explorer_config_follows_its_schema(ns):
    config = ns.pe_config
    assert set(config) == {"PE", "position", "dimension"}
    assert len(config["PE"]) == 32 and all(len(row) == 16 for row in config["PE"])
    assert np.abs(np.array(config["PE"]) - ns.positional_encoding(32, 16)).max() <= 5e-5
    row, dots, column = ns.encoding_state(config["PE"], 8, 4)
    assert row.shape == (16,) and dots.shape == (32,) and column.shape == (32,) and int(dots.argmax()) == 8


# ------------------------------------------------------------------ the translator


def test_self_attention_is_permutation_equivariant_without_positions(ns):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 4))
    W = rng.normal(size=(3, 4, 4))
    perm = rng.permutation(6)
    out, _ = ns.self_attention(X, *W)
    out_p, _ = ns.self_attention(X[perm], *W)
    assert np.abs(out_p - out[perm]).max() < 1e-12


def test_the_parameter_count_by_hand_is_pytorchs(ns):
    enc = nn.TransformerEncoderLayer(ns.D_MODEL, ns.N_HEADS, ns.D_FF, batch_first=True)
    dec = nn.TransformerDecoderLayer(ns.D_MODEL, ns.N_HEADS, ns.D_FF, batch_first=True)
    assert ns.ENC_PARAMS_BY_HAND == sum(p.numel() for p in enc.parameters())
    assert ns.DEC_PARAMS_BY_HAND == sum(p.numel() for p in dec.parameters())


def test_a_padded_batch_changes_nothing(ns):
    torch.manual_seed(0)
    model = ns.TransformerTranslator().to(ns.device).eval()
    data = ns.test_data
    long_one = max(range(1, 40), key=lambda i: len(data[i][0].split()))
    x1, y_in1, _ = ns.make_batch(data, [0])
    x2, y_in2, _ = ns.make_batch(data, [0, long_one])
    with torch.no_grad():
        l1, c1 = model(x1, y_in1)
        l2, c2 = model(x2, y_in2)
    n_x, n_y = x1.shape[1], y_in1.shape[1]
    assert torch.allclose(l1[0], l2[0, :n_y], atol=1e-5)
    assert torch.allclose(c1[0], c2[0, ..., :n_y, :n_x], atol=1e-6)
    assert c2[0, ..., n_x:].abs().max().item() == 0.0


def test_a_word_never_sees_the_words_after_it(ns):
    torch.manual_seed(1)
    model = ns.TransformerTranslator().to(ns.device).eval()
    x, y_in, _ = ns.make_batch(ns.test_data, [3])
    changed = y_in.clone()
    changed[0, 5:] = ns.tgt_index["chat"]
    with torch.no_grad():
        memory, pad = model.encode(x)
        a, b = model.decode(y_in, memory, pad), model.decode(changed, memory, pad)
    assert torch.allclose(a[0, :5], b[0, :5], atol=1e-6) and not torch.allclose(a[0, 5:], b[0, 5:], atol=1e-3)


def test_greedy_decoding_equals_decoding_the_sentence_at_once(ns):
    torch.manual_seed(2)
    model = ns.TransformerTranslator().to(ns.device).eval()
    x = ns.pad_batch([ns.source_ids(ns.test_data[i][0]) for i in (4, 5)])
    ids, scores = model.greedy(x, max_len=9)
    y = torch.cat([torch.full_like(ids[:, :1], ns.SOS), ids[:, :-1]], dim=1)
    with torch.no_grad():
        memory, pad = model.encode(x)
        whole = model.decode(y, memory, pad)
    assert torch.allclose(whole, scores, atol=1e-5) and torch.equal(whole.argmax(-1), ids)


@pytest.mark.parametrize("shift", [0, 1])
def test_head_links_read_each_heads_argmax(ns, shift):
    """shift=0: the row of decoder position t aligns French word t; shift=1: it aligns French word t - 1,
    the word fed in at t (rows 1 to n_fr, the <eos> step's row included)."""
    torch.manual_seed(3 + shift)
    model = ns.TransformerTranslator().to(ns.device).eval()
    data = ns.test_data[:4]
    links = ns.head_links(model, data, shift=shift)
    x, y_in, _ = ns.make_batch(data, [2])
    with torch.no_grad():
        _, cross = model(x, y_in)
    n_fr = len(data[2][1].split())
    for layer in range(ns.N_LAYERS):
        for head in range(ns.N_HEADS):
            expected = {(int(cross[0, layer, head, t].argmax()), t - shift) for t in range(shift, n_fr + shift)}
            assert links[layer][head][2] == expected


# ------------------------------------------------------------------ copies of other chapters


def _definitions(sources):
    """name -> ast.dump of every top-level function, class and assignment in the given sources."""
    found = {}
    for source in sources:
        lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        for node in ast.parse("\n".join(lines)).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found[node.name] = ast.dump(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            found.setdefault(name.id, ast.dump(node))
    return found


def _notebook_sources(stem):
    nb = json.loads(notebook_path(stem).read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("stem, names", [
    ("05_self_and_multihead_attention", ["softmax", "self_attention", "MultiHeadAttention", "_check_tensor", "_check_mask"]),
    ("06_toy_translator", ["NOUNS", "SUBJECTS", "ADJECTIVES", "ARTICLES", "VERBS", "PREPOSITIONS", "random_noun_phrase",
                           "random_english", "english_to_french", "generate_pair", "sure_and_possible_links",
                           "MAX_WORDS", "T2_ENGLISH", "build_corpus", "alignment_error_rate", "PAD", "SPECIALS",
                           "src_words", "tgt_words", "source_ids", "pad_batch", "target_ids", "length_batches",
                           "make_batch", "loss_fn", "N_TRAIN"]),
])
def test_the_code_taken_from_earlier_chapters_is_theirs(stem, names):
    theirs, ours = _definitions(_notebook_sources(stem)), _definitions(_notebook_sources(STEM))
    for name in names:
        assert name in theirs and name in ours, f"{name} is missing from {stem} or from {STEM}"
        assert ours[name] == theirs[name], f"{STEM}'s {name} differs from chapter {stem[:2]}'s"


def test_the_corpus_is_chapter_6s(ns):
    data = ns.train_data, ns.test_data, ns.valid_data
    assert [len(d) for d in data] == [4000, 400, 400]
    assert data[1][0][0] == "the black cat sat on the mat"
    assert not {p[0] for p in data[0]} & {p[0] for p in data[1] + data[2]}


# ------------------------------------------------------------------ the notebook's cells


def test_training_cells_are_skipped_and_nothing_untagged_needs_them():
    nb = json.loads(notebook_path(STEM).read_text(encoding="utf-8"))
    trained = {"transformer", "losses_transformer", "seconds_transformer", "hypotheses", "aer_heads", "cross_t2",
               "aer_shifted", "hits_t2"}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tags = cell.get("metadata", {}).get("tags", [])
        uses = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)} & trained
        if "train_transformer(" in source.split("def train_transformer", 1)[0] or uses:
            assert "skip-in-tests" in tags, f"a cell that trains or uses the trained model is not tagged skip-in-tests:\n{source[:200]}"


def test_the_bands_in_the_notebook_are_the_seed_studys():
    """The notebook cannot read tools/seed_studies/ch07_transformer.txt, so its in-cell bands copy the
    study's spreads: each band must contain the study's min..max."""
    from tools.registry import ROOT

    text = (ROOT / "tools" / "seed_studies" / "ch07_transformer.txt").read_text(encoding="utf-8")
    text = text.split("== second budget", 1)[0]                     # the chapter's budget, 6 epochs
    study = {m[0]: (float(m[1]), float(m[2])) for m in
             re.findall(r"^(transformer exact match|transformer last training loss): mean [\d.]+, sd [\d.]+, min ([\d.]+), max ([\d.]+)",
                        text, re.M)}
    source = "\n".join(_notebook_sources(STEM))
    low, high = (float(v) for v in re.search(r"(0\.\d+) <= exact_match <= (\d\.\d+)", source).groups())
    loss_high = float(re.search(r"losses_transformer\[-1\] < ([\d.]+)", source).group(1))
    assert low <= study["transformer exact match"][0] and study["transformer exact match"][1] <= high
    assert study["transformer last training loss"][1] < loss_high


def test_the_diagonal_baseline_links_by_position_only(ns):
    from fractions import Fraction

    data = ns.test_data[:50]
    for (en, fr, _), got in zip(data, ns.diagonal_links(data)):
        n_en, n_fr = len(en.split()), len(fr.split())
        expected = set()
        for t in range(n_fr):
            exact = Fraction(t * (n_en - 1), max(n_fr - 1, 1))
            expected.add((math.floor(exact + Fraction(1, 2)), t))       # round half up
        assert got == expected
    # two sentences written out: 3 English words and 3 French ones; 2 English and 3 French (1/2 rounds up)
    assert ns.diagonal_links([("a b c", "x y z", None)]) == [{(0, 0), (1, 1), (2, 2)}]
    assert ns.diagonal_links([("a b", "x y z", None)]) == [{(0, 0), (1, 1), (1, 2)}]


# ------------------------------------------------------------------ what the figures and the text state


def _cell(source_start):
    nb = json.loads(notebook_path(STEM).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith(source_start):
            return cell
    raise KeyError(source_start)


def _figure_text(name):
    nb = json.loads(notebook_path(STEM).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("mystnb", {})
        if meta.get("figure", {}).get("name") == name:
            return meta["figure"]["caption"], meta["image"]["alt"]
    raise KeyError(name)


def _stored_text(cell):
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")


NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


def test_the_dot_product_figure_states_the_plotted_numbers():
    """Every number of the caption and the alt text of fig-pe-dot-products is one of the plotted
    quantities, computed here from eq. 7.1 (not from the notebook)."""
    d_model = 64
    omega = [10000.0 ** (-2 * i / d_model) for i in range(d_model // 2)]
    dot = {k: sum(math.cos(k * w) for w in omega) for k in range(-100, 100)}   # PE[100 + k] . PE[100]
    far = [v for k, v in dot.items() if abs(k) >= 11]
    near_mean = sum(dot[k] + dot[-k] for k in range(11, 31)) / 40       # the level of the ripples, both sides
    far_mean = sum(dot[k] + dot[-k] for k in range(80, 100)) / 40
    plotted = {
        "32": dot[0], "21.05": dot[10], "10.77": min(far), "21.33": max(far), "19.0": near_mean, "13.1": far_mean,
    }
    for text, value in plotted.items():
        assert f"{value:.{len(text.split('.')[1]) if '.' in text else 0}f}" == text
    assert dot[10] == pytest.approx(dot[-10], abs=1e-12)
    # the numbers that name what is plotted rather than a value of the curve
    axes = {"0", "10", "11", "30", "80", "100", "199", "-100", "99", "64", "2", "6"}
    caption, alt = _figure_text("fig-pe-dot-products")
    for kind, text in (("caption", caption), ("alt text", alt)):
        numbers = set(NUMBER.findall(text.replace("d_model / 2", "")))
        unexplained = numbers - set(plotted) - axes
        assert not unexplained, f"the {kind} states {sorted(unexplained)}, which this test does not compute"
        for needed in ("32", "21.05", "10.77", "21.33"):
            assert needed in numbers, f"the {kind} does not state {needed}"
        flat = " ".join(text.split())
        assert re.search(r"from (a mean of )?19\.0 over (the )?distances 11 to 30 to 13\.1 over (distances )?80 to 99", flat), \
            f"the {kind} does not say that the level of the ripples falls, from 19.0 (distances 11 to 30) to 13.1 (80 to 99)"


def test_the_ripple_is_the_fast_pairs():
    """The caption's attribution: the six fastest pairs carry nearly all of the step-to-step change."""
    d_model = 64
    omega = [10000.0 ** (-2 * i / d_model) for i in range(d_model // 2)]
    ks = range(11, 100)
    fast = [sum(math.cos(k * w) for w in omega[:6]) for k in ks]
    total = [sum(math.cos(k * w) for w in omega) for k in ks]
    steps = lambda y: sum((b - a) ** 2 for a, b in zip(y, y[1:]))
    assert steps(fast) / steps(total) > 0.99
    caption, _ = _figure_text("fig-pe-dot-products")
    assert "six fastest pairs" in caption


def test_the_heat_map_caption_states_the_stored_results():
    """The cross-attention figure's caption against the stored outputs of the run that drew it: the
    best head and its AER (the AER cell), and the per-head counts for the sentence (the cell after)."""
    caption, alt = _figure_text("fig-transformer-cross-attention")
    table = _stored_text(_cell("aer_heads = head_aer_table("))
    aer = np.array([[float(v) for v in NUMBER.findall(row)] for row in table.splitlines()[1:] if row.strip()])
    assert aer.shape == (2, 4)
    layer, head = np.unravel_index(aer.argmin(), aer.shape)
    assert f"Layer {layer + 1}, head {head + 1}, the best head over the 400 held-out pairs (AER {aer.min():.3f})" in " ".join(caption.split())
    hits_text = _stored_text(_cell("sure_t2, possible_t2"))
    n_words = int(re.search(r"\(of (\d+)\)", hits_text).group(1))
    matrix = hits_text.split("per head (rows: layers, columns: heads):", 1)[1].split("]]", 1)[0]
    hits = np.array([[int(v) for v in re.findall(r"\d+", row)] for row in matrix.splitlines() if row.strip()])
    others = np.delete(hits.ravel(), layer * hits.shape[1] + head)
    stated = " ".join(caption.split())
    assert hits[layer, head] == n_words and f"for all {n_words} French words" in stated
    assert f"for {others.min()} to {others.max()} of them" in stated
    assert "le chat noir était assis sur le tapis" in " ".join(alt.split())


def test_the_studys_numbers_are_the_chapters():
    """The head-analysis text and band against tools/seed_studies/ch07_heads_and_time.txt."""
    from tools.registry import ROOT

    study = (ROOT / "tools" / "seed_studies" / "ch07_heads_and_time.txt").read_text(encoding="utf-8")
    text = (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")
    get = lambda label: tuple(float(v) for v in re.search(
        rf"^{re.escape(label)}: mean [\d.]+, sd [\d.]+, min ([\d.]+), max ([\d.]+)", study, re.M).groups())
    shifted = get("best head, French word t - 1")
    assert f"{shifted[0]:.3f} to {shifted[1]:.3f}" in text
    diagonal = float(re.search(r"diagonal alignment \(positions only\): AER ([\d.]+)", study).group(1))
    assert f"scores {diagonal:.3f}" in text
    ratio = get("ratio GRU / Transformer per pair of epochs")
    assert f"{ratio[0]:.2f} to {ratio[1]:.2f} times slower per epoch" in text
    source = "\n".join(_notebook_sources(STEM))
    band = float(re.search(r"assert aer_shifted.min\(\) > ([\d.]+)", source).group(1))
    assert band < shifted[0]


def _chapter_text():
    return (ROOT / "notebooks" / "md" / f"{STEM}.md").read_text(encoding="utf-8")


def test_the_running_time_is_a_whole_run_that_contains_its_training():
    """The Running time line states a measured whole run ("About N s ... (M s measured for a whole run"), N is M
    rounded, and the whole run is not shorter than the training cell of the stored run ("trained in S s")."""
    text = " ".join(_chapter_text().split())
    found = re.search(r"\*\*Running time\.\*\* About (\d+) s on a 2-core CPU \((\d+(?:\.\d+)?) s measured for a whole run, "
                      r"kernel start included, on an otherwise idle machine\)", text)
    assert found, "the Running time line does not have the form 'About N s on a 2-core CPU (M s measured for a whole run, ...'"
    about, measured = int(found.group(1)), float(found.group(2))
    assert abs(about - measured) <= max(1.0, 0.1 * measured), f"'About {about} s' is not {measured} s rounded"
    stored = _stored_text(_cell("print(\"mean training loss per epoch:\""))
    trained = float(re.search(r"trained in (\d+) s", stored).group(1))
    assert measured >= trained, (f"the whole run ({measured} s) cannot be shorter than its training cell, which printed "
                                 f"'trained in {trained:.0f} s'")


def _best_head_weights():
    """The stored run's printout of the best head: the English words and, per French word, its weights."""
    lines = _stored_text(_cell("sure_t2, possible_t2")).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("weights of layer"))
    english = re.search(r"\(columns: ([^)]*)\)", lines[start]).group(1).split()
    rows = [line.split() for line in lines[start + 1:] if line.startswith("  ")]
    return english, [(row[0], [float(v) for v in row[1:]]) for row in rows]


def test_the_heat_map_alt_text_states_the_stored_weights():
    """The alt text of fig-transformer-cross-attention against the weights that the stored run printed for the
    best head: each row's largest weight and its English word, the second weight of chat, and every weight of
    0.10 or more of the assis row, in order; and no number that the printout does not hold."""
    caption, alt = _figure_text("fig-transformer-cross-attention")
    alt = " ".join(alt.split())
    english, rows = _best_head_weights()
    assert [word for word, _ in rows] == "le chat noir était assis sur le tapis".split()
    assert english == "the black cat sat on the mat".split()
    top = {}
    for k, (word, weights) in enumerate(rows):
        best = max(range(len(weights)), key=weights.__getitem__)
        top[k] = (f"{weights[best]:.2f}", english[best])
    assert f"{top[0][0]} for the first le (on {top[0][1]})" in alt
    assert f"{top[5][0]} for sur, the second le and tapis" in alt and top[5] == ("0.97", "on")
    assert top[6] == (top[5][0], "the") and top[7] == (top[5][0], "mat")
    assert f"{top[3][0]} for était (on {top[3][1]})" in alt and f"{top[2][0]} for noir (on {top[2][1]})" in alt
    chat = sorted(zip(rows[1][1], english), reverse=True)
    assert f"{chat[0][0]:.2f} for chat (on {chat[0][1]}, with {chat[1][0]:.2f} on {chat[1][1]})" in alt
    assis = [(w, e) for w, e in sorted(zip(rows[4][1], english), reverse=True) if w >= 0.10]
    listed = ", ".join(f"{w:.2f} on {e}" for w, e in assis[:-1]) + f" and {assis[-1][0]:.2f} on {assis[-1][1]}"
    assert f"The assis row is the most spread, with {listed}." in alt, f"the alt text should give the assis row as: {listed}"
    assert max(rows[4][1]) == min(max(w) for _, w in rows), "the assis row is not the most spread one"
    printed = {f"{w:.2f}" for _, weights in rows for w in weights}
    stated = {v for v in NUMBER.findall(alt) if "." in v}
    assert stated <= printed, f"the alt text states {sorted(stated - printed)}, which the stored weights do not hold"
    assert "neighbour" not in alt


def test_the_heads_that_look_at_the_noun_after_le_are_the_stored_runs():
    """The prose's 'layer 1, head 3, and layer 2, head 1, put the largest weight of both le rows on ... cat and
    mat' against the stored run's printout of each head's largest weight per French word."""
    stored = _stored_text(_cell("sure_t2, possible_t2"))
    tops = {(int(m[1]), int(m[2])): m[3].split() for m in re.finditer(r"^  layer (\d), head (\d): (.*)$", stored, re.M)}
    assert len(tops) == 8
    on_nouns = sorted(key for key, words in tops.items() if (words[0], words[6]) == ("cat", "mat"))
    named = [(int(m[1]), int(m[2])) for m in re.finditer(r"layer (\d), head (\d),? (?:and )?", _chapter_text().split(
        "In the heat maps below (seed 0, one sentence), ", 1)[1].split("put the largest weight of both", 1)[0])]
    assert named == on_nouns, f"the heads whose le rows look at cat and mat are {on_nouns}, the text names {named}"


def test_the_twelve_epoch_comparison_is_the_studys():
    """The text after the 12-epoch budget against the study's per-seed lines (tools/seed_studies/ch07_transformer.txt):
    the ratio of the training losses, and in how many seeds the Transformer translates fewer of the longest sentences."""
    study = (ROOT / "tools" / "seed_studies" / "ch07_transformer.txt").read_text(encoding="utf-8")
    twelve = study.split("== second budget", 1)[1]
    per_seed = {}
    for m in re.finditer(r"^seed (\d): (Transformer|GRU with attention): exact [\d.]+%, bins (\[[^\]]*\]), last loss ([\d.]+)",
                         twelve, re.M):
        per_seed.setdefault(m[2][0], {})[int(m[1])] = (json.loads(m[3])[-1], float(m[4]))
    t, g = per_seed["T"], per_seed["G"]
    assert sorted(t) == sorted(g) == [0, 1, 2, 3, 4]
    ratios = [t[s][1] / g[s][1] for s in t]
    fewer = [s for s in t if t[s][0] < g[s][0]]
    level = [s for s in t if t[s][0] == g[s][0]]
    text = " ".join(_chapter_text().split())
    assert f"the Transformer's is {min(ratios):.2f} to {max(ratios):.2f} times the GRU's, seed by seed" in text
    assert level == [1] and f"in {len(fewer)} of the 5 seeds (as many in seed {level[0]})" in text
    assert "not under-fitting" not in text and "tuned for the GRU" not in text


def test_the_encodings_mean_square_is_one_half_per_coordinate_on_average():
    """'the squares of an encoding's coordinates average exactly 1/2' (not a variance of 1/2 for each coordinate),
    computed here for d_model = 64, and the stored printout of the same."""
    d_model = 64
    for pos in range(0, 80, 7):
        squares = [math.sin(pos / 10000 ** (2 * i / d_model)) ** 2 + math.cos(pos / 10000 ** (2 * i / d_model)) ** 2
                   for i in range(d_model // 2)]
        assert sum(squares) / d_model == pytest.approx(0.5, abs=1e-12)
    slowest = [math.cos(pos / 10000 ** ((d_model - 2) / d_model)) ** 2 for pos in range(38)]
    assert sum(slowest) / 38 > 0.99                                    # one coordinate: nowhere near 1/2
    stored = _stored_text(_cell("word_ids = torch.arange(3"))
    assert "mean square of the coordinates of one encoding: 0.5000 to 0.5000" in stored
    text = " ".join(_chapter_text().split())
    assert "average exactly 1/2" in text and "against 1/2 for a coordinate" not in text
    assert "N(0, 1) like PE" not in text


def test_the_batches_and_the_learning_rate_in_the_text():
    """4,000 pairs in batches of 64 are 62 batches of 64 and one of 32 (63 per epoch, 378 steps in 6 epochs), and
    chapter 6's schedule, a warm-up times a decay that both start at step 0, peaks below 0.005: at 0.0042, at the
    end of the first epoch. Computed here, then looked for in the text and in the stored printout."""
    n_train, batch, epochs, base = 4000, 64, 6, 0.005
    full, rest = divmod(n_train, batch)
    per_epoch = full + (rest > 0)
    steps = epochs * per_epoch
    rates = [base * min(1.0, (k + 1) / per_epoch) * max(0.02, 1 - k / steps) for k in range(steps)]
    peak = max(rates)
    text = " ".join(_chapter_text().split())
    assert (full, rest, per_epoch, steps) == (62, 32, 63, 378)
    assert f"{steps} steps ({epochs} epochs of {per_epoch} batches: {full} of {batch} pairs and one of {rest})" in text
    assert f"the rate peaks at {peak:.4f} at the end of the first epoch" in text and rates.index(peak) + 1 == per_epoch
    assert "warm-up over the first epoch to 0.005" not in text
    stored = _stored_text(_cell("batch_sizes = [len(idx)"))
    assert f"{per_epoch} batches per epoch ({full} of {batch} pairs, then {rest}), {steps} steps" in stored
    assert f"at most {peak:.4f} (step {per_epoch}," in stored


def test_the_six_epoch_loss_ratio_is_the_studys():
    """'its training loss after 6 epochs is still 1.2 to 2.3 times the GRU's, seed by seed': the Transformer's last
    losses (ch07_transformer.txt, 6 epochs) over the GRU's of the same seeds (chapter 6's study, ch06_translator.txt)."""
    studies = ROOT / "tools" / "seed_studies"
    six = (studies / "ch07_transformer.txt").read_text(encoding="utf-8").split("== second budget", 1)[0]
    transformer = {int(m[1]): float(m[2]) for m in re.finditer(r"^seed (\d): Transformer: .*?last loss ([\d.]+)", six, re.M)}
    gru = {int(m[1]): float(m[2]) for m in re.finditer(r"^seed (\d): attention: .*?last loss ([\d.]+)",
                                                       (studies / "ch06_translator.txt").read_text(encoding="utf-8"), re.M)}
    assert sorted(transformer) == sorted(gru) == [0, 1, 2, 3, 4]
    ratios = [transformer[s] / gru[s] for s in transformer]
    text = " ".join(_chapter_text().split())
    assert f"its training loss after 6 epochs is still {min(ratios):.1f} to {max(ratios):.1f} times the GRU's, seed by seed" in text


def _range_text(low, high):
    """A spread as the comparison table writes it: '98.7 %–100.0 %', or '100.0 %' when both ends are equal."""
    return f"{100 * low:.1f} %" if f"{low:.3f}" == f"{high:.3f}" else f"{100 * low:.1f} %–{100 * high:.1f} %"


def test_the_comparison_table_is_the_two_studies():
    """The table 'at 6 epochs, 5 seeds': the GRU's column against chapter 6's study (ch06_translator.txt, its seeds
    0-4), the Transformer's against ch07_transformer.txt (6 epochs): each length bin's min-max and the last loss."""
    studies = ROOT / "tools" / "seed_studies"
    gru_text = (studies / "ch06_translator.txt").read_text(encoding="utf-8")
    six = (studies / "ch07_transformer.txt").read_text(encoding="utf-8").split("== second budget", 1)[0]
    spread = lambda text, label: tuple(float(v) for v in re.search(
        rf"^\s*{re.escape(label)}: mean [\d.]+, sd [\d.]+, min ([\d.]+), max ([\d.]+)", text, re.M).groups())
    gru_losses = [float(m) for m in re.findall(r"^seed \d: attention: .*?last loss ([\d.]+)", gru_text, re.M)]
    t_losses = [float(m) for m in re.findall(r"^seed \d: Transformer: .*?last loss ([\d.]+)", six, re.M)]
    assert len(gru_losses) == len(t_losses) == 5
    text = " ".join(_chapter_text().split())
    for low, high in [(3, 8), (9, 14), (15, 20), (21, 26), (27, 34)]:
        gru = spread(gru_text, f"{low}-{high} words: attention")
        transformer = spread(six.split("\ngru, 3 seeds", 1)[0], f"{low}-{high} words: transformer")
        row = f"| … of the {low}-{high}-word sentences | {_range_text(*gru)} | {_range_text(*transformer)} |"
        assert row in text, f"the table should have the row {row}"
    loss_row = (f"| last training loss | {min(gru_losses):.4f}–{max(gru_losses):.4f} | "
                f"{min(t_losses):.4f}–{max(t_losses):.4f} |")
    assert loss_row in text, f"the table should have the row {loss_row}"


def test_chapter_6s_attention_against_the_heads_is_the_studies():
    """'Chapter 6's single attention (0.003 to 0.132) aligned better than the median head in every seed and better
    than the best head in 4 of the 5 (in seed 1, 0.132 against the best head's 0.114)', and '4 or 5 of the 8 heads
    beat the diagonal in each seed', from the per-seed lines of ch06_translator.txt and ch07_heads_and_time.txt."""
    studies = ROOT / "tools" / "seed_studies"
    gru = {int(m[1]): float(m[2]) for m in re.finditer(r"^seed (\d): attention: .*?sure\+possible ([\d.]+)",
                                                       (studies / "ch06_translator.txt").read_text(encoding="utf-8"), re.M)}
    heads_text = (studies / "ch07_heads_and_time.txt").read_text(encoding="utf-8")
    heads = {int(m[1]): sorted(sum(json.loads(m[2]), [])) for m in
             re.finditer(r"^seed (\d): exact [\d.]+%; AER per head, French word t: (\[\[.*?\]\]);", heads_text, re.M)}
    diagonal = float(re.search(r"diagonal alignment \(positions only\): AER ([\d.]+)", heads_text).group(1))
    assert sorted(gru) == sorted(heads) == [0, 1, 2, 3, 4]
    text = " ".join(_chapter_text().split())
    assert f"Chapter 6's single attention ({min(gru.values()):.3f} to {max(gru.values()):.3f})" in text
    assert all(gru[s] < float(np.median(heads[s])) for s in gru)
    worse = [s for s in gru if gru[s] >= heads[s][0]]
    assert len(worse) == 1 and (f"better than the best head in {5 - len(worse)} of the 5 (in seed {worse[0]}, "
                                f"{gru[worse[0]]:.3f} against the best head's {heads[worse[0]][0]:.3f})") in text
    below = sorted({sum(v < diagonal for v in heads[s]) for s in heads})
    assert below == [4, 5] and "4 or 5 of the 8 heads beat the diagonal in each seed" in text
    second = [heads[s][1] for s in heads if s != 2]
    assert f"the next best {min(second):.2f} to {max(second):.2f}" in text


def test_the_differences_table_states_no_training_time_the_stored_run_contradicts():
    """The table of differences said the chapter 'must train in about a minute' while the stored run printed
    'trained in 137 s': a training time stated there must be within half of the stored one either way."""
    text = " ".join(_chapter_text().split())
    stored = _stored_text(_cell("print(\"mean training loss per epoch:\""))
    trained = float(re.search(r"trained in (\d+) s", stored).group(1))
    for said in re.findall(r"must train in about (a minute|\d+ s)", text):
        seconds = 60.0 if said == "a minute" else float(said.split()[0])
        assert trained / 1.5 <= seconds <= trained * 1.5, f"the text says {said!r}, the stored run trained in {trained:.0f} s"
