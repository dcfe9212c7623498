"""The student's submission package: datasets, attention, model, trainer, helper and utils.

The public API is available from the package itself, as in the course's package, so that a script run
from src/ can write `import submission` and then use submission.GPT, submission.finetune, and so on.

The names are loaded lazily (PEP 562 module __getattr__): `submission.GPT` imports model.py the first
time it is used.  An eager `from .model import GPT` here would make every module depend on every
other one: a syntax error in dataset.py would then break `import submission.model` too, and the
grader could no longer say which file is broken.
"""

import importlib

# public name -> the module of this package that defines it
_EXPORTS = {
    "CharCorruptionDataset": "dataset",
    "NameDataset": "dataset",
    "CausalSelfAttention": "attention",
    "CausalCrossAttention": "attention",
    "GPT": "model",
    "GPTConfig": "model",
    "Trainer": "trainer",
    "TrainerConfig": "trainer",
    "initialize_vanilla_model": "helper",
    "initialize_perceiver_model": "helper",
    "finetune": "helper",
    "pretrain": "helper",
    "train": "helper",
    "sample": "utils",
    "evaluate_places": "utils",
    "set_seed": "utils",
    "load_params": "utils",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
