"""The fast paths of training.place: the fused AdamW and torch.compile, on the CPU and, where there is a GPU, on
CUDA; and the course's run.sh conventions around them (./run.sh TARGET [compile|no-compile] [BACKEND], run.py's
--tb_expt_name and TensorBoard logs).  Pinned-memory loading (--precision fast on CUDA) is one GPU line the CPU
cannot run: PyTorch pins memory only where there is an accelerator (on a CPU-only machine DataLoader warns and
ignores pin_memory), so trainer.py asks for it on CUDA alone."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.data import TensorDataset

from conftest import ROOT, cuda_settings_as_they_were, on_each_device, small_config
from kit import training
from submission.model import GPT
from submission.trainer import Trainer, TrainerConfig
from submission.utils import set_seed

from test_run import SMALL_FLAGS, run_py


def fixed_shape_batches(vocab_size, n=12, length=32, seed=1):
    """n examples of one length and no padding, so that every batch has one shape and torch.compile compiles
    once (batches of a real dataset are trimmed to their longest example: each new length would compile again)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(2, vocab_size, (n, length), generator=g)
    return TensorDataset(x, torch.roll(x, -1, dims=1))


def batches_of_many_lengths(vocab_size, lengths=(32, 20, 27, 9, 32, 14), seed=1):
    """Batches of 4 examples, each batch padded (PAD targets, id 0) after its own length: the Trainer trims each
    to that length, as it trims the course's batches, so torch.compile sees a new shape at every batch and
    compiles the model for any length (dynamic shapes) from the second one on."""
    data = fixed_shape_batches(vocab_size, n=4 * len(lengths), length=max(lengths), seed=seed)
    x, y = data.tensors
    for k, length in enumerate(lengths):
        y[4 * k:4 * k + 4, length:] = 0
    return TensorDataset(x, y)


def train_small(compile, device="cpu", dataset=None):
    set_seed(0)
    model = GPT(small_config(40))  # dropout 0: the two runs draw no random numbers that could differ
    config = TrainerConfig(max_epochs=1, batch_size=4, learning_rate=1e-3, num_workers=0, show_progress=False)
    trainer = Trainer(model, dataset or fixed_shape_batches(40), None, config)
    with cuda_settings_as_they_were():
        # fp32 is true fp32 on CUDA too (TF32 off): both runs compute the same math, whose last bits alone the
        # tolerances below allow for
        training.place(trainer, device, "fp32", compile=compile)
        losses = training.record_losses(trainer)
        trainer.train()
    return trainer, [loss for *_, loss, _ in losses]


@pytest.mark.slow  # torch.compile, for every length
@pytest.mark.parametrize("device", on_each_device())
def test_compiled_training_matches_the_uncompiled_run_at_every_length(device):
    """The course's batches are trimmed to their longest line, so their length changes from batch to batch: the
    compiled model must train on each as the uncompiled one does, the first shape compiled as it is and the next
    ones for any length.  (On an H200 with torch 2.11, inductor's padding of the head's matmul made the backward
    pass fail at the first new length.)  One test for both, as compiling is most of its time."""
    import torch._dynamo

    problem = training.compile_problem(torch.device(device))
    if problem:
        pytest.skip(f"torch.compile cannot run here: {problem}")
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    eager, eager_losses = train_small(compile=False, device=device, dataset=batches_of_many_lengths(40))
    assert not torch._dynamo.utils.counters["stats"]["unique_graphs"]
    compiled, compiled_losses = train_small(compile=True, device=device, dataset=batches_of_many_lengths(40))
    try:
        assert torch._dynamo.utils.counters["stats"]["unique_graphs"] >= 1  # it did run compiled
        # both runs took the device's AdamW: the fused kernel on the CPU, the course's on CUDA
        fused = training.resolve_numerics(torch.device(device), "fp32").fused_adamw
        assert bool(eager.optimizer.defaults["fused"]) == bool(compiled.optimizer.defaults["fused"]) == fused
        # compiled in place: the state dict keeps its names (the grader and --resume read them)
        names = list(eager.model.state_dict())
        assert list(compiled.model.state_dict()) == names
        # Tolerances: the compiled kernels compute the same fp32 math in another order and fusion, which changes
        # the last bits (~1e-7 relative per operation).  The losses agree to that, step after step.  In the
        # parameters, Adam divides each gradient by its own running size, so a rounding difference in a
        # near-zero gradient grows into up to ~lr per step: measured 1.3e-6 after 6 steps at lr 1e-3.  1e-5 leaves
        # room for other CPUs' kernels, and stays 100 times below what a wrong graph would do (moving the
        # parameters by ~lr = 1e-3 a step).
        assert len(compiled_losses) == len(eager_losses) == 6
        assert compiled_losses == pytest.approx(eager_losses, rel=1e-5)
        for name, value in compiled.model.state_dict().items():
            assert value.device.type == torch.device(device).type, name
            torch.testing.assert_close(value, eager.model.state_dict()[name], rtol=0, atol=1e-5, msg=name)
        start = GPT(small_config(40)).to(device).parameters()
        assert any((p != q).any() for p, q in zip(eager.model.parameters(), start))
    finally:
        torch._dynamo.reset()


def test_the_fused_adamw_takes_the_same_steps_as_the_course_s(monkeypatch):
    """place() swaps the course's AdamW for the fused kernel wherever PyTorch has one: the same update."""
    runs = {}
    for fused in (False, True):
        if not fused:
            monkeypatch.setattr(training, "fused_adamw_devices", lambda: set())
        else:
            monkeypatch.undo()
        trainer, losses = train_small(compile=False)
        assert bool(trainer.optimizer.defaults.get("fused")) == fused
        runs[fused] = trainer.model.state_dict(), losses
    assert runs[True][1] == pytest.approx(runs[False][1], rel=1e-6)
    for name, value in runs[True][0].items():
        torch.testing.assert_close(value, runs[False][0][name], rtol=0, atol=1e-5, msg=name)


@pytest.mark.slow  # run.py in a process of its own, or torch.compile
def test_a_backend_torch_lacks_is_one_sentence(world):
    path, _ = world
    r = run_py("--function", "pretrain", "--variant", "vanilla", "--pretrain_corpus_path", str(path / "wiki.txt"),
               "--writing_params_path", str(path / "x.params"), "--compile", "--backend", "no_such_backend",
               *SMALL_FLAGS)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "--backend no_such_backend is not" in lines[0], r.stderr
    assert "inductor" in lines[0] and not (path / "x.params").exists()


# --- ./run.sh TARGET [compile|no-compile] [BACKEND] [flags] --------------------------------------------------


def run_sh_args(*args, cwd=None, script=ROOT / "run.sh"):
    """What run.sh hands to run.py, read off a stand-in for python that prints its arguments."""
    fake = Path(__file__).with_name("print_args.sh")
    r = subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=60,
                       cwd=cwd or "/", env={**os.environ, "PYTHON": str(fake)})
    return r, r.stdout.split("\n")[0].split("\0")[1:] if r.stdout.startswith("ARGS") else None


@pytest.mark.parametrize("args, compile_flags, rest", [
    (["compile", "--max_epochs", "1"], ["--compile", "--backend", "inductor"], ["--max_epochs", "1"]),
    (["compile", "aot_eager"], ["--compile", "--backend", "aot_eager"], []),
    (["no-compile", "inductor", "--max_epochs", "2"], ["--no-compile", "--backend", "inductor"], ["--max_epochs", "2"]),
    (["--max_epochs", "2"], [], ["--max_epochs", "2"]),
])
def test_run_sh_takes_the_course_s_compile_arguments(args, compile_flags, rest):
    r, argv = run_sh_args("vanilla_pretrain", *args)
    assert r.returncode == 0, r.stderr
    assert argv[0].endswith("src/run.py") and argv[1:1 + len(compile_flags)] == compile_flags
    assert argv[len(argv) - len(rest):] == rest and "--function" in argv and "compile" not in argv


def test_run_sh_refuses_compile_for_a_target_without_training():
    r, argv = run_sh_args("london_baseline", "compile")
    assert r.returncode == 2 and argv is None
    assert r.stderr.strip() == "error: 'compile' applies to the training and evaluation targets, not london_baseline; leave it out"


def test_run_sh_typed_inside_src_runs_the_targets():
    r = subprocess.run(["./run.sh"], cwd=ROOT / "src", capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "vanilla_finetune_without_pretrain" in r.stdout  # the usage
    r, argv = run_sh_args("vanilla_pretrain", "compile", cwd=ROOT / "src", script="./run.sh")
    assert r.returncode == 0 and argv[1:4] == ["--compile", "--backend", "inductor"], r.stderr
    assert str(ROOT / "src" / "submission" / "vanilla.pretrain.params") in argv


# --- TensorBoard: the course's logs where tensorboard is installed, nothing where it is not -----------------


def pretrain_small(path, *extra, block_tensorboard=False):
    """run.py pretrain on the tiny world; block_tensorboard runs it as if tensorboard were not installed."""
    argv = [str(ROOT / "src" / "run.py"), "--function", "pretrain", "--variant", "vanilla", "--pretrain_corpus_path",
            str(path / "wiki.txt"), "--writing_params_path", str(path / "pre.params"), *SMALL_FLAGS, *extra]
    code = ("import runpy, sys\n"
            + ("sys.modules['tensorboard'] = None  # import tensorboard raises ImportError\n" if block_tensorboard else "")
            + f"sys.argv = {argv!r}\n"
            f"runpy.run_path({argv[0]!r}, run_name='__main__')\n")
    env = {**os.environ, "TB_DIR": str(path / "expt")}
    # from src/, as `python run.py` imports from its own folder (`python -c` puts the working folder first)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                          cwd=ROOT / "src")


@pytest.mark.slow  # run.py in a process of its own, or torch.compile
def test_training_writes_the_course_s_tensorboard_log(world):
    pytest.importorskip("tensorboard")  # requirements-dev.txt installs it
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    path, _ = world
    r = pretrain_small(path, "--tb_expt_name", "mine")
    assert r.returncode == 0, r.stderr
    runs = list((path / "expt" / "pretrain").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("mine_vanilla_8_pt_lr_0.006000_ft_lr_0.000600_"), runs
    events = EventAccumulator(str(runs[0]))
    events.Reload()
    loss = events.Scalars("train/loss")
    steps = len((path / "pre.params.log.csv").read_text().splitlines()) - 1  # the CSV log stays, row for row
    assert [e.step for e in loss] == list(range(1, steps + 1)) and len(events.Scalars("train/lr")) == steps


@pytest.mark.slow  # run.py in a process of its own, or torch.compile
def test_without_tensorboard_training_writes_no_tensorboard_log(world):
    path, _ = world
    r = pretrain_small(path, block_tensorboard=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert not (path / "expt").exists() and (path / "pre.params").is_file()
    assert len((path / "pre.params.log.csv").read_text().splitlines()) > 1
