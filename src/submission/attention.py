"""Causal self-attention and causal cross-attention (from Karpathy's minGPT).

Both layers compute softmax(Q K^T / sqrt(d)) V for all heads at once, in `attend`, the one place the
formula lives.  The config's attn_impl picks how it runs: "math" spells the formula out; "fused" hands
it to PyTorch's scaled_dot_product_attention, whose CUDA kernels (flash / memory-efficient attention)
never store the T x T matrix of weights; "auto", the default, is the kit's choice: the fused kernel, on
every device (on a CPU in fp32 it measured 7-15 % faster than the math, or within 2 %).  Under bf16 autocast
the fused kernels keep the scores and the softmax in fp32, as on a GPU; the math would round
the scores to bf16 first.  Both give the same numbers in fp32 (a test checks it).
"""

import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class _AttentionBase(nn.Module):
    """What both attention layers share: the key, query and value projections, the output projection,
    the dropouts, the causal mask, and the attention computation itself."""

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0, "n_embd must be divisible by n_head"
        # key, query, value projections for all heads
        self.key = nn.Linear(config.n_embd, config.n_embd)
        self.query = nn.Linear(config.n_embd, config.n_embd)
        self.value = nn.Linear(config.n_embd, config.n_embd)
        # regularization
        self.attn_drop = nn.Dropout(config.attn_pdrop)
        self.resid_drop = nn.Dropout(config.resid_pdrop)
        # output projection
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        # causal mask, True where query i may look at key j (j <= i).  A buffer, not a parameter: it
        # moves with .to(device), but it holds nothing learned, so it stays out of the saved state dict.
        block = config.block_size
        self.register_buffer("mask", torch.tril(torch.ones(block, block, dtype=torch.bool)), persistent=False)
        self.n_head = config.n_head
        self.attn_impl = getattr(config, "attn_impl", "auto")

    def split_heads(self, x, linear):
        """Project x (B, T, C) with `linear`, then give each head its own slice of the channels:
        (B, nh, T, hs) with hs = C / nh, heads next to the batch dimension so they run in parallel."""
        B, T, C = x.size()
        return linear(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def attend(self, q, k, v, mask):
        """Every head's queries q (B, nh, Tq, hs) attend to its keys k and values v (B, nh, Tk, hs);
        mask (Tq, Tk) is True where query i may look at key j.  Returns the heads' outputs side by side,
        (B, Tq, C)."""
        if self.attn_impl != "math":  # "fused" or "auto": the same formula in one PyTorch kernel
            p = self.attn_drop.p if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        else:
            # (B, nh, Tq, hs) x (B, nh, hs, Tk) -> (B, nh, Tq, Tk); dividing by sqrt(hs) keeps the
            # scores' spread independent of the head size, so the softmax does not saturate
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(~mask, float("-inf"))  # weight exactly 0 after the softmax
            att = F.softmax(att, dim=-1)
            att = self.attn_drop(att)
            y = att @ v  # (B, nh, Tq, Tk) x (B, nh, Tk, hs) -> (B, nh, Tq, hs)
        B, nh, Tq, hs = y.size()
        return y.transpose(1, 2).contiguous().view(B, Tq, nh * hs)  # re-assemble all head outputs side by side


class CausalSelfAttention(_AttentionBase):
    """A multi-head masked self-attention layer with a projection at the end: position t of a sequence
    attends to positions 0..t of the same sequence.  x (B, T, C) -> (B, T, C)."""

    def forward(self, x):
        # x: (batch, T, n_embd), (batch x l x d) in the handout; nh heads of hs = n_embd / nh channels
        T = x.size(1)
        q = self.split_heads(x, self.query)  # (B, nh, T, hs)
        k = self.split_heads(x, self.key)
        v = self.split_heads(x, self.value)
        y = self.attend(q, k, v, self.mask[:T, :T])
        return self.resid_drop(self.proj(y))  # output projection


class CausalCrossAttention(_AttentionBase):
    """Multi-head masked cross-attention: the queries come from one sequence, the keys and values from
    another.  x_kv (B, Tk, C) and x_q (B, Tq, C) -> (B, Tq, C).

    The mask is the self-attention one cut to [:Tq, :Tk]: query i sees keys 0..i, which is what keeps
    the Perceiver variant causal.  x_q may have batch size 1 (the perceiver's basis C): it is then
    shared by every sequence of x_kv.
    """

    def forward(self, x_kv, x_q):
        Tk, Tq = x_kv.size(1), x_q.size(1)
        # keys and values of x_kv
        k = self.split_heads(x_kv, self.key)  # (B, nh, Tk, hs)
        v = self.split_heads(x_kv, self.value)
        # queries with x_q; a batch of one is broadcast to x_kv's batch
        q = self.split_heads(x_q, self.query).expand(k.size(0), -1, -1, -1)  # (B, nh, Tq, hs)
        y = self.attend(q, k, v, self.mask[:Tq, :Tk])
        return self.resid_drop(self.proj(y))  # output projection
