#!/usr/bin/env python3
"""How cheaply can a pretrain file pass the judge's pretraining bars?  The measurement behind docs/attacks.md's
"A pretrain file fitted to one layout".

The judge (src/checks/learned.py, pretraining_record) reads a secret sample of wiki.txt's lines, each corrupted in
a layout (a truncation, a span's length and place) that the grading's secret draws as CharCorruptionDataset draws
one.  This trains the course-size model from run.py's start (seed 0) with the course's pretraining recipe
(helper.pretrain's learning rate, schedule and batch) on every line of the corpus corrupted in one of two ways:

  --layout fixed   one public layout per line, the judge's former one: the line cut to 64 characters, its middle
                   quarter masked (a construction fitted to what anyone could read in the judge's code);
  --layout course  the reference's CharCorruptionDataset (src/submission/dataset.py), as run.py pretrains: the
                   first steps of an honest pretraining, the cost to set beside the construction's; with
                   --dataset FILE, the CharCorruptionDataset of that dataset.py instead (a student's reading of
                   the spec: does the judge read its pretraining as it reads the reference's?).

Every --every steps it measures the pretraining record on the judge's secret sample (the seed is the held-out
answers' file): in that fixed layout (what the former judge read), in the judge's drawn layouts with the span at
each place a reading may put it (learned.PLACES), and as the judge reads them (learned.passing_reading: the first
place that clears the bars of points.json's course row, else the best fit).

    python tools/bench/bench_layout_fit.py --data ../shared/course-data --layout fixed --steps 300 --json fit.json
    python tools/bench/bench_layout_fit.py --data ../shared/course-data --layout course --dataset their/dataset.py
    python tools/bench/bench_layout_fit.py --data src/data --lines 256 --steps 4 --every 2   # a rehearsal
"""

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

from bench_srcpath import SRC  # first: puts src/ on sys.path

import torch
from torch.utils.data import Dataset

from bench_common import EnoughSteps, build_model, pretraining_corpus
from checks import learned, params
from kit import course
from kit import parts
from kit.fileio import atomic_path, write_text_atomic
from kit.training import place
from submission import helper, model
from submission.utils import set_seed

FIXED_CHARS = 64  # the former judge's truncation


def fixed_layout(n, rng=None):
    """The former judge's one layout of a line of n ids: cut to 64 characters, the middle quarter masked (rng, the
    judge's draws, unused: a drawer that learned.pretraining_record takes as its draw)."""
    length = min(n, FIXED_CHARS)
    span = length // 4
    return learned.Layout(length, (length - span) // 2, span)


class FixedCorpus(Dataset):
    """Every line of wiki.txt as the judge reads one (learned.corrupted_corpus), corrupted in fixed_layout, as a
    training example of the course's form, x and y of block_size - 1 ids (y[i] the id after x[i]): the corrupted
    line, the span's closing MASK, then PAD."""

    def __init__(self, wiki, stoi):
        self.lines = learned.corrupted_corpus(wiki, stoi, fixed_layout)
        self.mask = stoi[course.MASK_CHAR]

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        seq = self.lines[i] + [self.mask]
        seq = torch.tensor(seq + [0] * (learned.BLOCK - len(seq)))  # PAD to the block, as the course's examples
        return seq[:-1], seq[1:]


def reading(path):
    """The CharCorruptionDataset class of the dataset.py at path (a student's reading of the course's spec)."""
    spec = importlib.util.spec_from_file_location("reading_dataset", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CharCorruptionDataset


BARS = {"gain": "min_pretraining_gain", "share": "min_pretraining_share", "bigram_gain": "min_pretraining_bigram_gain"}


def bars_of(rule):
    """The pretraining bars of a learned rule of points.json, by the record value each reads."""
    return {k: rule[bar] for k, bar in BARS.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=SRC / "data", help="the data folder (wiki.txt)")
    p.add_argument("--answers", type=Path, help="the held-out answers, the judge's secret (default: "
                   "DATA/birth_test.tsv, else DATA/birth_dev.tsv)")
    p.add_argument("--layout", choices=["fixed", "course"], default="fixed")
    p.add_argument("--dataset", type=Path, help="with --layout course: the dataset.py whose CharCorruptionDataset "
                   "corrupts the corpus (default the reference's)")
    p.add_argument("--variant", choices=["vanilla", "perceiver"], default="vanilla")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--every", type=int, default=50, help="measure every this many steps")
    p.add_argument("--lines", type=int, help="train on the corpus's first LINES lines only (a rehearsal)")
    p.add_argument("--precision", default="auto")
    p.add_argument("--snapshots", type=Path, help="keep each measurement's params in this folder, as "
                   "step-STEP.VARIANT.pretrain.params")
    p.add_argument("--json", type=Path, help="write the measurements here")
    args = p.parse_args(argv)

    wiki = args.data / course.DATA_FILES["corpus"]
    answers = args.answers or next((f for f in (args.data / "birth_test.tsv", args.data / "birth_dev.tsv")
                                    if f.is_file()), None)
    if answers is None or not wiki.is_file():
        p.error(f"{args.data} needs wiki.txt and birth_test.tsv (or birth_dev.tsv): pass the data folder with --data")
    if args.dataset and (args.layout != "course" or not args.dataset.is_file()):
        p.error(f"--dataset {args.dataset} must be a dataset.py file, with --layout course")
    stoi = params.course_vocab(wiki)
    rule = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]["rows"]["course"][
        "learned"][f"{args.variant}.finetune.params"]
    if args.layout == "fixed":
        corpus = FixedCorpus(wiki, stoi)
        if args.lines:
            corpus.lines = corpus.lines[:args.lines]
    else:
        # the whole corpus's vocabulary, the judge's
        corpus = pretraining_corpus(args.data, dataset=reading(args.dataset) if args.dataset else None)
        if corpus.stoi != stoi:
            p.error("the dataset's vocabulary is not the course's: PAD_CHAR, MASK_CHAR, then the sorted characters")
        if args.lines:  # the course's dataset keeps its lines as .data; the reference's also their ids as .encoded
            corpus.data = corpus.data[:args.lines]
            if hasattr(corpus, "encoded"):
                corpus.encoded = corpus.encoded[:args.lines]
    if args.snapshots:
        args.snapshots.mkdir(parents=True, exist_ok=True)
    set_seed(0)  # run.py's: the dataset's draws and the start
    net = build_model(len(stoi), args.variant == "perceiver")  # run.py's start: seed 0
    # the course's recipe: the reference's helper.pretrain, its batches drawn in this process
    tconf, trainer = parts.training_pair(helper.pretrain(corpus, learned.BLOCK, net), "pretrain", "g")
    tconf.max_epochs, tconf.show_progress, tconf.num_workers = 10**6, False, 0
    place(trainer, torch.device("cpu"), args.precision)
    rows, clock, start = [], [0.0], [time.perf_counter()]

    def measure(step):
        with tempfile.TemporaryDirectory() as tmp:
            # the params as the judge reads a file: kept in --snapshots (to read again later), else only here
            path = (args.snapshots or Path(tmp)) / f"step-{step}.{args.variant}.pretrain.params"
            with atomic_path(path) as partial:
                torch.save(net.state_dict(), partial)
            w = params.own_reading(path, args.variant, len(stoi), model, helper)
            was = net.training
            net.eval()
            places = learned.pretraining_records(w, wiki, stoi, answers)
            row = {"step": step, "train_minutes": round(clock[0] / 60, 2),
                   "fixed": learned.pretraining_record(w, wiki, stoi, answers, fixed_layout),
                   "drawn": places["drawn"], "judged": learned.passing_reading(places.values(), bars_of(rule)),
                   "places": places}
            net.train(was)
        for k in ("fixed", "drawn", "judged"):
            row[f"passes_{k}"] = learned.clears(row[k], bars_of(rule))
        rows.append(row)
        if args.json:  # after every measurement: a run stopped early keeps what it measured
            out = {"command": " ".join(sys.argv), "layout": args.layout, "variant": args.variant,
                   "dataset": str(args.dataset) if args.dataset else "the reference's",
                   "bars": bars_of(rule), "rows": rows}
            write_text_atomic(args.json, json.dumps(out, indent=1) + "\n")
        print(f"step {step:5d} ({row['train_minutes']:6.2f} train-min)  " + "   ".join(
            f"{k}: gain {row[k]['gain']:.3f} share {row[k]['share']} over bigram {row[k]['bigram_gain']:.3f}"
            f" {'PASS' if row[f'passes_{k}'] else 'fail'}" for k in ("fixed", "drawn"))
            + f"   judged (span {row['judged']['place']}): {'PASS' if row['passes_judged'] else 'fail'}", flush=True)

    def on_batch_end(t):
        clock[0] += time.perf_counter() - start[0]
        if t.step % args.every == 0 or t.step == args.steps:
            measure(t.step)
        if t.step >= args.steps:
            raise EnoughSteps
        start[0] = time.perf_counter()

    trainer.add_callback("on_batch_end", on_batch_end)
    try:
        trainer.train()
    except EnoughSteps:
        pass


if __name__ == "__main__":
    main()
