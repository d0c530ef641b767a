# shared helper: length_split (chapter 8's short and long sentences, the perplexity split at position 17, and the
# floor of each group, unchanged; chapter 8 writes it out)
SHORT = 16
short_train = [s for s in train_fr if len(s.split()) <= SHORT]
held_out = test_fr + valid_fr
held_short = [s for s in held_out if len(s.split()) <= SHORT]
held_long = [s for s in held_out if len(s.split()) > SHORT]
SEEN = SHORT + 1                                     # input positions 0..16 occur in training


def split_perplexity(losses_and_positions):
    """(perplexity of the predictions made at positions < SEEN, of those at positions >= SEEN)."""
    early = [loss for loss, position in losses_and_positions if position < SEEN]
    late = [loss for loss, position in losses_and_positions if position >= SEEN]
    return math.exp(np.mean(early)), math.exp(np.mean(late))


def ngram_losses(model, sentences):
    """(-log p, input position) of every predicted token; token t is predicted at position t (<s> is position 0)."""
    out = []
    for s in sentences:
        w = s.split() + ["</s>"]
        out += [(-math.log(model.prob(w[:t], w[t])), t) for t in range(len(w))]
    return out


@torch.no_grad()
def model_losses(model, sentences):
    out = []
    for batch in sentence_batches(sentences, 64):
        losses = F.cross_entropy(model(batch[:, :-1]).transpose(1, 2), batch[:, 1:], ignore_index=PAD, reduction="none")
        real = (batch[:, 1:] != PAD).nonzero()                                       # (n, 2): (b, t), position t predicts t + 1
        out += zip(losses[real[:, 0], real[:, 1]].tolist(), real[:, 1].tolist())
    return out


def floor_perplexity(sentences, french_lengths):
    """The grammar's perplexity restricted to the corpus's sentences with these French lengths, training ones left out."""
    mass = sum(p for (english, french), p in lengths.items() if english <= MAX_WORDS and french in french_lengths)
    mass -= sum(math.exp(grammar_log_prob(s)) for s in train_fr if len(s.split()) in french_lengths)
    log_p = sum(grammar_log_prob(s) for s in sentences) - len(sentences) * math.log(mass)
    return math.exp(-log_p / sum(len(s.split()) + 1 for s in sentences))
