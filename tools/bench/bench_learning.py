#!/usr/bin/env python3
"""Does training on this machine learn as it does on a CPU?  The first epochs of the course's perceiver pretraining
(the course's model and settings, the built-in wiki.txt), in arms that each change one thing of run.py's path, side
by side: each epoch's mean loss per arm.

    python tools/bench/bench_learning.py --epochs 12 --json learning.json     # every arm at once (a GPU)
    python tools/bench/bench_learning.py --epochs 1 --lines 64 --arms default  # a CPU rehearsal

Why the perceiver: all it knows of a line flows through attention (its first block cross-attends from the
bottleneck to the input), so it cannot even learn which character follows which without it.  A run that learns
leaves the plateau of the characters' frequencies (a loss near 3.33 on the built-in data) within a few epochs: on a
CPU (AMD EPYC, bf16, seed 0, run.py) the epochs' mean loss was 3.34 in epoch 4, 3.21 in epoch 5, 2.73 in epoch 10.
On an H200 with torch 2.11 it stayed at 3.31-3.42 for 40 epochs (docs/benchmarks.md, the GPU section): the arm
that leaves the plateau there names what broke.

The arms (run.py's path, training.place, with one change each):
  default        as `./run.sh perceiver_pretrain`
  fused-kernels  scaled_dot_product_attention's fused CUDA kernels on (training.place turns them off on CUDA)
  no-attn-drop   attn_pdrop 0: no dropout inside the attention
  math           attn_impl "math": the attention spelt out (softmax, nn.Dropout, two matmuls)
  fp32           --precision fp32
  no-workers     num_workers 0: batches made in the training process
Each arm runs in a process of its own, all at once (--parallel, default every arm).
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_srcpath import SRC  # first: puts src/ on sys.path
import torch

from kit import course, parts, training
from kit.fileio import write_text_atomic
from submission import helper, model
from submission.trainer import pick_device
from submission.utils import set_seed

from bench_common import BLOCK, COURSE_MODEL, pretraining_corpus

ARMS = {  # arm: (GPTConfig settings, precision, DataLoader workers or None for run.py's, fused CUDA attention)
    "default": ({}, "auto", None, False),
    "fused-kernels": ({}, "auto", None, True),
    "no-attn-drop": ({"attn_pdrop": 0.0}, "auto", None, False),
    "math": ({"attn_impl": "math"}, "auto", None, False),
    "fp32": ({}, "fp32", None, False),
    "no-workers": ({}, "auto", 0, False),
}


def run_arm(arm, epochs, lines, seed):
    """One arm's training in this process: {"arm", "precision", "device", "epoch_loss": [mean loss of each epoch]}."""
    settings, precision, workers, fused = ARMS[arm]
    corpus = pretraining_corpus(SRC / "data", lines)
    set_seed(seed)
    mconf = model.GPTConfig(corpus.vocab_size, BLOCK, **COURSE_MODEL, **settings)
    net = parts.new_model(helper, "perceiver", mconf, course.BOTTLENECK_DIM)
    tconf, trainer = parts.training_pair(helper.pretrain(corpus, BLOCK, net), "pretrain", "g")
    tconf.max_epochs, tconf.show_progress = epochs, False
    tconf.num_workers = training.fit_workers(tconf.num_workers) if workers is None else workers
    device = pick_device(None)
    training.place(trainer, device, precision)
    if fused:  # as before training.use_reliable_attention: PyTorch's own choice of kernel
        torch.backends.cuda.enable_cudnn_sdp(True)
        torch.backends.cuda.enable_mem_efficient_sdp(True)
    losses = training.record_losses(trainer)
    trainer.train()
    by_epoch = {}
    for epoch, _, loss, _ in losses:
        by_epoch.setdefault(epoch, []).append(loss)
    return {"arm": arm, "precision": trainer.config.precision, "device": str(trainer.device),
            "epoch_loss": [round(sum(v) / len(v), 4) for _, v in sorted(by_epoch.items())]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=12, help="epochs of each arm (default 12)")
    p.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)} (default all)")
    p.add_argument("--parallel", type=int, help="arms run at a time (default: all of them)")
    p.add_argument("--lines", type=int, help="only the first LINES lines of wiki.txt (a short rehearsal)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--one-arm", help=argparse.SUPPRESS)  # the child process of one arm: its results on stdout
    args = p.parse_args(argv)
    if args.one_arm:
        print(json.dumps(run_arm(args.one_arm, args.epochs, args.lines, args.seed)))
        return 0
    arms = args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown or args.epochs < 1:
        p.error(f"unknown arm {unknown[0]}; choose among {', '.join(ARMS)}" if unknown else "--epochs must be >= 1")
    common = ["--epochs", str(args.epochs), "--seed", str(args.seed)]
    common += ["--lines", str(args.lines)] if args.lines else []
    results, parallel = [], args.parallel or len(arms)
    with tempfile.TemporaryDirectory() as work:
        for start in range(0, len(arms), parallel):
            running = []
            for arm in arms[start:start + parallel]:
                log = open(Path(work) / f"{arm}.log", "w+", encoding="utf-8")
                proc = subprocess.Popen([sys.executable, __file__, "--one-arm", arm, *common], stdout=subprocess.PIPE,
                                        stderr=log, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
                running.append((arm, proc, log))
            for arm, proc, log in running:
                out, _ = proc.communicate()
                log.seek(0)
                if proc.returncode != 0:
                    tail = log.read().strip().splitlines()[-1:] or [""]
                    results.append({"arm": arm, "error": f"exit status {proc.returncode}: {tail[0][:300]}"})
                else:
                    results.append(json.loads(out.strip().splitlines()[-1]))
                log.close()
                done = results[-1]
                print(f"{arm:13} " + (done.get("error") or " ".join(f"{v:.3f}" for v in done["epoch_loss"])),
                      flush=True)
    report = {"kind": "cs224n-learning-arms", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "torch": torch.__version__,
              "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
              "command": sys.argv[1:], "epochs": args.epochs, "seed": args.seed, "arms": results}
    if args.json:
        write_text_atomic(args.json, json.dumps(report, indent=1) + "\n")
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
