#!/usr/bin/env python3
"""The course's own training loop against the kit's, on this machine's fastest device: a few epochs of the vanilla
pretraining each, and the minutes a whole pretraining would take.

    python tools/bench/bench_course_loop.py --course-starter ../shared/course-starter --epochs 4 --json speed.json
    python tools/bench/bench_course_loop.py --course-starter DIR --epochs 2 --lines 256    # a CPU rehearsal

The course's side is the course starter's own trainer.py and model.py (its vanilla GPT: the course gives its
attention), loaded from the folder --course-starter names; the kit never ships them.  The kit's side is the
reference's Trainer as src/run.py sets it up for `./run.sh vanilla_pretrain`: training.place (the default
numerics: on CUDA the course's, on a CPU bf16 where native and the fused AdamW; --compile as `./run.sh
vanilla_pretrain compile`), the capped
DataLoader workers, the checkpoint and the loss log.  Both train the course-size model on the same batches of the
reference's CharCorruptionDataset over the built-in wiki.txt (or --data), with the pretraining's settings as the
reference's helper.pretrain gives them (the course's), for --epochs epochs instead of all of them.

An epoch's time runs from the end of the one before (the device synchronised); the first epoch, which holds the
start-up (workers, kernel choice, compilation), is reported apart.  A whole pretraining is estimated as the first
epoch plus the median of the others for each remaining epoch.  The results go to stdout and, with --json, to a
file (written atomically).
"""

import argparse
import datetime
import importlib
import json
import platform
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

from bench_srcpath import SRC  # first: puts src/ on sys.path
import torch

from kit import course, parts, training
from kit.fileio import write_text_atomic
from submission import helper, model
from submission.trainer import pick_device

from bench_common import BLOCK, COURSE_MODEL, pretraining_corpus, sync

PACKAGE = "course_starter_submission"  # the course's files, imported under a name of their own


class NotAStarter(Exception):
    """--course-starter names a folder without the course's files: one sentence, exit status 2."""


def course_modules(folder):
    """The course starter's model.py and trainer.py, imported from folder/submission without its __init__.py
    (which imports the parts a student writes)."""
    source = Path(folder) / "submission"
    if not (source / "model.py").is_file() or not (source / "trainer.py").is_file():
        raise NotAStarter(f"{folder} is not the course's starter: it has no submission/model.py and "
                          "submission/trainer.py; give the folder that holds them")
    package = types.ModuleType(PACKAGE)
    package.__path__ = [str(source)]
    sys.modules[PACKAGE] = package
    return importlib.import_module(f"{PACKAGE}.model"), importlib.import_module(f"{PACKAGE}.trainer")


def epoch_seconds(stamps):
    return [round(b - a, 4) for a, b in zip(stamps, stamps[1:])]


def summary(seconds, epochs_in_full_run, steps_per_epoch):
    first, rest = seconds[0], seconds[1:] or seconds
    median = statistics.median(rest)
    full = first + (epochs_in_full_run - 1) * median
    return {"epoch_seconds": seconds, "first_epoch_seconds": first, "median_epoch_seconds": round(median, 4),
            "steps_per_second": round(steps_per_epoch / median, 1), "full_pretraining_minutes": round(full / 60, 2)}


def time_course(course_model, course_trainer, corpus, settings, epochs, seed):
    """The course's Trainer, as its run.py drives it, for `epochs` epochs: (epoch seconds, device)."""
    torch.manual_seed(seed)
    net = course_model.GPT(course_model.GPTConfig(corpus.vocab_size, BLOCK, **COURSE_MODEL))
    tconf = course_trainer.TrainerConfig(**dict(settings, max_epochs=epochs))
    trainer = course_trainer.Trainer(net, corpus, None, tconf)
    device = torch.device("cuda", trainer.device) if isinstance(trainer.device, int) else torch.device(trainer.device)
    stamps = []

    def stamp():  # the course's loop saves a checkpoint (none here: ckpt_path is None) at each epoch's end
        sync(device)
        stamps.append(time.perf_counter())

    trainer.save_checkpoint = stamp
    stamp()
    trainer.train()
    return epoch_seconds(stamps), device


def time_kit(corpus, epochs, seed, compile, workdir):
    """The reference's Trainer as run.py sets it up for `./run.sh vanilla_pretrain`, for `epochs` epochs."""
    torch.manual_seed(seed)
    net = parts.new_model(helper, "vanilla", model.GPTConfig(corpus.vocab_size, BLOCK, **COURSE_MODEL),
                          course.BOTTLENECK_DIM)
    tconf, trainer = parts.training_pair(helper.pretrain(corpus, BLOCK, net), "pretrain", "f")
    tconf.max_epochs, tconf.show_progress = epochs, False
    tconf.num_workers = training.fit_workers(tconf.num_workers)
    device = pick_device(None)
    training.place(trainer, device, "auto", compile=compile)
    training.add_run_callbacks(trainer, checkpoint_path=workdir / "kit.params.ckpt",
                               log_path=workdir / "kit.params.log.csv")
    stamps = []

    def stamp(t=None):
        sync(device)
        stamps.append(time.perf_counter())

    trainer.add_callback("on_epoch_end", stamp)
    stamp()
    trainer.train()
    return epoch_seconds(stamps), trainer.config.precision


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--course-starter", required=True, help="the course's starter folder (holds submission/)")
    p.add_argument("--epochs", type=int, default=4, help="epochs timed on each side (default 4; at least 2)")
    p.add_argument("--lines", type=int, help="only the first LINES lines of wiki.txt (a short rehearsal)")
    p.add_argument("--data", help="the data folder whose wiki.txt is read (default: the built-in src/data)")
    p.add_argument("--compile", action="store_true", help="the kit's side with torch.compile, as `run.sh ... compile`")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)
    if args.epochs < 2:
        p.error("--epochs must be at least 2: the first epoch holds the start-up and is reported apart")
    try:
        course_model, course_trainer = course_modules(args.course_starter)
    except NotAStarter as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    corpus = pretraining_corpus(args.data or SRC / "data", args.lines)

    # the pretraining's settings as the reference's helper.pretrain gives them: the course's
    probe = parts.new_model(helper, "vanilla", model.GPTConfig(corpus.vocab_size, BLOCK, n_layer=1, n_head=1,
                                                                 n_embd=8), 8)
    tconf, _ = parts.training_pair(helper.pretrain(corpus, BLOCK, probe), "pretrain", "f")
    names = ("batch_size", "learning_rate", "betas", "grad_norm_clip", "weight_decay", "lr_decay", "warmup_tokens",
             "final_tokens", "num_workers")
    settings = {n: getattr(tconf, n) for n in names}
    full_epochs = tconf.max_epochs
    steps = -(-len(corpus) // tconf.batch_size)
    print(f"{len(corpus)} lines, {steps} steps of {tconf.batch_size} per epoch, {args.epochs} epochs each side; a "
          f"whole pretraining is {full_epochs} epochs", flush=True)

    course_seconds, device = time_course(course_model, course_trainer, corpus, settings, args.epochs, args.seed)
    course_result = summary(course_seconds, full_epochs, steps)
    print(f"the course's loop: {course_result}", flush=True)
    with tempfile.TemporaryDirectory() as work:
        kit_seconds, precision = time_kit(corpus, args.epochs, args.seed, args.compile, Path(work))
    kit_result = summary(kit_seconds, full_epochs, steps)
    print(f"the kit's loop ({precision}{', compiled' if args.compile else ''}): {kit_result}", flush=True)
    speedup = course_result["median_epoch_seconds"] / kit_result["median_epoch_seconds"]
    print(f"an epoch: {speedup:.2f}x faster; a whole pretraining: {course_result['full_pretraining_minutes']:.1f} "
          f"min against {kit_result['full_pretraining_minutes']:.1f} min", flush=True)
    results = {"kind": "cs224n-course-loop-speed", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "device": {"type": device.type, "name": torch.cuda.get_device_name(device) if device.type == "cuda"
                          else platform.processor() or platform.machine(), "torch": torch.__version__},
               "command": sys.argv[1:], "lines": len(corpus), "steps_per_epoch": steps, "epochs": args.epochs,
               "full_epochs": full_epochs, "course": course_result,
               "kit": dict(kit_result, precision=precision, compile=args.compile), "epoch_speedup": round(speedup, 2)}
    if args.json:
        write_text_atomic(args.json, json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
