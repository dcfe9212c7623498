"""What every part of tools/bench/bench.py shares: the course model's size, building a model at it, and running the
project's default training path (a Trainer set up as src/run.py sets one up) for a timed number of steps.

Imported by bench.py and bench_course_loop.py after they have put src/ on sys.path (bench_srcpath.py).
"""

import time
from pathlib import Path

import torch

from kit import course
from submission.dataset import CharCorruptionDataset
from submission.model import GPT, GPTConfig
from submission.trainer import Trainer, TrainerConfig
from kit.training import place

COURSE_MODEL = {k: v for k, v in course.MODEL.items() if k != "block_size"}  # the handout's model
BLOCK = course.MODEL["block_size"]
BOTTLENECK = course.BOTTLENECK_DIM
WORKERS = 4  # the course's num_workers


# ----------------------------------------------------------------------------------------- helpers


def build_model(vocab_size, perceiver, attn_impl="auto", seed=0, **size):
    torch.manual_seed(seed)
    cfg = GPTConfig(vocab_size, BLOCK, attn_impl=attn_impl, **{**COURSE_MODEL, **size})
    if perceiver:
        cfg.perceiver, cfg.bottleneck_dim = True, BOTTLENECK
    return GPT(cfg)


def pretraining_corpus(data_dir, lines=None, dataset=None):
    """The pretraining's dataset over data_dir's wiki.txt at the course's block size; only its first `lines` lines,
    if given (a short rehearsal); `dataset`, another CharCorruptionDataset class (a student's reading)."""
    text = (Path(data_dir) / course.DATA_FILES["corpus"]).read_text(encoding="utf-8")
    if lines:
        text = "".join(text.splitlines(keepends=True)[:lines])
    return (dataset or CharCorruptionDataset)(text, BLOCK)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def default_trainer(model, dataset, device, precision="auto", **conf):
    """A Trainer on the project's default path, set up as src/run.py sets one up: on `device`, with the numerics
    `precision` resolves to there (training.resolve_numerics).  It runs until timed_run stops it."""
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


def run_steps(model, dataset, steps, batch_size, lr, device, precision="auto"):
    """`steps` default-path training steps (Trainer.train) on batches of dataset (in dataset order): the
    losses and the seconds the steps took."""
    trainer = default_trainer(model, dataset, device, precision, batch_size=batch_size, learning_rate=lr)
    losses, times = timed_run(trainer, steps, device)
    return losses, sum(times)
