# shared helper: toy_corpus (chapter 6's English->French grammar, gold alignments, corpus split and alignment error rate)
# English noun -> (French noun, grammatical gender); no French noun starts with a vowel, so no "l'".
NOUNS = {"cat": ("chat", "m"), "dog": ("chien", "m"), "wolf": ("loup", "m"), "mouse": ("souris", "f"),
         "girl": ("fille", "f"), "boy": ("garçon", "m"), "horse": ("cheval", "m"), "cow": ("vache", "f"),
         "mat": ("tapis", "m"), "table": ("table", "f"), "chair": ("chaise", "f"), "bed": ("lit", "m"),
         "house": ("maison", "f"), "garden": ("jardin", "m"), "box": ("boîte", "f"), "car": ("voiture", "f")}
SUBJECTS = ["cat", "dog", "wolf", "mouse", "girl", "boy", "horse", "cow"]
# English adjective -> (masculine, feminine); all of these follow the noun in French.
ADJECTIVES = {"black": ("noir", "noire"), "white": ("blanc", "blanche"), "grey": ("gris", "grise"),
              "green": ("vert", "verte"), "blue": ("bleu", "bleue"), "brown": ("brun", "brune"),
              "red": ("rouge", "rouge"), "tired": ("fatigué", "fatiguée")}
ARTICLES = {"the": {"m": "le", "f": "la"}, "a": {"m": "un", "f": "une"}}
# English verb -> (auxiliary, participle after a masculine subject, after a feminine one, takes an object?)
VERBS = {"sat": ("était", "assis", "assise", False), "fell": ("est", "tombé", "tombée", False),
         "ran": ("a", "couru", "couru", False), "slept": ("a", "dormi", "dormi", False),
         "jumped": ("a", "sauté", "sauté", False), "saw": ("a", "vu", "vu", True),
         "chased": ("a", "chassé", "chassé", True), "watched": ("a", "regardé", "regardé", True)}
PREPOSITIONS = {"on": "sur", "under": "sous", "in": "dans", "behind": "derrière", "with": "avec"}


def random_noun_phrase(rng, nouns):
    """article (+ adjective) + noun, e.g. ['the', 'black', 'cat']."""
    words = [rng.choice(list(ARTICLES))]
    if rng.random() < 0.5:
        words.append(rng.choice(list(ADJECTIVES)))
    return words + [rng.choice(nouns)]


def random_english(rng, n_clauses=None):
    """1-4 clauses joined by "and"; a clause is subject, verb, (object,) 0-2 prepositional phrases."""
    n_clauses = n_clauses or rng.choice([1, 1, 2, 2, 3, 4])
    words = []
    for k in range(n_clauses):
        words += ["and"] if k else []
        verb = rng.choice(list(VERBS))
        words += random_noun_phrase(rng, SUBJECTS) + [verb]
        if VERBS[verb][3]:
            words += random_noun_phrase(rng, list(NOUNS))
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            words += [rng.choice(list(PREPOSITIONS))] + random_noun_phrase(rng, list(NOUNS))
    return " ".join(words)


def english_to_french(sentence):
    """The grammar's French for an English sentence, and the gold links (English index, French index).

    A string that is not a sentence of the grammar (an unknown word, a fragment such as "the black",
    a verb without a subject) raises ValueError with one sentence saying what is wrong.
    """
    if not isinstance(sentence, str):
        raise TypeError(f"english_to_french expects an English sentence as a string, got {type(sentence).__name__}.")
    en = sentence.split()
    if not en:
        raise ValueError("english_to_french expects an English sentence with at least one word, got an empty string.")
    known = set(ARTICLES) | set(ADJECTIVES) | set(NOUNS) | set(VERBS) | set(PREPOSITIONS) | {"and"}
    for word in en:
        if word not in known:
            raise ValueError(f"english_to_french does not know the word {word!r}.")
    fr, links = [], []
    subject_gender, at_clause_start, i = None, True, 0

    def emit(word, source):
        links.append((source, len(fr)))
        fr.append(word)

    while i < len(en):
        word = en[i]
        if word in ARTICLES:                          # article (adjective) noun -> article noun (adjective)
            has_adjective = i + 1 < len(en) and en[i + 1] in ADJECTIVES
            noun_at = i + 2 if has_adjective else i + 1
            if noun_at >= len(en) or en[noun_at] not in NOUNS:
                raise ValueError(f"{sentence!r} is not a sentence of the grammar: the article {word!r} (word {i + 1}) "
                                 f"must be followed by a noun, with at most one adjective between them.")
            fr_noun, gender = NOUNS[en[noun_at]]
            emit(ARTICLES[word][gender], i)
            emit(fr_noun, noun_at)
            if has_adjective:
                emit(ADJECTIVES[en[i + 1]][0 if gender == "m" else 1], i + 1)
            if at_clause_start:
                subject_gender, at_clause_start = gender, False
            i = noun_at + 1
        elif word in VERBS:                           # one English verb -> auxiliary + participle
            if at_clause_start:
                raise ValueError(f"{sentence!r} is not a sentence of the grammar: the verb {word!r} (word {i + 1}) "
                                 f"has no subject before it.")
            auxiliary, masculine, feminine, _ = VERBS[word]
            emit(auxiliary, i)
            emit(masculine if subject_gender == "m" else feminine, i)
            i += 1
        elif word in PREPOSITIONS:
            emit(PREPOSITIONS[word], i)
            i += 1
        elif word == "and":
            emit("et", i)
            at_clause_start, i = True, i + 1
        else:                                         # a noun or an adjective without its article
            raise ValueError(f"{sentence!r} is not a sentence of the grammar: {word!r} (word {i + 1}) "
                             f"must follow an article.")
    return " ".join(fr), sorted(links)


def generate_pair(rng, n_clauses=None):
    """(English, French, gold links) for one random sentence of the grammar."""
    english = random_english(rng, n_clauses)
    return (english, *english_to_french(english))


def sure_and_possible_links(sentence):
    """Och & Ney's two kinds of gold link for one sentence: (sure, possible), possible containing sure.

    Every French word that translates an English word has one sure link. The auxiliary (a, est, était)
    translates none: English forms this past tense without one. Its links are possible only, to the
    verb (whose tense and auxiliary it expresses) and to the subject's noun (whose person and number
    it agrees with).
    """
    fr, links = english_to_french(sentence)
    en = sentence.split()
    subject_of_verb, subject, clause_start = {}, None, True
    for j, word in enumerate(en):
        if word in NOUNS and clause_start:
            subject, clause_start = j, False
        elif word == "and":
            clause_start = True
        elif word in VERBS:
            subject_of_verb[j] = subject
    auxiliary_at = {min(t for i, t in links if i == j): j for j in subject_of_verb}   # French index -> verb
    sure = {(j, t) for j, t in links if t not in auxiliary_at}
    possible = sure | {(j, t) for t, j in auxiliary_at.items()} | {(subject_of_verb[j], t) for t, j in auxiliary_at.items()}
    return sure, possible


MAX_WORDS = 34
T2_ENGLISH = "the black cat sat on the mat"


def build_corpus(n_train, n_test, n_valid, seed=0):
    """Distinct random pairs: training, held-out test (T2's sentence first) and validation, no overlap."""
    rng = random.Random(seed)
    seen, pairs = {T2_ENGLISH}, []
    while len(pairs) < n_train + n_test - 1 + n_valid:
        en, fr, links = generate_pair(rng)
        if len(en.split()) <= MAX_WORDS and en not in seen:
            seen.add(en)
            pairs.append((en, fr, links))
    test = [(T2_ENGLISH, *english_to_french(T2_ENGLISH))] + pairs[n_train:n_train + n_test - 1]
    return pairs[:n_train], test, pairs[n_train + n_test - 1:]


def alignment_error_rate(predicted, sure, possible=None):
    """Och & Ney (2003): AER = 1 - (|A & S| + |A & P|) / (|A| + |S|), counts summed over all sentences.

    predicted, sure, possible: lists (one entry per sentence) of sets of (English index, French index).
    possible defaults to sure; it is always taken to contain sure.
    """
    possible = sure if possible is None else possible
    for name, value in (("predicted", predicted), ("sure", sure), ("possible", possible)):
        if not isinstance(value, (list, tuple)) or not all(isinstance(s, (set, frozenset)) for s in value):
            raise TypeError(f"{name} should be a list with one set of (English index, French index) pairs "
                            f"per sentence, got {type(value).__name__}.")
    if not len(predicted) == len(sure) == len(possible):
        raise ValueError(f"expected one set per sentence in each argument, got {len(predicted)} predicted, "
                         f"{len(sure)} sure and {len(possible)} possible.")
    a_and_s = sum(len(A & S) for A, S in zip(predicted, sure))
    a_and_p = sum(len(A & (P | S)) for A, S, P in zip(predicted, sure, possible))
    n_a, n_s = sum(len(A) for A in predicted), sum(len(S) for S in sure)
    if n_a + n_s == 0:
        raise ValueError("the alignment error rate needs at least one link, predicted or sure.")
    return 1 - (a_and_s + a_and_p) / (n_a + n_s)
