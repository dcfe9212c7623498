"""Sampling, birthplace prediction and evaluation, and seeding."""

import os
import random
import sys

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
        x_cond = x if x.size(1) <= block_size else x[:, -block_size:]
        logits, _ = model(x_cond)
        logits = logits[:, -1, :] / temperature
        if top_k is not None:
            logits = top_k_logits(logits, top_k)
        probs = F.softmax(logits, dim=-1)
        if sample:
            ix = torch.multinomial(probs, num_samples=1)
        else:
            _, ix = torch.topk(probs, k=1, dim=-1)
        x = torch.cat((x, ix), dim=1)
    return x


MAX_ANSWER_CHARS = 32  # characters decoded after "question⁇"


def predict_place(model, question, vocab, device):
    """Greedy-decode up to MAX_ANSWER_CHARS characters after question + MASK_CHAR; the prediction
    is the decoded text up to the next MASK_CHAR.  `vocab` is the pretraining dataset."""
    x = vocab.encode(question + vocab.MASK_CHAR)[None, :].to(device)
    out = sample(model, x, MAX_ANSWER_CHARS, sample=False)[0]
    completion = vocab.decode(out[x.size(1):])
    return completion.split(vocab.MASK_CHAR)[0]


@torch.no_grad()
def predict_places(model, questions, vocab, device, batch_size=128):
    """The same predictions as [predict_place(model, q, vocab, device) for q in questions], fast.

    Greedy decoding of many questions at once with GPT.decode_step (each new character costs one
    position, not a full forward pass), stopping as soon as every question of a batch has produced its
    closing MASK_CHAR or MAX_ANSWER_CHARS characters.  Questions are sorted by length and batched;
    every row keeps its exact absolute positions (no left padding): all rows of a batch start from
    their common prompt length, and a row whose prompt is longer is fed its own prompt characters
    until its prompt is used up.  A question too long to decode without cropping the context to the
    block size goes through predict_place.  Runs in the model's own precision (fp32), in eval mode.
    A cheap check first compares decode_step with the full forward pass on the longest prompt; should
    they disagree (say, a perceiver block written for the whole sequence only), every question goes
    through predict_place instead, with a note on stderr.
    """
    from .model import DecodeState  # imported here, so that utils imports beside any model.py

    model.eval()
    prompts = [vocab.encode(q + vocab.MASK_CHAR) for q in questions]
    predictions = [None] * len(questions)
    fits = []
    for i, prompt in enumerate(prompts):
        if len(prompt) + MAX_ANSWER_CHARS - 1 <= model.get_block_size():
            fits.append(i)
        else:  # the reference crops its context here; do exactly what it does
            predictions[i] = predict_place(model, questions[i], vocab, device)
    fits.sort(key=lambda i: len(prompts[i]))
    if fits and not _decode_step_agrees(model, prompts[fits[-1]], device):
        # e.g. a DownProjectBlock.forward that only accepts the full basis C: stay exact, just slower
        print("note: batched decoding (GPT.decode_step) disagrees with the model's forward pass, so the "
              "questions are answered one at a time (exact, but slower)", file=sys.stderr)
        for i in fits:
            predictions[i] = predict_place(model, questions[i], vocab, device)
        return predictions
    mask_id = vocab.stoi[vocab.MASK_CHAR]
    state = DecodeState()  # one for all batches: its key/value storage is reused
    for b in range(0, len(fits), batch_size):
        rows = fits[b : b + batch_size]
        answers = _greedy_batch(model, [prompts[i] for i in rows], mask_id, device, state)
        for i, answer in zip(rows, answers):
            predictions[i] = vocab.decode(answer).split(vocab.MASK_CHAR)[0]
    return predictions


def _decode_step_agrees(model, prompt, device, atol=1e-3):
    """Whether GPT.decode_step gives the full forward pass's next-token logits for `prompt` (1-D ids),
    fed one position at a time, then in pieces of several positions, then one at a time again (so the
    pieces fall before and across the perceiver's bottleneck length).  A cheap guard: predict_places
    relies on decode_step, which for the perceiver calls the student's down/up blocks on parts of the
    sequence and of the basis C."""
    from .model import DecodeState, NotImplementedPart  # imported here, so that utils imports beside any model.py

    x = prompt[None, :].to(device)
    n = x.size(1)
    cuts = sorted({0, *range(1, min(n, 3)), n // 3, 2 * n // 3, *range(max(n - 3, 1), n + 1)})
    try:
        full = model(x)[0][0]
        state = DecodeState()
        for a, b in zip(cuts, cuts[1:]):
            step = model.decode_step(x[:, a:b], state)
            if step.shape != (1, full.size(-1)) or not torch.allclose(step[0], full[b - 1], atol=atol, rtol=atol):
                return False
    except NotImplementedPart:  # an empty student part: the exact path would say the same, say it now
        raise
    except Exception:  # noqa: BLE001 - any failure of the fast path means: use the exact one
        return False
    return True


def _greedy_batch(model, prompts, mask_id, device, state):
    """Greedy answers (lists of ids, up to MAX_ANSWER_CHARS, ending at the first mask_id) for prompts
    that all fit in the block with MAX_ANSWER_CHARS - 1 more positions.  state: a DecodeState."""
    n = len(prompts)
    lengths = torch.tensor([len(p) for p in prompts])
    seq = torch.zeros(n, int(lengths.max()) + MAX_ANSWER_CHARS, dtype=torch.long)
    for i, prompt in enumerate(prompts):
        seq[i, : len(prompt)] = prompt
    generated = torch.zeros(n, dtype=torch.long)
    done = torch.zeros(n, dtype=torch.bool)
    active = torch.arange(n)  # the rows still in the decoding batch
    state.reset()
    pos = int(lengths.min())  # the position predicted next
    # positions every prompt shares (e.g. "Where was ") are computed once, for row 0, then copied
    same = (seq[:, : pos - 1] == seq[:1, : pos - 1]).all(dim=0)
    shared = int(same.long().cumprod(0).sum()) if n > 1 else 0
    if shared:
        model.decode_step(seq[:1, :shared].to(device), state, rows=torch.zeros(0, dtype=torch.long))
        state.select(torch.zeros(n, dtype=torch.long, device=device))
    tokens = seq[:, shared:pos]
    while True:
        wanted = ((lengths[active] <= pos) & ~done[active]).nonzero()[:, 0]  # rows whose answer goes on
        logits = model.decode_step(tokens.to(device), state, rows=wanted.to(device))
        # the same choice as sample(): the most probable token of the softmax
        nxt = torch.topk(F.softmax(logits.float(), dim=-1), k=1, dim=-1)[1][:, 0].cpu()
        rows = active[wanted]
        seq[rows, pos] = nxt
        generated[rows] += 1
        done[rows] |= (nxt == mask_id) | (generated[rows] >= MAX_ANSWER_CHARS)
        still = ~done[active]
        if not still.any():
            break
        if 8 * int((~still).sum()) >= len(active):  # drop finished rows once they are an eighth of the batch
            keep = still.nonzero()[:, 0]
            state.select(keep.to(device))
            active = active[keep]
        tokens = seq[active, pos : pos + 1]
        pos += 1
    return [seq[i, lengths[i] : lengths[i] + generated[i]].tolist() for i in range(n)]


def read_questions(path):
    """The question column of a birthplace TSV (answers, if present, are ignored)."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\r\n").split("\t")[0] for line in f if line.strip()]


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


def write_lines_atomic(path, lines):
    """Write one line per item; the file appears complete or not at all."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
    os.replace(tmp, path)
