"""What the drivers (src/run.py, src/demo.py) add around the course's Trainer (src/submission/trainer.py).

The Trainer applies what it is given: a device and a precision, bf16 or fp32.  The decisions and the
bookkeeping of a long run live here, and hook into the Trainer's loop as callbacks (Trainer.add_callback):
- resolve_numerics: what --precision means on a device: on CUDA the course's numerics unless `fast` (fp32 without
  TF32, the attention written out, the course's AdamW); on a CPU bf16 autocast where it computes bf16 natively,
  the fused AdamW;
- place: the run's device and numerics and, if asked, torch.compile (compile_problem says beforehand when it
  cannot run);
- record_losses, log_losses_csv, log_to_writer: every step's loss and learning rate, in a list, in the CSV
  file <params>.log.csv (src/plot_losses.py draws it) and to a TensorBoard writer (tensorboard_writer makes
  one where tensorboard is installed);
- keep_checkpoint: the whole training state at the end of an epoch (the first, then one every half minute or
  more), and --resume from it;
- add_run_callbacks: all of that bookkeeping at once, with the watch on the run's learning (kit/watch.py), in
  the order it must run, as run.py uses it;
- fit_workers: the course's DataLoader workers, capped at the cores the run may use.
"""

import csv
import os
import random
import time
from dataclasses import dataclass

import numpy as np
import torch

from kit.fileio import atomic_path
from kit import watch
from submission.attention import _AttentionBase
from submission.trainer import make_optimizer, save_atomic

# ----------------------------------------------------------------------------------------- numerics


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


PRECISIONS = ("auto", "fp32", "bf16", "fast")  # run.py's and the demo's --precision


@dataclass(frozen=True)
class Numerics:
    """How a training run computes, decided once by resolve_numerics and applied by place.  None of it changes the
    math, only the rounding and the kernels; each field is a suspect of a GPU run that does not learn."""
    precision: str  # "fp32", or "bf16" autocast (the weights, the optimizer's state and the loss stay fp32)
    attention: str  # "math": the course's formula, its dropout an nn.Dropout; "auto": scaled_dot_product_attention
    fused_adamw: bool  # AdamW in one fused kernel; False: torch.optim.AdamW as the course makes it
    tf32: bool  # CUDA's fp32 matmuls in TF32 (a 10-bit mantissa); False: true fp32
    pin_memory: bool  # the DataLoader pins its batches, so copies to the GPU need not wait


def resolve_numerics(device, precision="auto"):
    """The Numerics of a training run on `device` for a --precision of auto, fp32, bf16 or fast.

    On CUDA the default (auto, and fp32) is the course's numerics, as the course's own code computes on its
    students' GPUs: fp32 with TF32 off, the attention written out with nn.Dropout, the course's AdamW, batches not
    pinned.  On an H200 with torch 2.11 the fast path (bf16 autocast, scaled_dot_product_attention's fused kernels,
    which draw the attention's dropout themselves, the fused AdamW, TF32) trained models that did not learn, and
    which of its parts was at fault is not known yet; `fast` asks for it.  bf16 is the course's numerics under bf16
    autocast.

    On other devices auto picks bf16 autocast where the CPU computes bf16 natively (AVX512-BF16 or AMX; measured
    about 2x faster than fp32 for the course model, and to learn as fp32 does), fp32 elsewhere (older CPUs, Apple
    MPS), with scaled_dot_product_attention (on a CPU it computes the dropout in its math backend) and the fused
    AdamW wherever PyTorch has one; fast is auto there."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: use {', '.join(PRECISIONS)}")
    device = torch.device(device)
    if device.type == "cuda":
        if precision == "fast":
            return Numerics("bf16" if cuda_has_native_bf16(device) else "fp32", "auto", True, True, True)
        return Numerics("bf16" if precision == "bf16" else "fp32", "math", False, False, False)
    if precision in ("auto", "fast"):
        precision = "bf16" if device.type == "cpu" and cpu_has_native_bf16() else "fp32"
    return Numerics(precision, "auto", device.type in fused_adamw_devices(), False, False)


def resolve_precision(device, precision):
    """The autocast precision, "bf16" or "fp32", that a --precision resolves to on `device` (resolve_numerics)."""
    return resolve_numerics(device, precision).precision


def fused_adamw_devices():
    """The device types whose PyTorch has the fused AdamW kernel (CUDA, and the CPU since torch 2.4)."""
    try:
        from torch.utils._foreach_utils import _get_fused_kernels_supported_devices
        return set(_get_fused_kernels_supported_devices())
    except ImportError:  # a torch without the query: CUDA has had the kernel longest
        return {"cuda"}


def compile_problem(device, backend="inductor"):
    """None if torch.compile with `backend` can run on `device` here, else the sentence that says why not: the
    backend is unknown, or it is inductor on the CPU, which compiles C++ and needs a compiler (g++ or clang++)."""
    import torch._dynamo

    backends = torch._dynamo.list_backends(exclude_tags=())
    if backend not in backends:
        return f"--backend {backend} is not a torch.compile backend here; use one of {', '.join(sorted(backends))}"
    if backend == "inductor" and torch.device(device).type == "cpu":
        from torch._inductor import cpp_builder

        try:
            cpp_builder.get_cpp_compiler()
        except Exception:  # noqa: BLE001  (torch says "no compiler found" in more than one way)
            return ("--compile on the CPU needs a C++ compiler (g++ or clang++) for the inductor backend; install "
                    "one, or train without compile")
    return None


def place(trainer, device, precision="auto", compile=False, backend="inductor", numerics=None):
    """Where and how trainer computes, decided once by the driver: on `device`, with the Numerics that `precision`
    resolves to there (resolve_numerics: on CUDA the course's unless `fast`) or, if given, `numerics` (the
    instructor's learning arms, which change one field at a time), and, with compile, torch.compile with `backend` (in place, so the state
    dict keeps its names).  The settings it applies are the process's (TF32) or the model's (its attention layers'
    attn_impl).  Call it before add_run_callbacks, whose resume loads the optimizer's state.  Returns the
    Numerics."""
    device = torch.device(device)
    numerics = numerics or resolve_numerics(device, precision)
    trainer.config.device = device
    trainer.config.precision = numerics.precision
    trainer.config.pin_memory = numerics.pin_memory
    if device.type == "cuda":  # PyTorch's own default for cuDNN is TF32 on: fp32 must say so
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = numerics.tf32
    if numerics.attention != "auto":
        for module in trainer.model.modules():
            if isinstance(module, _AttentionBase):
                module.attn_impl = numerics.attention
    if numerics.fused_adamw:
        def fused_adamw(t):  # made again at the start of training, with the same groups and rates
            t.optimizer = make_optimizer(t.model, t.config, fused=True)

        trainer.add_callback("on_train_start", fused_adamw)
    if compile:
        # inductor pads a matmul to a multiple of 8 for the tensor cores (the head's 119 characters to 120); with
        # the trimmed batches' varying length, torch 2.11 on an H200 then asserted a wrong stride in the backward
        # pass at the first new length.  Without it, a student's `./run.sh vanilla_pretrain compile` ran there.
        options = {"shape_padding": False} if backend == "inductor" else None
        trainer.model.compile(backend=backend, options=options)
    return numerics


def tensorboard_writer(log_dir):
    """A TensorBoard SummaryWriter that writes into log_dir, or None if tensorboard is not installed (the kit
    does not need it: the CSV loss log has the same numbers)."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(log_dir=str(log_dir))


# ----------------------------------------------------------------------------------------- watching a run


def record_losses(trainer):
    """A list that receives (epoch, iteration within the epoch, loss, learning rate) after every step."""
    losses = []
    trainer.add_callback("on_batch_end", lambda t: losses.append((t.epoch, t.iter, t.loss, t.lr)))
    return losses


LOG_FIELDS = ["step", "epoch", "loss", "lr", "tokens_per_s"]


def restart_log(path, keep_before):
    """Start the CSV loss log at path afresh, keeping the rows of the steps before `keep_before` that it
    holds (those of an interrupted run that this one continues; none for a new run)."""
    rows = []
    if os.path.exists(path):
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r.get("step", "").isdigit() and int(r["step"]) < keep_before]
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            out = csv.DictWriter(f, LOG_FIELDS, extrasaction="ignore")
            out.writeheader()
            out.writerows(rows)


def log_losses_csv(trainer, path):
    """Append a row of LOG_FIELDS to the CSV file at path after every step; each row is flushed at once, so
    a plot (or tail -f) made during training sees it.  The file is started at the run's first step, so a run
    that fails before training leaves an earlier log as it was; a resumed run keeps the rows up to its
    checkpoint and writes the interrupted epoch's steps again."""
    clock = {}

    def restart_clock(t):  # tokens/s counts from here: the start of the run, then of each epoch
        clock.update(time=time.perf_counter(), tokens=t.tokens)

    def write_row(t):
        now = time.perf_counter()
        if not clock.get("started"):
            restart_log(path, keep_before=t.step)
            clock["started"] = True
        rate = (t.tokens - clock["tokens"]) / max(now - clock["time"], 1e-9)
        with open(path, "a", newline="", encoding="utf-8") as f:
            f.write(f"{t.step},{t.epoch},{t.loss:.6g},{t.lr:.6g},{rate:.1f}\n")
        restart_clock(t)

    trainer.add_callback("on_train_start", restart_clock)
    trainer.add_callback("on_batch_end", write_row)
    trainer.add_callback("on_epoch_end", restart_clock)


def log_to_writer(trainer, writer):
    """train/loss and train/lr of every step to writer (a TensorBoard SummaryWriter or anything with its
    add_scalar), at the step's number; lr is the rate the step used."""
    def add_scalars(t):
        writer.add_scalar("train/loss", t.loss, t.step)
        writer.add_scalar("train/lr", t.lr, t.step)

    trainer.add_callback("on_batch_end", add_scalars)


# ----------------------------------------------------------------------------------------- checkpoint and resume


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


def save_training_state(trainer, path, losses=None):
    """Everything a resumed run needs to continue exactly where trainer stands (at the end of an epoch)."""
    state = {
        "model": trainer.model.state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "tokens": trainer.tokens,
        "step": trainer.step,
        "epochs_done": trainer.epochs_done,
        "losses": list(losses or []),
        "rng": get_rng_states(),
    }
    save_atomic(state, path)


def load_training_state(trainer, path, losses=None):
    """Continue from the training state at path (into losses too, if given); CheckpointError if it cannot."""
    if not os.path.isfile(path):
        raise CheckpointError(f"there is no checkpoint {path} to resume from: run without --resume to start over")
    try:
        # on the CPU: the random-number states must stay CPU tensors; load_state_dict moves the rest
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated or not a checkpoint at all
        raise CheckpointError(f"checkpoint {path} is unreadable ({type(e).__name__}): delete it to start over") from e
    try:
        trainer.model.load_state_dict(state["model"])
        trainer.optimizer.load_state_dict(state["optimizer"])
    except (KeyError, RuntimeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} was written by a different run (another model size, variant "
                              f"or corpus): delete it to start over, or resume with that run's flags") from e
    trainer.tokens, trainer.step, trainer.epochs_done = state["tokens"], state["step"], state["epochs_done"]
    if losses is not None:
        losses[:] = [tuple(r) for r in state["losses"]]
    # last, so that the next epoch draws exactly the random numbers it would have drawn uninterrupted
    set_rng_states(state["rng"])


# A checkpoint costs 40-75 ms (a 40 MB file: the weights and AdamW's two moments), measured on a 2-core CPU.  A GPU
# epoch of the pretraining (23 steps of a few milliseconds) takes about as long: saved after every epoch, the
# checkpoints would double the run.  Every half minute, an interruption loses little; a CPU epoch of the course's
# runs takes 10-60 s, so a CPU run still saves every epoch or every few.
CHECKPOINT_EVERY_S = 30


def keep_checkpoint(trainer, path, resume=False, losses=None, every_s=None):
    """The whole training state (model, optimizer, tokens seen, steps, epochs, losses, random-number states)
    saved to path at the end of the first epoch, then of every epoch that ends `every_s` seconds or more after the
    last save, atomically; with resume, the run first continues from it.  An interruption loses at most an epoch
    and every_s seconds.  On the CPU with num_workers=0 a resumed run ends with exactly the parameters of an
    uninterrupted one.  (With worker processes the workers' corruption draws restart differently: statistically
    the same run, not bit for bit.)"""
    last = {}
    every_s = CHECKPOINT_EVERY_S if every_s is None else every_s

    def save(t):
        now = time.monotonic()
        if "at" not in last or now - last["at"] >= every_s:
            save_training_state(t, path, losses)
            last["at"] = time.monotonic()

    if resume:
        trainer.add_callback("on_train_start", lambda t: load_training_state(t, path, losses))
    trainer.add_callback("on_epoch_end", save)


def add_run_callbacks(trainer, checkpoint_path=None, resume=False, log_path=None, hint=""):
    """run.py's bookkeeping on trainer: the losses in a list (returned), the watch on its learning
    (watch.watch_learning, with `hint`: what to try if it stops or warns), the checkpoint (and resume), the CSV loss
    log, and the TensorBoard writer the config holds (the course's TrainerConfig.writer), if any."""
    losses = record_losses(trainer)
    watch.watch_learning(trainer, hint)  # before the checkpoint: parameters that are not finite are never saved
    if checkpoint_path is not None:
        keep_checkpoint(trainer, checkpoint_path, resume, losses)  # first: the others read the restored state
    if log_path is not None:
        log_losses_csv(trainer, log_path)
    if trainer.config.writer is not None:
        log_to_writer(trainer, trainer.config.writer)
    return losses


# ----------------------------------------------------------------------------------------- data loading


def fit_workers(wanted):
    """How many DataLoader workers to start when the config asks for `wanted` (the course's 4): at most one per
    core this process may run on.  A worker prepares batches while the model trains, so more workers than
    cores only share the cores; it is also PyTorch's own limit, beyond which every DataLoader warns (twice:
    when it is made and when it starts its workers), a warning a student on a 2-core machine cannot act on.
    helper.py keeps the course's value (the grader checks it); run.py lowers it for the run it starts."""
    try:
        cores = len(os.sched_getaffinity(0))  # the cores this process may use (a container's or taskset's limit)
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return min(wanted, cores)
