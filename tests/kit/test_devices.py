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
from conftest import on_each_device, small_config, tf32_as_it_was
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
    """`--precision auto`: bf16 autocast where the device computes bf16 natively (an H100, an A100; a T4 only
    emulates it), fp32 weights and optimizer state, the fused AdamW, TF32 matmuls on CUDA; and the model learns."""
    path, _ = world
    corpus = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    set_seed(0)
    net = GPT(small_config(corpus.vocab_size, 64))
    with tf32_as_it_was():
        trainer, losses = train(net, corpus, device, 8, epochs=6)
        if trainer.device.type == "cuda":
            assert torch.backends.cuda.matmul.allow_tf32
    dev = torch.device(device)
    assert trainer.device.type == dev.type
    assert trainer.config.precision == training.resolve_precision(dev, "auto")
    if dev.type == "cuda":
        major, _ = torch.cuda.get_device_capability(dev)
        assert trainer.config.precision == ("bf16" if major >= 8 else "fp32")
    assert trainer.optimizer.defaults["fused"]
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
    with tf32_as_it_was():
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
