"""The whole experiment on a CPU in minutes: `./run.sh demo`.

On a small built-in world (src/data/demo/), with a reduced model and epoch budget, for the same dev set:
  1. the most-common-place baseline,
  2. vanilla GPT finetuned without pretraining,
  3. vanilla GPT pretrained on the biographies, then finetuned,
  4. perceiver GPT pretrained, then finetuned.
It prints a results table (dev accuracy, time per stage), writes every loss curve to a CSV file and, when
matplotlib is installed, a PNG plot.  The lesson to see: pretraining makes the facts in the corpus
accessible to the finetuned model; finetuning alone cannot know where an unseen person was born.

The training code is the assignment's own (helper.pretrain / helper.finetune / helper.train); the scale differs
from the course, as set in DemoConfig below, and so does the question: the demo world asks "Ada Najjar, born
where?", with the name first, where every biography has it.  At this scale the perceiver reads a name well only
where pretraining put it; asked the course's "Where was Ada Najjar born?", it answered 4-15 %.
"""

import argparse
import csv
import math
import sys
import time
from pathlib import Path

from tqdm import tqdm

from kit import decoding, training, watch
from kit import parts  # an empty student part is named, as run.py does
from kit.baseline import most_common_place
from submission import dataset, helper, model, utils
from submission.trainer import pick_device

SRC = Path(__file__).resolve().parent


class DemoConfig:
    """The demo's reduced scale (the course's values are in helper.py)."""

    # A narrow model: on a CPU, width 64 trains ~2x faster than 128.
    n_layer, n_head, n_embd = 4, 4, 64
    # The course's block: span corruption keeps up to 96 characters, so the birthplace (which the demo
    # world names within its short lines' first ~25-35 characters) survives truncation in most examples;
    # the lines are at most 36 characters, so the trainer's padding trim keeps every step short.
    block_size = 128
    dropout = 0.0
    # The perceiver's bottleneck covers the pretraining sequence: a line of at most 36 characters and its three
    # masks give at most 38 positions with a target, and 37 rows reach all but the last (whose target is the
    # closing mask). Row i of the bottleneck reads positions 0..i, and the up block lets position t read rows
    # 0..t; with fewer rows than positions, the end of a long line never reaches the middle layers. The trainer
    # pads a perceiver's batch to the bottleneck, so each row more is a position more in every step.
    bottleneck_dim = 37
    # The perceiver learns the corpus more slowly per epoch, so it gets more epochs than the vanilla model; fewer
    # lose the lesson (the README's Demo results measure both).
    pretrain_epochs = {"vanilla": 300, "perceiver": 500}
    pretrain_batch, pretrain_lr = 32, 6e-3
    finetune_epochs_pretrained, finetune_epochs_scratch = 20, 75
    finetune_batch, finetune_lr = 32, 6e-4
    warmup_fraction = 0.05  # of all training tokens; then cosine decay to 10% at the end
    # fp32, where run.py's auto picks bf16 on a CPU that computes it natively: at width 64 the casts of bf16 autocast
    # cost more than its matmuls save (on an AMD EPYC with native bf16 a demo stage took 1.3-1.7x as long in bf16).
    precision = "fp32"


def read(path):
    return Path(path).read_text(encoding="utf-8")


class StageProgress:
    """One progress line for a stage, all its trainings' steps together, with the time the stage has left: a bar
    on a terminal; elsewhere (output to a file, CI), a line every ~10 % of the steps.  The trainings' own
    progress is off while it runs."""

    def __init__(self, label, steps):
        self.label, self.total, self.done, self.start = label, steps, 0, time.time()
        self.bar = tqdm(total=steps, desc=label, dynamic_ncols=True, mininterval=0.5, disable=not sys.stdout.isatty())
        self.every = max(1, steps // 10)

    def step(self, trainer):
        self.done += 1
        elapsed = time.time() - self.start
        left = elapsed / self.done * (self.total - self.done)
        text = f"loss {trainer.loss:.3f}, about {left:.0f} s left"
        self.bar.set_postfix_str(text, refresh=False)
        self.bar.update(1)
        if self.bar.disable and (self.done % self.every == 0 or self.done == self.total):
            print(f"{self.label}: step {self.done}/{self.total}, {text}", flush=True)

    def close(self):
        self.bar.close()


def steps(epochs, batch, n_examples):
    return epochs * math.ceil(n_examples / batch)


def scale_down(trainer, cfg, epochs, batch, n_examples, device, progress):
    """Override a course Trainer's config for the demo (epochs, batch size, schedule over this run's tokens),
    set its device and precision as run.py does, report its steps to the stage's progress, record its losses and
    watch its learning: returns the list the losses go in."""
    tconf = trainer.config
    total_tokens = epochs * n_examples * (cfg.block_size - 1)
    tconf.max_epochs, tconf.batch_size, tconf.num_workers = epochs, batch, 0
    tconf.warmup_tokens = cfg.warmup_fraction * total_tokens
    tconf.final_tokens = total_tokens
    tconf.show_progress = False
    trainer.add_callback("on_batch_end", progress.step)
    training.place(trainer, device, cfg.precision)
    losses = training.record_losses(trainer)
    watch.watch_learning(trainer)  # as run.py's runs: a loss that is not finite stops it, the plateau warns
    return losses


def new_model(cfg, vocab_size, variant):
    mconf = model.GPTConfig(vocab_size, cfg.block_size, n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd,
                            embd_pdrop=cfg.dropout, resid_pdrop=cfg.dropout, attn_pdrop=cfg.dropout)
    return parts.new_model(helper, variant, mconf, cfg.bottleneck_dim)


def dev_accuracy(net, corpus, dev_path, device):
    net.eval()
    questions = decoding.read_questions(dev_path)
    predictions = decoding.predict_places(net, questions, corpus, device)
    total, correct = utils.evaluate_places(dev_path, predictions)
    return correct / total


def report(seed, row):
    stage, accuracy, seconds = row
    print(f"seed {seed}: {stage}: dev accuracy {accuracy * 100:.1f} % ({seconds:.0f} s)", flush=True)


def run_seed(seed, world, out_dir, cfg, curves, device):
    """All four stages for one seed; returns [(stage, accuracy, seconds)]."""
    corpus = dataset.CharCorruptionDataset(read(world / "wiki.txt"), cfg.block_size)
    train_path, dev_path = world / "birth_places_train.tsv", world / "birth_dev.tsv"
    n_train = len(decoding.read_questions(train_path))
    rows = []

    start = time.time()
    place = most_common_place(train_path)
    total, correct = utils.evaluate_places(dev_path, [place] * len(decoding.read_questions(dev_path)))
    rows.append((f"baseline (always '{place}')", correct / total, time.time() - start))
    report(seed, rows[-1])

    def finetune_epochs(params):
        return cfg.finetune_epochs_pretrained if params else cfg.finetune_epochs_scratch

    def finetune_and_score(name, net, params, progress):
        utils.set_seed(seed)
        _, trainer = parts.training_pair(helper.finetune(params, train_path, corpus, cfg.block_size, net,
                                                   cfg.finetune_lr), "finetune", "c")
        losses = scale_down(trainer, cfg, finetune_epochs(params), cfg.finetune_batch, n_train, device, progress)
        parts.trained(helper.train, net, out_dir / f"{name}.params", trainer)
        curves.append((seed, name, losses))
        return dev_accuracy(net, corpus, dev_path, device)

    start = time.time()
    stage = "vanilla, no pretraining"
    progress = StageProgress(f"seed {seed}: {stage}", steps(finetune_epochs(None), cfg.finetune_batch, n_train))
    utils.set_seed(seed)
    net = new_model(cfg, corpus.vocab_size, "vanilla")
    acc = finetune_and_score("vanilla.nopretrain.finetune", net, None, progress)
    progress.close()
    rows.append((stage, acc, time.time() - start))
    report(seed, rows[-1])

    for variant in ("vanilla", "perceiver"):
        start = time.time()
        stage = f"{variant}, pretrain + finetune"
        epochs = cfg.pretrain_epochs[variant]
        progress = StageProgress(f"seed {seed}: {stage}", steps(epochs, cfg.pretrain_batch, len(corpus))
                                 + steps(cfg.finetune_epochs_pretrained, cfg.finetune_batch, n_train))
        utils.set_seed(seed)
        net = new_model(cfg, corpus.vocab_size, variant)
        parts.check_corruption(corpus)
        _, trainer = parts.training_pair(helper.pretrain(corpus, cfg.block_size, net, cfg.pretrain_lr), "pretrain", "f")
        losses = scale_down(trainer, cfg, epochs, cfg.pretrain_batch, len(corpus), device, progress)
        params = out_dir / f"{variant}.pretrain.params"
        parts.trained(helper.train, net, params, trainer)
        curves.append((seed, f"{variant}.pretrain", losses))
        acc = finetune_and_score(f"{variant}.finetune", net, params, progress)
        progress.close()
        rows.append((stage, acc, time.time() - start))
        report(seed, rows[-1])
    return rows


def write_curves(curves, out_dir):
    path = out_dir / "losses.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["seed", "stage", "step", "epoch", "loss", "lr"])
        for seed, stage, losses in curves:
            for step, (epoch, _, loss, lr) in enumerate(losses):
                w.writerow([seed, stage, step, epoch, f"{loss:.5f}", f"{lr:.3e}"])
    written = [path]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return written
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for seed, stage, losses in curves:
        ax = axes[0] if stage.endswith("pretrain") else axes[1]
        ax.plot([l for _, _, l, _ in losses], label=f"{stage} (seed {seed})", linewidth=0.8)
    for ax, title in zip(axes, ["pretraining (span corruption)", "finetuning (birthplaces)"]):
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "losses.png", dpi=120)
    written.append(out_dir / "losses.png")
    return written


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", default="0", help="comma-separated seeds, one full run each (default: 0)")
    p.add_argument("--world", default=str(SRC / "data" / "demo"), help="folder with the demo world's files")
    p.add_argument("--out", default="demo_out", help="folder for params, losses.csv and losses.png")
    p.add_argument("--precision", choices=training.PRECISIONS, default=DemoConfig.precision,
                   help=f"default: {DemoConfig.precision}; as run.py's --precision (auto is bf16 where the CPU "
                        "computes it natively, the course's fp32 numerics on a GPU)")
    p.add_argument("--smoke", action="store_true", help="a seconds-long run that only checks the pipeline")
    args = p.parse_args(argv)
    world, out_dir = Path(args.world), Path(args.out)
    for name in ("wiki.txt", "birth_places_train.tsv", "birth_dev.tsv"):
        if not (world / name).is_file():
            print(f"error: {world / name} is missing; pass the demo world's folder with --world", file=sys.stderr)
            return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = DemoConfig()
    cfg.precision = args.precision
    if args.smoke:
        cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.bottleneck_dim = 2, 2, 32, 8
        cfg.pretrain_epochs = {"vanilla": 2, "perceiver": 2}
        cfg.finetune_epochs_pretrained, cfg.finetune_epochs_scratch = 1, 1
    seeds = [int(s) for s in args.seeds.split(",")]
    device = pick_device()  # the one choice of device, for every stage
    curves, results = [], {}
    try:
        for seed in seeds:
            results[seed] = run_seed(seed, world, out_dir, cfg, curves, device)
    except parts.NotImplementedPart as e:  # an empty student part: say which, as run.py does
        print(f"error: {e}", file=sys.stderr)
        return 1
    except watch.TrainingStopped as e:  # the loss or the parameters stopped being numbers
        print(f"error: {e}", file=sys.stderr)
        return 3
    stages = [name for name, _, _ in results[seeds[0]]]
    print()
    questions = decoding.read_questions(world / "birth_dev.tsv")
    print(f"Dev accuracy on {world} ({len(questions)} questions, such as {questions[0]!r})")
    header = f"{'stage':38}" + "".join(f"{'seed ' + str(s):>16}" for s in seeds)
    print(header)
    for i, stage in enumerate(stages):
        cells = "".join(f"{results[s][i][1] * 100:8.1f}% {results[s][i][2]:5.0f}s" for s in seeds)
        print(f"{stage:38}{cells}")
    totals = "".join(f"{'':10}{sum(r[2] for r in results[s]) / 60:5.1f}m" for s in seeds)
    print(f"{'total time':38}{totals}")
    for path in write_curves(curves, out_dir):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
