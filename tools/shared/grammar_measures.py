# shared helper: grammar_measures (chapter 8's measures on the grammar, unchanged: n-grams, the grammar's own
# probabilities and floor, agreement by distance, sampling; chapter 8 writes it out)
class NGramLM:
    """An n-gram model of the French sentences: add-one smoothing ("add-one") or interpolated Kneser-Ney ("kneser-ney")."""

    def __init__(self, order, sentences, smoothing="kneser-ney", discount=0.75):
        if smoothing not in ("add-one", "kneser-ney"):
            raise ValueError(f"smoothing must be 'add-one' or 'kneser-ney'; got {smoothing!r}.")
        self.order, self.smoothing, self.D = order, smoothing, discount
        self.vocabulary = sorted({w for s in sentences for w in s.split()} | {"</s>"})
        self.count = [collections.Counter() for _ in range(order + 1)]    # count[k][(w1..wk)]: k-gram counts
        for s in sentences:
            padded = ["<s>"] * max(order - 1, 1) + s.split() + ["</s>"]
            for i in range(max(order - 1, 1), len(padded)):
                for k in range(1, order + 1):
                    self.count[k][tuple(padded[i - k + 1:i + 1])] += 1
        # Kneser-Ney's quantities: context totals, distinct followers, continuation counts (distinct predecessors)
        self.context_total = [collections.Counter() for _ in range(order + 1)]
        self.followers = [collections.Counter() for _ in range(order + 1)]
        self.continuation = [collections.Counter() for _ in range(order + 1)]
        self.continuation_total = [collections.Counter() for _ in range(order + 1)]
        for k in range(1, order + 1):
            for gram, c in self.count[k].items():
                self.context_total[k][gram[:-1]] += c
                self.followers[k][gram[:-1]] += 1
                if k > 1:
                    self.continuation[k - 1][gram[1:]] += 1
        for k in range(1, order):
            for gram, c in self.continuation[k].items():
                self.continuation_total[k][gram[:-1]] += c

    def prob(self, history, word):
        """p(word | the last order - 1 words of history); history is a list of words, '<s>' for the start."""
        context = tuple((["<s>"] * self.order + list(history))[-(self.order - 1):]) if self.order > 1 else ()
        if self.smoothing == "add-one":
            return (self.count[self.order][context + (word,)] + 1) / (self.context_total[self.order][context] + len(self.vocabulary))
        return self._kneser_ney(context, word, self.order)

    def _kneser_ney(self, context, word, k):
        if k == 1:                                    # the lowest order, itself mixed with the uniform distribution
            counts = self.count[1] if self.order == 1 else self.continuation[1]
            total = self.context_total[1][()] if self.order == 1 else self.continuation_total[1][()]
            return max(counts[(word,)] - self.D, 0) / total + self.D * self.followers[1][()] / total / len(self.vocabulary)
        if k == self.order:
            c, total = self.count[k][context + (word,)], self.context_total[k][context]
        else:
            c, total = self.continuation[k][context + (word,)], self.continuation_total[k][context]
        lower = self._kneser_ney(context[1:], word, k - 1)
        if total == 0:                                # an unseen context: the lower order alone
            return lower
        return max(c - self.D, 0) / total + self.D * self.followers[k][context] / total * lower

    def perplexity(self, sentences):
        total, count = 0.0, 0
        for s in sentences:
            w = s.split() + ["</s>"]
            for t in range(len(w)):
                total -= math.log(self.prob(w[:t], w[t]))
                count += 1
        return math.exp(total / count)


FR_NOUNS = {fr: (en, gender) for en, (fr, gender) in NOUNS.items()}
FR_ADJECTIVES = {}                                        # French form -> the genders it agrees with
for masculine, feminine in ADJECTIVES.values():
    FR_ADJECTIVES.setdefault(masculine, set()).add("m")
    FR_ADJECTIVES.setdefault(feminine, set()).add("f")
FR_ARTICLES = {fr: gender for forms in ARTICLES.values() for gender, fr in forms.items()}
FR_PREPOSITIONS = set(PREPOSITIONS.values())


def parse_french(sentence):
    """Check a French sentence against chapter 6's grammar.

    Returns (clauses, reason): clauses is a list with one tuple (prepositional phrases, has an object, adjectives)
    per clause read, adjectives holding True or False for each of its noun phrases, from which the English length
    follows; reason is "" for a sentence of the grammar, else one sentence saying where it first fails (clauses
    then holds the clauses read up to that point).
    """
    w, i, clauses = sentence.split(), 0, []

    def noun_phrase(subject):
        nonlocal i
        if i >= len(w) or w[i] not in FR_ARTICLES:
            return None, f"word {i + 1} should be an article"
        if i + 1 >= len(w) or w[i + 1] not in FR_NOUNS:
            return None, f"word {i + 2} should be a noun"
        english_noun, gender = FR_NOUNS[w[i + 1]]
        if subject and english_noun not in SUBJECTS:
            return None, f"{w[i + 1]!r} cannot be a subject"
        if FR_ARTICLES[w[i]] != gender:
            return None, f"agreement: the article {w[i]!r} with the noun {w[i + 1]!r}"
        i += 2
        if i < len(w) and w[i] in FR_ADJECTIVES:
            if gender not in FR_ADJECTIVES[w[i]]:
                return None, f"agreement: the adjective {w[i]!r} with the noun {w[i - 1]!r}"
            i += 1
            return (gender, True), ""
        return (gender, False), ""

    while True:
        subject, why = noun_phrase(True)
        if subject is None:
            return clauses, why
        gender, adjectives = subject[0], [subject[1]]
        verbs = [v for v, (aux, m, f, obj) in VERBS.items() if i + 1 < len(w) and aux == w[i] and w[i + 1] in (m, f)]
        if not verbs:
            return clauses, f"words {i + 1}-{i + 2} should be a verb (an auxiliary and a participle)"
        auxiliary, masculine, feminine, transitive = VERBS[verbs[0]]
        if w[i + 1] != (masculine if gender == "m" else feminine):
            return clauses, f"agreement: the participle {w[i + 1]!r} with the subject"
        i += 2
        if transitive:
            obj, why = noun_phrase(False)
            if obj is None:
                return clauses, why
            adjectives.append(obj[1])
        n_pp = 0
        while i < len(w) and w[i] in FR_PREPOSITIONS:
            i += 1
            phrase, why = noun_phrase(False)
            if phrase is None:
                return clauses, why
            adjectives.append(phrase[1])
            n_pp += 1
        clauses.append((n_pp, transitive, adjectives))
        if n_pp > 2:
            return clauses, "a clause has more than two prepositional phrases"
        if i == len(w):
            break
        if w[i] != "et":
            return clauses, f"word {i + 1} ({w[i]!r}) cannot follow here"
        i += 1
    if len(clauses) > 4:
        return clauses, "more than four clauses"
    english_words = sum(2 + 1 + 2 * transitive + 3 * n_pp + sum(adj) for n_pp, transitive, adj in clauses) + len(clauses) - 1
    if english_words > MAX_WORDS:
        return clauses, f"longer than the corpus allows ({english_words} English words, at most {MAX_WORDS})"
    return clauses, ""


def is_grammatical(sentence):
    return parse_french(sentence)[1] == ""


def grammar_log_prob(sentence):
    """log p(sentence) under the random process that generated the corpus (a sentence of the grammar)."""
    clauses, why = parse_french(sentence)
    if why:
        raise ValueError(f"{sentence!r} is not a sentence of the grammar: {why}.")
    log_p = math.log({1: 2 / 6, 2: 2 / 6, 3: 1 / 6, 4: 1 / 6}[len(clauses)])
    for n_pp, transitive, adjectives in clauses:
        log_p += math.log(1 / 8)                                  # the verb
        log_p += math.log({0: 2 / 5, 1: 2 / 5, 2: 1 / 5}[n_pp]) + n_pp * math.log(1 / 5)   # how many phrases, which prepositions
        nouns = [len(SUBJECTS)] + [len(NOUNS)] * (transitive + n_pp)
        for n_nouns, adjective in zip(nouns, adjectives):         # article, adjective or none, noun
            log_p += math.log(1 / 2) + math.log(1 / 2 * 1 / 8 if adjective else 1 / 2) + math.log(1 / n_nouns)
    return log_p


def grammar_perplexity(sentences):
    """Eq. (8.2) with the grammar's own probabilities: every word and each </s> counted as one token."""
    return math.exp(-sum(grammar_log_prob(s) for s in sentences) / sum(len(s.split()) + 1 for s in sentences))


def length_distribution():
    """{(English words, French words): probability} of a sentence of the generator, before any cut."""
    def add(a, b):                                             # the distribution of a sum of two independent lengths
        out = collections.Counter()
        for x, p in a.items():
            for y, q in b.items():
                out[x + y] += p * q
        return out
    phrase = {2: 1 / 2, 3: 1 / 2}                              # article + noun, with an adjective half the time
    p_transitive = sum(v[3] for v in VERBS.values()) / len(VERBS)
    clause = collections.Counter()                             # English words of one clause
    for transitive, p_t in ((True, p_transitive), (False, 1 - p_transitive)):
        words = add(phrase, {1: 1.0})                          # subject and verb
        if transitive:
            words = add(words, phrase)
        for n_pp, p_n in ((0, 2 / 5), (1, 2 / 5), (2, 1 / 5)):
            with_phrases = words
            for _ in range(n_pp):
                with_phrases = add(with_phrases, add({1: 1.0}, phrase))   # preposition + noun phrase
            for x, p in with_phrases.items():
                clause[x] += p_t * p_n * p
    sentences = collections.Counter()
    for n_clauses, p_c in ((1, 2 / 6), (2, 2 / 6), (3, 1 / 6), (4, 1 / 6)):
        total = {0: 1.0}
        for _ in range(n_clauses):
            total = add(total, clause)
        for x, p in total.items():                             # "and" between clauses; French: two words per verb
            sentences[(x + n_clauses - 1, x + 2 * n_clauses - 1)] += p_c * p
    return sentences


lengths = length_distribution()
p_kept = sum(p for (english, french), p in lengths.items() if english <= MAX_WORDS)
p_training = sum(math.exp(grammar_log_prob(s)) for s in train_fr)
floor_ppl = math.exp(-(sum(grammar_log_prob(s) for s in test_fr) - len(test_fr) * math.log(p_kept - p_training))
                     / sum(len(s.split()) + 1 for s in test_fr))


OTHER_GENDER = {}                                          # a gendered form -> the same word in the other gender
for masculine, feminine in ADJECTIVES.values():
    if masculine != feminine:
        OTHER_GENDER[masculine], OTHER_GENDER[feminine] = feminine, masculine
for auxiliary, masculine, feminine, transitive in VERBS.values():
    if masculine != feminine:
        OTHER_GENDER[masculine], OTHER_GENDER[feminine] = feminine, masculine


def agreement_cases(sentences):
    """Every agreeing word: (sentence index, its position, its noun's position, right form, wrong form, kind)."""
    cases = []
    for k, sentence in enumerate(sentences):
        w, subject, clause_start = sentence.split(), None, True
        for i, word in enumerate(w):
            if word in FR_NOUNS and clause_start:
                subject, clause_start = i, False
            elif word == "et":
                clause_start = True
            if word not in OTHER_GENDER:
                continue
            if w[i - 1] in FR_NOUNS:                                # an adjective, right after its noun
                cases.append((k, i, i - 1, word, OTHER_GENDER[word], "adjective (distance 1)"))
            elif w[i - 1] in ("était", "est"):                      # a participle after être
                between = w[subject + 1:i - 1]
                kind = ("participle (distance 2)" if not between else
                        "participle, 'rouge' between (distance 3)" if between == ["rouge"] else
                        "participle, another adjective between (distance 3)")
                cases.append((k, i, subject, word, OTHER_GENDER[word], kind))
    return cases


rng_agreement, seen, agreement_fr = random.Random(1), set(train_fr), []
while len(agreement_fr) < 2000:
    english, french, links = generate_pair(rng_agreement)
    if len(english.split()) <= MAX_WORDS and french not in seen:
        seen.add(french)
        agreement_fr.append(french)
cases = agreement_cases(agreement_fr)
KINDS = ["adjective (distance 1)", "participle (distance 2)", "participle, another adjective between (distance 3)",
         "participle, 'rouge' between (distance 3)"]


@torch.no_grad()
def agreement_accuracy(model, sentences, cases):
    """For each kind: the share of cases where the model gives the right form more probability than the wrong one,
    and the attention (layers, heads) from the position that predicts a participle to its subject's noun."""
    by_sentence = collections.defaultdict(list)
    for case in cases:
        by_sentence[case[0]].append(case)
    right = collections.defaultdict(list)
    to_noun, to_uniform = [], []
    for k, group in by_sentence.items():
        ids = torch.tensor([encode(sentences[k])], device=device)        # (1, T): <s> shifts word i to token i + 1
        logits = model(ids[:, :-1])[0]                                    # (T - 1, V): position i predicts token i + 1
        weights = model.attention_weights()[0]                           # (layers, heads, T - 1, T - 1)
        for _, i, noun, good, bad, kind in group:
            right[kind].append(bool(logits[i, word_index[good]] > logits[i, word_index[bad]]))
            if kind.startswith("participle"):
                to_noun.append(weights[:, :, i, noun + 1])                # query: position i (the auxiliary's token)
                to_uniform.append(1 / (i + 1))                            # what an even spread would give
    return ({kind: float(np.mean(right[kind])) for kind in KINDS},
            torch.stack(to_noun).mean(dim=0).cpu().numpy(), float(np.mean(to_uniform)))


def ngram_agreement(model, sentences, cases):
    right = collections.defaultdict(list)
    for k, i, noun, good, bad, kind in cases:
        history = sentences[k].split()[:i]
        right[kind].append(model.prob(history, good) > model.prob(history, bad))
    return {kind: float(np.mean(right[kind])) for kind in KINDS}


def check_sampling_options(temperature, top_k, top_p, vocab_size):
    """One clear sentence (ValueError) for a temperature, top_k or top_p that eq. (8.3) cannot use."""
    if not temperature > 0:
        raise ValueError(f"the temperature must be positive; got {temperature!r} (greedy decoding is greedy=True).")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer))
                              or not 1 <= top_k <= vocab_size):
        raise ValueError(f"top_k must be a whole number from 1 to the vocabulary's size ({vocab_size}); got {top_k!r}.")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must be above 0 and at most 1 (top_p = 0 would keep no word); got {top_p!r}.")


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    """Scores (..., V) -> scores whose softmax is the sampling distribution: divided by the temperature, then
    the top-k and top-p rules (eq. 8.3) set every excluded word to -inf. Ties at the k-th score are all kept;
    the nucleus ranks words of equal probability by index, the lower index first (a stable sort)."""
    check_sampling_options(temperature, top_k, top_p, logits.shape[-1])
    z = logits / temperature
    if top_k is not None:
        kth = z.topk(top_k, dim=-1).values[..., -1:]                      # (..., 1): the k-th largest score
        z = z.masked_fill(z < kth, float("-inf"))
    if top_p is not None:
        p_sorted, order = z.softmax(dim=-1).sort(dim=-1, descending=True, stable=True)
        before = p_sorted.cumsum(dim=-1) - p_sorted                       # mass of the words ranked above
        drop_sorted = before >= top_p                                     # the smallest set reaching top_p is kept
        z = z.masked_fill(drop_sorted.scatter(-1, order, drop_sorted), float("-inf"))
    return z


@torch.no_grad()
def generate(model, n_samples, temperature=1.0, top_k=None, top_p=None, greedy=False, seed=0, max_len=MAX_POSITIONS - 1):
    """n_samples sentences from <s>, each step drawing the next token (or taking the best one, greedy=True)."""
    generator = torch.Generator(device=device).manual_seed(seed)
    tokens = torch.full((n_samples, 1), BOS, device=device)                # (n_samples, 1)
    done = torch.zeros(n_samples, dtype=torch.bool, device=device)
    for _ in range(max_len):
        scores = model(tokens)[:, -1].clone()                              # (n_samples, V): the last position only
        scores[:, [PAD, BOS]] = float("-inf")                              # never padding or a second <s>
        if greedy:
            nxt = scores.argmax(dim=-1)
        else:
            probs = filter_logits(scores, temperature, top_k, top_p).softmax(dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator)[:, 0]   # (n_samples,)
        nxt = nxt.masked_fill(done, PAD)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == EOS
        if bool(done.all()):
            break
    return [decode(row[1:]) for row in tokens.tolist()]
