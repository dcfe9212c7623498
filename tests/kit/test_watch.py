"""Every training run watches its own learning (src/kit/watch.py): a loss or parameters that are no longer numbers
stop it before anything is saved, and a loss still on the plateau of a model that ignores context warns once."""

import math
import random
from pathlib import Path

import pytest
import torch

from conftest import small_config
from kit import training, watch
from submission.dataset import CharCorruptionDataset, NameDataset
from submission.model import GPT
from submission.trainer import Trainer, TrainerConfig
from submission.utils import set_seed


class Targets(torch.utils.data.Dataset):
    """Examples whose targets are given: (x, y) with y as listed."""

    def __init__(self, ys):
        self.ys = ys

    def __len__(self):
        return len(self.ys)

    def __getitem__(self, i):
        y = torch.tensor(self.ys[i])
        return torch.zeros_like(y), y


def test_the_plateau_is_the_entropy_of_the_targets_frequencies_without_pad():
    # ids 2 and 3 twice each, 4 four times; PAD (0) left out as the loss leaves it out
    ds = Targets([[2, 3, 4, 4, 0, 0], [2, 3, 4, 4, 0, 0]])
    p = [0.25, 0.25, 0.5]
    assert watch.unigram_entropy(ds) == pytest.approx(-sum(q * math.log(q) for q in p))
    assert watch.unigram_entropy(Targets([[0, 0]])) is None


def test_the_plateau_of_the_course_s_datasets_draws_nothing_from_the_run_s_random_numbers(world):
    path, _ = world
    corpus = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    names = NameDataset((path / "birth_places_train.tsv").read_text(encoding="utf-8"), corpus)
    random.seed(1), torch.manual_seed(1)
    before = random.random(), torch.rand(1)
    random.seed(1), torch.manual_seed(1)
    plateaus = watch.unigram_entropy(corpus), watch.unigram_entropy(names)
    assert (random.random(), torch.rand(1)) == before
    # a model that ignores context can do no better than the frequencies: below ln(vocab), above 0
    for h in plateaus:
        assert 1.0 < h < math.log(corpus.vocab_size)


@pytest.mark.parametrize("epochs,steps,check", [(650, 23, 20), (75, 8, 13), (10, 8, None), (75, 3, 34),
                                                (300, 6, 17), (500, 6, 17), (20, 3, None), (2, 1, None)])
def test_the_plateau_is_checked_early_in_the_schedule_and_not_in_a_short_run(epochs, steps, check):
    """The course's pretraining (650 epochs of 23 steps on the course's data), its finetunings without pretraining (75
    epochs of 8 steps) and from a pretrained model (10 of 8); the demo's finetuning without pretraining (75 of 3),
    pretrainings (300 and 500 of 6) and finetunings after them (20 of 3); a smoke run."""
    assert watch.plateau_check_epoch(epochs, steps) == check


class Steps:
    """What the watch's callbacks read of a trainer, driven step by step."""

    def __init__(self, max_epochs, plateau, steps_per_epoch=50):
        self.config = TrainerConfig(max_epochs=max_epochs, batch_size=1)
        self.train_dataset = range(steps_per_epoch)
        self.model = torch.nn.Linear(2, 2)
        self.callbacks = {}
        self.state = watch.watch_learning(self, plateau=plateau)
        self.step = self.epoch = self.iter = 0

    def add_callback(self, event, f):
        self.callbacks.setdefault(event, []).append(f)

    def epochs(self, *per_epoch):
        for losses in per_epoch:
            self.epoch += 1
            for self.iter, self.loss in enumerate(losses):
                self.step += 1
                for f in self.callbacks["on_batch_end"]:
                    f(self)
            for f in self.callbacks["on_epoch_end"]:
                f(self)


def test_a_run_still_on_the_plateau_at_its_check_epoch_warns_once(capsys):
    run = Steps(max_epochs=100, plateau=3.30)  # 3 % of 5,000 steps: 150, the end of epoch 3
    run.epochs([4.0, 3.5], [3.4, 3.3], [3.3, 3.27], [3.3, 3.3], [3.3])
    err = capsys.readouterr().err
    assert run.state["warned"] and run.state["check_loss"] == pytest.approx(3.285)
    assert err.count("WARNING") == 1 and "after epoch 3 of 100 the mean loss is 3.285" in err
    assert "3.300" in err and "stop the run" in err


def test_a_run_that_left_the_plateau_says_nothing(capsys):
    run = Steps(max_epochs=100, plateau=3.30)
    run.epochs([4.0, 3.5], [3.4, 3.3], [3.3, 3.2], [3.3, 3.3])  # epoch 3: 3.25, the margin below 3.30
    assert Steps(max_epochs=3, plateau=3.3).state["check_epoch"] is None  # a short run: never checked
    assert not run.state["warned"] and run.state["check_loss"] == pytest.approx(3.25)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_loss_that_is_not_a_number_stops_the_run_at_that_step(bad):
    run = Steps(max_epochs=10, plateau=3.3)
    with pytest.raises(watch.TrainingStopped, match=rf"^the loss became {bad} at step 3 \(epoch 2, iteration 0\), "
                                                    "so training stopped before saving anything; try a lower"):
        run.epochs([3.0, 2.9], [bad, 2.8])


def test_parameters_that_are_not_numbers_stop_the_run_before_the_epoch_s_end_saves_them():
    run = Steps(max_epochs=10, plateau=3.3)
    run.epochs([3.0])
    with torch.no_grad():
        run.model.weight[0, 0] = float("nan")
    with pytest.raises(watch.TrainingStopped, match="the parameters hold NaN or inf after epoch 2 "):
        run.epochs([2.9])


def trained(net, dataset, epochs, batch):
    config = TrainerConfig(max_epochs=epochs, batch_size=batch, learning_rate=3e-3, num_workers=0, show_progress=False)
    trainer = Trainer(net, dataset, None, config)
    training.place(trainer, "cpu", "fp32")
    state = watch.watch_learning(trainer)
    trainer.train()
    return state


@pytest.mark.slow  # two small trainings of 220 steps
def test_the_plateau_is_where_a_model_that_ignores_context_stays_and_a_model_that_reads_leaves(world, capsys):
    """On the tiny world (20 epochs of 11 steps, checked after the tenth): a small GPT leaves the plateau by then; the
    same model with its embeddings of the characters and positions held at zero sees nothing of its input, learns
    only the characters' frequencies, and the watch warns."""
    path, _ = world
    corpus = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    set_seed(0)
    reads = trained(GPT(small_config(corpus.vocab_size)), corpus, epochs=20, batch=4)
    assert not reads["warned"] and reads["check_loss"] < reads["plateau"] - 0.2, reads
    assert capsys.readouterr().err == ""
    set_seed(0)
    blind = GPT(small_config(corpus.vocab_size))
    with torch.no_grad():
        blind.tok_emb.weight.zero_()
        blind.pos_emb.zero_()
    blind.tok_emb.weight.requires_grad_(False)
    blind.pos_emb.requires_grad_(False)
    state = trained(blind, corpus, epochs=20, batch=4)
    assert state["warned"], state
    # it reached the plateau from above, and no lower: what the frequencies give, as unigram_entropy computes it
    assert state["plateau"] - watch.PLATEAU_MARGIN < state["check_loss"] < state["plateau"] + 0.6, state
    assert capsys.readouterr().err.count("WARNING") == 1


# --- run.py: the run stops with one sentence, and nothing is saved over anything ------------------------------------

def small_run(path, params, *extra):
    # 41 lines at batch 21: two steps an epoch, so step 3 is the second epoch's first
    return ["--function", "pretrain", "--variant", "vanilla", "--pretrain_corpus_path", str(path / "wiki.txt"),
            "--writing_params_path", str(params), "--device", "cpu", "--precision", "fp32", "--n_layer", "2",
            "--n_head", "2", "--n_embd", "32", "--block_size", "64", "--num_workers", "0", "--no_progress",
            "--batch_size", "21", "--max_epochs", "3", *extra]


def planted(monkeypatch, at_step, where):
    """A NaN at step `at_step` of every training run: in its loss, or in a parameter after the step's update."""
    from submission import trainer as trainer_module

    if where == "loss":
        batch_loss = trainer_module.Trainer.batch_loss

        def nan_loss(self, x, y):
            loss = batch_loss(self, x, y)
            return loss * float("nan") if self.step + 1 == at_step else loss

        monkeypatch.setattr(trainer_module.Trainer, "batch_loss", nan_loss)
    else:
        watch_learning = watch.watch_learning

        def first_a_nan(trainer, *args, **kwargs):
            def nan_weight(t):
                if t.step == at_step:
                    with torch.no_grad():
                        next(t.model.parameters()).view(-1)[0] = float("nan")
            trainer.add_callback("on_batch_end", nan_weight)
            return watch_learning(trainer, *args, **kwargs)

        monkeypatch.setattr(watch, "watch_learning", first_a_nan)


@pytest.mark.slow  # two small trainings, run.py in this process
@pytest.mark.parametrize("where,step", [("loss", 3), ("params", 4)])
def test_a_nan_at_step_3_stops_run_py_with_one_sentence_and_leaves_earlier_files_as_they_were(
        world, tmp_path, monkeypatch, capsys, where, step):
    """A NaN in step 3's loss, or in the weights after step 4's update (the second epoch's last): the run stops there
    with one sentence, the params file of an earlier run is as it was, and the checkpoint holds the first epoch."""
    import run

    path, _ = world
    params = tmp_path / "v.params"
    ckpt = Path(f"{params}.ckpt")
    params.write_bytes(b"an earlier run's params")
    planted(monkeypatch, step, where)
    monkeypatch.setattr(training, "CHECKPOINT_EVERY_S", 0)  # a checkpoint at every epoch's end
    saves = []
    save = training.save_training_state
    monkeypatch.setattr(training, "save_training_state", lambda t, p, losses=None: (saves.append(t.step),
                                                                                     save(t, p, losses)))
    with pytest.raises(SystemExit) as e:
        run.main(small_run(path, params))
    err = capsys.readouterr().err
    assert e.value.code == 3, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    if where == "loss":
        assert "the loss became nan at step 3 (epoch 2, iteration 0)" in err
    else:  # the epoch's end finds it before anything saves it
        assert "the parameters hold NaN or inf after epoch 2 (step 4)" in err
    assert f"{ckpt} holds the last good epoch, which --resume continues" in err
    assert params.read_bytes() == b"an earlier run's params"
    assert saves == [2]  # the first epoch's checkpoint, never one after the NaN
    state = torch.load(ckpt, weights_only=True)
    assert state["step"] == 2 and state["epochs_done"] == 1
    assert all(torch.isfinite(v).all() for v in state["model"].values())
