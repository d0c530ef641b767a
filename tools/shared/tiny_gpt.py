# shared helper: tiny_gpt (chapter 8's corpus, model, training and perplexity, unchanged; chapter 8 writes it out)
N_TRAIN, N_TEST, N_VALID = 4000, 400, 400   # chapter 6's split
train_data, test_data, valid_data = build_corpus(N_TRAIN, N_TEST, N_VALID)
train_fr = [fr for en, fr, links in train_data]
test_fr = [fr for en, fr, links in test_data]
valid_fr = [fr for en, fr, links in valid_data]
PAD, BOS, EOS = 0, 1, 2
words = ["<pad>", "<s>", "</s>"] + sorted({w for sentence in train_fr for w in sentence.split()})
word_index = {w: i for i, w in enumerate(words)}
VOCAB = len(words)


def encode(sentence):
    """A French sentence -> [<s>, its words, </s>] as indices; an unknown word is named in the error."""
    if not isinstance(sentence, str):
        raise TypeError(f"expected a French sentence as a string, got {type(sentence).__name__}.")
    unknown = [w for w in sentence.split() if w not in word_index or w in ("<pad>", "<s>", "</s>")]
    if unknown:
        raise ValueError(f"unknown word {unknown[0]!r}: the model knows only the {VOCAB - 3} French words of its corpus.")
    return [BOS] + [word_index[w] for w in sentence.split()] + [EOS]


def decode(ids):
    """Indices -> the French words up to the first </s> (or padding)."""
    out = []
    for i in ids:
        if i in (EOS, PAD):
            break
        out.append(words[i])
    return " ".join(out)


def sentence_batches(sentences, batch_size, rng=None):
    """Padded (B, T) tensors of encoded sentences of similar length; batch order shuffled when rng is given."""
    order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i].split()), i))
    chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    if rng is not None:
        rng.shuffle(chunks)
    batches = []
    for chunk in chunks:
        rows = [encode(sentences[i]) for i in chunk]
        width = max(len(r) for r in rows)
        batches.append(torch.tensor([r + [PAD] * (width - len(r)) for r in rows], device=device))
    return batches


def lm_loss(model, batch, reduction="mean"):
    """Eq. (8.1) over a padded batch (B, T): position t predicts token t + 1; padding is not a target."""
    logits = model(batch[:, :-1])                                          # (B, T - 1, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1),
                           ignore_index=PAD, reduction=reduction)


D_MODEL, N_HEADS, N_LAYERS, D_FF = 64, 4, 2, 256
MAX_POSITIONS = 48           # longer than any sequence of the corpus: at most 38 French words, plus <s>


def causal_mask(T, device=None):
    """(T, T) boolean, True where key j comes after query t (blocked), the book's convention."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention with the causal mask; optionally rotates queries and keys (rope=True)."""

    def __init__(self, d_model, n_heads, rope=False):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}).")
        self.n_heads, self.d_k, self.rope = n_heads, d_model // n_heads, rope
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.weights = None                                                # (B, n_h, T, T) after a forward pass
        self.ablated_heads = set()                                         # heads whose output is set to zero

    def forward(self, x):
        B, T, d_model = x.shape
        split = lambda y: y.view(B, T, self.n_heads, self.d_k).transpose(1, 2)   # (B, n_h, T, d_k)
        q, k, v = split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))
        if self.rope:
            positions = torch.arange(T, device=x.device)
            q, k = apply_rope_torch(q, positions), apply_rope_torch(k, positions)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)              # (B, n_h, T, T)
        self.weights = scores.masked_fill(causal_mask(T, x.device), float("-inf")).softmax(dim=-1)
        heads = self.weights @ v                                           # (B, n_h, T, d_k)
        if self.ablated_heads:                                             # an experiment: these heads say nothing
            heads = heads.clone()
            heads[:, sorted(self.ablated_heads)] = 0.0
        return self.W_o(heads.transpose(1, 2).reshape(B, T, d_model))      # (B, T, d_model)


class Block(nn.Module):
    """A pre-LN decoder block (eq. 7.6) without cross-attention."""

    def __init__(self, d_model, n_heads, d_ff, rope=False):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, rope=rope)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))                                   # (B, T, d_model)
        return x + self.ffn(self.norm2(x))


class TinyGPT(nn.Module):
    """Token embedding + positions, N pre-LN blocks, a final layer norm, an output layer tied to the embedding.

    positions: "learned" (GPT-2), "sinusoidal" (eq. 7.1, fixed) or "rope" (queries and keys rotated; nothing added).
    forward(tokens) with tokens (B, T) of indices -> logits (B, T, vocabulary size).
    """

    def __init__(self, vocab_size, d_model=D_MODEL, n_heads=N_HEADS, n_layers=N_LAYERS, d_ff=D_FF,
                 positions="learned", max_positions=MAX_POSITIONS):
        super().__init__()
        if positions not in ("learned", "sinusoidal", "rope"):
            raise ValueError(f"positions must be 'learned', 'sinusoidal' or 'rope'; got {positions!r}.")
        self.positions, self.max_positions = positions, max_positions
        self.embedding = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model ** -0.5)
        if positions == "learned":
            self.P = nn.Parameter(0.02 * torch.randn(max_positions, d_model))   # (max_positions, d_model)
        elif positions == "sinusoidal":                                    # eq. 7.1, scaled to the words' size
            self.register_buffer("P", sinusoidal_table(max_positions, d_model) / math.sqrt(d_model))
        self.blocks = nn.ModuleList(Block(d_model, n_heads, d_ff, rope=positions == "rope") for _ in range(n_layers))
        self.final_norm = nn.LayerNorm(d_model)

    def forward(self, tokens):
        T = tokens.shape[1]
        if T > self.max_positions:
            raise ValueError(f"this model reads at most {self.max_positions} tokens; got a sequence of {T}.")
        x = self.embedding(tokens)                                         # (B, T, d_model)
        if self.positions != "rope":
            x = x + self.P[:T]
        for block in self.blocks:
            x = block(x)
        return self.final_norm(x) @ self.embedding.weight.T               # (B, T, V): tied output layer

    def attention_weights(self):
        """(B, layers, heads, T, T): the weights of the last forward pass."""
        return torch.stack([block.attn.weights for block in self.blocks], dim=1)


def sinusoidal_table(n_positions, d_model):
    """Eq. (7.1): (n_positions, d_model), sin in the even columns, cos in the odd ones."""
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]         # (n, 1)
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)   # (d_model / 2,)
    table = torch.zeros(n_positions, d_model, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * omega), torch.cos(pos * omega)
    return table.float()


def apply_rope_torch(x, positions, base=10000.0):
    """PyTorch, the same rotation for x (..., T, d) on any device; keeps x's dtype."""
    d = x.shape[-1]
    omega = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d)   # (d/2,)
    angle = positions.to(torch.float64)[:, None] * omega               # (T, d/2)
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)   # pairs back in place


EPOCHS, BATCH_SIZE, LR = 8, 64, 0.003


def lr_factor(update, n_batches, total):
    """The learning rate of an update (counted from 0) as a share of LR: a warm-up over one epoch times a decay
    that starts at update 0."""
    return min(1.0, (update + 1) / n_batches) * max(0.02, 1 - update / total)


def train_lm(sentences, epochs=EPOCHS, batch_size=BATCH_SIZE, lr=LR, seed=0, make_model=None, batches=None,
             **model_options):
    """Train a TinyGPT on the sentences; returns the model (in eval mode) and the mean loss of each epoch.
    make_model(VOCAB, **model_options) builds the model, TinyGPT by default; batches, ready-made (B, T) tensors of
    token indices, replace the sentences' (chapter 10 passes its variants and its streams)."""
    torch.manual_seed(seed)
    model = (make_model or TinyGPT)(VOCAB, **model_options).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    batches = sentence_batches(sentences, batch_size) if batches is None else list(batches)
    n_batches, total = len(batches), epochs * len(batches)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda update: lr_factor(update, n_batches, total))
    order_rng, losses = random.Random(seed), []
    for epoch in range(epochs):
        model.train()
        order_rng.shuffle(batches)
        epoch_loss = 0.0
        for batch in batches:
            loss = lm_loss(model, batch)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            epoch_loss += loss.item() / n_batches
        losses.append(epoch_loss)
    return model.eval(), losses


@torch.no_grad()
def perplexity(model, sentences):
    """exp of the mean next-token loss over every predicted token of the sentences, </s> included (eq. 8.2)."""
    total, count = 0.0, 0
    for batch in sentence_batches(sentences, 64):
        total += lm_loss(model, batch, reduction="sum").item()
        count += int((batch[:, 1:] != PAD).sum())
    return math.exp(total / count)
