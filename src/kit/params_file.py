"""Parameter files (a model's state dict, as helper.train saves it): read them, say in one sentence why
one does not fit a model, and load them.

run.py checks the file given with --reading_params_path here before any student code runs, so a wrong
file is a one-sentence error (exit status 2), not a traceback from load_state_dict:
- a file torch cannot read (truncated by an interrupted copy, or not a parameter file at all);
- a file trained on another pretraining corpus (another vocabulary size), of the other variant, or with
  other model-size flags.

Files trained with the course's own code hold one more entry per attention layer: its causal mask, a
buffer with nothing learned in it, which our attention leaves out of the state dict.  They load all the
same: the model keeps its own masks (`keep_own_masks` makes the model's load_state_dict do so, for the
student's finetune; `load_params` does it for evaluation).
"""

import torch


def read_params(path, device="cpu"):
    """The state dict saved at path, on device; a file torch cannot read is a ValueError that says so
    in one sentence."""
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds (EOFError, RuntimeError, UnpicklingError)
        raise ValueError(f"{path} is not a readable parameter file ({type(e).__name__}); it may be truncated or "
                         "corrupt: train it again or copy it again") from None
    if not isinstance(state, dict) or not all(torch.is_tensor(v) for v in state.values()):
        raise ValueError(f"{path} does not hold a state dict of tensors; pass a file written by train()")
    return state


def params_problem(model, state, path):
    """Why the state dict `state` (read from path) cannot be loaded into model, in one sentence, or None.

    Checked in the order a user can act on: the vocabulary (a different pretraining corpus), the variant,
    then every other shape (different model-size flags)."""
    own = model.state_dict()
    emb = "tok_emb.weight"
    if emb in state and emb in own and state[emb].shape[0] != own[emb].shape[0]:
        return (f"{path} was trained on a different pretraining corpus (vocab {state[emb].shape[0]} vs "
                f"{own[emb].shape[0]} here): pass the corpus it was pretrained on with --pretrain_corpus_path")
    file_variant = "perceiver" if any(k.startswith(("down_block.", "up_block.")) for k in state) else "vanilla"
    model_variant = "perceiver" if getattr(model, "perceiver", False) else "vanilla"
    if file_variant != model_variant:
        return (f"{path} holds {file_variant} parameters but the model is {model_variant}: give it a file that a "
                f"{model_variant} run wrote (./run.sh's {model_variant}_* targets), or run run.py with --variant "
                f"{file_variant} if the file is the one you meant")
    missing = sorted(k for k in set(own) - set(state) if not _is_mask(k))
    unexpected = sorted(set(_with_own_masks(state, own)) - set(own))
    if missing or unexpected:
        first = (missing or unexpected)[0]
        return (f"{path} does not fit this model ({'missing' if missing else 'unexpected'} {first}); use the same "
                "model-size flags as when it was trained")
    for k, v in state.items():
        if k in own and v.shape != own[k].shape:
            return (f"{path} does not fit this model ({k} is {tuple(v.shape)} there, {tuple(own[k].shape)} here); "
                    "use the same model-size flags as when it was trained")
    return None


def load_params(model, path):
    """Load the parameter file at path into model, on whatever device model is (GPU-trained files load
    on a CPU); returns model.  A file that does not fit is a ValueError naming why, in one sentence."""
    state = read_params(path, next(model.parameters()).device)
    problem = params_problem(model, state, path)
    if problem is not None:
        raise ValueError(problem)
    model.load_state_dict(_with_own_masks(state, model.state_dict()))
    return model


def keep_own_masks(model):
    """From now on, model.load_state_dict(state) keeps the model's own attention masks whatever `state`
    holds, so that a file from the course's code (masks saved) loads with a plain load_state_dict, as the
    course's finetune does it.  Returns model."""

    def hook(module, state, prefix, *_):  # state: load_state_dict's own copy, which it lets hooks edit
        fitted = _with_own_masks(state, module.state_dict(prefix=prefix))
        state.clear()
        state.update(fitted)

    if not getattr(model, "_keeps_own_masks", False):
        model.register_load_state_dict_pre_hook(hook)
        model._keeps_own_masks = True
    return model


def _is_mask(key):
    return key == "mask" or key.endswith(".mask")


def _with_own_masks(state, own):
    # Whichever side lacks a mask entry, the model keeps its own: the file's extra mask entries are
    # dropped, missing ones are taken from the model.
    kept = {k: v for k, v in state.items() if k in own or not _is_mask(k)}
    return {**{k: v for k, v in own.items() if _is_mask(k) and k not in kept}, **kept}
