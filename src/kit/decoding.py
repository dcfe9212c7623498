"""Answering the birthplace questions: the course's one-question loop, and the fast path run.py uses.

The course answers a question by greedy sampling (submission.utils.sample): 32 times, a full forward
pass over question + answer so far, keeping the most probable next character.  `predict_place` is
exactly that.  `predict_places` gives the same answers 50-170 times faster (measured on CPUs), for three
reasons:

- a key/value cache: every attention layer keeps the keys and values of the positions it has seen, so
  a new character costs one position per layer instead of a pass over the whole sequence (`CachedDecoder`);
- batching: questions sorted by length are decoded together, the prefix they share ("Where was ") is
  computed once, and finished answers leave the batch;
- it stops at the closing MASK_CHAR instead of always decoding 32 characters.

None of this is in the student's files.  `CachedDecoder` runs the student's model by its parts: for the
duration of each call it gives the attention modules an instance-level `forward` that appends the new
keys/values to the cache and attends from the new queries only, reusing attention.py's own
`split_heads` and `attend`.  For the perceiver it runs the student's DownProjectBlock on the basis rows
of the new positions: torch.func.functional_call with a slice of the basis, which is found by what it is
(the block's one tensor of shape (1, m, n_embd) or (m, n_embd), whatever the student named it, as the
grader finds it), not by its name.  A valid block may still refuse a slice (say, it expands the basis to
exactly m rows); then the down block runs on the whole basis and only the new rows are kept (about twice
the time, still far faster than one question at a time).  `predict_places` checks the cached path against
the model's forward pass first, and only if no way of running the down block agrees does it answer one
question at a time (the same answers, many times slower), saying so on stderr.  The instructor's test
suite checks the paths against each other.
"""

import contextlib
import sys

import torch
from torch.nn import functional as F

from kit import course
from kit.fileio import read_tsv, write_text_atomic
from submission.attention import CausalCrossAttention, CausalSelfAttention
from submission.utils import sample

MAX_ANSWER_CHARS = course.ANSWER_CHARS  # characters the course decodes after "question⁇"


def read_questions(path):
    """The question column of a birthplace TSV (answers, if present, are ignored)."""
    return [row[0] for row in read_tsv(path)]


def has_answers(path):
    """Whether a birthplace TSV has an answer column (the test set's are held out), as utils.evaluate_places
    decides it: by the first line.  run.py asks first, so that a file without answers gets one message."""
    rows = read_tsv(path)
    return bool(rows) and len(rows[0]) > 1


def write_predictions(path, predictions):
    """One prediction per line; the file appears complete or not at all (fileio.atomic_path)."""
    write_text_atomic(path, "".join(line + "\n" for line in predictions))


def predict_place(model, question, vocab, device):
    """The course's answer: greedy-decode MAX_ANSWER_CHARS characters after question + MASK_CHAR with
    utils.sample; the prediction is the text up to the next MASK_CHAR.  `vocab` is the pretraining dataset."""
    x = vocab.encode(question + vocab.MASK_CHAR)[None, :].to(device)
    out = sample(model, x, MAX_ANSWER_CHARS, sample=False)[0]
    return vocab.decode(out[x.size(1) :]).split(vocab.MASK_CHAR)[0]


# ------------------------------------------------------------------------------------ the key/value cache


class KVCache:
    """Keys and values of one attention layer, kept between the steps of incremental decoding.

    Each call appends the keys/values of its new key positions into storage preallocated for `capacity`
    positions (the block size; reused by later batches); its queries sit at absolute position q_start,
    which picks the causal-mask rows.
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


def _cached_forward(module, cache):
    """An attention module's forward, cached: the keys/values of x_kv are appended to the cache, and the
    queries of x_q (the newest positions, from cache.q_start on) attend to every position cached so far.
    One signature for both classes: self-attention is cross-attention of x with itself."""

    def forward(x_kv, x_q=None):
        x_q = x_kv if x_q is None else x_q
        k, v = cache.add(module.split_heads(x_kv, module.key), module.split_heads(x_kv, module.value))
        q = module.split_heads(x_q, module.query).expand(k.size(0), -1, -1, -1)
        q0 = cache.q_start
        y = module.attend(q, k, v, module.mask[q0 : q0 + q.size(2), : k.size(2)])
        return module.resid_drop(module.proj(y))

    return forward


def _attention_layers(module):
    return [m for m in module.modules() if isinstance(m, (CausalSelfAttention, CausalCrossAttention))]


def basis_names(down, m, n_embd):
    """The names of the down block's tensors shaped like the perceiver's basis C, (1, m, n_embd) or (m, n_embd):
    the grader accepts either shape under any name, so the basis is found by its shape (and, when several
    tensors have it, by which one makes the cached path agree with the forward pass: predict_places)."""
    shapes = ((1, m, n_embd), (m, n_embd))
    named = [*down.named_parameters(), *down.named_buffers()]
    return [name for name, t in named if tuple(t.shape) in shapes]


class CachedDecoder:
    """Incremental decoding of one batch of sequences with a GPT in eval mode.

    step(idx) takes the next positions of every sequence and returns the logits of the last one: the
    same as model(<all tokens so far>)[0][:, -1], but only the new positions are computed.  reset()
    starts a new batch (the caches keep their storage, so its memory is reused); select(rows) keeps
    some rows of the batch.

    basis (perceiver only): the name of the DownProjectBlock's basis tensor (basis_names; default: the first
    found), whose rows of the new positions are the down block's queries; None runs the down block on its
    whole basis and keeps the new rows (for a block that only accepts the whole basis).
    """

    FIRST = object()  # basis: the first of basis_names

    def __init__(self, model, basis=FIRST):
        self.model = model
        if basis is CachedDecoder.FIRST:
            names = basis_names(model.down_block, model.config.bottleneck_dim,
                                model.config.n_embd) if model.perceiver else []
            basis = names[0] if names else None
        self.basis = basis
        self.caches = {}  # attention module -> KVCache
        self.length = 0  # positions given so far

    def reset(self):
        self.length = 0
        for cache in self.caches.values():
            cache.reset()

    def select(self, rows):
        """Keep the batch rows `rows` (a LongTensor of indices; repeats allowed): drop finished
        sequences, or copy positions computed once for row 0 to every row."""
        for cache in self.caches.values():
            cache.select(rows)

    @contextlib.contextmanager
    def _cached(self, layers, q_start):
        """For the duration of one call, each attention layer forwards through its KVCache, with its
        queries from position q_start on."""
        for layer in layers:
            cache = self.caches.setdefault(layer, KVCache(layer.mask.size(0)))
            cache.q_start = q_start
            layer.forward = _cached_forward(layer, cache)  # an instance attribute shadows the class's forward
        try:
            yield
        finally:
            for layer in layers:
                del layer.forward

    @torch.no_grad()
    def step(self, idx, rows=None):
        """idx (B, T): the tokens at positions length .. length + T - 1 of the batch's B sequences.
        Returns (len(rows), vocab) logits of the last of these positions for the batch rows `rows` (a
        LongTensor, default all); every row's tokens are taken in any case.

        vanilla: the blocks run on the new positions.  perceiver: bottleneck row j only sees inputs 0..j,
        so it is final as soon as input j is known; the down block (with the basis rows of the new
        positions as its queries; with basis None, all m rows, of which the new ones are kept) and the
        inner blocks run on the new bottleneck rows only, until all m = bottleneck_dim rows exist; the up
        block runs on the last position only.
        """
        model = self.model
        assert not model.training, "cached decoding is for eval mode (call model.eval())"
        start, end = self.length, self.length + idx.size(1)
        block = model.get_block_size()
        assert end <= block, f"Cannot decode position {end - 1}, block size is {block}"
        self.length = end
        x = model.drop(model.tok_emb(idx) + model.pos_emb[:, start:end])  # as GPT.forward, at positions start..
        if not model.perceiver:
            with self._cached(_attention_layers(model.blocks), start):
                x = model.blocks(x)
        else:
            m = model.config.bottleneck_dim
            a, b = min(start, m), min(end, m)  # the bottleneck rows that become final now
            if a < b:
                down = model.down_block
                if self.basis is not None:
                    # keys: the inputs; queries: basis rows a..b-1 (the rows are the second-to-last axis of
                    # either shape, (1, m, n_embd) or (m, n_embd))
                    basis = dict([*down.named_parameters(), *down.named_buffers()])[self.basis]
                    with self._cached(_attention_layers(down), a):
                        y = torch.func.functional_call(down, {self.basis: basis[..., a:b, :]}, (x,))
                else:
                    # the whole basis as queries, from row 0: rows b.. see only part of their inputs (the
                    # others are not known yet) and are dropped; rows a..b-1 are exact
                    with self._cached(_attention_layers(down), 0):
                        y = down(x)[:, a:b]
                with self._cached(_attention_layers(model.blocks), a):
                    y = model.blocks(y)
            else:
                y = x[:, :0]  # no new bottleneck rows: the up block's keys/values are all cached
            with self._cached(_attention_layers(model.up_block), end - 1):
                x = model.up_block(y, x[:, -1:])  # only the last position's logits are needed
        x = x[:, -1, :] if rows is None else x[rows, -1, :]
        return model.head(model.ln_f(x))


# ------------------------------------------------------------------------------ batched greedy decoding


@torch.no_grad()
def predict_places(model, questions, vocab, device, batch_size=128):
    """The same predictions as [predict_place(model, q, vocab, device) for q in questions], fast.

    Greedy decoding of many questions at once with a CachedDecoder, stopping as soon as every question
    of a batch has produced its closing MASK_CHAR or MAX_ANSWER_CHARS characters.  Questions are sorted
    by length and batched; every row keeps its exact absolute positions (no left padding): all rows of a
    batch start from their common prompt length, and a row whose prompt is longer is fed its own prompt
    characters until its prompt is used up.  A question too long to decode without cropping the context
    to the block size goes through predict_place.  Runs in the model's own precision (fp32), in eval
    mode.  A cheap check first finds a way of running the model by parts that gives the full forward
    pass's logits (fast_decoder); should none, every question goes through predict_place instead, with
    one line on stderr that says why and what it costs.
    """
    model.eval()
    prompts = [vocab.encode(q + vocab.MASK_CHAR) for q in questions]
    predictions = [None] * len(questions)
    fits = []
    for i, prompt in enumerate(prompts):
        if len(prompt) + MAX_ANSWER_CHARS - 1 <= model.get_block_size():
            fits.append(i)
        else:  # the course's loop crops its context here; do exactly what it does
            predictions[i] = predict_place(model, questions[i], vocab, device)
    if not fits:
        return predictions
    fits.sort(key=lambda i: len(prompts[i]))
    decoder, why = fast_decoder(model, prompts[fits[-1]], device)
    if decoder is None:
        print(f"note: the fast evaluation cannot run this model a few positions at a time ({why}), so the "
              f"{len(fits)} questions are answered one at a time by the course's loop: the same answers, "
              f"{SLOWER}", file=sys.stderr)
        for i in fits:
            predictions[i] = predict_place(model, questions[i], vocab, device)
        return predictions
    mask_id = vocab.stoi[vocab.MASK_CHAR]
    for b in range(0, len(fits), batch_size):  # one decoder for all batches: its key/value storage is reused
        rows = fits[b : b + batch_size]
        answers = greedy_batch(decoder, [prompts[i] for i in rows], mask_id, device)
        for i, answer in zip(rows, answers):
            predictions[i] = vocab.decode(answer).split(vocab.MASK_CHAR)[0]
    return predictions


# what answering one question at a time costs, against the fast path (the module docstring's measurement)
SLOWER = "50-170 times slower"


def fast_decoder(model, prompt, device):
    """(a CachedDecoder whose steps give the forward pass's logits on `prompt` (1-D ids), None), or (None, why
    none does, in a few words).

    The perceiver's down block is run on the basis rows of the new positions, the basis being each tensor
    of the basis's shape in turn (basis_names: usually exactly one), then, failing that, on the whole basis
    (basis None): a valid block may refuse a part of its basis, and the whole basis costs about twice the
    time (all m rows of the down block at every step until the bottleneck is full)."""
    x = prompt[None, :].to(device)
    # outside any try: whatever the forward pass raises (an empty student part), the exact path would too
    with torch.no_grad():
        full = model(x)[0][0]
    if model.perceiver:
        cfg = model.config
        decoders = [CachedDecoder(model, basis)
                    for basis in [*basis_names(model.down_block, cfg.bottleneck_dim, cfg.n_embd), None]]
    else:
        decoders = [CachedDecoder(model)]
    for decoder in decoders:
        why = disagreement(decoder, x, full)
        if why is None:
            return decoder, None
    return None, why


def disagreement(decoder, x, full, atol=1e-3):
    """None if decoder.step gives the logits `full` (T, vocab) of the forward pass on x (1, T), fed one position
    at a time, then in pieces of several positions, then one at a time again (so the pieces fall before and
    across the perceiver's bottleneck length); else what went wrong, in a few words.  A cheap guard: for the
    perceiver the cached path calls the student's down/up blocks on parts of the sequence and of the basis.
    The decoder is reset afterwards."""
    n = x.size(1)
    cuts = sorted({0, *range(1, min(n, 3)), n // 3, 2 * n // 3, *range(max(n - 3, 1), n + 1)})
    try:
        for a, b in zip(cuts, cuts[1:]):
            step = decoder.step(x[:, a:b])
            if step.shape != (1, full.size(-1)):
                return f"a step gave logits of shape {tuple(step.shape)}"
            if not torch.allclose(step[0], full[b - 1], atol=atol, rtol=atol):
                diff = (step[0] - full[b - 1]).abs().max().item()
                return f"its logits at position {b - 1} differ from the forward pass's by {diff:.2g}"
    except Exception as e:  # noqa: BLE001 - any failure of the cached path means: use the exact one
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no message'}"
    finally:
        decoder.reset()
    return None


def greedy_batch(decoder, prompts, mask_id, device):
    """Greedy answers (lists of ids, up to MAX_ANSWER_CHARS, ending at the first mask_id) for prompts
    that all fit in the block with MAX_ANSWER_CHARS - 1 more positions, decoded together by `decoder`
    (a CachedDecoder, reset here).  mask_id -1 never comes: every answer runs the full length."""
    n = len(prompts)
    lengths = torch.tensor([len(p) for p in prompts])
    seq = torch.zeros(n, int(lengths.max()) + MAX_ANSWER_CHARS, dtype=torch.long)
    for i, prompt in enumerate(prompts):
        seq[i, : len(prompt)] = prompt
    generated = torch.zeros(n, dtype=torch.long)
    done = torch.zeros(n, dtype=torch.bool)
    active = torch.arange(n)  # the rows still in the decoding batch
    decoder.reset()
    pos = int(lengths.min())  # the position predicted next
    # positions every prompt shares (e.g. "Where was ") are computed once, for row 0, then copied
    same = (seq[:, : pos - 1] == seq[:1, : pos - 1]).all(dim=0)
    shared = int(same.long().cumprod(0).sum()) if n > 1 else 0
    if shared:
        decoder.step(seq[:1, :shared].to(device), rows=torch.zeros(0, dtype=torch.long))
        decoder.select(torch.zeros(n, dtype=torch.long, device=device))
    tokens = seq[:, shared:pos]
    while True:
        wanted = ((lengths[active] <= pos) & ~done[active]).nonzero()[:, 0]  # rows whose answer goes on
        logits = decoder.step(tokens.to(device), rows=wanted.to(device))
        # the same choice as utils.sample: the most probable token of the softmax
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
            decoder.select(keep.to(device))
            active = active[keep]
        tokens = seq[active, pos : pos + 1]
        pos += 1
    return [seq[i, lengths[i] : lengths[i] + generated[i]].tolist() for i in range(n)]
