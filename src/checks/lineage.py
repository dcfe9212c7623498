"""Whether one params file descends from another: a finetuned model from the pretrained params it names.

The handout's finetuning starts from the pretraining's params and moves them a little: ten epochs of the training
questions, 80 optimizer steps on the course's data, each of which changes a weight by about the learning rate.
Everything a pretraining wrote is still there, nearly unchanged.  Two models that did not come one from the other
are far apart, even when both started from the same random weights (the course's default seed gives every student
the same ones): thousands of pretraining steps separate them.  So the distance between the two files' weights,
against the size of the pretrained ones, says whether a finetuned file was finetuned from the pretrain file
submitted with it:

    drift = |finetuned - pretrained| / |pretrained|

over the weight matrices the model reads (embeddings, projections, the perceiver's basis C), the vector norm of all
their entries together.  The LayerNorms' gains and every bias are left out: every run starts them at the same
constants (1 and 0), so they would bring any two models closer.  Nothing here runs a model: the two files'
tensors, matched by name, are all it reads (a finetuning loads the pretrained state dict by name, so the names are
the same).  The judge measures it (checks.predictions.learning_check), and a student's own grader, which has no
answers, says beforehand what the judge will find (checks.predictions.descent_note); both read a params file with
load_params, which lives here, beside the measure, because this module ships to students.
"""

import math

from graderUtil import Fail

# The widest drift bar the instructor's calibration of a data set sets: models that do not descend one from the
# other can be nearer than a share of their size well under 1.  Measured on the course's data (the kit's
# benchmarks, "The finetuning drift"): a vanilla model finetuned without pretraining is 0.93-0.98 from
# pretrainings begun from the same random weights, and two snapshots of one pretraining 4 epochs apart are 0.66
# apart, where the handout's finetuning moved a 14-epoch pretraining 0.15 and a 5-epoch one 0.20.
DRIFT_CEILING = 0.5


def load_params(path, params_name):
    """The params file as {name: float32 tensor}, names without torch.compile's / DataParallel's prefix."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)  # plain tensors: no code of the student's
    except Exception as e:  # noqa: BLE001 - whatever the file holds
        raise Fail(f"{params_name} could not be loaded ({type(e).__name__}: {str(e).strip()[:200]})") from None
    if not isinstance(state, dict):
        raise Fail(f"{params_name} does not hold a state dict (train() saves model.state_dict())")
    out = {}
    for k, v in state.items():
        if isinstance(k, str) and torch.is_tensor(v) and v.is_floating_point():
            out[k.removeprefix("_orig_mod.").removeprefix("module.")] = v.detach().float()
    # Not a model: a trained model never holds NaN or inf, and nothing the judge computes from such weights is a
    # number it can compare (a value too large for float32 becomes inf above, so it is refused too).
    broken = [k for k, v in out.items() if not bool(torch.isfinite(v).all())]
    if broken:
        first = ascii(broken[0][:80])[1:-1] + ("..." if len(broken[0]) > 80 else "")  # a name is any string
        raise Fail(f"{params_name} holds NaN or inf values ({len(broken)} tensor{'s' if len(broken) > 1 else ''}, "
                   f"{first} first): a trained model never does; if your training loss became nan, train "
                   "again (a smaller learning rate, or --precision fp32) and submit the params of that run")
    return out


def drift_record(child, parent, names):
    """How far the params `child` are from `parent` ({name: float tensor} each) over the weight matrices (two or
    more dimensions) among `names`, the tensors that parent's model reads (checks.params.read_names): {"compared":
    how many, "unmatched": the names of those that child lacks or holds in another shape, "drift": |child - parent|
    / |parent| over the compared ones (None where none is compared or they are all zero)}.  Only what the model
    reads counts: a tensor it ignores, copied into both files, brings nothing closer."""
    ours = [n for n in names if n in parent and parent[n].dim() >= 2]
    compared = [n for n in ours if n in child and child[n].shape == parent[n].shape]
    unmatched = [n for n in ours if n not in compared]
    moved = sum(float((child[n] - parent[n]).double().pow(2).sum()) for n in compared)
    size = sum(float(parent[n].double().pow(2).sum()) for n in compared)
    drift = round(math.sqrt(moved / size), 4) if compared and size > 0 else None  # not a bar: a ratio's domain
    return {"compared": len(compared), "unmatched": unmatched, "drift": drift}


def trainable(state):
    """The names of state's tensors that can be weights, for a comparison that has no model to say which it reads (a
    student's own grader): a tensor of nothing but 0s and 1s is a mask, such as the course starter's causal
    `attn.mask`, which its attention registers as a buffer that the state dict saves.  Never trained, it is the
    same in every file, and as large as the weights of a trained model (4 x 128 x 128 entries beside weights of
    about 0.02): counted, it would bring any two files within a fifth of their distance."""
    return [n for n, v in state.items() if not bool(((v == 0) | (v == 1)).all())]


def descent_problem(record, child_name, parent_name):
    """Why child_name cannot descend from parent_name by their tensors alone (a drift_record), or ''."""
    if record["unmatched"]:
        names = record["unmatched"]
        return (f"{child_name} lacks {len(names)} of the weight matrices of {parent_name} or holds them in another "
                f"shape ({names[0]} first), where a model finetuned from {parent_name} has every one")
    if record["drift"] is None:
        return f"{parent_name} holds no weight matrix that is not zero: it is not a trained model"
    return ""


def far_problem(child_name, parent_name, drift, bar, finetuning):
    """The sentence that says child_name is too far from parent_name to descend from it: its drift against the bar
    that `finetuning` (the words for the finetuning the bar measures) keeps to.  The judge's check and the
    student's own grader say it alike."""
    return (f"{child_name} is {100 * drift:.0f} % of the size of {parent_name}'s weights away from them, where "
            f"{finetuning} moves them at most {100 * float(bar):g} %: it was not finetuned from this {parent_name}")
