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


# ---------------------------------------------------------------- what the text states

from fractions import Fraction  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "tools" / "seed_studies"


def chapter_text():
    """The chapter's text copy (notebooks/md), on one line."""
    return " ".join((ROOT / "notebooks" / "md" / "06_toy_translator.md").read_text(encoding="utf-8").split())


def _stored_output(source_part):
    cells = json.loads((ROOT / "notebooks" / "06_toy_translator.ipynb").read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] == "code" and source_part in "".join(cell["source"]):
            return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    raise KeyError(source_part)


def _grammar_lengths():
    """The exact distribution of English sentence lengths, {length: Fraction}, from the generator's rules:
    1, 1, 2, 2, 3 or 4 clauses joined by "and"; a clause is a subject noun phrase, the verb, an object
    noun phrase for a transitive verb, and 0, 0, 1, 1 or 2 prepositional phrases; a noun phrase is an
    article, an adjective with probability 1/2, and a noun. Enumerated clause by clause, in fractions."""
    def add(p, q):
        out = {}
        for a, pa in p.items():
            for b, pb in q.items():
                out[a + b] = out.get(a + b, 0) + pa * pb
        return out
    half = Fraction(1, 2)
    noun_phrase = {2: half, 3: half}
    clause = {}
    for transitive in (False, True):
        p_verb = Fraction(sum(v[3] == transitive for v in VERBS_TABLE), len(VERBS_TABLE))
        head = add(noun_phrase, {1: Fraction(1)})
        if transitive:
            head = add(head, noun_phrase)
        for n_phrases in [0, 0, 1, 1, 2]:
            part = head
            for _ in range(n_phrases):
                part = add(part, add({1: Fraction(1)}, noun_phrase))
            for n, p in part.items():
                clause[n] = clause.get(n, 0) + p_verb * p / 5
    sentence = {}
    for n_clauses in [1, 1, 2, 2, 3, 4]:
        total = clause
        for _ in range(n_clauses - 1):
            total = add(add(total, {1: Fraction(1)}), clause)
        for n, p in total.items():
            sentence[n] = sentence.get(n, 0) + p / 6
    return sentence


VERBS_TABLE = []


def grammar_claims_problems(text, ns):
    """Problems with the prose's range of sentence lengths and the share that MAX_WORDS drops."""
    VERBS_TABLE[:] = list(ns.VERBS.values())
    lengths = _grammar_lengths()
    assert sum(lengths.values()) == 1
    problems = []
    stated = re.search(r"(?:the grammar gives sentences of|lengths run from) (\d+) to (\d+) English words", text)
    if not stated or (int(stated[1]), int(stated[2])) != (min(lengths), max(lengths)):
        problems.append(f"the grammar gives {min(lengths)} to {max(lengths)} words; the text says "
                        f"{stated[0] if stated else 'no such range'}")
    dropped = sum(p for n, p in lengths.items() if n > ns.MAX_WORDS)
    share = re.search(r"at most (\d+) words \(`MAX_WORDS` below\), which drops ([\d.]+) %", text)
    if not share or int(share[1]) != ns.MAX_WORDS or float(share[2]) != round(100 * float(dropped), 2):
        problems.append(f"MAX_WORDS = {ns.MAX_WORDS} drops {float(dropped):.2%} of the drawn sentences; the text says "
                        f"{share[0] if share else 'nothing about it'}")
    return problems


def test_the_grammar_length_range_and_the_share_dropped_are_those_the_text_states(ns):
    VERBS_TABLE[:] = list(ns.VERBS.values())
    lengths = _grammar_lengths()
    # the enumeration describes the generator: its mean length and its range hold on 20,000 draws
    rng = random.Random(2024)
    drawn = np.array([len(ns.random_english(rng).split()) for _ in range(20_000)])
    mean = float(sum(n * p for n, p in lengths.items()))
    sd = float(sum((n - mean) ** 2 * p for n, p in lengths.items())) ** 0.5
    assert abs(drawn.mean() - mean) < 4 * sd / len(drawn) ** 0.5, (drawn.mean(), mean)
    assert drawn.min() == min(lengths) and drawn.max() <= max(lengths)
    assert not grammar_claims_problems(chapter_text(), ns)


def _box(text, title):
    match = re.search(r"```\{admonition\} " + re.escape(title) + r"(.*?)```", text)
    assert match, f"no box titled {title!r}"
    return match[1]


def _counts(line):
    """"'le' attends most to '<EOS>' in 5/8, 'the' in 2/8" -> {'<EOS>': 5, 'the': 2}."""
    return {w: int(c) for w, c in re.findall(r"'([^']+)' in (\d+)/\d+", line.split("attends most to", 1)[1])}


def t1_attention_problems(text):
    """The T1 attention box against the chapter's stored counts (8 seeds) and the seed study (20 seeds)."""
    box = _box(text, 'T1 — error: where "le" looks')
    stored = _stored_output("note_argmax = {")
    study = (STUDIES / "ch06_note_recipe.txt").read_text(encoding="utf-8")
    problems = []
    stated = re.search(r'with the note\'s recipe as written, "le" attends most to the final `<EOS>` position in (\d+) of '
                       r'(\d+) seeds and to "the" in (\d+), "chat" to "cat" in (\d+) of \d+; with the fixed recipe, '
                       r'"le" → `<EOS>` in (\d+) of \d+ and "the" in (\d+), "chat" → "cat" in (\d+) of \d+', box)
    if not stated:
        return ["the box does not give the counts of both recipes over the chapter's seeds"]
    for recipe, (le_eos, le_the, chat_cat) in (("as written", stated.group(1, 3, 4)), ("fixed", stated.group(5, 6, 7))):
        le = _counts(re.search(rf"^{recipe}: 'le' attends most to .*$", stored, re.M)[0])
        chat = _counts(re.search(rf"^{recipe}: 'chat' attends most to .*$", stored, re.M)[0])
        if (le.get("<EOS>", 0), le.get("the", 0), chat.get("cat", 0)) != (int(le_eos), int(le_the), int(chat_cat)):
            problems.append(f"{recipe}: the box says {le_eos}, {le_the}, {chat_cat}; the chapter printed {le}, {chat}")
    studied = re.search(r'finds "le" → `<EOS>` in (\d+) of 20 and "the" in (\d+) with the note\'s recipe, (\d+) and (\d+) '
                        r'with the fixed one; "chat" → "cat" in (\d+) and (\d+) of 20', box)
    if not studied:
        return problems + ["the box does not give the study's counts for both recipes"]
    for recipe, (le_eos, le_the, chat_cat) in (("as written", studied.group(1, 2, 5)), ("fixed", studied.group(3, 4, 6))):
        le = _counts(re.search(rf"^{recipe}: 'le' attends most to:? .*$", study, re.M)[0])
        chat = _counts(re.search(rf"^{recipe}: 'chat' attends most to:? .*$", study, re.M)[0])
        if (le.get("<EOS>", 0), le.get("the", 0), chat.get("cat", 0)) != (int(le_eos), int(le_the), int(chat_cat)):
            problems.append(f"study, {recipe}: the box says {le_eos}, {le_the}, {chat_cat}; the study printed {le}, {chat}")
    return problems


def test_the_t1_attention_box_gives_the_counts_of_both_recipes():
    assert not t1_attention_problems(chapter_text())


def _study_seeds():
    """Per seed of ch06_translator.txt: the attention model's exact match and its accuracy per length bin."""
    study = (STUDIES / "ch06_translator.txt").read_text(encoding="utf-8")
    return {int(seed): (float(exact) / 100, [float(v) for v in bins.split(",")]) for seed, exact, bins in
            re.findall(r"^seed (\d+): attention: exact ([\d.]+)%, bins \[([^\]]+)\]", study, re.M)}


def mistakes_problems(text, ns):
    """Where the attention model's mistakes lie, over the study's seeds, against the prose."""
    lengths = np.array([len(en.split()) for en, fr, links in ns.test_data])
    bins = [(3, 8), (9, 14), (15, 20), (21, 26), (27, 34)]
    sizes = [int(((lengths >= lo) & (lengths <= hi)).sum()) for lo, hi in bins]
    wrong = {}
    for seed, (exact, accuracy) in _study_seeds().items():
        per_bin = [round(n * (1 - a)) for n, a in zip(sizes, accuracy)]
        assert sum(per_bin) == round(len(lengths) * (1 - exact)), f"seed {seed}: bins and exact match disagree"
        wrong[seed] = (per_bin[-1], sum(per_bin))
    longest, total = sum(w for w, n in wrong.values()), sum(n for w, n in wrong.values())
    problems = []
    stated = re.search(r"over the 5 seeds of the study, (\d+) of the (\d+) wrong translations \((\d+) %\) have 27 to 34 "
                       r"words, a length that (\d+) of the (\d+) test pairs have \((\d+) of (\d+) wrong in seed 0, (\d+) of "
                       r"(\d+), (\d+) of (\d+), (\d+) of (\d+) in seed 3, (\d+) of (\d+) in seed 4", text)
    expected = [longest, total, round(100 * longest / total), sizes[-1], len(lengths)]
    expected += [v for seed in sorted(wrong) for v in wrong[seed]]
    if not stated or [int(v) for v in stated.groups()] != expected:
        problems.append(f"the mistakes over seeds are {expected}; the text says {stated.groups() if stated else 'none'}")
    exact_longest = [1 - w / sizes[-1] for w, n in wrong.values()]          # counts, not the study's rounded shares
    low, high = min(exact_longest), max(exact_longest)
    for said in re.findall(r"27 to 34 words (?:the model|it) gets (\d+) % to (\d+) %", text):
        if (int(said[0]), int(said[1])) != (int(100 * low + 0.5), int(100 * high + 0.5)):
            problems.append(f"27 to 34 words: {low:.1%} to {high:.1%}, the text says {said}")
    summary = re.search(r"(\d+) % of its mistakes over the 5 seeds are on sentences of 27 words or more \(from (\d+) of "
                        r"(\d+) in one seed to (\d+) of (\d+) in another\)", text)
    fewest, most = min(wrong.values(), key=lambda w: w[0] / w[1]), max(wrong.values(), key=lambda w: w[0] / w[1])
    if not summary or [int(v) for v in summary.groups()] != [round(100 * longest / total), *fewest, *most]:
        problems.append("the summary's share of mistakes on the longest sentences differs from the study")
    return problems


def test_the_mistakes_on_the_longest_sentences_are_counted_over_seeds(ns):
    assert not mistakes_problems(chapter_text(), ns)


def aer_problems(text):
    """The AER ranges of the prose against ch06_translator.txt, the strict score first."""
    study = (STUDIES / "ch06_translator.txt").read_text(encoding="utf-8")
    per_seed = re.findall(r"AER all-sure ([\d.]+), sure-only ([\d.]+), sure\+possible ([\d.]+)", study)
    strict, sure_only, possible = (np.array([float(r[k]) for r in per_seed]) for k in range(3))
    assert len(strict) == 5
    paragraph = re.search(r"Over the 5 seeds of the study, the strict AER.*?seeds\.", text)
    if not paragraph:
        return ["no paragraph quoting the strict AER over the seeds first"]
    numbers = [float(v) for v in re.findall(r"\d\.\d{3}", paragraph[0])]
    expected = [strict.min(), strict.max(), strict.mean(), possible.min(), possible.max(), possible.mean(),
                sure_only.min(), sure_only.max()]
    problems = []
    if numbers != [round(v, 3) for v in expected]:
        problems.append(f"the AER paragraph says {numbers}, the study gives {[round(v, 3) for v in expected]}")
    worse = re.search(r"worse than the strict score in (\d+) of the 5 seeds", paragraph[0])
    if not worse or int(worse[1]) != int((sure_only > strict).sum()):
        problems.append(f"sure links only are worse than strict in {(sure_only > strict).sum()} seeds")
    return problems


def test_the_aer_over_seeds_is_quoted_strict_first():
    assert not aer_problems(chapter_text())


def long_run_problems(text):
    """The longer run without attention: its settings and results as ch06_baseline_long.txt records them."""
    study = (STUDIES / "ch06_baseline_long.txt").read_text(encoding="utf-8")
    ran, most, patience, best = (int(v) for v in re.search(
        r"then (\d+) more \(at most (\d+), patience (\d+)\); best after \+(\d+)", study).groups())
    valid = [float(v) for v in re.search(r"validation loss per extra epoch: \[([^\]]+)\]", study)[1].split(",")]
    train = [float(v) for v in re.search(r"training loss per extra epoch: +\[([^\]]+)\]", study)[1].split(",")]
    assert len(valid) == ran and int(np.argmin(valid)) + 1 == best

    def stops_at(p):                                   # the epoch after which patience p stops training
        for epoch in range(1, len(valid) + 1):
            if epoch - (int(np.argmin(valid[:epoch])) + 1) >= p:
                return epoch
        return None
    assert stops_at(patience) == ran
    short_run = [float(v) for v in re.search(r"^seed 0: .*?valid losses \[([^\]]+)\]",
                                             (STUDIES / "ch06_translator.txt").read_text(encoding="utf-8"),
                                             re.M | re.S)[1].split(",")]
    expected = [most, patience, stops_at(2), ran, best, round(min(valid), 3), round(min(short_run), 3),
                round(train[-1], 2), round(valid[-1], 2)]
    stated = re.search(r"up to (\d+) more epochs, so the learning rate decays over \1 epochs instead of 12, and a patience "
                       r"of (\d+) epochs instead of 2 \(with a patience of 2 it would have stopped after (\d+) more epochs"
                       r".*?It stopped after (\d+) more epochs, with its best validation loss after (\d+) \(([\d.]+), "
                       r"against ([\d.]+) after the 12 epochs.*?At its last epoch the training loss is ([\d.]+) and the "
                       r"validation loss ([\d.]+)", text)
    if not stated:
        return ["the text does not give the longer run's settings (epochs, schedule, patience) and results"]
    said = [int(v) for v in stated.groups()[:5]] + [float(v) for v in stated.groups()[5:]]
    return [] if said == expected else [f"the longer run: the text says {said}, the study gives {expected}"]


def test_the_longer_run_without_attention_is_described_with_its_settings():
    assert not long_run_problems(chapter_text())


def equation_problems(text):
    """Eq. 6.1 writes the general score with chapter 4's W (W_a is the additive score's); eq. 6.2 the code's order."""
    problems = []
    eq61 = re.search(r"e_\{tj\} = (.*?)\\tag\{6\.1\}", text)[1]
    if r"\mathbf{s}_t^\top \mathbf{W} \mathbf{h}_j" not in eq61 or r"\mathbf{W}_a" in eq61:
        problems.append("equation 6.1 should write the general score as s_t^T W h_j, with chapter 4's W")
    eq62 = re.search(r"\\mathbf\{s\}_t = \\operatorname\{GRU\}(.*?)\\tag\{6\.2\}", text)[1]
    if r"\mathbf{W}_c [\mathbf{s}_t; \mathbf{c}_t]" not in eq62:
        problems.append("equation 6.2 should write the code's order [s_t; c_t]")
    if not re.search(r"Luong et al\. and equation \(4\.3\) put the context first", text):
        problems.append("the text should say that Luong et al. and equation 4.3 put the context first")
    return problems


def test_the_equations_use_the_general_score_symbol_and_the_code_order(ns):
    assert not equation_problems(chapter_text())
    # W_c's last d_h columns act on the context: zeroing them makes the output ignore the summary
    torch.manual_seed(0)
    decoder = ns.Decoder(7, 4, 6, attention=False).eval()
    with torch.no_grad():
        decoder.W_c.weight[:, 6:] = 0.0
        s0, h0 = torch.zeros(1, 6), torch.zeros(1, 6)
        outs = [decoder.step(torch.tensor([3]), s0, h0, None, None, torch.randn(1, 6), torch.zeros(1, 2, dtype=torch.bool))[1]
                for _ in range(2)]
    assert torch.allclose(outs[0], outs[1]), "the code's concatenation does not put the context second"


def citation_problems(text):
    """The model without attention is Cho et al.'s design; Bahdanau et al.'s Figure 2 plots BLEU."""
    problems = []
    if not re.search(r"That is the design of Cho et al\. \{cite:p\}`cho2014learning`", text):
        problems.append("the model without attention should be named as Cho et al.'s design")
    if "accuracy-against-length" in text or not re.search(r"Figure 2\)? plots BLEU|BLEU-against-length experiment \(their Figure 2\)", text):
        problems.append("Bahdanau et al.'s Figure 2 plots BLEU against sentence length")
    return problems


def test_the_baseline_and_figure_2_are_attributed_as_published():
    assert not citation_problems(chapter_text())


class _ScheduleSeen(Exception):
    """Raised by the stand-in scheduler once train_translator has handed it its learning-rate factor."""


def schedule_problems(text, factor, n_batches, epochs, lr):
    """The prose on the learning-rate schedule against the factor the code gives each update (from 0)."""
    updates = epochs * n_batches
    values = [factor(k) for k in range(updates)]
    peak = int(np.argmax(values))
    floor = min(values[n_batches:])                   # the decay's floor, after the warm-up
    problems = []
    if not (values[0] < 0.05 and peak == n_batches - 1 and values[peak] < 1):
        problems.append("the code no longer warms up over one epoch with the decay running from update 0")
    stated = re.search(r"Adam with a learning rate of ([\d.]+) times two factors, both applied from the first update: a linear "
                       r"warm-up over the first epoch, \$\(k\+1\)/(\d+)\$ at update \$k\$ \(counted from 0; an epoch has (\d+) "
                       r"batches\) and 1 from then on, and a linear decay over all (\d+) updates of the (\d+) epochs, \$1 - k/(\d+)\$, never below "
                       r"(\d+) %\. The decay does not wait for the warm-up to end, so the rate peaks at the end of the first epoch "
                       r"\(update (\d+)\) at ([\d.]+) × [\d.]+ = ([\d.]+), below the nominal [\d.]+, then falls linearly and rests "
                       r"at its floor of ([\d.]+) for the last (\d+) updates", text)
    expected = [lr, n_batches, n_batches, updates, epochs, updates, round(100 * floor), peak, round(values[peak], 3),
                round(lr * values[peak], 4), round(lr * floor, 4), sum(v == floor for v in values)]
    if not stated:
        return problems + ["the text does not say how the warm-up and the decay combine, update by update"]
    said = [float(v) if "." in v else int(v) for v in stated.groups()]
    if said != expected:
        problems.append(f"the schedule: the text says {said}, the code gives {expected}")
    if re.search(r"warm(?:s|-)? ?up over (?:the first|one) epoch (?:and )?then (?:a linear decay|decays)", text):
        problems.append("the text still says that the decay starts after the warm-up")
    return problems


def test_the_learning_rate_schedule_is_described_as_the_code_runs_it(ns, monkeypatch):
    seen = {}

    def stand_in(optimizer, lr_lambda):
        seen["factor"] = lr_lambda
        raise _ScheduleSeen

    monkeypatch.setattr(torch.optim.lr_scheduler, "LambdaLR", stand_in)
    with pytest.raises(_ScheduleSeen):
        ns.train_translator(attention=True)
    n_batches = len(ns.length_batches(ns.train_data, ns.BATCH_SIZE))
    assert n_batches == -(-len(ns.train_data) // ns.BATCH_SIZE)
    assert not schedule_problems(chapter_text(), seen["factor"], n_batches, ns.EPOCHS, ns.LR)


def baseline_budget_problems(text):
    """The paragraph on the two budgets without attention against the study's accuracies per length bin."""
    study = (STUDIES / "ch06_translator.txt").read_text(encoding="utf-8")
    rows = {}
    for name, model in (("attention", "attention"), ("six", "no attention, 6 epochs"), ("further", "no attention, early stopping")):
        rows[name] = [np.array([float(v) for v in re.findall(rf"^  {lo}-{hi} words: {model}: mean ([\d.]+), sd [\d.]+, "
                                                             rf"min ([\d.]+), max ([\d.]+)", study, re.M)[0]])
                      for lo, hi in ((3, 8), (9, 14), (15, 20), (21, 26), (27, 34))]

    def pct(v, decimals=0):                            # half up, as a reader rounds
        return math.floor(100 * v * 10 ** decimals + 0.5 + 1e-9) / 10 ** decimals
    six, further, att = rows["six"], rows["further"], rows["attention"]
    expected = [pct(six[0][0]), pct(six[0][1]), pct(six[0][2]), pct(six[1][2], 1),
                pct(further[0][0]), pct(further[0][1]), pct(further[0][2]),
                pct(further[1][0]), pct(further[1][1]), pct(further[1][2]), pct(further[2][1]), pct(further[2][2]),
                pct(min(b[1] for b in att[:4])), pct(max(b[2] for b in att[:4])), pct(min(b[1] for b in att[:3]), 1)]
    stated = re.search(r"gets (\d+) % of the 3-to-8-word sentences exactly right on average over the 5 seeds of the study "
                       r"\((\d+) % to (\d+) %\) and almost none of the longer ones \(at most ([\d.]+) % at 9 to 14 words, none "
                       r"beyond\).*?it reaches (\d+) % on average \((\d+) % to (\d+) %\) on 3 to 8 words.*?It also climbs to "
                       r"(\d+) % \((\d+) % to (\d+) %\) at 9 to 14 words, but it stays at (\d+) % to (\d+) % for 15 to 20 words "
                       r"and at 0 from 21 words on, in every seed, while the model with attention gets (\d+) % to (\d+) % up "
                       r"to 26 words \(at least ([\d.]+) % up to 20\)", text)
    if not stated:
        return ["the paragraph on the two budgets is missing or reworded"]
    said = [float(v) for v in stated.groups()]
    problems = [] if said == expected else [f"the two budgets: the text says {said}, the study gives {expected}"]
    if max(b[2] for b in further[3:]) > 0 or max(b[2] for b in six[2:]) > 0:
        problems.append("the study no longer gives 0 beyond 21 words (trained further) or beyond 15 words (6 epochs)")
    return problems


def test_the_two_budgets_without_attention_are_quoted_from_the_study():
    assert not baseline_budget_problems(chapter_text())


def exact_match_band_problems(text):
    """The band that the prose says the training cell asserts, against the assertion and the study's range."""
    asserted = re.search(r"and ([\d.]+) <= exact_match <= ([\d.]+) and", text)
    stated = re.search(r"from ([\d.]+) % to ([\d.]+) %; the assertion above checks a looser band, (\d+) % to (\d+) %", text)
    if not asserted or not stated:
        return ["the prose does not give the band that the training cell asserts"]
    low, high = (float(v) for v in asserted.groups())
    study = [exact for exact, bins in _study_seeds().values()]
    problems = []
    if [float(stated[3]), float(stated[4])] != [100 * low, 100 * high]:
        problems.append(f"the cell asserts {low:.0%} to {high:.0%}; the text says {stated[3]} % to {stated[4]} %")
    if [float(stated[1]), float(stated[2])] != [round(100 * min(study), 1), round(100 * max(study), 1)]:
        problems.append(f"the study's range is {min(study):.1%} to {max(study):.1%}; the text says {stated[1]} % to {stated[2]} %")
    if not (low < min(study) and max(study) < high):
        problems.append("the asserted band does not contain the study's range")
    return problems


def test_the_prose_gives_the_exact_match_band_that_the_cell_asserts():
    assert not exact_match_band_problems(chapter_text())
