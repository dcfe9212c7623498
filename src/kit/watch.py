"""Every training run watches its own learning, on every device, and says what it sees in one sentence.

Two things can go wrong that the loss shows long before the params file does:
- The loss stops being a number (NaN or inf: a step diverged, or a kernel returned NaN gradients).  Every step
  after that trains on garbage, so the run stops at once (TrainingStopped), before anything is saved: the params
  file and the checkpoint of an earlier run stay as they were, and the parameters are checked too before every
  save (a NaN gradient makes NaN weights one step before it makes a NaN loss).
- The loss stays on the plateau of a model that ignores context: the entropy of the characters' frequencies in
  the run's own training targets (unigram_entropy).  Any model reaches that plateau by learning which characters
  are common; only a model that reads its input goes below, and correct runs do so within a few epochs (the course's
  perceiver on a CPU by epoch 5 of 650).  A run still on it at plateau_check_epoch (epoch 20 of the course's 650)
  warns, once, while it is young enough to stop.
"""

import math
import sys
from collections import Counter

import torch

from kit.parts import random_states_kept

# The check comes at the end of the first epoch by which the run has taken PLATEAU_CHECK_SHARE of its steps and at
# least PLATEAU_CHECK_STEPS (a run starts above the plateau, at the entropy of a uniform guess, and how many steps it
# takes to come down depends on the learning rate's schedule, not on how many steps make an epoch): epoch 20 of the
# course's 650-epoch pretraining (23 steps an epoch), epoch 13 of its finetuning without pretraining (8).  A run that
# would reach the check only after half its epochs is not checked (a smoke run, a finetuning of 10 epochs from a
# pretrained model, which starts below the plateau).  Measured: the course's perceiver left the plateau within
# about 140 steps (epoch 6 of 23 steps), the demo's within about 36.
PLATEAU_CHECK_SHARE = 0.03
PLATEAU_CHECK_STEPS = 100
# Below the plateau by at least this much (nats per character) is off it.  A model that learned only the
# characters' frequencies sits on it or a little above (dropout's noise): 3.34-3.42 on the built-in data, whose
# plateau is 3.32.
PLATEAU_MARGIN = 0.05
# The examples unigram_entropy reads (the dataset's first ones, or all of a smaller one).
ENTROPY_EXAMPLES = 2000


class TrainingStopped(Exception):
    """A run that must not go on: its loss or its parameters are no longer finite numbers.  The message is one
    sentence for the user; nothing has been saved since the last good state."""


def unigram_entropy(dataset, examples=ENTROPY_EXAMPLES):
    """The loss (nats per character) of a model that ignores context on `dataset`: the entropy of the frequencies
    of its examples' targets, PAD (id 0) left out as the loss leaves it out.  Read from the dataset's first
    `examples` examples as the Trainer's DataLoader reads them (dataset[i] -> (x, y)), without consuming the run's
    random numbers.  None if the dataset gives no targets (an empty dataset)."""
    counts = Counter()
    with random_states_kept():
        for i in range(min(len(dataset), examples)):
            _, y = dataset[i]
            y = torch.as_tensor(y).flatten()
            counts.update(y[y != 0].tolist())
    total = sum(counts.values())
    if not total:
        return None
    return -sum(n / total * math.log(n / total) for n in counts.values())


def plateau_check_epoch(max_epochs, steps_per_epoch):
    """The epoch at whose end a run's loss must be off the plateau: the first by which it has taken
    PLATEAU_CHECK_SHARE of its steps and PLATEAU_CHECK_STEPS at least; None if that comes after half its epochs."""
    steps = max(PLATEAU_CHECK_STEPS, PLATEAU_CHECK_SHARE * max_epochs * steps_per_epoch)
    epoch = math.ceil(steps / max(1, steps_per_epoch))
    return epoch if epoch <= max_epochs / 2 else None


def off_plateau(loss, plateau):
    """True if a mean loss is off the plateau: at least PLATEAU_MARGIN below it."""
    return loss <= plateau - PLATEAU_MARGIN


def parameters_finite(model):
    """True if every parameter of model is a finite number (one check on the device, one wait for it)."""
    flags = [torch.isfinite(p.detach()).all() for p in model.parameters()]
    return bool(torch.stack(flags).all()) if flags else True


def warn(text):
    """A warning that stands out in a log full of progress lines."""
    print(f"\n{'!' * 100}\nWARNING: {text}\n{'!' * 100}\n", file=sys.stderr, flush=True)


def watch_learning(trainer, hint="", plateau=None):
    """Watch trainer's run: stop it with TrainingStopped at the first loss that is not finite, or at an epoch's
    end whose parameters are not (before any callback after this one saves them); warn once if the mean loss of
    epoch plateau_check_epoch (of the run's epochs and steps) is not PLATEAU_MARGIN below the plateau,
    unigram_entropy of the training set unless `plateau` is given.  `hint` ends each message: what to try on this
    run.  Returns the watch's state, a dict: plateau, check_epoch, and once the check ran, check_loss and warned."""
    config = trainer.config
    if plateau is None:
        plateau = unigram_entropy(trainer.train_dataset)
    steps_per_epoch = math.ceil(len(trainer.train_dataset) / config.batch_size)  # the Trainer's DataLoader's
    state = {"plateau": plateau, "check_epoch": plateau_check_epoch(config.max_epochs, steps_per_epoch),
             "warned": False}
    epoch_losses = []
    fix = f"; {hint or 'try a lower learning rate'}"
    hint = f"; {hint}" if hint else ""

    def check_loss(t):
        if not math.isfinite(t.loss):
            raise TrainingStopped(f"the loss became {t.loss} at step {t.step} (epoch {t.epoch}, iteration {t.iter}), "
                                  f"so training stopped before saving anything{fix}")
        if t.epoch == state["check_epoch"]:
            epoch_losses.append(t.loss)

    def check_epoch(t):
        if not parameters_finite(t.model):
            raise TrainingStopped(f"the parameters hold NaN or inf after epoch {t.epoch} (step {t.step}), so training "
                                  f"stopped before saving them{fix}")
        if t.epoch != state["check_epoch"] or not epoch_losses or state["plateau"] is None:
            return  # not the check's epoch (or no check), a resumed run past it, or a dataset without targets
        loss = sum(epoch_losses) / len(epoch_losses)
        state["check_loss"] = loss
        if not off_plateau(loss, state["plateau"]):
            state["warned"] = True
            warn(f"after epoch {t.epoch} of {t.config.max_epochs} the mean loss is {loss:.3f}, still on the plateau "
                 f"of a model that ignores context ({state['plateau']:.3f}, the entropy of the characters' "
                 f"frequencies in this data), where correct runs are well below it by now: the model is learning "
                 f"nothing of a line's context; stop the run (Ctrl-C) and check it{hint}")

    trainer.add_callback("on_batch_end", check_loss)
    trainer.add_callback("on_epoch_end", check_epoch)
    return state
