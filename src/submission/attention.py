"""Causal self-attention and causal cross-attention.

Both classes share one attention core, `attend`, which is the single place where
the attention formula softmax(Q K^T / sqrt(d)) V lives.  On CUDA the same math runs
through PyTorch's fused `scaled_dot_product_attention` kernel (flash / memory-
efficient attention), which never materialises the T x T attention matrix; on CPU
the plain formula below is used because it measured faster there (under the default bf16
autocast, in the instructor's benchmarks).  A test checks that both paths agree.

For fast evaluation (utils.predict_places) an attention layer can hold a KVCache: the keys and values
of the positions it has already seen, so each new position costs one query instead of a full
recomputation.  The cached step goes through the same `attend` core with the causal mask rows of the
new positions.
"""

import math

import torch
import torch.nn as nn
from torch.nn import functional as F


def causal_mask(block_size):
    """Lower-triangular (block_size, block_size) boolean mask: query i may see keys j <= i."""
    return torch.tril(torch.ones(block_size, block_size, dtype=torch.bool))


def attend(q, k, v, mask, dropout_p=0.0, use_fused=False):
    """Attention of queries q over keys k / values v.

    q: (B, nh, Tq, hs); k, v: (B, nh, Tk, hs); mask: (Tq, Tk) boolean, True = may attend.
    dropout_p is applied to the attention weights (pass 0.0 in eval mode).
    With use_fused=True the fused PyTorch kernel computes the same result.
    """
    if use_fused:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(~mask, float("-inf"))
    att = F.softmax(att, dim=-1)
    att = F.dropout(att, p=dropout_p, training=dropout_p > 0)
    return att @ v


class KVCache:
    """Keys and values of one attention layer, kept between the steps of incremental decoding.

    Each call appends the keys/values of its new key positions into storage preallocated for
    `capacity` positions (the block size; reused by later batches), and its queries are placed at
    absolute position q_start (set by GPT.decode_step), which picks the causal-mask rows.
    """

    def __init__(self, capacity):
        self.capacity = capacity
        self.q_start = 0
        self.k = self.v = None  # the keys/values so far: (B, nh, length, hs), views of the storage
        self.length = 0
        self._storage = None  # (k, v) buffers of shape (rows, nh, capacity, hs), kept across reset()

    def reset(self):
        """Forget the keys/values (a new batch starts); keep the storage."""
        self.k = self.v = None
        self.length = 0

    def _rows(self, like, rows):
        """Views of the first `rows` rows of storage for tensors like `like`, allocated if too small."""
        shape = (like.size(1), self.capacity, like.size(3))
        s = self._storage
        if s is None or s[0].size(0) < rows or tuple(s[0].shape[1:]) != shape or s[0].dtype != like.dtype \
                or s[0].device != like.device:
            self._storage = s = (like.new_empty(rows, *shape), like.new_empty(rows, *shape))
        return s[0][:rows], s[1][:rows]

    def add(self, k, v):
        """Append the keys/values k, v (B, nh, T, hs) of new positions; return those of all positions."""
        if self.k is None:
            self.k, self.v = self._rows(k, k.size(0))
        T = k.size(2)
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k[:, :, : self.length], self.v[:, :, : self.length]

    def select(self, rows):
        """Keep the batch rows `rows` (a LongTensor; repeats allowed), e.g. dropping finished sequences,
        or copying positions computed once for batch row 0 to every row."""
        if self.k is None:
            return
        n = self.length  # only the filled positions are copied, into the reused storage
        k, v = self.k[:, :, :n].index_select(0, rows), self.v[:, :, :n].index_select(0, rows)
        self.k, self.v = self._rows(self.k, len(rows))
        self.k[:, :, :n] = k
        self.v[:, :, :n] = v


class _AttentionBase(nn.Module):
    """Shared projections: key, query, value, output projection, dropouts, mask."""

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0, "n_embd must be divisible by n_head"
        self.key = nn.Linear(config.n_embd, config.n_embd)
        self.query = nn.Linear(config.n_embd, config.n_embd)
        self.value = nn.Linear(config.n_embd, config.n_embd)
        self.attn_drop_p = config.attn_pdrop
        self.resid_drop = nn.Dropout(config.resid_pdrop)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        # A buffer (not a parameter): moves with .to(device) but is not saved in the state dict.
        self.register_buffer("mask", causal_mask(config.block_size), persistent=False)
        self.n_head = config.n_head
        self.attn_impl = getattr(config, "attn_impl", "auto")
        self.kv_cache = None  # a KVCache only while GPT.decode_step runs

    def _heads(self, x, linear):
        B, T, C = x.size()
        return linear(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

    def use_fused(self, x):
        if self.attn_impl == "auto":
            return x.is_cuda
        return self.attn_impl == "fused"

    def _attend(self, x_kv, x_q):
        B, (_, Tq, C) = x_kv.size(0), x_q.size()
        q = self._heads(x_q, self.query)
        if q.size(0) != B:  # e.g. the perceiver basis C, shared by the whole batch: projected once
            q = q.expand(B, -1, -1, -1)
        k, v = self._heads(x_kv, self.key), self._heads(x_kv, self.value)
        cache = self.kv_cache
        q0 = 0  # absolute position of the first query
        if cache is not None:  # incremental decoding: add the earlier positions' keys/values
            k, v = cache.add(k, v)
            q0 = cache.q_start
        p = self.attn_drop_p if self.training else 0.0
        y = attend(q, k, v, self.mask[q0 : q0 + Tq, : k.size(2)], p, self.use_fused(q))
        y = y.transpose(1, 2).contiguous().view(B, Tq, C)  # re-assemble all head outputs side by side
        return self.resid_drop(self.proj(y))


class CausalSelfAttention(_AttentionBase):
    """Multi-head masked self-attention: position t attends to positions <= t of the same sequence."""

    def forward(self, x):
        return self._attend(x, x)


class CausalCrossAttention(_AttentionBase):
    """Multi-head masked cross-attention.

    forward(x_kv, x_q): keys and values come from x_kv (B, Tk, C), queries from x_q (B, Tq, C).
    The causal mask is the block-size lower-triangular mask cut to [:Tq, :Tk]: query i sees keys
    j <= i.  This is what keeps the Perceiver variant causal.  x_q may have batch size 1 (it is
    then shared by every sequence of x_kv).  Returns (B, Tq, C).
    """

    def forward(self, x_kv, x_q):
        return self._attend(x_kv, x_q)
