#!/usr/bin/env python3
"""Side-by-side speed benchmark: a course-style path against this project's default path.

    python tools/bench/bench.py            # the full run: under 10 minutes on 2 CPU cores
    python tools/bench/bench.py --quick    # a shrunken smoke run (about a minute); its numbers are rough

Everything runs in one process, one measurement after the other, with the same thread count.  A
training path is timed over consecutive steps after a warm-up step, and its fastest step counts (the
same work repeated: the fastest is the one the machine disturbed least; on a shared 2-core machine
the course-style fp32 step varies by up to 1.5x from step to step).

(a) training tokens/s at the course model size (4 layers, 8 heads, width 256, block 128), both
    variants, for a pretraining batch (128 span-corruption examples) and a finetuning batch (256
    birthplace examples, mostly padding).  Course-style (CourseStyleTrainer): plain-math attention,
    fp32, no padding trimming, a dataset that looks up every character in a dictionary, and a new
    4-worker DataLoader every epoch (its start-up is measured and spread over the epoch's steps).
    Default: the project's Trainer.train loop, set up as src/run.py sets it up (the numerics "auto"
    resolves to: on a CPU bf16 where native and the fused AdamW), and its one persistent 4-worker
    DataLoader; a step is timed from the end of the one before.  Both train the same math (the course's
    optimizer groups, data order and schedule; tests/tools/test_bench.py checks they reach the same
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
import datetime
import os
import platform
import random
import sys
import time
import warnings
from pathlib import Path

# the course's loaders use 4 workers whatever the core count; that is what is being measured
warnings.filterwarnings("ignore", message="This DataLoader will create")

from bench_srcpath import ROOT  # noqa: E402  (first: puts src/ on sys.path)

import torch  # noqa: E402

from kit import decoding  # noqa: E402
from submission.dataset import CharCorruptionDataset, NameDataset  # noqa: E402
from submission.trainer import pick_device  # noqa: E402
from kit.training import cpu_has_native_bf16, resolve_precision  # noqa: E402

from bench_common import BLOCK  # noqa: E402
from bench_course import CourseCharCorruption, CourseNameDataset  # noqa: E402
from bench_evaluation import bench_evaluation  # noqa: E402
from bench_memory import bench_memory, memory_child  # noqa: E402
from bench_training import bench_attention_choice, bench_datasets, bench_short_run, bench_training  # noqa: E402


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


class Table:
    def __init__(self):
        self.rows = []

    def add(self, *row):
        self.rows.append(row)

    def markdown(self, header):
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        return "\n".join(out)


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
    print("# tools/bench/bench.py" + (" --quick" if q else ""))
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
