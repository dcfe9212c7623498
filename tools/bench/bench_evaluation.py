"""tools/bench/bench.py's part (b): evaluation questions/s, decoding one question at a time against the batched
decoding, and the perceiver written three ways (the reference, a renamed basis, a block that takes only its
whole basis).

Imported by bench.py after it has put src/ on sys.path (tools/srcpath.py).
"""

import copy
import statistics
import time

import torch

from kit import decoding

from bench_common import build_model, run_steps, sync


# ----------------------------------------------------------------------------------------- (b) evaluation


def bench_evaluation(vocab, names, questions, perceiver, subset, train_steps, device, summary):
    label = "perceiver" if perceiver else "vanilla"
    model = build_model(vocab.vocab_size, perceiver)
    # a briefly finetuned model answers like a trained one (a place, then MASK_CHAR)
    run_steps(model, names, train_steps, 64, 6e-4, device)
    model.to(device).eval()
    # one at a time on an evenly spread subset, each question timed (the median is robust to
    # load spikes), alternating with the batched runs (the best of them)
    some = questions[:: max(1, len(questions) // subset)][:subset]
    one, per_question, batched_times = [], [], []
    for part in range(3):
        for q in some[part::3]:
            sync(device)
            t0 = time.perf_counter()
            one.append((q, decoding.predict_place(model, q, vocab, device)))
            sync(device)
            per_question.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        batched = decoding.predict_places(model, questions, vocab, device)
        sync(device)
        batched_times.append(time.perf_counter() - t0)
    # the batched path's worst case: no answer ever closes (mask id -1 never comes), 32 characters each
    prompts = sorted((p for p in (vocab.encode(q + vocab.MASK_CHAR) for q in questions)
                      if len(p) + decoding.MAX_ANSWER_CHARS - 1 <= model.get_block_size()), key=len)
    decoder = decoding.CachedDecoder(model)
    t0 = time.perf_counter()
    with torch.no_grad():
        for b in range(0, len(prompts), 128):
            decoding.greedy_batch(decoder, prompts[b : b + 128], -1, device)
    sync(device)
    qps_worst = len(prompts) / (time.perf_counter() - t0)
    answer = dict(zip(questions, batched))
    same = sum(answer[q] == p for q, p in one)
    qps_one, qps_batched = 1 / statistics.median(per_question), len(questions) / min(batched_times)
    chars = statistics.mean(len(p) for p in batched)
    print(f"  {label}: one at a time {qps_one:6.1f} q/s (median of {len(some)} questions timed one by one; "
          f"{len(questions)} would take {len(questions) / qps_one:.0f} s)  batched {qps_batched:7.1f} q/s "
          f"({len(questions)} questions in {min(batched_times):.2f} s, best of 3)  ratio {qps_batched / qps_one:.0f}x"
          f"  identical predictions {same}/{len(some)}  (answers: {chars:.1f} characters on average)\n"
          f"    batched with every answer forced to {decoding.MAX_ANSWER_CHARS} characters: {qps_worst:7.1f} q/s, ratio "
          f"{qps_worst / qps_one:.0f}x", flush=True)
    summary.add(f"{label}, {len(questions)} questions", f"{qps_one:.1f}", f"{qps_batched:.0f} ({chars:.1f} chars)",
                f"**{qps_batched / qps_one:.0f}×**", f"{qps_worst:.0f} ({qps_worst / qps_one:.0f}×)",
                f"{same}/{len(some)}")
    if perceiver:
        bench_basis_names(model, vocab, questions, batched, device)


class RenamedDown(torch.nn.Module):
    """The reference's DownProjectBlock (same weights, same function) as another student may write it: the
    basis an (m, n_embd) matrix named `latents`, the layers under other names; with whole=True it expands the
    basis to exactly m rows, so that the fast path cannot give it a slice of the basis."""

    def __init__(self, block, whole=False):
        super().__init__()
        self.latents = torch.nn.Parameter(block.C.detach()[0].clone())
        self.pre, self.xattn, self.post, self.ff = block.ln1, block.attn, block.ln2, block.mlp
        self.m, self.whole = self.latents.size(0), whole

    def forward(self, x):
        q = self.latents[None]
        if self.whole:  # m fixed at construction: a slice of the basis given in its place no longer fits
            q = q.expand(x.size(0), self.m, -1)
        h = q + self.xattn(self.pre(x), self.pre(q))
        return h + self.ff(self.post(h))


def bench_basis_names(model, vocab, questions, reference, device, rounds=6):
    """predict_places on the reference perceiver and on the same function written with other names: the basis
    found by its shape and sliced, or, for a block that takes only its whole basis, the whole basis.  Timed in
    turn, `rounds` times, each variant going first in turn (on a shared machine the best of a few runs still
    varies by up to 2x, so the medians are compared too)."""
    variants = {"reference (C, (1, m, n_embd))": model}
    for label, whole in (("renamed (m, n_embd) basis", False), ("renamed, whole basis only", True)):
        twin = copy.deepcopy(model)
        twin.down_block = RenamedDown(twin.down_block, whole)
        variants[label] = twin.eval()
    times, same = {label: [] for label in variants}, {}
    for r in range(rounds):
        order = list(variants)[r % len(variants):] + list(variants)[: r % len(variants)]
        for label in order:
            sync(device)
            t0 = time.perf_counter()
            answers = decoding.predict_places(variants[label], questions, vocab, device)
            sync(device)
            times[label].append(time.perf_counter() - t0)
            same[label] = sum(a == b for a, b in zip(answers, reference))
    base, n = times[next(iter(variants))], len(questions)
    for label, ts in times.items():
        median, best = statistics.median(ts), min(ts)
        print(f"    perceiver, {label}: {1000 * median / n:.2f} ms/question (median of {rounds}; best "
              f"{1000 * best / n:.2f}), {median / statistics.median(base):.2f}x the reference's (best: "
              f"{best / min(base):.2f}x), identical predictions {same[label]}/{n}", flush=True)
