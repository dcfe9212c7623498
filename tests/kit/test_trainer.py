"""trainer.py's loop and the course's math; training.py's callbacks around it (resuming an interrupted run,
the loss log, the TensorBoard writer) and its precision rule; and run.py's --resume around them."""

import csv
import subprocess
import sys

import pytest
import torch

from conftest import ROOT, cuda_settings_as_they_were, small_config
from kit import training
from submission import helper, trainer as trainer_mod
from submission.dataset import CharCorruptionDataset, NameDataset
from submission.model import GPT
from submission.trainer import Trainer, TrainerConfig, lr_multiplier, make_optimizer
from submission.utils import set_seed
from kit.training import CheckpointError

from test_run import SMALL_FLAGS, run_py


class Interrupted(Exception):
    """Stands for the VM going away."""


@pytest.fixture
def corpus(world):
    path, _ = world
    return CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)


def make_trainer(ds, seed, checkpoint_path=None, resume=False, log_path=None, **extra):
    """A tiny pretraining run: 3 epochs of 6 steps, dropout on (it draws random numbers), a learning-rate
    schedule still warming up (so a lost token count changes the result), fp32 on the CPU; with run.py's
    callbacks.  Returns (trainer, the list of its losses)."""
    set_seed(seed)
    model = GPT(small_config(ds.vocab_size, dropout=0.1))
    conf = dict(max_epochs=3, batch_size=7, learning_rate=1e-3, lr_decay=True, warmup_tokens=64 * 7 * 10,
                final_tokens=64 * 7 * 30, num_workers=0, device="cpu", precision="fp32", show_progress=False)
    conf.update(extra)
    return attach(Trainer(model, ds, None, TrainerConfig(**conf)), checkpoint_path, resume, log_path)


def attach(trainer, checkpoint_path=None, resume=False, log_path=None):
    return trainer, training.add_run_callbacks(trainer, checkpoint_path=checkpoint_path, resume=resume,
                                               log_path=log_path)


def dies_after(steps):
    """An on_batch_end callback, registered last, that makes the run die in the step after its `steps`-th
    optimisation step: that step's update and log row are done, the epoch it may start is not finished."""
    def die(trainer):
        if trainer.step == steps + 1:
            raise Interrupted
    return die


def params(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def without_speed(rows):
    return [{k: r[k] for k in ("step", "epoch", "loss", "lr")} for r in rows]


def read_log(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_an_interrupted_run_resumes_to_the_same_parameters(corpus, tmp_path):
    whole, whole_losses = make_trainer(corpus, seed=0, log_path=tmp_path / "whole.csv")
    whole.train()
    assert len(whole_losses) == 18

    for stop_at in (12, 15):  # at the end of epoch 2; in the middle of epoch 3
        ckpt, log = tmp_path / f"run{stop_at}.ckpt", tmp_path / f"run{stop_at}.csv"
        first, _ = make_trainer(corpus, seed=0, checkpoint_path=ckpt, log_path=log)
        first.add_callback("on_batch_end", dies_after(stop_at))
        with pytest.raises(Interrupted):
            first.train()
        assert ckpt.is_file()
        # a new process: other random state, other initial weights; everything must come from the checkpoint
        second, second_losses = make_trainer(corpus, seed=123, checkpoint_path=ckpt, log_path=log, resume=True)
        second.train()

        expected, got = params(whole.model), params(second.model)
        assert expected.keys() == got.keys()
        for name in expected:
            assert torch.equal(expected[name], got[name]), f"{name} differs after resuming at step {stop_at}"
        assert second.tokens == whole.tokens and second.step == whole.step == 18
        assert second_losses == whole_losses
        # the log holds every step once: the rows the interrupted epoch wrote after the checkpoint are redone
        assert without_speed(read_log(log)) == without_speed(read_log(tmp_path / "whole.csv"))


@pytest.mark.parametrize("seconds_per_step, saved_after", [(40, [1, 2, 3, 4, 5, 6, 7, 8]), (2, [1, 4, 7])])
def test_the_checkpoint_is_saved_after_the_first_epoch_then_every_half_minute(corpus, tmp_path, monkeypatch,
                                                                              seconds_per_step, saved_after):
    """A save costs about as much as a GPU epoch of the pretraining: after the first epoch, an epoch's end saves only
    when training.CHECKPOINT_EVERY_S (30 s) have passed since the last save.  On a clock of 40 s a step (a CPU's
    epochs) every epoch saves; at 2 s a step (12 s epochs) the first, the fourth (36 s later), the seventh."""
    assert training.CHECKPOINT_EVERY_S == 30
    clock = [0.0]
    monkeypatch.setattr(training, "time", type("Clock", (), {"monotonic": staticmethod(lambda: clock[0]),
                                                              "perf_counter": staticmethod(lambda: clock[0])}))
    saved = []
    monkeypatch.setattr(training, "save_training_state", lambda t, path, losses=None: saved.append(t.epochs_done))
    trainer, _ = make_trainer(corpus, seed=0, checkpoint_path=tmp_path / "run.ckpt", max_epochs=8)
    trainer.add_callback("on_batch_end", lambda t: clock.__setitem__(0, clock[0] + seconds_per_step))
    trainer.train()
    assert trainer.step == 8 * 6 and saved == saved_after


def test_resuming_needs_a_matching_checkpoint(corpus, tmp_path):
    ckpt = tmp_path / "run.ckpt"
    with pytest.raises(CheckpointError, match="no checkpoint"):
        make_trainer(corpus, seed=0, checkpoint_path=ckpt, resume=True)[0].train()
    ckpt.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="unreadable"):
        make_trainer(corpus, seed=0, checkpoint_path=ckpt, resume=True)[0].train()
    make_trainer(corpus, seed=0, checkpoint_path=ckpt, max_epochs=1)[0].train()  # a valid one, small model
    conf = make_trainer(corpus, 0, checkpoint_path=ckpt, resume=True)[0].config
    shorter, _ = attach(Trainer(GPT(small_config(corpus.vocab_size, block_size=32)), corpus, None, conf), ckpt,
                        resume=True)
    with pytest.raises(CheckpointError, match="different run"):
        shorter.train()


def test_every_step_is_logged_to_the_csv(corpus, tmp_path):
    log = tmp_path / "p.params.log.csv"
    t, losses = make_trainer(corpus, seed=0, log_path=log)
    t.train()
    rows = read_log(log)
    assert list(rows[0]) == ["step", "epoch", "loss", "lr", "tokens_per_s"]
    assert [int(r["step"]) for r in rows] == list(range(1, 19))
    assert [int(r["epoch"]) for r in rows] == [1] * 6 + [2] * 6 + [3] * 6
    assert [float(r["loss"]) for r in rows] == pytest.approx([l for _, _, l, _ in losses], rel=1e-5)
    # the course's schedule over full blocks: 7 rows of 63 positions a step (41 lines: the last step of an epoch
    # has 6); each step uses the rate set after the one before, so the first uses the full learning rate
    tokens, lrs = 0, []
    for step in range(18):
        lrs.append(1e-3 * (lr_multiplier(tokens, t.config) if step else 1.0))
        tokens += 63 * (6 if step % 6 == 5 else 7)
    assert t.tokens == tokens
    assert [float(r["lr"]) for r in rows] == pytest.approx(lrs, rel=1e-5)
    assert all(float(r["tokens_per_s"]) > 0 for r in rows)


# --- the course's math: optimizer groups and data order -------------------------------------------------------

def decay_groups(model):
    """(decayed names, undecayed names) of make_optimizer's groups, checking the rates on the way."""
    opt = make_optimizer(model, TrainerConfig())
    assert [g["weight_decay"] for g in opt.param_groups] == [0.1, 0.0]
    name = {id(p): n for n, p in model.named_parameters()}
    decayed, undecayed = ({name[id(p)] for p in g["params"]} for g in opt.param_groups)
    assert len(decayed) + len(undecayed) == len(name)  # every parameter, once
    return decayed, undecayed


@pytest.mark.parametrize("perceiver", [False, True])
def test_every_parameter_but_the_biases_is_decayed_as_in_the_course(perceiver):
    model = GPT(small_config(20, perceiver=perceiver))
    decayed, undecayed = decay_groups(model)
    assert undecayed == {n for n, _ in model.named_parameters() if n.endswith(".bias")}
    # the ones a Linear-weights-only rule would spare
    assert {"tok_emb.weight", "pos_emb", "ln_f.weight", "head.weight"} <= decayed
    norms = {f"{n}.weight" for n, m in model.named_modules() if isinstance(m, torch.nn.LayerNorm)}
    assert len(norms) >= 3 and norms <= decayed
    if perceiver:  # the basis C: bottleneck_dim (8) rows of width n_embd (32), whatever it is called
        basis = [n for n, p in model.named_parameters() if tuple(p.shape[-2:]) == (8, 32)]
        assert len(basis) == 1 and basis[0] in decayed


def test_a_module_called_layernorm_is_spared_as_in_the_course():
    """The course's filter also spares names containing "LayerNorm.weight" (Hugging Face's module name); none
    of ours has it, but a student's block could."""
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.LayerNorm, self.norm, self.proj = torch.nn.LayerNorm(4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 4)

    decayed, undecayed = decay_groups(Block())
    assert decayed == {"norm.weight", "proj.weight"}
    assert undecayed == {"LayerNorm.weight", "LayerNorm.bias", "norm.bias", "proj.bias"}


def test_training_batches_come_in_dataset_order(corpus, world, monkeypatch):
    """As the course's DataLoader: no shuffling, every epoch items 0..B-1, then B..2B-1, and so on."""
    path, _ = world
    names = NameDataset((path / "birth_places_train.tsv").read_text(encoding="utf-8"), corpus)
    t = Trainer(GPT(small_config(corpus.vocab_size)), names, None,
                TrainerConfig(max_epochs=2, batch_size=7, num_workers=0, device="cpu", show_progress=False))
    seen = []

    class RecordingLoader(trainer_mod.DataLoader):  # every batch the training loop is given
        def __iter__(self):
            for x, y in super().__iter__():
                seen.append((x, y))
                yield x, y

    monkeypatch.setattr(trainer_mod, "DataLoader", RecordingLoader)
    t.train()
    expected = [(torch.stack([names[i][0] for i in range(b, min(b + 7, len(names)))]),
                 torch.stack([names[i][1] for i in range(b, min(b + 7, len(names)))]))
                for b in range(0, len(names), 7)] * 2
    assert len(seen) == len(expected) == 2 * 5  # 30 training lines
    for (x, y), (ex, ey) in zip(seen, expected):
        assert torch.equal(x, ex) and torch.equal(y, ey)


def test_each_step_uses_the_rate_set_after_the_step_before(corpus, monkeypatch):
    """The course updates the rate after optimizer.step(), from the tokens seen so far, for the next step: the
    first step runs at the full learning rate, the second at the rate after one batch's tokens."""
    used, step = [], torch.optim.AdamW.step

    def recording_step(self, *args, **kwargs):
        used.append([g["lr"] for g in self.param_groups])
        return step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    t, losses = make_trainer(corpus, seed=0, max_epochs=1)
    t.train()
    tokens = [0] + [63 * 7 * k for k in range(1, 6)]
    assert used == [[1e-3 * (lr_multiplier(n, t.config) if n else 1.0)] * 2 for n in tokens]
    assert [lr for *_, lr in losses] == [lrs[0] for lrs in used]  # and the log says so


def test_off_a_terminal_progress_is_a_line_every_tenth_of_the_run(capsys):
    """Written to a file or a CI log, a bar would add a line per refresh: a short line every ~10 % instead."""
    torch.manual_seed(0)
    x = torch.randint(1, 20, (20, 16))
    Trainer(GPT(small_config(20)), torch.utils.data.TensorDataset(x, x), None,
            TrainerConfig(max_epochs=1, batch_size=1, device="cpu")).train()  # stdout captured: not a terminal
    out, err = capsys.readouterr()
    assert [line.split(":")[0] for line in out.splitlines()] == [f"step {2 * k}/20" for k in range(1, 11)]
    assert "epoch 1 iter 19: loss" in out.splitlines()[-1] and err == ""


class FakeWriter:
    def __init__(self):
        self.calls = []

    def add_scalar(self, tag, value, step):
        self.calls.append((tag, float(value), int(step)))


def test_a_writer_gets_loss_and_learning_rate(corpus):
    writer = FakeWriter()
    t, recorded = make_trainer(corpus, seed=0, max_epochs=2, writer=writer)
    t.train()
    losses = [c for c in writer.calls if c[0] == "train/loss"]
    lrs = [c for c in writer.calls if c[0] == "train/lr"]
    assert len(writer.calls) == len(losses) + len(lrs)
    assert [s for *_, s in losses] == [s for *_, s in lrs] == list(range(1, 13))
    assert [v for _, v, _ in losses] == pytest.approx([l for _, _, l, _ in recorded])
    assert [v for _, v, _ in lrs] == pytest.approx([lr for *_, lr in recorded])


def test_helper_passes_the_writer_on(corpus, world):
    path, _ = world
    writer = FakeWriter()
    tconf, _ = helper.pretrain(corpus, 64, GPT(small_config(corpus.vocab_size)), 6e-3, writer=writer)
    assert tconf.writer is writer
    tconf, _ = helper.finetune(None, path / "birth_places_train.tsv", corpus, 64,
                               GPT(small_config(corpus.vocab_size)), finetune_lr=6e-4, writer=writer)
    assert tconf.writer is writer
    tconf, _ = helper.pretrain(corpus, 64, GPT(small_config(corpus.vocab_size)), 6e-3)
    assert tconf.writer is None


@pytest.mark.slow  # run.py or run.sh in processes of their own
def test_training_imports_no_tensorboard(world):
    path, _ = world
    code = f"""
import sys
from submission import helper, dataset, model
ds = dataset.CharCorruptionDataset(open({str(path / 'wiki.txt')!r}).read(), 32)
net = model.GPT(model.GPTConfig(ds.vocab_size, 32, n_layer=1, n_head=1, n_embd=16))
tconf, t = helper.pretrain(ds, 32, net)
tconf.max_epochs, tconf.num_workers, tconf.show_progress = 1, 0, False
helper.train(net, {str(path / 'x.params')!r}, t)
print(sorted(m for m in sys.modules if 'tensorboard' in m))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT / "src")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


# --- precision "auto" on CUDA: bf16 only where the GPU computes it natively ---------------------------------

def fake_gpu(monkeypatch, capability, old_torch=False):
    """Pretend to be a GPU of this compute capability, as torch.cuda's queries would describe it."""
    def is_bf16_supported(including_emulation=True):
        # a T4 or V100 emulates bf16, so the default query says yes there too
        return capability >= (8, 0) or including_emulation

    def old_is_bf16_supported():
        return True

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", old_is_bf16_supported if old_torch else is_bf16_supported)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)


@pytest.mark.parametrize("old_torch", [False, True])
@pytest.mark.parametrize("capability,native", [((7, 0), False), ((7, 5), False), ((8, 0), True), ((8, 6), True),
                                               ((9, 0), True)])
def test_a_gpu_run_takes_the_course_s_numerics_unless_asked_for_the_fast_path(monkeypatch, capability, native,
                                                                              old_torch):
    """On CUDA, auto and fp32 are the course's numerics (fp32 with TF32 off, the attention written out, the course's
    AdamW, batches not pinned) on every GPU; bf16 is the same under bf16 autocast; fast is bf16 only where the GPU
    computes it natively (not a T4 or V100, which emulate it), with the fused kernels, the fused AdamW and TF32."""
    fake_gpu(monkeypatch, capability, old_torch)
    cuda = torch.device("cuda")
    course = training.Numerics("fp32", "math", fused_adamw=False, tf32=False, pin_memory=False)
    assert training.resolve_numerics(cuda, "auto") == training.resolve_numerics(cuda, "fp32") == course
    assert training.resolve_numerics(cuda, "bf16") == training.Numerics("bf16", "math", False, False, False)
    fast = training.resolve_numerics(cuda, "fast")
    assert fast == training.Numerics("bf16" if native else "fp32", "auto", True, True, True)
    assert training.resolve_precision(cuda, "auto") == "fp32"


def attention_kinds(net):
    from submission.attention import _AttentionBase

    return {m.attn_impl for m in net.modules() if isinstance(m, _AttentionBase)}


def test_place_gives_a_gpu_run_the_course_s_numerics_and_fp32_there_is_true_fp32(monkeypatch):
    """training.place on CUDA (a GPU faked: it only sets flags and the model's settings): auto and fp32 turn TF32 off
    even where it was on (PyTorch's default for cuDNN), write every attention layer's formula out (self- and
    cross-attention), keep the course's AdamW and do not pin; fast does the opposite of each."""
    fake_gpu(monkeypatch, (9, 0))
    with cuda_settings_as_they_were():
        for precision in ("auto", "fp32", "fast"):
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision != "fast"
            net = GPT(small_config(20, perceiver=True))
            trainer = Trainer(net, None, None, TrainerConfig())
            numerics = training.place(trainer, "cuda", precision)
            fast = precision == "fast"
            assert torch.backends.cuda.matmul.allow_tf32 is torch.backends.cudnn.allow_tf32 is fast, precision
            assert attention_kinds(net) == ({"auto"} if fast else {"math"}), precision
            # two layers, the perceiver's only ones here: the down and up blocks' cross-attention
            assert sum(hasattr(m, "attn_impl") for m in net.modules()) == 2
            assert trainer.config.precision == ("bf16" if fast else "fp32") == numerics.precision
            assert trainer.config.pin_memory is fast
            assert bool(trainer.callbacks["on_train_start"]) is fast  # the fused AdamW, made when training starts


# --- run.py --resume ------------------------------------------------------------------------------------------

def pretrain_args(path, *extra, params="v.params"):
    return ["--function", "pretrain", "--variant", "vanilla", "--pretrain_corpus_path", str(path / "wiki.txt"),
            "--writing_params_path", str(path / params), "--device", "cpu", "--precision", "fp32",
            *SMALL_FLAGS, *extra]


@pytest.mark.slow  # run.py or run.sh in processes of their own
def test_run_py_resume_needs_a_checkpoint(world):
    path, _ = world
    r = run_py(*pretrain_args(path, "--resume"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no checkpoint" in r.stderr and "without --resume" in r.stderr
    # a fresh run never overwrites the checkpoint of an interrupted one
    (path / "v.params.ckpt").write_bytes(b"hours of training")
    r = run_py(*pretrain_args(path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--resume" in r.stderr
    assert (path / "v.params.ckpt").read_bytes() == b"hours of training"
    r = run_py(*pretrain_args(path, "--resume"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "delete it" in r.stderr


def test_run_py_resume_finishes_the_run(world, monkeypatch):
    import run

    path, _ = world
    run.main(pretrain_args(path, params="whole.params"))
    assert not (path / "whole.params.ckpt").exists()  # removed once the params are saved
    assert len(read_log(path / "whole.params.log.csv")) == 2 * 3  # 41 lines, batches of 16

    original = training.add_run_callbacks

    def with_a_dying_step(trainer, **kwargs):  # run.py's callbacks, then death in the step after the 4th
        losses = original(trainer, **kwargs)
        trainer.add_callback("on_batch_end", dies_after(4))
        return losses

    monkeypatch.setattr(training, "add_run_callbacks", with_a_dying_step)
    with pytest.raises(Interrupted):
        run.main(pretrain_args(path))
    assert (path / "v.params.ckpt").is_file() and not (path / "v.params").exists()
    monkeypatch.setattr(training, "add_run_callbacks", original)
    run.main(pretrain_args(path, "--resume"))
    assert not (path / "v.params.ckpt").exists()
    whole = torch.load(path / "whole.params", weights_only=True)
    resumed = torch.load(path / "v.params", weights_only=True)
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)
    assert [r["loss"] for r in read_log(path / "v.params.log.csv")] == \
        [r["loss"] for r in read_log(path / "whole.params.log.csv")]


# --- src/plot_losses.py ----------------------------------------------------------------------------------------

def plot_losses():
    import plot_losses as module  # src/ is on sys.path (conftest)

    return module


def write_log(path, n=5):
    with open(path, "w", encoding="utf-8") as f:
        f.write("step,epoch,loss,lr,tokens_per_s\n")
        for i in range(1, n + 1):
            f.write(f"{i},1,{3.0 / i},{1e-4 * i},1000.0\n")


def test_plot_losses_without_matplotlib_says_what_to_install(tmp_path, monkeypatch, capsys):
    write_log(tmp_path / "a.params.log.csv")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail, installed or not
    with pytest.raises(SystemExit) as e:
        plot_losses().main([str(tmp_path / "a.params.log.csv"), "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "pip install matplotlib" in err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("content,message", [(None, "does not exist"), ("a,b\n1,2\n", "not a loss log"),
                                             ("step,epoch,loss,lr\n1,1,oops,1\n", "malformed"),
                                             ("step,epoch,loss,lr,tokens_per_s\n", "no rows")])
def test_plot_losses_refuses_bad_logs_in_one_sentence(tmp_path, capsys, content, message):
    log = tmp_path / "l.csv"
    if content is not None:
        log.write_text(content)
    with pytest.raises(SystemExit) as e:
        plot_losses().main([str(log), "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and message in err


def test_plot_losses_draws_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    write_log(tmp_path / "a.params.log.csv")
    write_log(tmp_path / "b.params.log.csv", n=8)
    plot_losses().main([str(tmp_path / "a.params.log.csv"), str(tmp_path / "b.params.log.csv"),
                        "--out", str(tmp_path / "out" / "l.png")])
    assert (tmp_path / "out" / "l.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow  # run.py or run.sh in processes of their own
def test_run_sh_passes_resume_on(world, tmp_path):
    from test_run import run_sh

    path, _ = world
    out = tmp_path / "out"
    r = run_sh("vanilla_pretrain", "--resume", env={"DATA_DIR": str(path), "OUT_DIR": str(out)})
    assert r.returncode == 2 and "no checkpoint" in r.stderr and str(out / "vanilla.pretrain.params.ckpt") in r.stderr
