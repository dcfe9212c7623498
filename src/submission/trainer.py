"""A simple training loop: AdamW, linear warmup then cosine learning-rate decay, gradient clipping.

Nothing here is specific to GPT.  The math is the course's trainer's, step for step, because the course's
accuracy thresholds were set on models trained by it: the same AdamW parameter groups (make_optimizer),
the training data in dataset order (no shuffling), the same learning-rate schedule and the same moment of
updating it (after each step, from the tokens seen so far), the same clipping.  What makes it fast
without changing that math:
- one DataLoader for the whole run (workers are started once, not once per epoch);
- trailing columns whose targets are all PAD are dropped before the forward pass: the model is
  causal, so the kept positions compute exactly what they would in the full block;
- bf16 autocast (fp32 master weights, fp32 loss) where it helps, TF32 matmuls and fused AdamW on CUDA.

precision="auto" picks bf16 autocast on CUDA GPUs that compute bf16 natively (compute capability 8.0
and newer: A100, A10, L4, RTX 30xx/40xx, H100) and on CPUs with native bf16 instructions (AVX512-BF16 or
AMX), where it measured about 2x faster than fp32 for the course model (the instructor's
benchmarks); fp32 everywhere else: T4/V100-class GPUs (there bf16 is emulated, slower than fp32),
older CPUs, Apple MPS.  The weights, the optimizer state and the loss stay fp32 in every case.

What a long run needs to survive and be watched (students rent VMs that get interrupted):
- with config.checkpoint_path set, every epoch ends by writing the whole training state there (model,
  optimizer, tokens seen, epoch, random-number states; an atomic write); config.resume=True continues
  from it, and on the CPU with num_workers=0 the resumed run ends with exactly the parameters of an
  uninterrupted one.  (With worker processes the workers' random corruption draws restart differently:
  the run is statistically the same, not bit for bit.)
- with config.log_path set, every step appends a row (step, epoch, loss, lr, tokens/s) to that CSV file
  (src/plot_losses.py draws it); config.writer, a TensorBoard SummaryWriter or anything with its
  add_scalar, gets the loss and learning rate of every step.
"""

import contextlib
import csv
import math
import os
import random
import time

import numpy as np

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class TrainerConfig:
    # optimization parameters
    max_epochs = 10
    batch_size = 64
    learning_rate = 3e-4
    betas = (0.9, 0.95)
    grad_norm_clip = 1.0
    weight_decay = 0.1  # applied to every parameter but the biases (make_optimizer says why)
    # learning rate decay: linear warmup over warmup_tokens, then cosine decay to 10% at final_tokens
    lr_decay = False
    warmup_tokens = 375e6
    final_tokens = 260e9
    # checkpoint settings
    ckpt_path = None  # the course's: the model's state dict, saved after every epoch
    num_workers = 0  # for the DataLoader
    # resuming and watching (src/run.py sets these from --writing_params_path and --resume)
    checkpoint_path = None  # the full training state, written after every epoch
    resume = False  # continue from checkpoint_path instead of starting over
    log_path = None  # CSV file, one row per step: step, epoch, loss, lr, tokens_per_s
    writer = None  # e.g. torch.utils.tensorboard.SummaryWriter: gets train/loss and train/lr every step
    # speed settings (they do not change the math beyond floating-point rounding)
    device = None  # None: CUDA, else MPS, else CPU
    precision = "auto"  # "auto" (bf16 on CUDA and on CPUs with native bf16, else fp32), "bf16" or "fp32"
    trim_padding = True  # drop trailing all-PAD columns before the forward pass
    compile = False  # torch.compile the model (CUDA only)
    show_progress = True

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


def pick_device(requested=None):
    """The requested device, else CUDA, else Apple's MPS, else CPU."""
    if requested:
        return torch.device(requested)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def cpu_has_native_bf16():
    """True if this CPU computes bf16 natively (AVX512-BF16 or AMX), where bf16 autocast is fast.
    Elsewhere bf16 on a CPU is emulated and usually slower than fp32."""
    cpu = getattr(torch, "cpu", None)
    for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        check = getattr(cpu, name, None)
        try:
            if check is not None and check():
                return True
        except (RuntimeError, AttributeError):
            pass
    try:  # older torch builds without the checks above: ask the kernel (Linux only)
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = f.read().split()
        return "avx512_bf16" in flags or "amx_bf16" in flags
    except OSError:
        return False


def cuda_has_native_bf16(device):
    """True if the GPU computes bf16 natively (compute capability 8.0 or newer).  Plain
    torch.cuda.is_bf16_supported() also says True on a T4 or V100, which only emulate bf16 and then
    train slower than in fp32."""
    try:
        return bool(torch.cuda.is_bf16_supported(including_emulation=False))
    except TypeError:  # torch before 2.3 has no including_emulation; ask for the capability instead
        major, _ = torch.cuda.get_device_capability(device)
        return major >= 8


def resolve_precision(device, precision):
    """The precision training runs in on `device`: "bf16" or "fp32" ("auto": see the module docstring)."""
    if precision not in ("auto", "bf16", "fp32"):
        raise ValueError(f"unknown precision {precision!r}: use auto, bf16 or fp32")
    if precision != "auto":
        return precision
    if device.type == "cuda":
        return "bf16" if cuda_has_native_bf16(device) else "fp32"
    if device.type == "cpu":
        return "bf16" if cpu_has_native_bf16() else "fp32"
    return "fp32"


def autocast_context(device, precision):
    """bf16 autocast when resolve_precision says bf16, else a no-op context."""
    if resolve_precision(device, precision) == "bf16":
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def trim_padding(x, y, min_len=1):
    """Drop trailing columns of a batch where every target is PAD (id 0).

    The model is causal, so the kept positions give the same logits as in the full block, and the
    dropped positions carry no loss.  At least min_len columns are kept (the perceiver keeps its
    bottleneck length).
    """
    nonpad = (y != 0).any(dim=0).nonzero()
    keep = int(nonpad[-1]) + 1 if len(nonpad) else 1
    keep = min(max(keep, min_len), y.size(1))
    return x[:, :keep], y[:, :keep]


def lr_multiplier(tokens, config):
    """Learning-rate multiplier after `tokens` training tokens (the course's schedule)."""
    if tokens < config.warmup_tokens:
        return float(tokens) / float(max(1, config.warmup_tokens))
    progress = float(tokens - config.warmup_tokens) / float(max(1, config.final_tokens - config.warmup_tokens))
    return max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))


# The course's trainer leaves a parameter undecayed when its name contains one of these, and decays
# every other.  No module here is named "LayerNorm" (ours are ln1, ln2, ln_f), so in effect only the biases
# escape: Linear weights, LayerNorm weights, both embeddings and the perceiver's basis C are all decayed.
# minGPT's own rule (decay the weights of Linear layers only) regularises less; we follow the course's
# because the accuracy thresholds we grade against were set on models trained with it.
NO_DECAY_NAME_PARTS = ("bias", "LayerNorm.weight")


def is_decayed(name):
    """Whether the parameter called `name` (as in model.named_parameters()) gets weight decay."""
    return not any(part in name for part in NO_DECAY_NAME_PARTS)


def make_optimizer(model, config, device):
    """AdamW with config.weight_decay on the parameters is_decayed picks and none on the rest."""
    named = list(model.named_parameters())
    groups = [
        {"params": [p for n, p in named if is_decayed(n)], "weight_decay": config.weight_decay},
        {"params": [p for n, p in named if not is_decayed(n)], "weight_decay": 0.0},
    ]
    extra = {"fused": True} if device.type == "cuda" else {}  # the same update, fewer kernel launches
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=config.betas, **extra)


def save_atomic(obj, path):
    """torch.save obj to path through a temporary file: an interrupted save never destroys an earlier file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_state_dict(model, path):
    """Save model parameters atomically: an interrupted save never destroys an earlier file."""
    save_atomic(model.state_dict(), path)


class CheckpointError(Exception):
    """A training checkpoint that cannot be resumed (missing, corrupt, or from a different run)."""


def get_rng_states():
    """The state of every random-number generator training draws from: Python's (span corruption),
    NumPy's, PyTorch's (dropout, the DataLoader's worker seeds) and CUDA's.  Plain lists and tensors, so that
    torch.load(weights_only=True) can read them back."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    states = {
        "python": random.getstate(),
        "numpy": [kind, keys.tolist(), pos, has_gauss, gauss],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states):
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, gauss = states["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, gauss))
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


LOG_FIELDS = ["step", "epoch", "loss", "lr", "tokens_per_s"]


def open_loss_log(path, keep_steps=None):
    """Open the CSV loss log at path for appending rows of LOG_FIELDS.

    keep_steps=None starts a new log.  A resumed run passes the step count of its checkpoint: the rows
    up to it are kept, and rows logged after it (by the interrupted epoch, which is run again) dropped."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    rows = []
    if keep_steps is not None and os.path.exists(path):
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r.get("step", "").isdigit() and int(r["step"]) <= keep_steps]
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, LOG_FIELDS, extrasaction="ignore")
        out.writeheader()
        out.writerows(rows)
    os.replace(tmp, path)
    return open(path, "a", newline="", encoding="utf-8")


class Trainer:
    def __init__(self, model, train_dataset, test_dataset, config):
        self.model = model
        self.train_dataset = train_dataset
        self.test_dataset = test_dataset
        self.config = config
        self.device = pick_device(config.device)
        self.model = self.model.to(self.device)
        self.tokens = 0  # tokens seen so far, for the learning-rate schedule
        self.step = 0  # optimisation steps taken so far
        self.epochs_done = 0  # complete epochs so far (a resumed run starts after them)
        self.losses = []  # (epoch, iteration within the epoch, loss, lr) per optimisation step
        self.optimizer = self.step_model = None  # made by setup(), which train() calls

    def save_checkpoint(self):
        if self.config.ckpt_path is not None:
            raw = getattr(self.model, "_orig_mod", self.model)
            save_state_dict(raw, self.config.ckpt_path)

    def save_training_state(self):
        """Write everything a resumed run needs to continue exactly where this one stands
        (config.checkpoint_path; nothing if it is None)."""
        if self.config.checkpoint_path is None:
            return
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "tokens": self.tokens,
            "step": self.step,
            "epochs_done": self.epochs_done,
            "losses": self.losses,
            "rng": get_rng_states(),
        }
        save_atomic(state, self.config.checkpoint_path)

    def load_training_state(self):
        """Continue from config.checkpoint_path; raises CheckpointError if it cannot."""
        path = self.config.checkpoint_path
        if path is None or not os.path.isfile(path):
            raise CheckpointError(f"there is no checkpoint {path} to resume from: run without --resume to start over")
        try:
            # on the CPU: the random-number states must stay CPU tensors; load_state_dict moves the rest
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # truncated or not a checkpoint at all
            raise CheckpointError(f"checkpoint {path} is unreadable ({type(e).__name__}): delete it to start over") from e
        try:
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
        except (KeyError, RuntimeError, ValueError) as e:
            raise CheckpointError(f"checkpoint {path} was written by a different run (another model size, variant "
                                  f"or corpus): delete it to start over, or resume with that run's flags") from e
        self.tokens, self.step = state["tokens"], state["step"]
        self.epochs_done, self.losses = state["epochs_done"], [tuple(r) for r in state["losses"]]
        # last, so that the next epoch draws exactly the random numbers it would have drawn uninterrupted
        set_rng_states(state["rng"])

    def _loader(self, dataset):
        """The run's one DataLoader over dataset, in dataset order as the course's (no shuffling)."""
        cfg = self.config
        return DataLoader(
            dataset,
            shuffle=False,
            batch_size=cfg.batch_size,
            num_workers=cfg.num_workers,
            persistent_workers=cfg.num_workers > 0,
            pin_memory=self.device.type == "cuda",
        )

    def setup(self):
        """Everything train() prepares once per run: fast-math switches, optimizer, compiled model."""
        model, config, device = self.model, self.config, self.device
        if device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        self.optimizer = make_optimizer(model, config, device)
        self.step_model = torch.compile(model) if config.compile and device.type == "cuda" else model
        self.min_len = model.min_length() if hasattr(model, "min_length") else 1

    def run_batch(self, x, y, is_train):
        """The loss of one batch (padding trimmed, under the configured precision)."""
        config, device = self.config, self.device
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        if config.trim_padding:
            x, y = trim_padding(x, y, self.min_len)
        with torch.set_grad_enabled(is_train), autocast_context(device, config.precision):
            _, loss = self.step_model(x, y)
        return loss

    def train_step(self, x, y):
        """One optimisation step on the batch (x, y); returns (loss tensor, the learning rate it used)."""
        model, config, optimizer = self.model, self.config, self.optimizer
        loss = self.run_batch(x, y, True)
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
        lr = optimizer.param_groups[0]["lr"]
        optimizer.step()
        if config.lr_decay:
            # As the course: the rate is set after a step, for the next one, so a run's first step uses the
            # full learning_rate.  Tokens are the course's count, labels >= 0 in the untrimmed batch, which is
            # every position of the block (no label here is negative, PAD is 0): y.numel(), read without
            # waiting for the GPU.  Trimming padding thus leaves the schedule unchanged.
            self.tokens += y.numel()
            next_lr = config.learning_rate * lr_multiplier(self.tokens, config)
            for group in optimizer.param_groups:
                group["lr"] = next_lr
        return loss, lr

    def log_step(self, log, epoch, it, loss_value, lr, tokens_per_s):
        """Record one step: the in-memory list, the CSV log, the TensorBoard writer."""
        self.losses.append((epoch, it, loss_value, lr))
        if log is not None:
            log.write(f"{self.step},{epoch},{loss_value:.6g},{lr:.6g},{tokens_per_s:.1f}\n")
            log.flush()  # so that a plot (or tail -f) made during training sees it
        if self.config.writer is not None:
            self.config.writer.add_scalar("train/loss", loss_value, self.step)
            self.config.writer.add_scalar("train/lr", lr, self.step)

    def train(self):
        model, config = self.model, self.config
        self.setup()
        if config.resume:
            self.load_training_state()
        train_loader = self._loader(self.train_dataset)
        test_loader = self._loader(self.test_dataset) if self.test_dataset is not None else None
        log, log_keep = None, (self.step if config.resume else None)  # a resumed log keeps its rows to here

        total = config.max_epochs * len(train_loader)
        bar = tqdm(total=total, initial=min(total, self.epochs_done * len(train_loader)),
                   disable=not config.show_progress, dynamic_ncols=True, mininterval=0.5)
        try:
            for epoch in range(self.epochs_done, config.max_epochs):
                model.train()
                tic = time.perf_counter()
                for it, (x, y) in enumerate(train_loader):
                    loss, lr = self.train_step(x, y)
                    loss_value = loss.item()  # waits for the GPU, so the step's time below is real
                    self.step += 1
                    toc = time.perf_counter()
                    if log is None and config.log_path is not None:
                        # opened after the first step, so a run that fails before training leaves no log
                        log = open_loss_log(config.log_path, keep_steps=log_keep)
                    self.log_step(log, epoch + 1, it, loss_value, lr, y.numel() / max(toc - tic, 1e-9))
                    tic = toc
                    bar.update(1)
                    bar.set_postfix_str(f"epoch {epoch + 1} iter {it}: loss {loss_value:.5f} lr {lr:e}",
                                        refresh=False)

                if test_loader is not None:
                    model.eval()
                    test_losses = [self.run_batch(x, y, False).item() for x, y in test_loader]
                    bar.write(f"epoch {epoch + 1}: test loss {sum(test_losses) / len(test_losses):.5f}")
                self.epochs_done = epoch + 1
                self.save_checkpoint()
                self.save_training_state()
        finally:
            bar.close()
            if log is not None:
                log.close()
