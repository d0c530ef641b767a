# shared helper: multihead_attention (chapter 5's MultiHeadAttention, a drop-in for torch.nn.MultiheadAttention; taught there)
class MultiHeadAttention(nn.Module):
    """Multi-head attention from scratch, a drop-in for torch.nn.MultiheadAttention(..., batch_first=True).

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
            average_attn_weights=True, is_causal=False) -> (output, weights)
    query: (B, T_q, d_model); key, value: (B, T_k, d_model); output: (B, T_q, d_model), with d_model = embed_dim.
    weights: (B, T_q, T_k) averaged over the heads (the default), (B, heads, T_q, T_k) with
    average_attn_weights=False, None with need_weights=False.
    Boolean masks: True = blocked (as in torch.nn.MultiheadAttention); float masks are added to the scores.
    key_padding_mask: (B, T_k). attn_mask: (T_q, T_k) or (B * heads, T_q, T_k).
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, batch_first=True):
        super().__init__()
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} should be a positive integer; got {value!r}.")
        if embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads}): "
                             f"each head gets embed_dim / num_heads features, and {embed_dim} / {num_heads} is not whole.")
        if dropout != 0.0:
            raise ValueError(f"this module has no dropout on the weights; got dropout={dropout!r}, use 0.0.")
        if not batch_first:
            raise ValueError("this module supports batch_first=True only (inputs shaped (batch, length, embed_dim)).")
        self.embed_dim, self.num_heads, self.d_k = embed_dim, num_heads, embed_dim // num_heads
        d_model = embed_dim
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Parameter(torch.empty(d_model, d_model)) for _ in range(4))  # (d_model, d_model) each
        for W in (self.W_q, self.W_k, self.W_v, self.W_o):
            nn.init.xavier_uniform_(W)
        if bias:
            self.b_q, self.b_k, self.b_v, self.b_o = (nn.Parameter(torch.zeros(d_model)) for _ in range(4))  # (d_model,) each
        else:
            self.b_q = self.b_k = self.b_v = self.b_o = None

    @staticmethod
    def _project(x, W, b):
        return x @ W if b is None else x @ W + b  # (B, T, d_model)

    def _split_heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, heads, T, d_k)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        _check_tensor("query", query, 3)
        _check_tensor("key", key, 3)
        _check_tensor("value", value, 3)
        B, T_q, d_model = query.shape
        T_k = key.shape[1]
        if d_model != self.embed_dim or key.shape != (B, T_k, d_model) or value.shape != key.shape:
            raise ValueError(f"query, key and value should be shaped (B, T_q, {self.embed_dim}), (B, T_k, {self.embed_dim}) "
                             f"and the same as key; got {tuple(query.shape)}, {tuple(key.shape)} and {tuple(value.shape)}.")
        if is_causal and attn_mask is None:  # as in PyTorch, is_causal only says that attn_mask is the causal mask
            raise RuntimeError("is_causal=True needs the causal mask itself as attn_mask (True above the diagonal).")
        n_h = self.num_heads
        Q = self._split_heads(self._project(query, self.W_q, self.b_q))  # (B, n_h, T_q, d_k)
        K = self._split_heads(self._project(key, self.W_k, self.b_k))  # (B, n_h, T_k, d_k)
        V = self._split_heads(self._project(value, self.W_v, self.b_v))  # (B, n_h, T_k, d_k)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, n_h, T_q, T_k)
        blocked = torch.zeros(B, 1, 1, T_k, dtype=torch.bool, device=scores.device)  # True = blocked
        if attn_mask is not None:
            _check_mask("attn_mask", attn_mask, [((T_q, T_k), "(target length, source length)"),
                                                 ((B * n_h, T_q, T_k), "(batch * heads, target length, source length)")])
            mask = attn_mask if attn_mask.dim() == 2 else attn_mask.view(B, n_h, T_q, T_k)  # broadcasts to scores
            scores = scores.masked_fill(mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
            blocked = blocked | mask if mask.dtype == torch.bool else blocked | torch.isneginf(mask)
        if key_padding_mask is not None:
            _check_mask("key_padding_mask", key_padding_mask, [((B, T_k), "(batch, source length)")])
            kpm = key_padding_mask[:, None, None, :]  # (B, 1, 1, T_k)
            scores = scores.masked_fill(kpm, float("-inf")) if kpm.dtype == torch.bool else scores + kpm
            blocked = blocked | kpm if kpm.dtype == torch.bool else blocked | torch.isneginf(kpm)
        weights = torch.softmax(scores, dim=-1)  # (B, n_h, T_q, T_k); a row with every key blocked is NaN
        if not need_weights:
            # PyTorch's fused path (used when no weights are asked for) returns 0 for a row whose keys are all blocked
            weights = weights.masked_fill(blocked.expand_as(weights).all(dim=-1, keepdim=True), 0.0)
        heads = weights @ V  # (B, n_h, T_q, d_k)
        concat = heads.transpose(1, 2).reshape(B, T_q, d_model)  # (B, T_q, n_h d_k = d_model): [head_1, ..., head_n_h] side by side
        output = self._project(concat, self.W_o, self.b_o)  # (B, T_q, d_model)
        if not need_weights:
            return output, None
        return output, weights.mean(dim=1) if average_attn_weights else weights  # (B, T_q, T_k) or (B, n_h, T_q, T_k)

    @classmethod
    def from_torch(cls, m):
        """A MultiHeadAttention holding the same weights as the torch.nn.MultiheadAttention `m`."""
        if not isinstance(m, nn.MultiheadAttention):
            raise TypeError(f"from_torch expects a torch.nn.MultiheadAttention, got {type(m).__name__}.")
        unsupported = [text for flag, text in (
            (m.dropout != 0.0, f"dropout={m.dropout}"), (not m.batch_first, "batch_first=False"),
            (not m._qkv_same_embed_dim, "kdim or vdim different from embed_dim"),
            (m.bias_k is not None, "add_bias_kv=True"), (m.add_zero_attn, "add_zero_attn=True")) if flag]
        if unsupported:
            raise ValueError(f"from_torch copies layers built with dropout=0.0, batch_first=True and nothing else changed; "
                             f"this one has {', '.join(unsupported)}.")
        d_model = m.embed_dim
        ours = cls(d_model, m.num_heads, bias=m.in_proj_bias is not None).to(m.in_proj_weight.device, m.in_proj_weight.dtype)
        with torch.no_grad():
            W_in = m.in_proj_weight  # (3 d_model, d_model), PyTorch computes x @ W_in.T
            ours.W_q.copy_(W_in[:d_model].T)
            ours.W_k.copy_(W_in[d_model:2 * d_model].T)
            ours.W_v.copy_(W_in[2 * d_model:].T)
            ours.W_o.copy_(m.out_proj.weight.T)
            if m.in_proj_bias is not None:
                ours.b_q.copy_(m.in_proj_bias[:d_model])
                ours.b_k.copy_(m.in_proj_bias[d_model:2 * d_model])
                ours.b_v.copy_(m.in_proj_bias[2 * d_model:])
                ours.b_o.copy_(m.out_proj.bias)
        return ours
