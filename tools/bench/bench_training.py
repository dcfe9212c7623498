"""tools/bench/bench.py's training parts: (a) training tokens/s, course-style against the default path, and the
default path with each attention implementation; (c) dataset samples/s; (d) a short run's final losses in the
default precision against fp32.

Imported by bench.py after it has put src/ on sys.path (tools/srcpath.py).
"""

import math
import random
import statistics
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from submission.trainer import TrainerConfig
from kit.training import resolve_precision

from bench_common import BLOCK, WORKERS, build_model, default_trainer, run_steps, sync, timed_run
from bench_course import CourseStyleTrainer


# ----------------------------------------------------------------------------------------- (a) training


def loader_startup(dataset, batch_size, repeats=3):
    """Seconds from creating a fresh 4-worker DataLoader to its first batch (the course pays this
    every epoch)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        loader = DataLoader(dataset, batch_size=batch_size, num_workers=WORKERS)
        next(iter(loader))
        times.append(time.perf_counter() - t0)
        del loader
    return statistics.median(times)


def forever(loader):
    while True:
        yield from loader


def best_step(step, rounds, device):
    """Seconds of the fastest of `rounds` consecutive calls of step(), after one warm-up call
    (allocations, kernel selection).  Consecutive, as in training; the fastest, because the same work
    is repeated and the fastest call is the one the machine disturbed least."""
    step()
    times = []
    for _ in range(rounds):
        sync(device)
        t0 = time.perf_counter()
        step()
        sync(device)
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_training(kind, fast_ds, course_ds, batch_size, perceiver, rounds, device, summary):
    name = f"{'perceiver' if perceiver else 'vanilla'} {kind} (batch {batch_size})"
    vocab_size = len(fast_ds.itos)

    # course-style: plain math, fp32, no trimming, per-character dataset, a new loader per epoch
    course_model = build_model(vocab_size, perceiver, attn_impl="math").train()
    course = CourseStyleTrainer(course_model, course_ds, TrainerConfig(batch_size=batch_size, num_workers=WORKERS),
                                device)
    course_batches = forever(course.loader)

    def course_step():
        return course.step(*next(course_batches))

    # the project's default path: the Trainer's own loop and its persistent loader, the warm-up step untimed
    model = build_model(vocab_size, perceiver)
    trainer = default_trainer(model, fast_ds, device, batch_size=batch_size, num_workers=WORKERS)

    startup = loader_startup(course_ds, batch_size)
    steps_per_epoch = math.ceil(len(fast_ds) / batch_size)
    course_t = best_step(course_step, rounds, device) + startup / steps_per_epoch
    fast_t = min(timed_run(trainer, rounds + 1, device)[1][1:])
    tokens = batch_size * (BLOCK - 1)
    course_tps, fast_tps = tokens / course_t, tokens / fast_t
    print(f"  {name}: course-style {course_tps:8,.0f} tok/s ({course_t:.2f} s/step, of which loader start-up "
          f"{startup:.2f} s / {steps_per_epoch} steps per epoch)  default {fast_tps:8,.0f} tok/s "
          f"({fast_t:.2f} s/step)  ratio {fast_tps / course_tps:.2f}x", flush=True)
    summary.add(name, f"{course_tps:,.0f}", f"{fast_tps:,.0f}", f"**{fast_tps / course_tps:.2f}×**")
    return fast_tps


def bench_attention_choice(vocab, rounds, device, summary):
    """The default path with each attention implementation (same batch): which one "auto" should pick."""
    random.seed(0)
    x, y = next(iter(DataLoader(vocab, batch_size=128)))
    for perceiver in (False, True):
        tps = {}
        for impl in ("math", "fused"):
            model = build_model(vocab.vocab_size, perceiver, attn_impl=impl)
            # the same batch every step, as many steps as timed_run needs (a warm-up, then `rounds`)
            same_batch = TensorDataset(x.repeat(rounds + 1, 1), y.repeat(rounds + 1, 1))
            trainer = default_trainer(model, same_batch, device, batch_size=len(x))
            tps[impl] = x.numel() / min(timed_run(trainer, rounds + 1, device)[1][1:])
        label = "perceiver" if perceiver else "vanilla"
        print(f"  {label} pretraining step, default precision: plain-math attention {tps['math']:8,.0f} tok/s  "
              f"fused SDPA {tps['fused']:8,.0f} tok/s", flush=True)
        summary.add(f"{label} pretraining step", f"{tps['math']:,.0f}", f"{tps['fused']:,.0f}",
                    f"{tps['fused'] / tps['math']:.2f}")


# ----------------------------------------------------------------------------------------- (c) datasets


def bench_datasets(pairs, n, summary):
    for label, fast, per_char in pairs:
        idx = [random.randrange(len(fast)) for _ in range(n)]
        best = {}
        for _ in range(3):
            for which, ds in (("course", per_char), ("fast", fast)):
                t0 = time.perf_counter()
                for i in idx:
                    ds[i]
                best[which] = min(best.get(which, float("inf")), time.perf_counter() - t0)
        c, f = n / best["course"], n / best["fast"]
        print(f"  {label}: per-character dictionary {c:9,.0f} samples/s  pre-encoded {f:9,.0f} samples/s  "
              f"ratio {f / c:.1f}x", flush=True)
        summary.add(label, f"{c:,.0f}", f"{f:,.0f}", f"**{f / c:.1f}×**")


# ----------------------------------------------------------------------------------------- (d) short run


def short_run(vocab, precision, steps, seed, device, size):
    random.seed(seed)
    model = build_model(vocab.vocab_size, False, seed=seed, **size)
    torch.manual_seed(seed)
    losses, elapsed = run_steps(model, vocab, steps, 32, 1e-3, device, precision)
    tail = losses[-max(10, steps // 6):]
    return statistics.mean(tail), statistics.stdev(tail) / math.sqrt(len(tail)), elapsed


def bench_short_run(vocab, steps, device, summary):
    size = dict(n_layer=4, n_head=4, n_embd=128)
    fast_p = resolve_precision(device, "auto")
    fast, fast_se, fast_t = short_run(vocab, "auto", steps, 0, device, size)
    ref, ref_se, ref_t = short_run(vocab, "fp32", steps, 0, device, size)
    other, _, _ = short_run(vocab, "fp32", steps, 1, device, size)
    print(f"  {steps} steps, batch 32, width 128, 4 layers, lr 1e-3 on the pretraining corpus; final loss = "
          f"mean of the last {max(10, steps // 6)} steps:", flush=True)
    print(f"    default ({fast_p}) {fast:.4f} ± {fast_se:.4f}  ({fast_t:.0f} s)   fp32 {ref:.4f} ± {ref_se:.4f} "
          f"({ref_t:.0f} s)   difference {fast - ref:+.4f}; fp32 with another seed {other:.4f} "
          f"(seed-to-seed difference {other - ref:+.4f})", flush=True)
    summary.add(f"{steps} steps, width 128", f"{ref:.3f}", f"{fast:.3f} ({fast_p})", f"{fast - ref:+.3f}",
                f"{other - ref:+.3f}", f"{ref_t / fast_t:.2f}×")
