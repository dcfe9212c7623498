"""What a student's run does on a GPU that it does not do on a CPU, checked on each device (conftest.on_each_device):
the default precision, and params trained and evaluated there as the grader reads them on its CPU.

The other tests of the student's path on each device: torch.compile (test_compile.py), batched decoding
(test_decode.py) and run.py end to end (test_run.py).  A lent GPU runs every CUDA case with `python -m pytest -m
cuda` (tools/gpu_session.sh); the CPU cases run everywhere."""

import math
import statistics

import pytest
import torch

import course_params
from conftest import cuda_settings_as_they_were, on_each_device, small_config
from kit import decoding, training
from submission import helper, model
from submission.dataset import CharCorruptionDataset, NameDataset
from submission.model import GPT
from submission.trainer import Trainer, TrainerConfig, save_state_dict
from submission.utils import set_seed


def train(net, dataset, device, batch_size, epochs, lr=3e-3):
    """net trained as run.py trains it (training.place, the default precision) on `device`; its losses."""
    config = TrainerConfig(max_epochs=epochs, batch_size=batch_size, learning_rate=lr, num_workers=0,
                           show_progress=False)
    trainer = Trainer(net, dataset, None, config)
    training.place(trainer, device, "auto")
    losses = training.record_losses(trainer)
    trainer.train()
    return trainer, [loss for *_, loss, _ in losses]


@pytest.mark.parametrize("device", on_each_device())
def test_a_run_trains_in_the_default_precision(world, device):
    """`--precision auto`: on CUDA the course's numerics (fp32 with TF32 off, the attention written out, the course's
    AdamW); on a CPU bf16 autocast where it computes bf16 natively and the fused AdamW; fp32 weights and optimizer
    state everywhere; and the model learns."""
    path, _ = world
    corpus = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    set_seed(0)
    net = GPT(small_config(corpus.vocab_size, 64))
    dev = torch.device(device)
    with cuda_settings_as_they_were():
        if dev.type == "cuda":  # PyTorch's own default for cuDNN; a run in fp32 must turn it off
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        trainer, losses = train(net, corpus, device, 8, epochs=6)
        if dev.type == "cuda":
            assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
    assert trainer.device.type == dev.type
    numerics = training.resolve_numerics(dev, "auto")
    assert trainer.config.precision == numerics.precision
    attention = {m.attn_impl for m in net.modules() if hasattr(m, "attn_impl")}
    if dev.type == "cuda":
        assert numerics.precision == "fp32" and attention == {"math"} and not trainer.optimizer.defaults["fused"]
    else:
        assert attention == {"auto"} and trainer.optimizer.defaults["fused"]
    assert all(p.device.type == dev.type and p.dtype == torch.float32 for p in net.parameters())
    for state in trainer.optimizer.state.values():
        assert state["exp_avg"].dtype == state["exp_avg_sq"].dtype == torch.float32
    assert len(losses) == 6 * math.ceil(len(corpus) / 8) and all(math.isfinite(v) for v in losses)
    # from about the entropy of a uniform guess (46 characters: ln 46 = 3.8) to well below it: 3.7 -> 2.5 measured
    # (the first and last 5 steps, bf16 on a CPU)
    assert statistics.mean(losses[-5:]) < statistics.mean(losses[:5]) - 0.5, losses


@pytest.mark.slow  # two course-size models, trained and decoded twice
@pytest.mark.parametrize("variant", ["vanilla", "perceiver"])
@pytest.mark.parametrize("device", on_each_device())
def test_the_grader_reads_a_run_of_this_device_as_it_ran(world, tmp_path, variant, device):
    """A course-size model trained on `device` in the default precision, its params saved there, its predictions
    made there (fp32, batched): the grader, on its CPU with its own decoder, gives the same answers but for the
    near-ties its slack allows (checks.predictions.allowed_disagreements)."""
    from checks import decoder, params
    from checks.predictions import allowed_disagreements

    path, people = world
    text = (path / "wiki.txt").read_text(encoding="utf-8")
    corpus = CharCorruptionDataset(text, 128)
    stoi = course_params.vocab(path)
    assert corpus.stoi == stoi
    names = NameDataset((path / "birth_places_train.tsv").read_text(encoding="utf-8"), corpus)
    net = course_params.course_net(variant, stoi, seed=2)  # random, with decisive answers
    with cuda_settings_as_they_were():
        trainer, losses = train(net, names, device, 10, epochs=1, lr=1e-4)
    assert trainer.device.type == torch.device(device).type and all(math.isfinite(v) for v in losses)
    save_state_dict(net, tmp_path / "model.params")  # a GPU run's file holds CUDA tensors
    questions = [f"Where was {n} born?" for n, _ in people]
    # as run.py's evaluate, in a process of its own: without TF32; the grader strips each line
    ran = [a.strip() for a in decoding.predict_places(net, questions, corpus, trainer.device)]

    w = params.own_reading(tmp_path / "model.params", variant, len(stoi), model, helper)  # on the CPU
    read = [a.strip() for a in decoder.greedy_answers(w, questions, stoi)]
    differ = [i for i, (a, b) in enumerate(zip(ran, read)) if a != b]
    assert len(differ) <= allowed_disagreements(len(questions)), [(ran[i], read[i]) for i in differ]
    assert len(set(ran)) > 3  # varied answers: the agreement says something


def gradients(net, x, y, device, precision):
    """Every parameter's gradient of net's loss on the batch (x, y), computed as the Trainer computes a training
    step on `device` in `precision` (training.place: its attention kernels and autocast), dropout off; fp32, on
    the CPU, flattened into one vector."""
    config = TrainerConfig(max_epochs=1, batch_size=len(x), num_workers=0, show_progress=False)
    trainer = Trainer(net, None, None, config)
    training.place(trainer, device, precision)
    trainer.device = torch.device(device)
    net.to(trainer.device).eval()  # no dropout: both computations draw nothing at random
    net.zero_grad(set_to_none=True)
    trainer.batch_loss(x, y).backward()
    return torch.cat([p.grad.detach().float().cpu().flatten() for p in net.parameters()])


@pytest.mark.parametrize("sharp", [1, 4], ids=["random", "peaked"])
@pytest.mark.parametrize("variant", ["vanilla", "perceiver"])
@pytest.mark.parametrize("device", on_each_device())
def test_the_attention_kernels_training_runs_on_compute_the_maths_gradients(world, variant, sharp, device):
    """The gradients of a training step on `device`, in the default numerics (training.place: on CUDA the attention
    written out in fp32, on a CPU scaled_dot_product_attention), agree with the plain math's in float64 on the CPU.
    Taken on a course-size model, on real pretraining batches trimmed to their longest line (any length up to 127, 64
    among them), with attention weights at random and more peaked (the query and key projections scaled up).
    Dropout is off here (the next test draws it)."""
    import copy

    from submission.trainer import trim_padding

    path, _ = world
    corpus = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 128)
    stoi = course_params.vocab(path)
    mconf = model.GPTConfig(len(stoi), 128, n_layer=4, n_head=8, n_embd=256)
    torch.manual_seed(0)
    net = (helper.initialize_vanilla_model(mconf) if variant == "vanilla"
           else helper.initialize_perceiver_model(mconf, 32))
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.endswith(("query.weight", "key.weight")):
                p.mul_(sharp)
    precision = training.resolve_precision(torch.device(device), "auto")
    for start, length in [(0, None), (8, 37), (16, 64), (24, 100), (32, 127)]:
        x, y = (torch.stack(t) for t in zip(*(corpus[i] for i in range(start, start + 8))))
        if length:  # a batch that trimming cuts to `length` (a target there, none after it)
            y[:, length:] = 0
            y[0, length - 1] = stoi["a"]
        x, y = trim_padding(x, y)
        assert length is None or x.shape[1] == length
        reference = copy.deepcopy(net).double()
        for block in reference.modules():
            if hasattr(block, "attn_impl"):
                block.attn_impl = "math"
        want = gradients(reference, x, y, "cpu", "fp32")
        with cuda_settings_as_they_were():
            got = gradients(copy.deepcopy(net), x, y, device, precision)
        assert torch.isfinite(got).all(), f"{int((~torch.isfinite(got)).sum())} gradients are not finite"
        error = float((got - want).norm() / want.norm())
        # measured on a CPU: 0.0056 to 0.0081 in bf16 (its 8-bit mantissa); a wrong kernel is off by far more
        assert error < (0.03 if precision == "bf16" else 1e-4), (x.shape, error)


@pytest.mark.slow  # 200 draws of the attention for each of 5 shapes
@pytest.mark.parametrize("device", on_each_device())
def test_the_attention_s_dropout_in_training_keeps_the_gradients_true(device):
    """In training the attention drops weights at random (attn_pdrop, in the attention training.place leaves: the
    formula written out with nn.Dropout on CUDA, scaled_dot_product_attention on a CPU): each draw's backward pass
    must use the draw's own mask, and on average the
    gradients must be those of no dropout.  For L = <attend(q, k, v), G>, which is linear in v, L = <v, dL/dv>
    holds exactly when the backward pass used the forward pass's mask; and dropout (rescaled by 1 / (1 - p)) leaves
    the expected gradients of q, k and v unchanged.  Shapes as in training: self-attention up to 127 positions (64
    among them), and cross-attention from 32 queries to 127 keys, as the perceiver's."""
    from submission.attention import CausalSelfAttention

    dev = torch.device(device)
    precision = training.resolve_precision(dev, "auto")
    att = CausalSelfAttention(model.GPTConfig(50, 128, n_layer=1, n_head=8, n_embd=256, attn_pdrop=0.1))
    att.to(dev).train()
    g = torch.Generator().manual_seed(0)
    with cuda_settings_as_they_were():
        if training.resolve_numerics(dev, "auto").attention == "math":  # as training.place sets it
            att.attn_impl = "math"
        for tq, tk in [(37, 37), (64, 64), (100, 100), (127, 127), (32, 127)]:
            q, k, v = (torch.randn(4, 8, n, 32, generator=g).to(dev) for n in (tq, tk, tk))
            upstream = torch.randn(4, 8, tq, 32, generator=g).to(dev)
            mask = att.mask[:tq, :tk]
            # no dropout, the plain math in float64
            exact = [t.double().requires_grad_() for t in (q, k, v)]
            scores = (exact[0] @ exact[1].transpose(-2, -1)) / math.sqrt(32)
            out = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ exact[2]
            (out * upstream.double()).sum().backward()
            total, worst, draws = [0, 0, 0], 0.0, 200
            for _ in range(draws):
                leaves = [t.clone().requires_grad_() for t in (q, k, v)]
                with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
                    y = att.attend(*leaves, mask)  # (B, T, C): the heads side by side
                y = y.view(4, tq, 8, 32).transpose(1, 2).float()
                loss = (y * upstream).sum()
                loss.backward()
                mismatch = float(((leaves[2].detach() * leaves[2].grad).sum() - loss.detach()).abs())
                worst = max(worst, mismatch / float((y.detach().abs() * upstream.abs()).sum()))
                total = [s + t.grad.double() for s, t in zip(total, leaves)]
            # measured on a CPU in bf16: at most 7e-5 (rounding); another mask in the backward pass is off by ~1e-2
            assert worst < 1e-3, (tq, tk, worst)
            for name, s, e in zip("qkv", total, exact):
                error = float((s / draws - e.grad).norm() / e.grad.norm())
                # measured on a CPU: 0.022 to 0.025, the spread of 200 draws; a kernel that forgets the 1 / (1 - p)
                # is off by 0.1
                assert error < 0.05, (tq, tk, name, error)
