"""Utilities the assignment gives: seeding, sampling from a model, and scoring predicted birthplaces."""

import random

import numpy as np
import torch
from torch.nn import functional as F


def set_seed(seed):
    """Seed Python, NumPy and PyTorch (all devices) so runs are reproducible."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def top_k_logits(logits, k):
    """Keep each row's k largest logits; the others become -inf, probability 0 after the softmax."""
    v, _ = torch.topk(logits, k)
    out = logits.clone()
    out[out < v[:, [-1]]] = -float("inf")
    return out


@torch.no_grad()
def sample(model, x, steps, temperature=1.0, sample=False, top_k=None):
    """Extend the conditioning sequence x (LongTensor (B, T)) by `steps` tokens, one at a time,
    feeding each prediction back in.  The context is cropped to the model's block size.
    sample=False takes the most likely token (greedy); sample=True draws from the softmax,
    optionally restricted to the top_k tokens."""
    block_size = model.get_block_size()
    model.eval()
    for _ in range(steps):
        # the model has no position embedding beyond block_size: keep only the latest tokens
        x_cond = x if x.size(1) <= block_size else x[:, -block_size:]
        logits, _ = model(x_cond)
        logits = logits[:, -1, :] / temperature  # the last position's logits predict the next token
        if top_k is not None:
            logits = top_k_logits(logits, top_k)
        probs = F.softmax(logits, dim=-1)
        if sample:
            ix = torch.multinomial(probs, num_samples=1)
        else:
            _, ix = torch.topk(probs, k=1, dim=-1)
        x = torch.cat((x, ix), dim=1)
    return x


def evaluate_places(filepath, predicted_places):
    """Compare predicted places with the gold places of a TSV file (question<TAB>place).

    Returns (total, correct) as floats.  If the file has no answer column, says so and returns (0, 0).
    """
    with open(filepath, encoding="utf-8") as fin:
        lines = [line.rstrip("\r\n").split("\t") for line in fin if line.strip()]
    if not lines or len(lines[0]) == 1:
        print("No gold birth places provided; returning (0,0)")
        return (0, 0)
    true_places = [fields[1] for fields in lines]
    if len(true_places) != len(predicted_places):
        raise ValueError(
            f"{filepath} has {len(true_places)} questions but there are {len(predicted_places)} predictions"
        )
    correct = sum(1 for t, p in zip(true_places, predicted_places) if t == p)
    return (float(len(true_places)), float(correct))
