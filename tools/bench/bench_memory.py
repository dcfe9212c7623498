"""tools/bench/bench.py's part (e): the peak memory of one training step, each measured in a fresh process, which
is bench.py itself run with its hidden --memory-child option (main hands it to memory_child).

Imported by bench.py after it has put src/ on sys.path (tools/srcpath.py).
"""

import random
import resource
import subprocess
import sys
from pathlib import Path

import torch
from torch.utils.data import DataLoader, TensorDataset

from submission.dataset import CharCorruptionDataset
from submission.trainer import TrainerConfig, pick_device

from bench_common import BLOCK, build_model, default_trainer
from bench_course import CourseStyleTrainer

# the script each measurement runs in a fresh process (with --memory-child)
BENCH = Path(__file__).with_name("bench.py")


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
        cmd = [sys.executable, str(BENCH), "--memory-child", variant, path, str(data_dir)]
        if device.type == "cuda":
            cmd += ["--device", str(device)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        mib = r.stdout.strip().splitlines()[-1] if r.returncode == 0 else f"failed: {r.stderr[-300:]}"
        print(f"  {variant} {path}: {mib} MiB", flush=True)
        summary.add(f"{variant}, {'course-style fp32' if path == 'course' else 'default'} step", f"{mib} MiB")
