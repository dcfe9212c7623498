"""The course's model written out for the judge: its forward pass in plain tensor operations, with a key/value
cache, and the course's greedy answer decoded from it (checks/predictions.py checks prediction files with it).

No student code runs here, and none of the student's modules is imported: the parameters come as a dict of
tensors whose roles params.fit has found (`weights`), and every layer of the given GPT and of the
handout's perceiver blocks is a few lines below.  Why not decoding.py, which runs the student's model fast:
a judge must never import the student's modules, and this forward computes every reading of the perceiver's
blocks that the grader accepts from one set of parameters.  A self-check in checks.params ties it to the
reference's code.
"""

import math

from kit import course
from graderUtil import Fail

MASK = course.MASK_CHAR
MODEL = course.MODEL  # the handout's model (run.py's defaults)


def _ln(x, p):
    from torch.nn import functional as F

    return F.layer_norm(x, (x.size(-1),), p[0], p[1], 1e-5)


def _lin(x, p):
    from torch.nn import functional as F

    return F.linear(x, p[0], p[1])


def _mlp(x, blk):
    from torch.nn import functional as F

    return _lin(F.gelu(_lin(_ln(x, blk["ln2"]), blk["fc1"])), blk["fc2"])


def _heads(x, nh):
    b, t, c = x.shape
    return x.view(b, t, nh, c // nh).transpose(1, 2)


def _attend(q, k, v, allowed):
    """softmax(q k^T / sqrt(hs)) v per head; allowed (Tq, Tk) or None (every key); heads side by side."""
    import torch

    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if allowed is not None:
        att = att.masked_fill(~allowed, float("-inf"))
    y = torch.softmax(att, dim=-1) @ v
    b, nh, t, hs = y.shape
    return y.transpose(1, 2).reshape(b, t, nh * hs)


def _block(x, blk, nh, cache=None):
    """The given Block on x (B, T, C); with cache [k, v] (or [None, None]): x holds the new positions only and
    attends to every cached one."""
    import torch

    a = _ln(x, blk["ln1"])
    at = blk["attn"]
    q, k, v = (_heads(_lin(a, at[r]), nh) for r in ("q", "k", "v"))
    allowed = None
    if cache is not None:
        if cache[0] is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        cache[0], cache[1] = k, v
    if x.size(1) > 1:
        t, tk = x.size(1), k.size(2)
        allowed = torch.ones(t, tk, dtype=torch.bool).tril(tk - t)
    h = x + _lin(_attend(q, k, v, allowed), at["o"])
    return h + _mlp(h, blk)


def _cross(query, kv, blk, nh, allowed):
    """A perceiver block in its reading: query (B or 1, Tq, C) attends to kv (B, Tk, C)."""
    qn = _ln(query, blk["ln_q"]) if blk["ln_q"] is not None else query
    kvn = _ln(kv, blk["ln_kv"]) if blk["ln_kv"] is not None else kv
    at = blk["attn"]
    k, v = _heads(_lin(kvn, at["k"]), nh), _heads(_lin(kvn, at["v"]), nh)
    q = _heads(_lin(qn, at["q"]), nh).expand(k.size(0), -1, -1, -1)
    residual = {"query": query, "normalised query": qn, "none": 0}[blk["res"]]
    h = residual + _lin(_attend(q, k, v, allowed), at["o"])
    return h + _mlp(h, blk)


def _bottleneck(w, x):
    """The perceiver's bottleneck (B, m, C) from the embedded input x (B, T, C): row j sees positions 0..j."""
    import torch

    down = w["down"]
    m = down["C"].size(1)
    allowed = torch.ones(m, x.size(1), dtype=torch.bool).tril()
    y = _cross(down["C"], x, down, w["n_head"], allowed)
    for blk in w["blocks"]:
        y = _block(y, blk, w["n_head"])
    return y


def _up(w, y, x, first):
    """The up block at the positions first, first+1, ... of x (B, T, C): position t sees bottleneck rows 0..t."""
    import torch

    rows = torch.arange(y.size(1))
    allowed = rows[None, :] <= torch.arange(first, first + x.size(1))[:, None]  # not a bar: a causal mask
    return _cross(x, y, w["up"], w["n_head"], allowed)


def logits(w, idx, shared=None):
    """The course's model's logits (B, T, vocab) for idx (B, T), T <= block_size: the reference's forward.
    shared: a dict that the caller keeps over calls on this same idx with readings of one params file (a search
    over the perceiver's readings): each down block's bottleneck, which the up block's readings share, is then
    computed once, where it is most of the work."""
    x = w["tok"][idx] + w["pos"][:, :idx.size(1)]
    if w["variant"] == "vanilla":
        for blk in w["blocks"]:
            x = _block(x, blk, w["n_head"])
    else:
        held = (shared or {}).get(id(w["down"]))
        if held is None or held[0] is not w["down"]:  # the block itself is kept with it: an id is never reused
            held = (w["down"], _bottleneck(w, x))
            if shared is not None:
                shared[id(w["down"])] = held
        x = _up(w, held[1], x, 0)
    return _lin(_ln(x, w["ln_f"]), (w["head"], None))


class _Decoder:
    """Greedy decoding of a batch of prompts of one length, with a cache: per layer the keys/values (vanilla),
    or the bottleneck, which no longer changes once the input is m characters long (perceiver)."""

    def __init__(self, w, x):
        self.w, self.x, self.block = w, x, MODEL["block_size"]
        self.caches = [[None, None] for _ in w["blocks"]] if w["variant"] == "vanilla" else None
        self.bottleneck = None
        self.cached = 0  # positions in the caches (vanilla), from position 0: valid while nothing is cropped

    def keep(self, rows):
        self.x = self.x[rows]
        if self.caches:
            for c in self.caches:
                if c[0] is not None:
                    c[0], c[1] = c[0][rows], c[1][rows]
        if self.bottleneck is not None:
            self.bottleneck = self.bottleneck[rows]

    def next_logits(self):
        w, x, n = self.w, self.x, self.x.size(1)
        if n > self.block:  # the course crops the context: positions shift, nothing cached is valid
            return logits(w, x[:, -self.block:])[:, -1]
        if w["variant"] == "vanilla":
            h = w["tok"][x[:, self.cached:]] + w["pos"][:, self.cached:n]
            for blk, cache in zip(w["blocks"], self.caches):
                h = _block(h, blk, w["n_head"], cache)
            self.cached = n
            return _lin(_ln(h[:, -1:], w["ln_f"]), (w["head"], None))[:, -1]
        m = w["down"]["C"].size(1)
        emb = w["tok"][x] + w["pos"][:, :n]
        y = self.bottleneck if self.bottleneck is not None else _bottleneck(w, emb[:, :min(n, m)])
        if n >= m:
            self.bottleneck = y
        out = _up(w, y, emb[:, -1:], n - 1)
        return _lin(_ln(out, w["ln_f"]), (w["head"], None))[:, -1]


def greedy_answers(w, questions, stoi):
    """The course's answer to each question: the text decoded after question + MASK up to the next MASK, at
    most course.ANSWER_CHARS characters; batched by question length, finished answers leave the batch."""
    import torch

    itos = {i: ch for ch, i in stoi.items()}
    answers = [None] * len(questions)
    by_length = {}
    for i, q in enumerate(questions):
        by_length.setdefault(len(q), []).append(i)
    with torch.no_grad():
        for rows in by_length.values():
            dec = _Decoder(w, torch.tensor([[stoi[ch] for ch in questions[i] + MASK] for i in rows]))
            out = {i: [] for i in rows}
            live = list(rows)
            for _ in range(course.ANSWER_CHARS):
                scores = dec.next_logits()
                if not bool(torch.isfinite(scores).all()):  # argmax would pick a NaN: no answer of a model
                    raise Fail("the params compute NaN or inf logits (weights too large for float32 arithmetic): "
                               "they are not a trained model's")
                nxt = scores.argmax(dim=-1)
                still = []
                for r, i in enumerate(live):
                    t = int(nxt[r])
                    if t == stoi[MASK]:
                        continue
                    out[i].append(itos[t])
                    still.append(r)
                if not still:
                    break
                if len(still) < len(live):
                    dec.keep(torch.tensor(still))
                    nxt = nxt[still]
                    live = [live[r] for r in still]
                dec.x = torch.cat([dec.x, nxt[:, None]], dim=1)
            for i in rows:
                answers[i] = "".join(out[i])
    return answers


def agreement_score(w, questions, answers, stoi, shared=None):
    """(lines whose answer is the greedy one, their log-probability) with the answers fed in: one pass, right
    padded (the model is causal by construction: a position never sees what comes after it).  shared: as
    logits', over readings of one params file on these questions and answers."""
    import torch

    seqs, wanted = [], []
    for q, a in zip(questions, answers):
        if any(ch not in stoi for ch in a) or MASK in a or len(a) > course.ANSWER_CHARS:
            continue
        tail = [stoi[ch] for ch in a] + ([stoi[MASK]] if len(a) < course.ANSWER_CHARS else [])
        seq = [stoi[ch] for ch in q + MASK] + tail
        if len(seq) - 1 <= MODEL["block_size"]:  # position len(q) (the MASK) predicts tail[0], and so on
            seqs.append(seq[:-1])
            wanted.append((len(q), tail))
    if not seqs:
        return 0, 0.0
    longest = max(len(s) for s in seqs)
    idx = torch.tensor([s + [0] * (longest - len(s)) for s in seqs])
    with torch.no_grad():
        logp = torch.log_softmax(logits(w, idx, shared), dim=-1)
    agree, total = 0, 0.0
    for r, (start, tail) in enumerate(wanted):
        rows = logp[r, start:start + len(tail)]
        target = torch.tensor(tail)
        agree += int(torch.equal(rows.argmax(dim=-1), target))
        total += float(rows.gather(1, target[:, None]).sum())
    return agree, total
