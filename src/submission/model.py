"""GPT language model (a minGPT fork) with two variants.

vanilla:   token + position embeddings -> n_layer Blocks at length T -> LayerNorm -> logits
perceiver: embeddings -> DownProjectBlock (length T -> m = bottleneck_dim)
           -> n_layer - 2 Blocks at length m -> UpProjectBlock (length m -> T) -> LayerNorm -> logits

References: Karpathy's minGPT; Hawthorne et al., "General-purpose, long-context autoregressive modeling with
Perceiver AR" (arXiv:2202.07765), the handout's PerceiverAR, of which the perceiver variant is a simpler version.
"""

import torch
import torch.nn as nn
from torch.nn import functional as F

from .attention import CausalCrossAttention, CausalSelfAttention


class GPTConfig:
    """Model hyperparameters. Required: vocab_size, block_size; the rest may be given as keywords
    (n_layer, n_head, n_embd, ...). Dropouts default to 0.1, the vanilla variant is the default."""

    embd_pdrop = 0.1
    resid_pdrop = 0.1
    attn_pdrop = 0.1
    perceiver = False
    bottleneck_dim = None
    # "auto" (the fused scaled_dot_product_attention, on every device), "fused" or "math" (the formula spelt out)
    attn_impl = "auto"

    def __init__(self, vocab_size, block_size, **kwargs):
        self.vocab_size = vocab_size
        self.block_size = block_size
        for k, v in kwargs.items():
            setattr(self, k, v)


def _mlp(config):
    return nn.Sequential(
        nn.Linear(config.n_embd, 4 * config.n_embd),
        nn.GELU(),
        nn.Linear(4 * config.n_embd, config.n_embd),
        nn.Dropout(config.resid_pdrop),
    )


class Block(nn.Module):
    """A standard pre-LayerNorm Transformer block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, config):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.mlp = _mlp(config)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class DownProjectBlock(nn.Module):
    """Part (g): the perceiver's first layer, which shortens the sequence from T to m = bottleneck_dim.

    Input x_input: (B, T, n_embd), the embedded characters.  Output: (B, m, n_embd).

    Spec (the handout's equation (3)): cross-attention in which a learnable basis C of m rows is the
    query and the input X supplies the keys and values, so row j of the output mixes the inputs at
    positions 0..j (the causal mask of CausalCrossAttention does the cutting).  The block is otherwise
    shaped like Block: an attention sub-layer with a residual connection around it (the residual stream
    starts from C, the query), then a pre-LayerNorm MLP sub-layer, the same MLP as Block's, with its own
    residual connection.  The attention sub-layer's LayerNorm normalises C (the course's hint) and X (as
    Block normalises its input).  Normalising C alone is also correct, but then the keys keep the
    embeddings' small initial scale, every row starts as a near-uniform average of its inputs, and the
    perceiver learns several times slower.

    - The basis: an nn.Parameter named C of shape (1, bottleneck_dim, n_embd), shared by every sequence
      of the batch, initialised with Xavier-uniform initialisation.
    - Layers: two LayerNorms over n_embd, one CausalCrossAttention(config), one MLP built like Block's.
    - Read CausalCrossAttention.forward in attention.py to see which argument gives the keys/values
      and which the queries.
    """

    def __init__(self, config):
        super().__init__()
        ### TODO: [part g]
        ### START CODE HERE ###
        self.C = nn.Parameter(torch.empty(1, config.bottleneck_dim, config.n_embd))
        nn.init.xavier_uniform_(self.C)
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalCrossAttention(config)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.mlp = _mlp(config)
        ### END CODE HERE ###

    def forward(self, x_input):
        """x_input (B, T, n_embd) -> the bottleneck (B, m, n_embd), as the class docstring specifies."""
        x = None
        ### TODO: [part g]
        ### START CODE HERE ###
        x = self.C + self.attn(self.ln1(x_input), self.ln1(self.C))
        x = x + self.mlp(self.ln2(x))
        ### END CODE HERE ###
        return x


class UpProjectBlock(nn.Module):
    """Part (g): the perceiver's last layer, which brings the sequence back from m to T positions.

    Inputs: y (B, m, n_embd), the output of the previous layer (the bottleneck), and x_input
    (B, T, n_embd), the same embedded characters the DownProjectBlock received.  Output: (B, T, n_embd).

    Spec (the handout's equation (4)): cross-attention in which the original input X is the query and
    the layer-normalised bottleneck y supplies the keys and values, so output position t is built from
    x_input at position t and from bottleneck rows 0..t.  As in Block: a pre-LayerNorm attention sub-layer
    with a residual connection (the residual stream starts from x_input, the query), then a
    pre-LayerNorm MLP sub-layer, the same MLP as Block's, with its own residual connection.

    - Layers: two LayerNorms over n_embd, one CausalCrossAttention(config), one MLP built like Block's.
    """

    def __init__(self, config):
        super().__init__()
        ### TODO: [part g]
        ### START CODE HERE ###
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalCrossAttention(config)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.mlp = _mlp(config)
        ### END CODE HERE ###

    def forward(self, y, x_input):
        """y (B, m, n_embd) and x_input (B, T, n_embd) -> (B, T, n_embd), as the class docstring specifies."""
        x = None
        ### TODO: [part g]
        ### START CODE HERE ###
        x = x_input + self.attn(self.ln1(y), x_input)
        x = x + self.mlp(self.ln2(x))
        ### END CODE HERE ###
        return x


class GPT(nn.Module):
    """The full language model, with a context size of block_size."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, config.block_size, config.n_embd))
        self.drop = nn.Dropout(config.embd_pdrop)
        self.perceiver = bool(config.perceiver)
        if self.perceiver:
            self.down_block = DownProjectBlock(config)
            n_inner = config.n_layer - 2  # the down and up blocks count as two of the n_layer layers
        else:
            n_inner = config.n_layer
        self.blocks = nn.Sequential(*[Block(config) for _ in range(n_inner)])
        if self.perceiver:
            self.up_block = UpProjectBlock(config)
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.block_size = config.block_size
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        """idx: (B, T) token ids with T <= block_size.  Returns (logits (B, T, vocab), loss or None).
        The loss is the mean cross entropy over positions whose target is not PAD (id 0)."""
        b, t = idx.size()
        assert t <= self.block_size, f"Cannot forward a sequence of {t} tokens, block size is {self.block_size}"
        x = self.drop(self.tok_emb(idx) + self.pos_emb[:, :t, :])  # token + position embeddings
        if self.perceiver:
            x_input = x
            x = self.down_block(x)
        x = self.blocks(x)
        if self.perceiver:
            x = self.up_block(x, x_input)
        logits = self.head(self.ln_f(x))

        loss = None
        if targets is not None:
            # fp32 loss even under bf16 autocast; PAD (id 0) positions carry no loss.
            loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=0)
        return logits, loss
