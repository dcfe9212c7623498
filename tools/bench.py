#!/usr/bin/env python3
"""Side-by-side speed benchmark: a course-style path against this project's default path.

    python tools/bench.py            # the full run: under 10 minutes on 2 CPU cores
    python tools/bench.py --quick    # a shrunken smoke run (about a minute); its numbers are rough

Everything runs in one process, one measurement after the other, with the same thread count.  A
training path is timed over consecutive steps after a warm-up step, and its fastest step counts (the
same work repeated: the fastest is the one the machine disturbed least; on a shared 2-core machine
the course-style fp32 step varies by up to 1.5x from step to step).

(a) training tokens/s at the course model size (4 layers, 8 heads, width 256, block 128), both
    variants, for a pretraining batch (128 span-corruption examples) and a finetuning batch (256
    birthplace examples, mostly padding).  Course-style (CourseStyleTrainer): plain-math attention,
    fp32, no padding trimming, a dataset that looks up every character in a dictionary, and a new
    4-worker DataLoader every epoch (its start-up is measured and spread over the epoch's steps).
    Default: the project's Trainer.train loop, set up as src/run.py sets it up (the precision
    "auto" resolves to; fused AdamW, and TF32 on CUDA), and its one persistent 4-worker DataLoader;
    a step is timed from the end of the one before.  Both train the same math (the course's
    optimizer groups, data order and schedule; tests/test_bench.py checks they reach the same
    parameters), so only the speed differs.
    Tokens/s counts every position of the batch (127 per example) for both paths.
(b) evaluation questions/s on the dev questions: decoding.predict_place one question at a time (on a
    subset, extrapolated) against the batched decoding.predict_places, and whether they agree.  The
    one-at-a-time path always runs 32 full forward passes; the batched one stops when every answer
    is closed, so it is also timed with every answer forced to run the full 32 characters.  For the
    perceiver, the same function written with a renamed (m, n_embd) basis and as a block that takes only
    its whole basis is timed against the reference, back to back (ms per question and the ratio).
(c) dataset samples/s: the project's pre-encoded datasets against per-character-dictionary ones.
(d) a short training run in the default precision against the same run in fp32 (final losses).
(e) peak memory of one default training step (a fresh process per measurement).

Data: the built-in course-sized world in src/data (2,937 biographies, 2,000 training and 500 dev
questions), or --data DIR (e.g. ../shared/course-data), which is only read.
"""

import argparse
import contextlib
import copy
import datetime
import math
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

# the course's loaders use 4 workers whatever the core count; that is what is being measured
warnings.filterwarnings("ignore", message="This DataLoader will create")

import srcpath
from srcpath import ROOT

srcpath.use()

import torch  # noqa: E402
from torch.utils.data import DataLoader, Dataset, TensorDataset  # noqa: E402

import course  # noqa: E402
import decoding  # noqa: E402
from submission.dataset import CharCorruptionDataset, NameDataset  # noqa: E402
from submission.model import GPT, GPTConfig  # noqa: E402
from submission.trainer import Trainer, TrainerConfig, lr_multiplier, make_optimizer, pick_device  # noqa: E402
from training import cpu_has_native_bf16, place, resolve_precision  # noqa: E402

COURSE_MODEL = {k: v for k, v in course.MODEL.items() if k != "block_size"}  # the handout's model
BLOCK = course.MODEL["block_size"]
BOTTLENECK = course.BOTTLENECK_DIM
WORKERS = 4  # the course's num_workers


# ----------------------------------------------------------------------------------------- data


def find_data(requested):
    """The built-in course-sized world (src/data) unless --data names another folder, e.g.
    ../shared/course-data; the folder is only read."""
    path = Path(requested) if requested else ROOT / "src" / "data"
    needed = ("wiki.txt", "birth_places_train.tsv", "birth_dev.tsv")
    missing = [n for n in needed if not (path / n).is_file()]
    if missing:
        sys.exit(f"error: {path} lacks {', '.join(missing)}: pass --data with a folder that has {', '.join(needed)}")
    return path, f"{'--data' if requested else 'built-in course-sized world'} ({path})"


class CourseStyle(Dataset):
    """The course's way of serving a project dataset's lines: build strings, then look every character
    up in a dictionary on each access."""

    def __init__(self, fast):
        self.data, self.stoi, self.block_size = fast.data, fast.stoi, fast.block_size
        self.MASK_CHAR, self.PAD_CHAR = fast.MASK_CHAR, fast.PAD_CHAR

    def __len__(self):
        return len(self.data)

    def ids(self, s):
        return torch.tensor([self.stoi[c] for c in s], dtype=torch.long)


class CourseCharCorruption(CourseStyle):
    """Course-style span corruption.  Draws the same random numbers as CharCorruptionDataset, so it
    yields the same examples."""

    def __getitem__(self, idx):
        doc = self.data[idx][: random.randint(4, int(self.block_size * 3 / 4))]
        n = len(doc)
        masked_len = random.randint(1, max(1, n // 2))
        start = random.randint(0, n - masked_len)
        s = (doc[:start] + self.MASK_CHAR + doc[start + masked_len:] + self.MASK_CHAR
             + doc[start:start + masked_len] + self.MASK_CHAR)
        s = s + self.PAD_CHAR * (self.block_size - len(s))
        return self.ids(s[:-1]), self.ids(s[1:])


class CourseNameDataset(CourseStyle):
    """Course-style birthplace data (the same examples as NameDataset)."""

    def __getitem__(self, idx):
        inp, oup = self.data[idx].split("\t")
        x = inp + self.MASK_CHAR + oup + self.MASK_CHAR
        x = x + self.PAD_CHAR * (self.block_size - len(x))
        y = self.PAD_CHAR * (len(inp) - 1) + x[len(inp):]
        return self.ids(x[:-1]), self.ids(y)


# ----------------------------------------------------------------------------------------- helpers


def machine_lines(device):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    lines = [
        f"date        {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"machine     {cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}",
        f"python      {platform.python_version()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} intra-op threads",
        f"device      {device}" + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else
                                   f" (CPU capability {torch.backends.cpu.get_cpu_capability()}, "
                                   f"native bf16: {'yes' if cpu_has_native_bf16() else 'no'})"),
        f"defaults    precision auto -> {resolve_precision(device, 'auto')}, attention "
        f"{'fused SDPA' if device.type == 'cuda' else 'plain math'}",
    ]
    return lines


def build_model(vocab_size, perceiver, attn_impl="auto", seed=0, **size):
    torch.manual_seed(seed)
    cfg = GPTConfig(vocab_size, BLOCK, attn_impl=attn_impl, **{**COURSE_MODEL, **size})
    if perceiver:
        cfg.perceiver, cfg.bottleneck_dim = True, BOTTLENECK
    return GPT(cfg)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


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


def default_trainer(model, dataset, device, precision="auto", **conf):
    """A Trainer on the project's default path, set up as src/run.py sets one up: on `device`, in the
    precision `precision` resolves to there, with the fused AdamW (and TF32 on CUDA).  It runs until timed_run
    stops it."""
    conf = {"max_epochs": 10**6, "show_progress": False, **conf}
    trainer = Trainer(model, dataset, None, TrainerConfig(**conf))
    place(trainer, device, precision)
    return trainer


class EnoughSteps(Exception):
    """Raised by timed_run's callback to end a training run once it has timed the steps it wants."""


def timed_run(trainer, steps, device):
    """Run trainer.train() for `steps` optimisation steps: (each step's loss, each step's seconds).  A step
    is timed from the end of the one before, as training runs them, batch loading included; the first
    from the start of train(), so it includes the set-up and stands as the warm-up."""
    losses, times, last = [], [], [time.perf_counter()]

    def on_batch_end(t):
        sync(device)
        now = time.perf_counter()
        losses.append(t.loss)
        times.append(now - last[0])
        last[0] = now
        if len(losses) == steps:
            raise EnoughSteps

    trainer.add_callback("on_batch_end", on_batch_end)
    try:
        trainer.train()
    except EnoughSteps:
        pass
    return losses, times


class CourseStyleTrainer:
    """The course's training loop, step for step, for timing against ours: the full block in fp32
    through whatever attention the model was built with, AdamW with the course's groups
    (make_optimizer), batches in dataset order from a DataLoader whose workers restart every epoch,
    and the learning rate set after each step for the next one."""

    def __init__(self, model, dataset, config, device):
        self.model, self.config, self.device = model.to(device), config, device
        self.optimizer = make_optimizer(model, config)  # the plain (unfused) AdamW
        # not persistent: every pass over it starts its workers again, as the course's new loader per epoch
        self.loader = DataLoader(dataset, batch_size=config.batch_size, num_workers=config.num_workers)
        self.tokens = 0

    def step(self, x, y):
        """One training step on the batch; returns the loss."""
        model, config = self.model, self.config
        x, y = x.to(self.device), y.to(self.device)
        _, loss = model(x, y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
        self.optimizer.step()
        if config.lr_decay:
            self.tokens += int((y >= 0).sum())
            for group in self.optimizer.param_groups:
                group["lr"] = config.learning_rate * lr_multiplier(self.tokens, config)
        return loss.item()


class Table:
    def __init__(self):
        self.rows = []

    def add(self, *row):
        self.rows.append(row)

    def markdown(self, header):
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        return "\n".join(out)


# ----------------------------------------------------------------------------------------- (a) training


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


def run_steps(model, dataset, steps, batch_size, lr, device, precision="auto"):
    """`steps` default-path training steps (Trainer.train) on batches of dataset (in dataset order): the
    losses and the seconds the steps took."""
    trainer = default_trainer(model, dataset, device, precision, batch_size=batch_size, learning_rate=lr)
    losses, times = timed_run(trainer, steps, device)
    return losses, sum(times)


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


# ----------------------------------------------------------------------------------------- (e) memory


def memory_child(args):
    """Run in a fresh process: the peak memory one training step adds (printed as one number, MiB)."""
    device = pick_device(args.device)
    data_dir = Path(args.memory_child[2])
    vocab = CharCorruptionDataset((data_dir / "wiki.txt").read_text(encoding="utf-8"), BLOCK)
    perceiver, path = args.memory_child[0] == "perceiver", args.memory_child[1]
    model = build_model(vocab.vocab_size, perceiver, attn_impl="math" if path == "course" else "auto").to(device)
    random.seed(0)
    x, y = next(iter(DataLoader(vocab, batch_size=128)))
    if path == "course":  # the course's step: fp32, full blocks
        course = CourseStyleTrainer(model, vocab, TrainerConfig(batch_size=128, num_workers=0), device)

        def two_steps():
            course.step(x, y)
            course.step(x, y)
    else:  # two steps of the Trainer's loop on that batch
        trainer = default_trainer(model, TensorDataset(x.repeat(2, 1), y.repeat(2, 1)), device, batch_size=128,
                                  max_epochs=1)

        def two_steps():
            trainer.train()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        two_steps()
        peak = torch.cuda.max_memory_allocated() - base
    elif proc_status("VmRSS") is not None:  # Linux
        base = proc_status("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:  # reset the peak mark (VmHWM) to the current RSS
            f.write("5")
        two_steps()
        peak = proc_status("VmHWM") - base
    else:  # no /proc: growth of ru_maxrss (bytes on macOS, KiB elsewhere); a lower bound
        unit = 1 if sys.platform == "darwin" else 1024
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
        two_steps()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit - base
    print(f"{peak / 2**20:.0f}")


def proc_status(field):
    """A memory figure of /proc/self/status in bytes (None where there is no /proc)."""
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def bench_memory(data_dir, device, summary):
    what = ("CUDA: torch.cuda.max_memory_allocated over two steps minus what was allocated before"
            if device.type == "cuda" else
            "CPU: peak resident set size (/proc VmHWM, reset before the steps) over two steps minus the RSS "
            "before them")
    print(f"  ({what}, in a fresh process, batch 128 of pretraining data, optimizer state included)")
    for variant, path in (("vanilla", "default"), ("perceiver", "default"), ("vanilla", "course")):
        cmd = [sys.executable, __file__, "--memory-child", variant, path, str(data_dir)]
        if device.type == "cuda":
            cmd += ["--device", str(device)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        mib = r.stdout.strip().splitlines()[-1] if r.returncode == 0 else f"failed: {r.stderr[-300:]}"
        print(f"  {variant} {path}: {mib} MiB", flush=True)
        summary.add(f"{variant}, {'course-style fp32' if path == 'course' else 'default'} step", f"{mib} MiB")


# ----------------------------------------------------------------------------------------- main


@contextlib.contextmanager
def part(title):
    """Print a part's title, run it, print how long it took."""
    print(f"\n{title}", flush=True)
    t0 = time.time()
    yield
    print(f"  [{time.time() - t0:.0f} s]", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="a shrunken smoke run; its numbers are rough")
    p.add_argument("--data", help="folder with wiki.txt, birth_places_train.tsv, birth_dev.tsv")
    p.add_argument("--device", help="cuda or cpu (default: the fastest available)")
    p.add_argument("--rounds", type=int,
                   help="timed steps per training path (default 4, finetuning one fewer; --quick 1)")
    p.add_argument("--eval-subset", type=int, help="questions answered one at a time (default 45; --quick 9)")
    p.add_argument("--eval-train-steps", type=int,
                   help="finetuning steps before the evaluation benchmark so the model answers like a trained one "
                        "(default 60; --quick 40)")
    p.add_argument("--short-run-steps", type=int, help="steps of the loss comparison (default 150; --quick 30)")
    p.add_argument("--only", default="abcde", help="which parts to run, e.g. --only bc")
    p.add_argument("--memory-child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.memory_child:
        return memory_child(args)
    q = args.quick
    rounds = args.rounds or (1 if q else 4)
    subset = args.eval_subset or (9 if q else 45)
    train_steps = args.eval_train_steps if args.eval_train_steps is not None else (40 if q else 60)
    short_steps = args.short_run_steps or (30 if q else 150)

    device = pick_device(args.device)
    start = time.time()
    print("# tools/bench.py" + (" --quick" if q else ""))
    for line in machine_lines(device):
        print(line)
    data_dir, data_label = find_data(args.data)
    print(f"data        {data_label}")
    vocab = CharCorruptionDataset((data_dir / "wiki.txt").read_text(encoding="utf-8"), BLOCK)
    names = NameDataset((data_dir / "birth_places_train.tsv").read_text(encoding="utf-8"), vocab)
    questions = decoding.read_questions(data_dir / "birth_dev.tsv")
    print(f"            {len(vocab)} pretraining lines, vocabulary {vocab.vocab_size}, {len(names)} finetuning "
          f"lines, {len(questions)} dev questions")
    course_vocab, course_names = CourseCharCorruption(vocab), CourseNameDataset(names)
    random.seed(0)
    a = vocab[5]
    random.seed(0)
    b = course_vocab[5]
    assert all(torch.equal(u, v) for u, v in zip(a, b)), "the course-style dataset must give the same examples"
    summaries = {}

    if "a" in args.only:
        with part(f"(a) training, course model size, best of {rounds} consecutive steps per path (after a "
                  f"warm-up step)"):
            t = summaries["a"] = Table()
            fast = {}
            for perceiver in (False, True):
                fast[perceiver] = bench_training("pretraining", vocab, course_vocab, 128, perceiver, rounds,
                                                 device, t)
            for perceiver in (False, True):
                bench_training("finetuning", names, course_names, 256, perceiver, max(1, rounds - 1), device, t)
            print(f"  perceiver / vanilla (pretraining, default path): {fast[True] / fast[False]:.2f}x")
            bench_attention_choice(vocab, rounds, device, summaries.setdefault("a2", Table()))

    if "b" in args.only:
        with part(f"(b) evaluation, greedy decoding of {len(questions)} questions (fp32, eval mode, model "
                  f"finetuned {train_steps} steps first)"):
            t = summaries["b"] = Table()
            for perceiver in (False, True):
                bench_evaluation(vocab, names, questions, perceiver, subset, train_steps, device, t)

    if "c" in args.only:
        with part("(c) datasets, samples/s of __getitem__ (single process)"):
            t = summaries["c"] = Table()
            random.seed(0)
            bench_datasets([("CharCorruptionDataset", vocab, course_vocab), ("NameDataset", names, course_names)],
                           2000 if q else 20000, t)

    if "d" in args.only:
        with part("(d) short training run: default precision against fp32"):
            t = summaries["d"] = Table()
            bench_short_run(vocab, short_steps, device, t)

    if "e" in args.only:
        with part("(e) peak memory of a training step"):
            t = summaries["e"] = Table()
            bench_memory(data_dir, device, t)

    print(f"\nfinished in {time.time() - start:.0f} s\n")
    headers = {
        "a": ["training (tokens/s)", "course-style", "default", "ratio"],
        "a2": ["attention, default precision (tokens/s)", "plain math", "fused SDPA", "fused / math"],
        "b": ["evaluation (questions/s)", "one at a time", "batched (mean answer)", "ratio",
              "batched, 32 chars each (ratio)", "identical"],
        "c": ["dataset (samples/s)", "per-character dictionary", "pre-encoded", "ratio"],
        "d": ["short run (final loss)", "fp32", "default", "difference", "fp32 seed-to-seed", "speed"],
        "e": ["peak memory", "increase"],
    }
    for key, table in summaries.items():
        print(table.markdown(headers[key]))
        print()


if __name__ == "__main__":
    main()
