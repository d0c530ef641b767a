"""Chapter 6: the corpus generator, the alignment error rate, masking, and the translator's interface.

The notebook's definitions are loaded without its training cells (tagged skip-in-tests), so these
tests check the untrained model's plumbing and the data, never the trained numbers (nbval does that).
"""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from nbdefs import load_notebook


@pytest.fixture(scope="module")
def ns():
    return load_notebook("06_toy_translator")


@pytest.fixture(scope="module")
def sample(ns):
    rng = random.Random(12345)
    return [ns.generate_pair(rng) for _ in range(1500)]


def _french_forms(ns):
    """Every French form each English word may become, built from the lexicon tables."""
    forms = {w: set(v.values()) for w, v in ns.ARTICLES.items()}
    forms.update({w: {fr} for w, (fr, g) in ns.NOUNS.items()})
    forms.update({w: set(v) for w, v in ns.ADJECTIVES.items()})
    forms.update({w: {aux, m, f} for w, (aux, m, f, _) in ns.VERBS.items()})
    forms.update({w: {fr} for w, fr in ns.PREPOSITIONS.items()})
    forms["and"] = {"et"}
    return forms


def test_alignments_are_consistent_with_the_words(ns, sample):
    forms = _french_forms(ns)
    for en, fr, links in sample:
        en_w, fr_w = en.split(), fr.split()
        assert sorted(t for _, t in links) == list(range(len(fr_w))), "every French word has exactly one link"
        assert {j for j, _ in links} == set(range(len(en_w))), "every English word is linked"
        for j, t in links:
            assert fr_w[t] in forms[en_w[j]], f"{en_w[j]!r} linked to {fr_w[t]!r} in {en!r}"


def test_adjective_and_noun_swap(ns, sample):
    adjectives, nouns = ns.ADJECTIVES, ns.NOUNS
    n_swaps = 0
    for en, fr, links in sample:
        en_w, to_fr = en.split(), dict(links)
        for j, w in enumerate(en_w):
            if w in adjectives:
                assert en_w[j + 1] in nouns
                assert to_fr[j] == to_fr[j + 1] + 1, f"adjective not right after its noun in {fr!r}"
                n_swaps += 1
    assert n_swaps > 100
    assert ns.english_to_french("the black cat sat")[0].startswith("le chat noir")


def test_one_english_verb_gives_two_french_words(ns, sample):
    verbs = ns.VERBS
    for en, fr, links in sample:
        en_w, fr_w = en.split(), fr.split()
        for j, w in enumerate(en_w):
            if w in verbs:
                targets = sorted(t for i, t in links if i == j)
                assert len(targets) == 2 and targets[1] == targets[0] + 1
                assert fr_w[targets[0]] == verbs[w][0]
    assert ns.english_to_french("the cat sat")[0] == "le chat était assis"


def test_gender_agreement(ns, sample):
    nouns, articles, adjectives, verbs = ns.NOUNS, ns.ARTICLES, ns.ADJECTIVES, ns.VERBS
    for en, fr, links in sample:
        en_w, fr_w, to_fr = en.split(), fr.split(), dict(links)
        subject_gender, clause_start = None, True
        for j, w in enumerate(en_w):
            if w in nouns:
                gender = nouns[w][1]
                k = j - 1 if en_w[j - 1] in articles else j - 2
                assert fr_w[to_fr[k]] == articles[en_w[k]][gender]
                if en_w[j - 1] in adjectives:
                    assert fr_w[to_fr[j - 1]] == adjectives[en_w[j - 1]][0 if gender == "m" else 1]
                if clause_start:
                    subject_gender, clause_start = gender, False
            elif w == "and":
                clause_start = True
            elif w in verbs:
                participle = fr_w[max(t for i, t in links if i == j)]
                assert participle == verbs[w][1 if subject_gender == "m" else 2]
    assert ns.english_to_french("the girl sat")[0] == "la fille était assise"
    assert ns.english_to_french("a black chair fell")[0] == "une chaise noire est tombée"


def test_lengths_range_from_3_to_over_30(ns, sample):
    lengths = [len(en.split()) for en, fr, links in sample]
    assert min(lengths) == 3 and max(lengths) >= 30
    held_out = [len(en.split()) for en, fr in ns.test_pairs]
    assert min(held_out) <= 5 and max(held_out) >= 30 and max(held_out) <= ns.MAX_WORDS


def test_test_pairs_and_t2(ns):
    pairs = ns.test_pairs
    assert len(pairs) >= 200
    assert all(isinstance(en, str) and isinstance(fr, str) for en, fr in pairs)
    assert ("the black cat sat on the mat", "le chat noir était assis sur le tapis") in pairs
    train = {en for en, fr, links in ns.train_data}
    assert not train & {en for en, fr in pairs}, "held-out pairs must not be in the training data"


def test_aer_hand_computed(ns):
    aer = ns.alignment_error_rate
    sure = [{(0, 0), (1, 2), (2, 1)}]
    predicted = [{(0, 0), (2, 1), (2, 2)}]
    assert aer(predicted, sure) == pytest.approx(1 - 4 / 6)
    assert aer(predicted, sure, [sure[0] | {(2, 2)}]) == pytest.approx(1 - 5 / 6)
    assert aer(sure, sure) == pytest.approx(0.0)
    assert aer([{(1, 1)}], [{(0, 0)}]) == pytest.approx(1.0)
    # counts are summed over the corpus, not averaged per sentence: (1 + 1 + 2 + 2) / (1 + 1 + 2 + 4)
    assert aer([{(0, 0)}, {(0, 0), (1, 1)}], [{(0, 0)}, {(0, 0), (1, 1), (2, 2), (3, 3)}]) == pytest.approx(1 - 6 / 8)
    with pytest.raises(ValueError):
        aer([set()], [set(), set()])
    with pytest.raises(TypeError):
        aer({(0, 0)}, [{(0, 0)}])


@pytest.mark.parametrize("attention", [True, False])
def test_padded_batch_equals_unpadded(ns, attention):
    torch.manual_seed(3)
    model = ns.Translator(attention=attention).eval()
    data = ns.test_data[:6]
    n_padded = 0
    with torch.no_grad():
        x, y_in, y = ns.make_batch(data, list(range(len(data))))
        logits, alpha = model(x, y_in)
        for b in range(len(data)):
            xa, ya_in, ya = ns.make_batch(data, [b])
            la, aa = model(xa, ya_in)
            n_x, n_y = xa.shape[1], ya.shape[1]
            assert torch.allclose(la[0], logits[b, :n_y], atol=1e-5)
            assert torch.allclose(aa[0], alpha[b, :n_y, :n_x], atol=1e-6)
            if n_x < x.shape[1]:                       # this sentence is padded in the batch
                n_padded += 1
                assert alpha[b, :, n_x:].abs().max().item() == 0.0, "weight on a padding position"
        assert n_padded >= 3, "the batch should pad most of its sentences, or the test checks little"
        # padding is masked in the loss: the batch loss equals the token-weighted mean of the single ones
        flat = ns.loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        token_losses = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
        keep = y.reshape(-1) != ns.PAD
        assert torch.allclose(flat, token_losses[keep].mean(), atol=1e-6)


def test_pad_is_not_eos(ns):
    assert len({ns.PAD, ns.SOS, ns.EOS}) == 3
    assert ns.loss_fn.ignore_index == ns.PAD


def test_translate_interface_and_unknown_word(ns):
    words, attention = ns.translate("the black cat sat on the mat")
    assert isinstance(words, list) and all(isinstance(w, str) for w in words)
    assert isinstance(attention, np.ndarray) and attention.shape == (len(words), 7)
    with pytest.raises(ValueError, match="sofa"):
        ns.translate("the black cat sat on the sofa")
    with pytest.raises(TypeError):
        ns.translate(["the", "cat", "sat"])
    with pytest.raises(ValueError, match="hamster"):
        ns.translate_note("the hamster sat")


def test_note_recipe_as_written(ns):
    assert ns.note_src_vocab["<SOS>"] == 0 and ns.note_src_vocab["<EOS>"] == 1
    assert ns.X_note.shape == (8, 4) and (ns.Y_note[:, -1] == 1).all()
    loss = torch.nn.CrossEntropyLoss(ignore_index=ns.NOTE_EOS)
    _, _, history = ns.train_note_model(loss, epochs=3)
    assert np.isnan(history[:, 3]).all(), "the <EOS> column is entirely ignored: its mean loss is nan"
    assert np.isfinite(history[:, :3]).all()
    _, _, fixed = ns.train_note_model(torch.nn.CrossEntropyLoss(), epochs=3)
    assert np.isfinite(fixed).all()


@pytest.mark.parametrize("fragment", ["the black", "the black white cat sat", "sat", "the cat and sat", "cat sat", "a"])
def test_english_to_french_rejects_fragments_with_one_clear_sentence(ns, fragment):
    with pytest.raises(ValueError) as error:
        ns.english_to_french(fragment)
    message = str(error.value)
    assert message.count(". ") == 0 and message.endswith("."), f"not one sentence: {message!r}"
    assert "grammar" in message


def test_english_to_french_rejects_unknown_words_and_non_strings(ns):
    with pytest.raises(ValueError, match="sofa"):
        ns.english_to_french("the cat sat on the sofa")
    with pytest.raises(ValueError, match="empty"):
        ns.english_to_french("   ")
    with pytest.raises(TypeError):
        ns.english_to_french(["the", "cat", "sat"])


def test_sure_and_possible_links(ns, sample):
    auxiliaries = {aux for aux, m, f, obj in ns.VERBS.values()}
    for en, fr, links in sample[:400]:
        sure, possible = ns.sure_and_possible_links(en)
        en_w, fr_w = en.split(), fr.split()
        assert sure <= possible
        # the sure links are the transducer's links of every French word that is not an auxiliary
        assert sure == {(j, t) for j, t in links if fr_w[t] not in auxiliaries}
        # each auxiliary: possible links to its verb and to the noun of its clause's subject, no sure link
        clause_start = [0] + [k + 1 for k, w in enumerate(en_w) if w == "and"]
        for j, t in links:
            if fr_w[t] in auxiliaries:
                start = max(k for k in clause_start if k <= j)
                subject_noun = next(k for k in range(start, j) if en_w[k] in ns.NOUNS)
                assert {(j2, t2) for j2, t2 in possible if t2 == t} == {(j, t), (subject_noun, t)}
        assert possible - sure <= {(j, t) for j in range(len(en_w)) for t in range(len(fr_w)) if fr_w[t] in auxiliaries}
    sure, possible = ns.sure_and_possible_links("the black cat sat on the mat")
    assert (3, 3) not in sure and {(3, 3), (2, 3)} <= possible and (3, 4) in sure


def test_source_padding_mask_is_true_where_blocked(ns):
    """Decoder.step takes src_pad_mask with True = blocked: a blocked real word gets weight exactly 0."""
    torch.manual_seed(0)
    model = ns.Translator(attention=True).eval()
    x, y_in, y = ns.make_batch(ns.test_data[:2], [0, 1])
    with torch.no_grad():
        H, summary = model.encoder(x)
        s, h_tilde, K = model.decoder.start(H, summary)
        mask = x == ns.PAD
        mask[:, 1] = True                                   # block one real word as well
        _, _, alpha = model.decoder.step(y_in[:, 0], s, h_tilde, H, K, summary, mask)
    assert (alpha[mask] == 0).all() and (alpha[~mask] > 0).all()
    assert torch.allclose(alpha.sum(dim=1), torch.ones(2))


def test_validation_loss_is_the_token_mean_cross_entropy(ns):
    torch.manual_seed(1)
    model = ns.Translator(attention=True).eval()
    data = ns.valid_data[:20]
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(len(data)):
            x, y_in, y = ns.make_batch(data, [i])
            logits, _ = model(x, y_in)
            log_p = torch.log_softmax(logits[0], dim=-1)
            total += -log_p[torch.arange(y.shape[1]), y[0]].sum().item()
            count += y.shape[1]
    assert ns.validation_loss(model, data) == pytest.approx(total / count, rel=1e-5)


def test_corpus_splits_are_disjoint(ns):
    train = {en for en, fr, links in ns.train_data}
    valid = {en for en, fr, links in ns.valid_data}
    test = {en for en, fr, links in ns.test_data}
    assert len(valid) == len(ns.valid_data) >= 200
    assert not (train & valid) and not (test & valid) and not (train & test)
