#!/usr/bin/env python3
"""Autograder for the pretraining assignment: parts 1c-1g (and the written part's extra credit, if present).

  python grader.py                        # every test; run from src/ (python src/grader.py works too)
  python grader.py 1e                     # one question part;  python grader.py 1e-0-basic: one test
  python grader.py --json results.json    # also write Gradescope's results.json
  python grader.py --list                 # the tests with their points and time limits

Basic tests check your code against the handout's specification. Hidden tests compare your code with the
instructor's reference solution (an importable package named `solution`) and grade your prediction files
against held-out answers (birth_test.tsv in the data folder). Where those are absent, as on your machine, a
hidden test is reported as "hidden - graded after submission": it counts neither as passed nor as failed.

Each test runs in a separate process with a time limit: code that fails to import, raises, loops forever or
prints megabytes fails only the tests that touch it, and the grader always reaches the summary (exit status 0).
Points are in points.json, next to this file, together with the accuracy thresholds of the prediction tests.
"""

import sys
from pathlib import Path

import course  # the course's facts: model size, targets, deliverables
import grader_predictions
import graderUtil
from graderUtil import (  # noqa: F401  (some names are re-exported for the instructor's test suite)
    PENDING_MESSAGE, REGISTRY, Fail, call, count_lines, grader_judge, grader_test, load_points, main,
    normalized_sha256, read_prediction_lines, seed_everything, select_thresholds)

PAD = "\u25A1"
MASK = "\u2047"

# The student's files, and the student files each one imports (the harness imports those first, so that a
# broken file is named as the one that broke).
STUDENT_DEPS = {
    "attention": [],
    "dataset": [],
    "model": ["attention"],
    "trainer": [],
    "utils": [],
    "helper": ["dataset", "attention", "model", "trainer", "utils"],
    "attention_exploration": [],
}
# Prediction files: the question set they answer ("dev" or "test") and the run.sh target that writes them.
EVALUATIONS = [t for t in course.TARGETS if t.function == "evaluate"]
PREDICTIONS = {t.writes: (t.data, t.name) for t in EVALUATIONS}
QUESTION_FILES = {split: course.DATA_FILES[split] for split in ("dev", "test")}
ANSWERS_FILE = "birth_test.tsv"  # held out: present only where submissions are graded
GOLD_FILES = {"dev": course.DATA_FILES["dev"], "test": ANSWERS_FILE}  # the answers each prediction is scored on

# The files a grading copy needs beside the student's package and the data: this script, every module of ours
# it imports (at its top or inside a test), and the points table.  The one list of them: a worker imports these
# modules before it drops its privileges (the grader's folder is out of its reach afterwards), the instructor's
# class grading copies exactly these, the Gradescope bundle is refused when it lacks one, and the instructor's
# test suite checks the list against the imports it finds in these files.
GRADING_FILES = ["grader.py", "graderUtil.py", "grading/__init__.py", "grading/cli.py", "grading/context.py",
                 "grading/points.py", "grading/process.py", "grading/protocol.py", "grading/registry.py",
                 "grading/report.py", "grading/runner.py", "grading/sandbox.py", "grading/users.py",
                 "grading/worker.py", "grader_written.py", "grader_predictions.py", "attention_simulation.py",
                 "course.py", "points.json"]

graderUtil.configure(description=__doc__, student_deps=STUDENT_DEPS, held_out=[ANSWERS_FILE],
                     dataset_file="birth_dev.tsv", grading_files=GRADING_FILES)

# ----------------------------------------------------------------------------------------------------------
# The tests.  They run in worker processes; torch is imported inside them (the parent never imports it).

class AnyWorkers:
    """num_workers as an expected value: any whole number >= 0.  It sets how many processes load the data, not
    what the model learns (same batches, same order); this version's hints say 4, later cohorts' hints 0."""

    def __repr__(self):
        return "a whole number >= 0"


WORKERS = AnyWorkers()


def _same(got, want):
    """Equal as the handout means it: True is True (or 1); numbers are equal up to float rounding."""
    import math
    import numbers

    if isinstance(want, AnyWorkers):
        return isinstance(got, numbers.Integral) and not isinstance(got, bool) and got >= 0
    if isinstance(want, bool):
        return isinstance(got, (bool, numbers.Integral)) and got == want
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        return False
    return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=0.0)


class TrainingStarted(BaseException):
    """Stands in for Trainer.train while finetune or pretrain runs.  A BaseException, so that `call` (which
    turns an Exception into a Fail) lets it through to _without_training, which says what happened."""


def _without_training(ctx, fn_name, fn, *args):
    """fn(*args) with the student's Trainer.train replaced by a tripwire.  finetune and pretrain only build the
    TrainerConfig and the Trainer; run.py trains.  One that trains itself would run for hours here (75 epochs
    on the CPU): the tripwire turns that into a clear failure instead of a time-out."""
    trainer = ctx.student("trainer")
    original = trainer.Trainer.__dict__.get("train")

    def tripwire(self, *a, **k):
        raise TrainingStarted()

    trainer.Trainer.train = tripwire
    try:
        return call(fn_name, ctx.submission_dir, fn, *args)
    except TrainingStarted:
        raise Fail(f"{fn_name} started training (it called Trainer.train): it must only build and return "
                   "(tconf, trainer_obj); run.py trains the model afterwards with helper.train") from None
    finally:
        if original is None:
            del trainer.Trainer.train
        else:
            trainer.Trainer.train = original


def _check_result_pair(result, fn_name):
    if result is None:
        raise Fail(f"{fn_name} returned None: implement it in helper.py and return (tconf, trainer_obj)")
    if not isinstance(result, tuple) or len(result) != 2:
        raise Fail(f"{fn_name} must return the pair (tconf, trainer_obj), not {type(result).__name__}")
    tconf, trainer_obj = result
    if tconf is None or trainer_obj is None:
        raise Fail(f"{fn_name} returned ({'None' if tconf is None else 'tconf'}, "
                   f"{'None' if trainer_obj is None else 'trainer_obj'}): its part in helper.py is missing")
    return tconf, trainer_obj


def _plain(value):
    """A value the student's code gave, as data a judge can load: a number or a bool as it is, anything else
    by its repr (which no expected number equals)."""
    import numbers

    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return {"repr": repr(value)[:100]}


def _shown(value):
    return value["repr"] if isinstance(value, dict) else repr(value)


def _training_facts(ctx, tconf, trainer_obj, model, names):
    """Beside the student's code: what finetune or pretrain built, as data (the judge decides on it)."""
    trainer = ctx.student("trainer")
    return {"tconf_type": type(tconf).__name__, "is_tconf": isinstance(tconf, trainer.TrainerConfig),
            "tconf": {name: _plain(getattr(tconf, name, None)) for name in names},
            "trainer_type": type(trainer_obj).__name__, "is_trainer": isinstance(trainer_obj, trainer.Trainer),
            "config_is_tconf": getattr(trainer_obj, "config", None) is tconf,
            "model_is_model": getattr(trainer_obj, "model", None) is model,
            "test_dataset_none": getattr(trainer_obj, "test_dataset", None) is None}


def _judge_training(facts, expected, fn_name, what):
    """The TrainerConfig's hyperparameters against the numbers a test writes out (the course's helper.py lists
    them for finetune and pretrain; the course's grader checks the same values), then the Trainer."""
    if not isinstance(facts, dict) or not isinstance(facts.get("tconf"), dict):
        raise Fail(f"the test reported nothing of what {fn_name} built")
    if facts.get("is_tconf") is not True:
        raise Fail(f"{fn_name}: tconf is a {facts.get('tconf_type')}, not a trainer.TrainerConfig")
    wrong = []
    for name, want in expected.items():
        got = facts["tconf"].get(name)
        if not _same(got, want):
            wrong.append(f"{name}={_shown(got)} (expected {want!r})")
    if wrong:
        raise Fail(f"{what}: TrainerConfig " + "; ".join(wrong) + " -- the hyperparameters listed for it in "
                   "helper.py")
    if facts.get("is_trainer") is not True:
        raise Fail(f"{fn_name}: trainer_obj is a {facts.get('trainer_type')}, not a trainer.Trainer")
    if facts.get("config_is_tconf") is not True:
        raise Fail(f"{fn_name}: the Trainer must be built with the returned tconf")
    if facts.get("model_is_model") is not True:
        raise Fail(f"{fn_name}: the Trainer must train the model that was passed in")
    if facts.get("test_dataset_none") is not True:
        raise Fail(f"{fn_name}: the Trainer's test dataset must be None")


def _corpus(ctx, block_size):
    """The student's CharCorruptionDataset over the data folder's wiki.txt (cached per block size)."""
    key = ("corpus", block_size)
    if key not in ctx.cache:
        text = ctx.read_data("wiki.txt")
        dataset = ctx.student("dataset")
        ctx.cache[key] = call(f"CharCorruptionDataset(<wiki.txt>, {block_size})", ctx.submission_dir,
                              dataset.CharCorruptionDataset, text, block_size)
    return ctx.cache[key]


def _tiny_gpt(ctx, vocab_size, block_size, seed, perceiver=False, bottleneck_dim=16, n_layer=2):
    import torch

    model = ctx.student("model")
    kwargs = dict(n_layer=n_layer, n_head=2, n_embd=32)
    cfg = model.GPTConfig(vocab_size, block_size, **kwargs)
    if perceiver:
        cfg.perceiver, cfg.bottleneck_dim = True, bottleneck_dim
        _require_blocks(ctx, cfg)
    torch.manual_seed(seed)
    return call("GPT(config)", ctx.submission_dir, model.GPT, cfg)


def _require_blocks(ctx, cfg):
    """A perceiver needs the student's DownProjectBlock and UpProjectBlock; say so if they are missing."""
    model = ctx.student("model")
    down = call("DownProjectBlock(config)", ctx.submission_dir, model.DownProjectBlock, cfg)
    _basis(down, cfg.bottleneck_dim, cfg.n_embd)
    up = call("UpProjectBlock(config)", ctx.submission_dir, model.UpProjectBlock, cfg)
    if not list(up.parameters()):
        raise Fail("UpProjectBlock.__init__ creates no layers (part g): the perceiver cannot be built")


FINETUNE_BLOCK = 128


def _finetune_case(ctx, pretrained, perceiver=False):
    """Beside the student's code: finetune(...) as run.py calls it, on the data folder's training file, with its
    default finetune_lr, without training; reports what it built (_finetune_judge decides).  With
    reading_params_path, whether the model holds the saved parameters."""
    import torch

    block = FINETUNE_BLOCK
    ds = _corpus(ctx, block)
    train_path = ctx.data_path("birth_places_train.tsv")
    helper = ctx.student("helper")
    dataset = ctx.student("dataset")
    n_layer = 3 if perceiver else 2
    model = _tiny_gpt(ctx, ds.vocab_size, block, seed=2, perceiver=perceiver, n_layer=n_layer)
    params = None
    if pretrained:
        source = _tiny_gpt(ctx, ds.vocab_size, block, seed=1, perceiver=perceiver, n_layer=n_layer)
        params = ctx.tmp / "pretrained.params"
        torch.save(source.state_dict(), params)
        params = str(params)
    result = _without_training(ctx, "finetune", helper.finetune, params, str(train_path), ds, block, model)
    tconf, trainer_obj = _check_result_pair(result, "finetune")
    facts = _training_facts(ctx, tconf, trainer_obj, model, FINETUNE_NAMES)
    data = getattr(trainer_obj, "train_dataset", None)
    facts.update(corpus_len=len(ds), data_type=type(data).__name__,
                 is_name_dataset=isinstance(data, dataset.NameDataset),
                 data_len=len(data) if isinstance(data, dataset.NameDataset) else None)
    if pretrained:
        # parameters, not the state dict: buffers (the course's attention masks) are not what pretraining learns
        facts["differs"] = next((k for k, (want, got) in enumerate(zip(source.parameters(), model.parameters()))
                                 if not torch.equal(got.detach().cpu(), want.detach().cpu())), None)
    ctx.report(facts)


FINETUNE_NAMES = ("max_epochs", "batch_size", "learning_rate", "lr_decay", "warmup_tokens", "num_workers",
                  "final_tokens")


def _finetune_judge(ctx, facts, expected, pretrained):
    """The judge of a finetune test: tconf holds the `expected` numbers (final_tokens from the corpus, as
    200 * len(pretrain_dataset) * block_size), the Trainer trains the given model on a NameDataset of the
    training file, and with reading_params_path the model holds the saved parameters."""
    facts = facts if isinstance(facts, dict) else {}
    train_path = ctx.data_path("birth_places_train.tsv")
    n_train = count_lines(train_path)
    if not isinstance(facts.get("corpus_len"), int):
        raise Fail("the test reported nothing of what finetune built")
    fn_name = "finetune " + ("with" if pretrained else "without") + " pretrained parameters"
    _judge_training(facts, dict(expected, final_tokens=200 * facts["corpus_len"] * FINETUNE_BLOCK), "finetune",
                    fn_name)
    if facts.get("is_name_dataset") is not True:
        raise Fail(f"finetune: the Trainer's training data must be a NameDataset, not {facts.get('data_type')}")
    if facts.get("data_len") != n_train:
        raise Fail(f"finetune: the NameDataset has {facts.get('data_len')} examples but {train_path.name} has "
                   f"{n_train} lines")
    if pretrained and ("differs" not in facts or facts["differs"] is not None):
        raise Fail("finetune: the pretrained parameters from reading_params_path were not loaded into "
                   f"the model (load the state dict saved there into it); parameter {facts.get('differs')} differs")


@grader_test("1c-0-basic", "initialize_vanilla_model returns a vanilla GPT built from mconf", timeout=30)
def test_1c_0(ctx):
    import torch

    helper, model = ctx.student("helper"), ctx.student("model")
    cfg = model.GPTConfig(40, 32, n_layer=3, n_head=2, n_embd=16)
    net = call("initialize_vanilla_model", ctx.submission_dir, helper.initialize_vanilla_model, cfg)
    if net is None:
        raise Fail("initialize_vanilla_model returned None: part (c) in helper.py must return GPT(mconf)")
    facts = {"type": type(net).__name__, "is_gpt": isinstance(net, model.GPT),
             "perceiver": bool(getattr(net, "perceiver", False) or getattr(cfg, "perceiver", False))}
    if facts["is_gpt"]:
        facts.update(blocks=len(net.blocks), block_size=net.get_block_size())
        logits, _ = call("the vanilla GPT's forward", ctx.submission_dir, net, torch.randint(0, 40, (2, 10)))
        facts["logits_shape"] = list(getattr(logits, "shape", ()))
    ctx.report(facts)


@grader_judge("1c-0-basic")
def judge_1c_0(ctx, facts):
    """initialize_vanilla_model(mconf) is GPT(mconf): the model that mconf describes, not a perceiver."""
    facts = facts if isinstance(facts, dict) else {}
    if facts.get("is_gpt") is not True:
        raise Fail(f"initialize_vanilla_model returned a {facts.get('type')}, not a model.GPT")
    if facts.get("perceiver") is not False:
        raise Fail("initialize_vanilla_model built a perceiver; the vanilla variant is GPT(mconf) as given")
    if facts.get("blocks") != 3 or facts.get("block_size") != 32:
        raise Fail("initialize_vanilla_model did not build the model that mconf describes")
    if facts.get("logits_shape") != [2, 10, 40]:
        raise Fail(f"the model's logits have shape {tuple(facts.get('logits_shape') or ())}")


@grader_test("1c-1-basic", "finetune without pretrained parameters: the TrainerConfig and Trainer of the handout",
             timeout=30)
def test_1c_1(ctx):
    _finetune_case(ctx, pretrained=False)


@grader_judge("1c-1-basic")
def judge_1c_1(ctx, facts):
    """Without pretrained parameters, called with the default finetune_lr (as the course's grader does): 75
    epochs, batch 256, learning rate 6e-4, lr decay, 512*20 warmup tokens, 200*len(pretrain_dataset)*block_size
    final tokens, any num_workers (AnyWorkers); the Trainer trains a NameDataset of the training file; finetune
    returns (tconf, trainer_obj) without training."""
    _finetune_judge(ctx, facts, dict(max_epochs=75, batch_size=256, learning_rate=6e-4, lr_decay=True,
                                     warmup_tokens=512 * 20, num_workers=WORKERS), pretrained=False)


@grader_test("1c-2-basic", "train runs the trainer, then saves the trained parameters", timeout=30)
def test_1c_2(ctx):
    import torch
    from torch.utils.data import TensorDataset

    helper, trainer = ctx.student("helper"), ctx.student("trainer")
    net = _tiny_gpt(ctx, 20, 16, seed=3)
    before = {k: v.detach().clone() for k, v in net.state_dict().items()}
    x = torch.randint(2, 20, (32, 15))
    data = TensorDataset(x, torch.roll(x, -1, dims=1))
    tconf = trainer.TrainerConfig(max_epochs=2, batch_size=8, learning_rate=1e-3, num_workers=0, device="cpu",
                                  show_progress=False)
    trainer_obj = trainer.Trainer(net, data, None, tconf)
    path = ctx.tmp / "trained.params"
    call("train", ctx.submission_dir, helper.train, net, str(path), trainer_obj)
    facts = {"written": path.is_file()}
    if facts["written"]:
        saved = torch.load(path, weights_only=True)
        state = net.state_dict()
        facts["state_saved"] = set(saved) == set(state) and all(torch.equal(saved[k], state[k].detach().cpu())
                                                                for k in state)
        facts["trained"] = not all(torch.equal(before[k], state[k].detach().cpu()) for k in state)
    ctx.report(facts)


@grader_judge("1c-2-basic")
def judge_1c_2(ctx, facts):
    """train(model, path, trainer_obj) calls trainer_obj.train() and then saves the model's state dict."""
    facts = facts if isinstance(facts, dict) else {}
    if facts.get("written") is not True:
        raise Fail("train did not write the parameters file: it must call trainer_obj.train() and then "
                   "save_state_dict(model, writing_params_path)")
    if facts.get("state_saved") is not True:
        raise Fail("train saved something other than the model's state dict (use save_state_dict(model, path))")
    if facts.get("trained") is not True:
        raise Fail("train saved the parameters without training: call trainer_obj.train() first")


VANILLA_HIDDEN = dict(vocab=256, block=128, n_layer=4, n_head=8, n_embd=256)


def _vanilla_hidden_config(model_module):
    """The GPTConfig of 1c-0-hidden, from the student's model.py or the reference's."""
    v = VANILLA_HIDDEN
    return model_module.GPTConfig(v["vocab"], v["block"], n_layer=v["n_layer"], n_head=v["n_head"],
                                  n_embd=v["n_embd"])


def _vanilla_inputs():
    import torch

    return torch.randint(0, 256, (2, 100), generator=torch.Generator().manual_seed(224))


@grader_test("1c-0-hidden", "the vanilla model computes what the reference computes (same weights)", timeout=30,
             needs=("solution",))
def test_1c_0_hidden(ctx):
    """initialize_vanilla_model gives the reference's model: same parameter shapes, same logits once both hold
    the same weights.  Here the student's logits with weights set by shape; the judge compares."""
    import torch

    helper, model = ctx.student("helper"), ctx.student("model")
    v = VANILLA_HIDDEN
    net = call("initialize_vanilla_model", ctx.submission_dir, helper.initialize_vanilla_model,
               _vanilla_hidden_config(model))
    if net is None:
        raise Fail("initialize_vanilla_model returned None: part (c) in helper.py must return GPT(mconf)")
    shapes = _fill_by_shape(net, v["n_embd"])
    net.eval()
    with torch.no_grad():
        got, _ = call("the vanilla GPT's forward", ctx.submission_dir, net, _vanilla_inputs())
    got = _require_tensor(got, "the vanilla GPT's forward", (2, 100, v["vocab"]))
    ctx.report({"shapes": shapes, "logits": got.detach().float().cpu()})


@grader_judge("1c-0-hidden")
def judge_1c_0_hidden(ctx, report):
    import torch

    v = VANILLA_HIDDEN
    ref_helper, ref_model = ctx.solution("helper"), ctx.solution("model")
    ref = ref_helper.initialize_vanilla_model(_vanilla_hidden_config(ref_model)).eval()
    shapes = _reported_shapes(report)
    _check_shapes(shapes, _fill_by_shape(ref, v["n_embd"]), "the vanilla model")
    with torch.no_grad():
        want, _ = ref(_vanilla_inputs())
    _assert_close(report.get("logits"), want, "the vanilla model's logits")


def _fill_value(shape, n_embd):
    """The value every parameter of this shape gets in _fill_by_shape (see there)."""
    import zlib

    import torch

    d = n_embd
    if len(shape) == 3 and shape[0] == 1:  # (1, m, d) or (1, block, d): the same values as (m, d)
        return _fill_value(shape[1:], d).unsqueeze(0)
    gen = torch.Generator().manual_seed(zlib.crc32(repr(tuple(shape)).encode()))
    if shape == (d, d):  # symmetric: a layer may compute x @ W or x @ W.T
        w = torch.randn(d, d, generator=torch.Generator().manual_seed(7)) / d ** 0.5
        return (w + w.T) / 2
    if shape == (d,):
        return 1.0 + 0.2 * torch.randn(d, generator=torch.Generator().manual_seed(8))
    for k in (2, 3):  # key/value (or query/key/value) projections fused into one layer
        if shape == (k * d, d):
            return torch.cat([_fill_value((d, d), d)] * k)
        if shape == (k * d,):
            return torch.cat([_fill_value((d,), d)] * k)
    return torch.randn(shape, generator=gen) / max(1, shape[-1]) ** 0.5


def _fill_by_shape(module, n_embd):
    """Give a module weights without knowing any attribute name: every parameter gets a value that depends on
    its shape only (_fill_value).  Done to the student's module and to the reference's alike, parameters of one
    shape then hold equal values (the four n_embd x n_embd attention projections, the layer norms and biases,
    ...), so it does not matter which of them plays which role, and the (d, d) matrix is symmetric, so neither
    does x @ W versus x @ W.T.  Parameters, never buffers: a course-style copy of the given code keeps its
    attention masks in the state dict.  Returns the parameter shapes, sorted."""
    import torch

    with torch.no_grad():
        for p in module.parameters():
            p.copy_(_fill_value(tuple(p.shape), n_embd).to(p.dtype))
    return sorted(tuple(p.shape) for p in module.parameters())


def _reported_shapes(report):
    """The parameter shapes a student's worker reported (for a judge)."""
    if not isinstance(report, dict) or not isinstance(report.get("shapes"), list):
        raise Fail("the test reported nothing to compare with the reference")
    return sorted(tuple(int(n) for n in s) for s in report["shapes"] if isinstance(s, (list, tuple)))


def _check_shapes(shapes, ref_shapes, what, flexible=()):
    """The student's parameter shapes are the reference's.  The number of parameters of a `flexible` shape may
    differ (a third LayerNorm, for a block that normalises both the query and the keys/values, computes what
    the reference's LayerNorm computes)."""
    squeeze = lambda s: s[1:] if len(s) == 3 and s[0] == 1 else s  # noqa: E731  ((1, m, d) and (m, d) alike)
    fixed = lambda ss: sorted(s for s in map(squeeze, ss) if s not in flexible)  # noqa: E731
    if fixed(shapes) != fixed(ref_shapes):
        missing = sorted(set(ref_shapes) - set(shapes))[:4]
        extra = sorted(set(shapes) - set(ref_shapes))[:4]
        raise Fail(f"{what} does not have the parameters the handout describes"
                   + (f"; none of shape {missing}" if missing else "")
                   + (f"; unexpected shapes {extra}" if extra else "")
                   + f" ({len(shapes)} parameters, the handout's has {len(ref_shapes)})")


def _assert_close(got, want, what, atol=1e-4):
    import torch

    if not torch.is_tensor(got):
        raise Fail(f"{what}: expected a tensor, got {type(got).__name__}")
    if tuple(got.shape) != tuple(want.shape):
        raise Fail(f"{what} have shape {tuple(got.shape)}, not the reference's shape")
    diff = (got.detach().float().cpu() - want.detach().float().cpu()).abs().max().item()
    if not diff <= atol:
        raise Fail(f"{what} differ from the reference's (largest difference {diff:.3g}) when both hold the same "
                   "weights")


# -- part (d) and the prediction files --------------------------------------------------------------------
#
# A prediction file earns its accuracy points only with the params that produced it: the judge loads them into
# the course's model and decodes every question itself, without the student's code (grader_predictions.py).

# prediction file: (params file, variant, the run.sh target that writes the params)
PARAMS_FOR = {t.writes: (t.reads, t.variant, course.WRITTEN_BY[t.reads].name) for t in EVALUATIONS}


def _predictions_test(fname):
    """Test of a prediction file, beside the student's code: only that the file is there with one line per
    question (no student code runs; the judge, _predictions_judge, decides the rest)."""

    split, target = PREDICTIONS[fname]

    def file_problem(predictions_dir, questions):
        """Why the prediction file cannot be graded (missing, or not one line per question), or ''."""
        path = Path(predictions_dir) / fname
        if not path.is_file():
            return f"{fname} is missing from {predictions_dir}: ./run.sh {target} writes it"
        if questions is not None:
            n, lines = count_lines(questions), len(read_prediction_lines(path))
            if n != lines:
                return (f"{fname} has {lines} lines but there are {n} questions: one predicted place "
                        "per line, in the order of the questions")
        return ""

    def run(ctx):
        problem = file_problem(ctx.predictions_dir, ctx.data_path(QUESTION_FILES[split]))
        if problem:
            raise Fail(problem)

    def pending_note(predictions_dir, data_dir):
        """Where the answers are absent (a student's machine): the same local check, never an expected value."""
        questions = Path(data_dir) / QUESTION_FILES[split]
        problem = file_problem(predictions_dir, questions if questions.is_file() else None)
        return f" (note: {problem})" if problem else ""

    run.predictions_file = fname
    run.pending_note = pending_note
    return run


def _predictions_judge(fname):
    """The accuracy against the answers, in the judge: the student's code never sees them.  A line is correct
    when it is the right answer and the submitted params give it too (grader_predictions.params_agreement)."""

    def judge(ctx, report):
        split, target = PREDICTIONS[fname]
        gold_path = ctx.data_path(GOLD_FILES[split])
        gold = [line.split("\t") for line in read_prediction_lines(gold_path) if line.strip()]
        if any(len(fields) < 2 for fields in gold):
            raise Fail(f"{gold_path} has no answer column (a problem of the grading set-up)")
        questions = grader_predictions.read_questions(ctx.data_path(QUESTION_FILES[split]))
        if len(questions) != len(gold):
            raise Fail(f"{gold_path.name} and {QUESTION_FILES[split]} disagree (a problem of the grading set-up)")
        answers = [fields[1].strip() for fields in gold]
        path = ctx.predictions_dir / fname
        if not path.is_file():
            raise Fail(f"{fname} is missing from {ctx.predictions_dir}: ./run.sh {target} writes it")
        predictions = [p.strip() for p in read_prediction_lines(path)]
        if len(predictions) != len(answers):
            raise Fail(f"{fname} has {len(predictions)} lines but there are {len(answers)} questions: one "
                       "predicted place per line, in the order of the questions")
        agree = grader_predictions.params_agreement(ctx, fname, *PARAMS_FOR[fname], questions, predictions)
        correct = sum(1 for p, a, ok in zip(predictions, answers, agree) if ok and p == a)
        total = len(answers)
        rule = ctx.thresholds.get(fname, {})
        min_correct = int(rule.get("min_correct", 0))
        min_accuracy = float(rule.get("min_accuracy", 0.0))
        score = f"{correct}/{total} correct ({100.0 * correct / total:.2f}%)"
        differ = agree.count(False)
        if differ:
            score += (f"; {differ} line{'s' if differ > 1 else ''} that {PARAMS_FOR[fname][0]} does not give "
                      f"(line {agree.index(False) + 1} first) counted as wrong")
        needs = []
        if min_correct:
            needs.append(f"at least {min_correct} correct")
        if min_accuracy:
            needs.append(f"at least {100 * min_accuracy:g}%")
        if correct < min_correct or correct < min_accuracy * total - 1e-9:
            raise Fail(f"{fname}: {score}; needs {' and '.join(needs)} (thresholds '{ctx.threshold_row}')")
        return f"{fname}: {score}"

    return judge


def _register_predictions(tid, fname, description):
    # the judge needs the reference's code: the course's model is built from it
    grader_test(tid, description, timeout=60, needs=("answers", "solution"))(_predictions_test(fname))
    grader_judge(tid)(_predictions_judge(fname))


@grader_test("1d-0-basic", "London baseline: accuracy on dev of always answering the most common training place",
             timeout=30, info=True, uses_torch=False)
def test_1d_london(ctx):
    """No student code: the number is the judge's, from the data alone."""


@grader_judge("1d-0-basic")
def judge_1d_london(ctx, report):
    from collections import Counter

    try:
        train = [line.split("\t") for line in read_prediction_lines(ctx.data_path("birth_places_train.tsv"))]
        dev = [line.split("\t") for line in read_prediction_lines(ctx.data_path("birth_dev.tsv"))]
    except Fail as e:
        return f"not computed: {e}"
    places = [f[1].strip() for f in train if len(f) > 1]
    gold = [f[1].strip() for f in dev if len(f) > 1]
    if not places or not gold:
        return "not computed: the training or dev file has no places"
    place = Counter(places).most_common(1)[0][0]  # ties: the place seen first
    correct = sum(1 for g in gold if g == place)
    return (f"always answering '{place}' (the most common training birthplace) gets {correct}/{len(gold)} = "
            f"{100.0 * correct / len(gold):.2f}% on dev")


_register_predictions("1d-0-hidden", "vanilla.nopretrain.dev.predictions",
                      "vanilla.nopretrain.dev.predictions: one line per question, enough correct")
_register_predictions("1d-1-hidden", "vanilla.nopretrain.test.predictions",
                      "vanilla.nopretrain.test.predictions: one line per question, enough correct")


# -- part (e): CharCorruptionDataset -----------------------------------------------------------------------
#
# Two published variants of this spec are both right, as in the course's own grader: the handout's
# (truncate to 4..int(block_size*3/4), then prefix ⁇ suffix ⁇ masked ⁇) and the older one (truncate to
# 4..int(block_size*7/8), no closing ⁇).  The tests accept either, and randomness from any generator:
# Python's random, NumPy or torch.  They check that examples vary, never which generator drew them.
#
# False failures.  Every sampling test seeds random, NumPy and torch alike first, so a given implementation
# always gets the same verdict.  The thresholds also hold without the seed, for any implementation of either
# variant, with probability of a false failure below 1e-6:
# - truncation coverage: a long line's truncated length is uniform on 4..L, L = int(block_size*3/4) or
#   int(block_size*7/8); the test asks for every value of 4..int(block_size*3/4).  Each shows up in N draws
#   except with probability <= K * (1 - 1/(L-3))**N, K the number of values asked for: N=4000, block 128
#   (K=93, L-3 <= 109) gives 1e-14; N=2000, block 50 (K=34, L-3 <= 40) gives 4e-21.
# - masked-length mean: each ratio masked/truncated lies in [0, 1], so by Hoeffding's inequality the mean of
#   N=4000 draws is more than t away from its expectation with probability <= 2*exp(-2*N*t*t).  Plausible
#   implementations (uniform 1..n/2, 0..n/2, n/8..3n/8, Gaussian around n/4, ...) have expectations in
#   [0.23, 0.27] (block size 128), so the window [0.15, 0.35] leaves t >= 0.08: probability 2*exp(-51).
# - "varies": the tests draw until 1000 examples keep a line of 40 characters whole (n=40), up to 50,000
#   draws.  With block size 128 a draw keeps it whole with probability >= 57/93 when the length is drawn from
#   4..L, and >= 1/37 when it is drawn from 4..min(len(line), L) (a reading real students take): 50,000 draws
#   then give fewer than 1000 with probability < 1e-20 (mean 1351, Chernoff).  If no single masked start has
#   probability above 98% at n=40 -- what "random, and it varies" means -- all of 1000 draws agree with
#   probability <= 0.98**1000 = 2e-9.
# - "more or less than 1/4" (1e-5): at n=40 the spec wants a masked length that can fall on either side of
#   10.  Plausible correct draws give each side probability >= 0.15: uniform on 1..20 (P(>10) = 0.5, P(<10) =
#   0.45), 0..20, 5..15 (5/11 each), 1..2n/4-1, round(gauss(n/4, sd)) for sd >= 1 (>= 0.16 each), n/4 times
#   uniform(0.5, 1.5).  Even at 2% a side, 1000 draws miss a side with probability <= 2 * 0.98**1000 = 4e-9.
#   Draws that never exceed 1/4 (min(randint(1, n), n // 4); int(gauss(n/4, 0.1)), which gives 9 or 10)
#   fail, as they should.  Over the 4000 examples of a long line (all truncated lengths) each side must
#   reach 5 %: with each side's probability >= 0.15, Hoeffding gives <= 2*exp(-2*4000*0.1**2) = 4e-35.
# - "random at every truncated length" (1e-5): of the truncated lengths n >= 16 seen >= 20 times among those
#   4000 examples, at most half may show a single masked length.  Plausible correct draws give no length a
#   probability above 1/2 at n >= 16 (round(gauss(n/4, 1)): 0.38), so one group agrees with probability
#   <= 0.5**19 = 2e-6, and half of the >= 30 groups with far less.  A masked length fixed by n (n // 4 on
#   long lines, computed from the line rather than drawn) fails.
# - "examples differ" (1e-6): 20 draws of a line of >= 80 characters are all identical only if one truncated
#   length comes up 20 times; no length has probability above 33/109 (the line kept whole, 7/8 variant), so
#   this happens with probability <= (33/109)**19 < 1e-9 per line.


def _seed_all(seed):
    """Seed Python's random, NumPy and torch alike: the student may draw from any of them."""
    seed_everything(seed)


def _text(seed, lengths, alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ .,'-0123456789"):
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(n)) for n in lengths]


# Beside the student's code, a test only draws examples from the student's dataset and reports them as data
# (_observe, _observe_whole); the judge decodes and checks them (_Examples).  Where a draw cannot even be
# turned into data (not a pair of LongTensors, a length the model cannot take) the student's side fails it at
# once: failing early can only cost the student, never earn a point.


def _specials(ds):
    """(PAD_CHAR, MASK_CHAR) as the student's dataset has them: an instance attribute (the course's code) or
    a class attribute; the handout's characters otherwise."""
    return getattr(ds, "PAD_CHAR", PAD), getattr(ds, "MASK_CHAR", MASK)


def _dataset(ctx, lines, block_size):
    dataset = ctx.student("dataset")
    return call(f"CharCorruptionDataset(text, {block_size})", ctx.submission_dir, dataset.CharCorruptionDataset,
                "\n".join(lines) + "\n", block_size)


def _example(ctx, ds, idx):
    """ds[idx] as two lists of ids, after checking it is a pair of LongTensors of one length: block_size - 1
    (the padded string of block_size characters, shifted) or block_size (one sentence of the course's spec gives
    block_size as their length; the GPT takes both).  Longer ones do not fit the model."""
    import torch

    item = call(f"CharCorruptionDataset.__getitem__({idx})", ctx.submission_dir, ds.__getitem__, idx)
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise Fail(f"CharCorruptionDataset.__getitem__ must return a pair (x, y), not {type(item).__name__}")
    x, y = item
    if x is None or y is None:
        raise Fail("CharCorruptionDataset.__getitem__ returned None for x or y: its part (e) code is missing")
    lengths = (ds.block_size - 1, ds.block_size)
    for name, t in (("x", x), ("y", y)):
        if not torch.is_tensor(t):
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} is a {type(t).__name__}, not a torch tensor")
        if t.dtype != torch.long:
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} has dtype {t.dtype}, not torch.long")
        if t.dim() != 1 or t.numel() not in lengths:
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} has shape {tuple(t.shape)}; block_size is "
                       f"{ds.block_size}, so it must have shape ({lengths[0]},) (the padded string of block_size "
                       f"characters, shifted by one) or ({lengths[1]},)")
        if int(t.min()) < 0 or int(t.max()) >= ds.vocab_size:
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} holds ids outside the vocabulary")
    if x.numel() != y.numel():
        raise Fail(f"CharCorruptionDataset.__getitem__: x has {x.numel()} ids and y {y.numel()}; they must have "
                   "the same length (y is x shifted by one)")
    return x.tolist(), y.tolist()


def _vocabulary(ds):
    """The student dataset's vocabulary as data: its characters by id, the ids of PAD and MASK, its specials."""
    pad, mask = _specials(ds)
    return {"itos": [str(ds.itos[i]) for i in range(int(ds.vocab_size))], "pad": str(pad), "mask": str(mask),
            "pad_id": ds.stoi.get(PAD), "mask_id": ds.stoi.get(MASK)}


def _pack(rows):
    import torch

    if not rows:
        return torch.zeros((0, 0), dtype=torch.uint8)
    if len({len(r) for r in rows}) > 1:
        raise Fail("CharCorruptionDataset.__getitem__: its examples have different lengths; every one must be "
                   "as long as the padded string of block_size characters, shifted by one (or block_size)")
    return torch.tensor(rows, dtype=torch.uint8 if all(max(r, default=0) < 256 for r in rows) else torch.long)


def _observe(ctx, ds, idxs):
    """Beside the student's code: ds[idx] for each idx in turn, as data for the judge."""
    xs, ys = zip(*(_example(ctx, ds, idx) for idx in idxs))
    return dict(_vocabulary(ds), idx=list(idxs), x=_pack(xs), y=_pack(ys))


def _observe_whole(ctx, ds, line, want=1000, cap=50000):
    """Beside the student's code: draws of `line` (ds[0]) that kept it whole (truncated length len(line)), at
    least `want` of them, drawing up to `cap` times (a truncation drawn from 4..min(len(line), L) keeps a line of
    40 characters whole in only 1 of 37 draws).  The filter is the judge's own parse; the judge parses again."""
    vocab = _vocabulary(ds)
    kept, draws = [], 0
    for draws in range(1, cap + 1):
        x, y = _example(ctx, ds, 0)
        p, m, s = _split("".join(vocab["itos"][i] for i in x), vocab["pad"], vocab["mask"], line)
        if len(p + m + s) == len(line):
            kept.append((x, y))
            if len(kept) >= want:
                break
    xs, ys = zip(*kept) if kept else ((), ())
    return dict(vocab, idx=[0] * len(kept), x=_pack(list(xs)), y=_pack(list(ys)), draws=draws)


def _split(s, pad, mask, line):
    """(prefix, masked, suffix) of an example's text s, checked to read prefix⁇suffix⁇masked⁇ (or, the older
    variant, without the closing ⁇) and then PADs, and to rebuild the start of the line."""
    body = s.rstrip(pad)
    if body.count(mask) == 3 and body.endswith(mask):
        body = body[:-1]  # the closing MASK_CHAR of the handout's version
    if body.count(mask) != 2:
        raise Fail("CharCorruptionDataset.__getitem__: x must read prefix + MASK_CHAR + suffix + MASK_CHAR + "
                   f"masked_content + MASK_CHAR, then PAD_CHARs; it has {s.rstrip(pad).count(mask)} MASK_CHARs "
                   f"before the padding, e.g. {s[:70]!r}")
    prefix, suffix, masked = body.split(mask)
    original = prefix + masked + suffix
    if pad in original or not line.startswith(original):
        raise Fail("CharCorruptionDataset.__getitem__: prefix + masked_content + suffix must be the beginning of "
                   f"the line (its truncation); for {line[:40]!r}... x reads {s[:70]!r}")
    return prefix, masked, suffix


class _Examples:
    """In the judge: the examples a student's worker reported for one dataset of block size `block`, checked
    to be data the dataset could have given (the shapes and ids _example demands), then read as text."""

    def __init__(self, report, block):
        import torch

        if not isinstance(report, dict) or not all(k in report for k in ("itos", "pad", "mask", "x", "y", "idx")):
            raise Fail("the test reported no examples of the dataset to check")
        self.itos, self.pad, self.mask = report["itos"], report["pad"], report["mask"]
        self.pad_id, self.mask_id = report.get("pad_id"), report.get("mask_id")
        self.idx, self.draws = report["idx"], report.get("draws")
        x, y = report["x"], report["y"]
        if (not isinstance(self.itos, list) or not all(isinstance(c, str) for c in self.itos)
                or not isinstance(self.pad, str) or not isinstance(self.mask, str)
                or not isinstance(self.idx, list) or not torch.is_tensor(x) or not torch.is_tensor(y)
                or x.shape != y.shape or x.dim() != 2 or x.size(0) != len(self.idx)):
            raise Fail("the test's report of the dataset's examples is malformed")
        if x.numel() and (x.size(1) not in (block - 1, block) or int(x.max()) >= len(self.itos)
                          or int(y.max()) >= len(self.itos)):
            raise Fail(f"CharCorruptionDataset.__getitem__: examples of {x.size(1)} ids with block_size {block}")
        self.x, self.y = x.long().tolist(), y.long().tolist()

    def __len__(self):
        return len(self.x)

    def text(self, ids):
        return "".join(self.itos[i] for i in ids)

    def parts(self, k, line):
        return _split(self.text(self.x[k]), self.pad, self.mask, line)


@grader_test("1e-0-basic", "vocabulary (PAD 0, MASK 1, then sorted characters); __getitem__ returns two "
             "LongTensors of length block_size-1 or block_size", timeout=20)
def test_1e_0(ctx):
    lines = _text(1, [30, 70, 12, 200])
    ds = _dataset(ctx, lines, 61)  # a block size that is no multiple of 4 or 8: int() bounds, not floats
    _seed_all(10)
    ctx.report(_observe(ctx, ds, range(len(lines))))


@grader_judge("1e-0-basic")
def judge_1e_0(ctx, report):
    """Id 0 is PAD_CHAR (□), id 1 MASK_CHAR (⁇), then the corpus's distinct characters in sorted order;
    every example is a pair of LongTensors of length block_size - 1 or block_size (both readings of the spec)."""
    seen = _Examples(report, 61)
    if (seen.pad, seen.mask) != (PAD, MASK):
        raise Fail("PAD_CHAR must be '\\u25A1' and MASK_CHAR '\\u2047'")
    if seen.pad_id != 0 or seen.mask_id != 1 or seen.itos[:2] != [PAD, MASK]:
        raise Fail("the vocabulary must give PAD_CHAR id 0 and MASK_CHAR id 1")
    if seen.itos[2:] != sorted(set("\n".join(_text(1, [30, 70, 12, 200])))):
        raise Fail("the vocabulary must list the corpus's distinct characters, sorted, from id 2 on")
    if len(seen) != 4:
        raise Fail("the test reported no examples of the dataset to check")


@grader_test("1e-1-basic", "truncation: length drawn from 4..int(block_size*3/4) (up to 7/8 accepted), covering "
             "the whole range", timeout=20)
def test_1e_1(ctx):
    line = _text(2, [600])
    reports = {}
    for block, draws in ((128, 4000), (50, 2000)):
        ds = _dataset(ctx, line, block)
        _seed_all(11)
        reports[block] = _observe(ctx, ds, [0] * draws)
    ctx.report(reports)


@grader_judge("1e-1-basic")
def judge_1e_1(ctx, report):
    """A long line is cut to a random length: every length of 4..int(block_size*3/4) occurs, none is below 4
    or above int(block_size*7/8) (the older variant's bound, which the course also accepts).  Block size 50 is the
    course's grader's: no multiple of 4, so a bound written as a float (37.5) cannot be drawn.  False failures:
    see the bounds above this part's tests."""
    for block, draws in ((128, 4000), (50, 2000)):
        seen = _Examples((report or {}).get(block), block)
        top, accepted = int(block * 3 / 4), int(block * 7 / 8)
        if len(seen) != draws:
            raise Fail("the test reported no examples of the dataset to check")
        lengths = {sum(1 for c in seen.text(x) if c not in (seen.pad, seen.mask)) for x in seen.x}
        if min(lengths) < 4 or max(lengths) > accepted:
            raise Fail(f"with block_size {block} the truncated length (prefix + masked + suffix) ranged over "
                       f"{min(lengths)}..{max(lengths)}; it must be drawn from 4..{top} (int(block_size * 3/4))")
        missing = sorted(set(range(4, top + 1)) - lengths)
        if missing:
            raise Fail(f"with block_size {block}, {draws} examples of a long line never had a truncated length of "
                       f"{missing[:8]}{'...' if len(missing) > 8 else ''}: draw it uniformly from 4..{top}")


@grader_test("1e-2-basic", "rearrangement prefix+MASK+suffix+MASK+masked(+MASK) rebuilds the line's start; the "
             "masked span's start varies", timeout=60)  # a correct reading needs ~37,000 draws: 6-16 s measured
def test_1e_2(ctx):
    lines = _text(3, [5, 9, 17, 40, 64, 90, 111, 113, 150, 300, 500])
    ds = _dataset(ctx, lines, 128)
    _seed_all(12)
    samples = _observe(ctx, ds, [k % len(lines) for k in range(1100)])
    # where the masked span starts must vary (draws that keep a line of 40 characters whole, see above)
    ds = _dataset(ctx, _text(4, [40]), 128)
    _seed_all(13)
    ctx.report({"samples": samples, "whole": _observe_whole(ctx, ds, _text(4, [40])[0])})


def _whole_parts(report, line):
    """The judge's (prefix, masked, suffix) of the reported draws that kept `line` whole."""
    seen = _Examples(report, 128)
    found = [seen.parts(k, line) for k in range(len(seen))]
    if not found or any(len(p + m + s) != len(line) for p, m, s in found):
        raise Fail(f"CharCorruptionDataset.__getitem__: {seen.draws or 0:,} examples of a line of {len(line)} "
                   "characters never kept it whole; with block_size 128 its truncated length may be anything from "
                   "4 up to its own length, the line's length included")
    return found


@grader_judge("1e-2-basic")
def judge_1e_2(ctx, report):
    """x reads prefix ⁇ suffix ⁇ masked ⁇ then PADs, prefix + masked + suffix is the line's beginning (short
    lines too), and where the masked span starts is random."""
    lines = _text(3, [5, 9, 17, 40, 64, 90, 111, 113, 150, 300, 500])
    seen = _Examples((report or {}).get("samples"), 128)
    if seen.idx != [k % len(lines) for k in range(1100)]:
        raise Fail("the test reported no examples of the dataset to check")
    for k, idx in enumerate(seen.idx):
        seen.parts(k, lines[idx])
    starts = {len(p) for p, m, s in _whole_parts(report.get("whole"), _text(4, [40])[0])}
    if len(starts) < 2:
        raise Fail("CharCorruptionDataset.__getitem__: the masked span always starts at the same place; its start "
                   "must be random")


@grader_test("1e-3-basic", "padding: PAD_CHARs only at the end, up to block_size", timeout=20)
def test_1e_3(ctx):
    lines = _text(5, [6, 20, 50, 100, 120, 400])
    reports = {}
    for block in (128, 50):
        ds = _dataset(ctx, lines, block)
        _seed_all(14)
        reports[block] = _observe(ctx, ds, [k % len(lines) for k in range(600)])
    ctx.report(reports)


@grader_judge("1e-3-basic")
def judge_1e_3(ctx, report):
    """PAD_CHARs fill the string up to block_size and appear nowhere else."""
    for block in (128, 50):
        seen = _Examples((report or {}).get(block), block)
        if len(seen) != 600:
            raise Fail("the test reported no examples of the dataset to check")
        for x, y in zip(seen.x, seen.y):
            s = seen.text(x + y[-1:])
            body = s.rstrip(seen.pad)
            if seen.pad in body:
                raise Fail(f"CharCorruptionDataset.__getitem__: PAD_CHAR may only appear at the end; got {s[:70]!r}")
            if not body or len(body) > int(block * 7 / 8) + 3:
                raise Fail("CharCorruptionDataset.__getitem__: the text before the padding must be the truncated "
                           f"line plus the MASK_CHARs; got {len(body)} characters with block_size {block}")


@grader_test("1e-4-basic", "x and y: y[i] is the character that follows x[i]", timeout=20)
def test_1e_4(ctx):
    lines = _text(6, [10, 60, 130, 400])
    ds = _dataset(ctx, lines, 128)
    _seed_all(15)
    ctx.report(_observe(ctx, ds, [k % len(lines) for k in range(400)]))


@grader_judge("1e-4-basic")
def judge_1e_4(ctx, report):
    """x = masked_string[:-1], y = masked_string[1:]: y is x shifted by one, and ends in a PAD_CHAR."""
    seen = _Examples(report, 128)
    if len(seen) != 400:
        raise Fail("the test reported no examples of the dataset to check")
    pad_id = seen.itos.index(seen.pad) if seen.pad in seen.itos else None
    for x, y in zip(seen.x, seen.y):
        if x[1:] != y[:-1]:
            raise Fail("CharCorruptionDataset.__getitem__: y must be x shifted by one (x = s[:-1], y = s[1:]); "
                       f"got x={seen.text(x[:30])!r}..., y={seen.text(y[:30])!r}...")
        if y[-1] != pad_id:
            raise Fail("CharCorruptionDataset.__getitem__: the last target must be the padded string's last "
                       "character (a PAD_CHAR)")


@grader_test("1e-5-basic", "masked span: about 1/4 of the truncated length on average, random at every truncated "
             "length, sometimes shorter and sometimes longer than 1/4", timeout=60)  # as 1e-2: up to ~37,000 draws
def test_1e_5(ctx):
    line = _text(7, [600])
    ds = _dataset(ctx, line, 128)
    _seed_all(16)
    long_line = _observe(ctx, ds, [0] * 4000)
    ds = _dataset(ctx, _text(8, [40]), 128)
    _seed_all(17)
    ctx.report({"long": long_line, "whole": _observe_whole(ctx, ds, _text(8, [40])[0])})


@grader_judge("1e-5-basic")
def judge_1e_5(ctx, report):
    """The masked content is 1/4 of the truncated length n on average (0.15..0.35 over 4000 examples of a long
    line), and its length is random with a chance of being more or less than n/4: over those examples both
    happen at least 5 % of the time, at most lengths n >= 16 it takes more than one value, and on draws that
    keep a line of 40 characters whole, lengths below 10 and above 10 both occur."""
    line = _text(7, [600])[0]
    seen = _Examples((report or {}).get("long"), 128)
    if len(seen) != 4000:
        raise Fail("the test reported no examples of the dataset to check")
    draws = [(len(p + m + s), len(m)) for p, m, s in (seen.parts(k, line) for k in range(len(seen)))]
    mean = sum(k / n for n, k in draws) / len(draws)
    if not 0.15 <= mean <= 0.35:
        raise Fail(f"CharCorruptionDataset.__getitem__: the masked content is {mean:.3f} of the truncated length "
                   "on average over 4000 examples; the handout asks for about 1/4")
    above = sum(4 * k > n for n, k in draws) / len(draws)
    below = sum(4 * k < n for n, k in draws) / len(draws)
    if above < 0.05 or below < 0.05:
        raise Fail("CharCorruptionDataset.__getitem__: over 4000 examples the masked content was longer than 1/4 "
                   f"of the truncated length in {100 * above:.1f} % and shorter in {100 * below:.1f} %; its length "
                   "must be random, with a chance of being both more and less than 1/4")
    by_length = {}  # truncated length n >= 16 -> the masked lengths drawn at n
    for n, k in draws:
        if n >= 16:
            by_length.setdefault(n, []).append(k)
    groups = [n for n, ks in by_length.items() if len(ks) >= 20]
    fixed = sorted(n for n in groups if len(set(by_length[n])) < 2)
    if groups and len(fixed) * 2 > len(groups):
        raise Fail("CharCorruptionDataset.__getitem__: at truncated lengths such as "
                   f"{fixed[:6]} the masked content always had the same length; it must be drawn at random")
    lengths = sorted({len(m) for p, m, s in _whole_parts(report.get("whole"), _text(8, [40])[0])})
    if not lengths or lengths[0] >= 10 or lengths[-1] <= 10:
        raise Fail("CharCorruptionDataset.__getitem__: with a truncated length of 40 the masked content had only "
                   f"the lengths {lengths} over 1,000 examples; its length must be random, with a chance of being "
                   "both shorter and longer than 1/4 of the truncated length (10)")


@grader_test("1e-6-basic", "examples are random: drawing one line again gives other examples", timeout=20)
def test_1e_6(ctx):
    lines = _text(9, [80, 200, 300])
    ds = _dataset(ctx, lines, 128)
    _seed_all(5)
    ctx.report(_observe(ctx, ds, [idx for idx in range(len(lines)) for _ in range(20)]))


@grader_judge("1e-6-basic")
def judge_1e_6(ctx, report):
    """Each draw of a line is a new random example, from whichever generator (random, NumPy, torch)."""
    seen = _Examples(report, 128)
    if seen.idx != [idx for idx in range(3) for _ in range(20)]:
        raise Fail("the test reported no examples of the dataset to check")
    for idx in range(3):
        if len({tuple(x) for x, i in zip(seen.x, seen.idx) if i == idx}) < 2:
            raise Fail(f"CharCorruptionDataset.__getitem__: 20 draws of line {idx} gave the same example each time; "
                       "the truncation and the masked span must be drawn at random on every call")


# -- part (f): pretraining --------------------------------------------------------------------------------


@grader_test("1f-0-basic", "pretrain: the TrainerConfig and Trainer of the handout", timeout=30)
def test_1f_0(ctx):
    block = PRETRAIN_BLOCK
    ds = _corpus(ctx, block)
    helper = ctx.student("helper")
    model = _tiny_gpt(ctx, ds.vocab_size, block, seed=4)
    result = _without_training(ctx, "pretrain", helper.pretrain, ds, block, model)
    tconf, trainer_obj = _check_result_pair(result, "pretrain")
    facts = _training_facts(ctx, tconf, trainer_obj, model, FINETUNE_NAMES)
    facts.update(corpus_len=len(ds), trains_on_dataset=getattr(trainer_obj, "train_dataset", None) is ds)
    ctx.report(facts)


PRETRAIN_BLOCK = 96  # not the course's 128: final_tokens must use the block size, not a constant 128


@grader_judge("1f-0-basic")
def judge_1f_0(ctx, facts):
    """Called with the default pretrain_lr (as the course's grader does): 650 epochs, batch 128, learning rate
    6e-3, lr decay, 512*20 warmup tokens, 200*len(dataset)*block_size final tokens, any num_workers; the Trainer
    trains on pretrain_dataset itself; pretrain returns (tconf, trainer_obj) without training."""
    facts = facts if isinstance(facts, dict) else {}
    if not isinstance(facts.get("corpus_len"), int):
        raise Fail("the test reported nothing of what pretrain built")
    _judge_training(facts, dict(max_epochs=650, batch_size=128, learning_rate=6e-3, lr_decay=True,
                                warmup_tokens=512 * 20, final_tokens=200 * facts["corpus_len"] * PRETRAIN_BLOCK,
                                num_workers=WORKERS), "pretrain", "pretrain")
    if facts.get("trains_on_dataset") is not True:
        raise Fail("pretrain: the Trainer must train on pretrain_dataset itself")


@grader_test("1f-1-basic", "finetune with pretrained parameters: loads them; the TrainerConfig (10 epochs)",
             timeout=30)
def test_1f_1(ctx):
    _finetune_case(ctx, pretrained=True)


@grader_judge("1f-1-basic")
def judge_1f_1(ctx, facts):
    """With reading_params_path: the model holds the pretrained parameters; 10 epochs, the rest as without
    pretraining (default finetune_lr: learning rate 6e-4)."""
    _finetune_judge(ctx, facts, dict(max_epochs=10, batch_size=256, learning_rate=6e-4, lr_decay=True,
                                     warmup_tokens=512 * 20, num_workers=WORKERS), pretrained=True)


_register_predictions("1f-0-hidden", "vanilla.pretrain.dev.predictions",
                      "vanilla.pretrain.dev.predictions: accuracy threshold")
_register_predictions("1f-1-hidden", "vanilla.pretrain.test.predictions",
                      "vanilla.pretrain.test.predictions: accuracy threshold")


# -- part (g): the perceiver ------------------------------------------------------------------------------
#
# The tests judge what the blocks compute, never what their attributes are called: the basis C is found as
# the one parameter of shape (1, m, n_embd) or (m, n_embd) (m is chosen so that no other layer has that
# shape), the blocks are found in a model by their class (DownProjectBlock, UpProjectBlock, Block: the names
# the handout gives), and a comparison with the reference gives both the same weights by shape alone.

SHAPES = ((3, 20), (1, 64), (2, 8))  # (B, T) with T >= m = 8; T = m included


def _perceiver_config(ctx, package="student", m=8, n_embd=32, block=64, n_head=4):
    mod = ctx.student("model") if package == "student" else ctx.solution("model")
    cfg = mod.GPTConfig(30, block, n_layer=3, n_head=n_head, n_embd=n_embd, embd_pdrop=0.0, resid_pdrop=0.0,
                        attn_pdrop=0.0)
    cfg.perceiver, cfg.bottleneck_dim = True, m
    return cfg


def _block(ctx, cls, cfg, seed=0):
    import torch

    model = ctx.student("model")
    torch.manual_seed(seed)
    return call(f"{cls}(config)", ctx.submission_dir, getattr(model, cls), cfg).eval()


def _basis(block, m, n_embd):
    """The learnable basis C of a DownProjectBlock: its one parameter of shape (1, m, n_embd) or (m, n_embd)."""
    found = [p for p in block.parameters() if tuple(p.shape) in ((1, m, n_embd), (m, n_embd))]
    if len(found) != 1:
        raise Fail(f"DownProjectBlock must hold the learnable basis C as one nn.Parameter of shape (1, {m}, "
                   f"{n_embd}), i.e. (1, bottleneck_dim, n_embd); it has {len(found)} parameters of that shape")
    return found[0]


def _require_tensor(value, what, shape):
    import torch

    if value is None:
        raise Fail(f"{what} returned None: its part (g) code is missing")
    if not torch.is_tensor(value):
        raise Fail(f"{what} returned a {type(value).__name__}, not a tensor")
    if tuple(value.shape) != tuple(shape):
        raise Fail(f"{what} returned shape {tuple(value.shape)}; expected {tuple(shape)}")
    return value


def _down(ctx, block, x, m):
    b, t, d = x.shape
    out = call("DownProjectBlock.forward", ctx.submission_dir, block, x)
    return _require_tensor(out, f"DownProjectBlock.forward on ({b}, {t}, {d})", (b, m, d))


def _up(ctx, block, y, x):
    out = call("UpProjectBlock.forward", ctx.submission_dir, block, y, x)
    return _require_tensor(out, f"UpProjectBlock.forward on y {tuple(y.shape)}, x {tuple(x.shape)}", tuple(x.shape))


def _rows_changed(a, b, atol=1e-5):
    """Which rows (positions) of two (B, T, C) outputs differ."""
    return ((a - b).abs().amax(dim=(0, 2)) > atol).tolist()


@grader_test("1g-0-basic", "DownProjectBlock: (B, T, C) -> (B, m, C) for every T >= m", timeout=30)
def test_1g_0(ctx):
    import torch

    cases = []
    for m, n_embd, n_head in G0_CASES:
        block = _block(ctx, "DownProjectBlock", _perceiver_config(ctx, m=m, n_embd=n_embd, n_head=n_head))
        with torch.no_grad():
            for b, t in SHAPES + ((2, m + 1),):
                _down(ctx, block, torch.randn(b, max(t, m), n_embd), m)
            x = torch.randn(3, 20, n_embd)
            cases.append([_down(ctx, block, x[1:2], m), _down(ctx, block, x, m)[1:2]])
    ctx.report(cases)


G0_CASES = ((8, 32, 4), (16, 48, 3))


def _tensors(report, count, shape=None):
    """A judge's check that a report is `count` tensors (of one `shape`, when given)."""
    import torch

    if (not isinstance(report, (list, tuple)) or len(report) != count
            or not all(torch.is_tensor(t) and (shape is None or tuple(t.shape) == tuple(shape)) for t in report)):
        raise Fail("the test reported no outputs of the student's code to check")
    return [t.float() for t in report]


@grader_judge("1g-0-basic")
def judge_1g_0(ctx, report):
    """The down block maps (B, T, n_embd) to (B, bottleneck_dim, n_embd), each sequence on its own."""
    import torch

    if not isinstance(report, list) or len(report) != len(G0_CASES):
        raise Fail("the test reported no outputs of the student's code to check")
    for (m, n_embd, _), pair in zip(G0_CASES, report):
        alone, in_batch = _tensors(pair, 2, (1, m, n_embd))
        if not torch.allclose(alone, in_batch, atol=1e-5):
            raise Fail("DownProjectBlock: a sequence's bottleneck depends on the other sequences of the batch")


@grader_test("1g-1-basic", "the basis C: a learnable (1, m, n_embd) parameter, Xavier-uniform, used as the query",
             timeout=30)
def test_1g_1(ctx):
    import torch

    cases = []
    for m, n_embd, n_head in G1_CASES:
        block = _block(ctx, "DownProjectBlock", _perceiver_config(ctx, m=m, n_embd=n_embd, n_head=n_head), seed=m)
        basis = _basis(block, m, n_embd)
        case = {"learnable": bool(basis.requires_grad), "values": basis.detach().float().cpu().clone()}
        with torch.no_grad():
            x = torch.randn(2, 20, n_embd)
            out = _down(ctx, block, x, m)
            basis.add_(torch.randn_like(basis))
            case["outputs"] = [out, _down(ctx, block, x, m)]
        cases.append(case)
    ctx.report(cases)


G1_CASES = ((8, 32, 4), (24, 64, 4))


@grader_judge("1g-1-basic")
def judge_1g_1(ctx, report):
    """C is an nn.Parameter of shape (1, m, n_embd) (or (m, n_embd)) drawn by nn.init.xavier_uniform_, and it
    is the query: changing C changes the output."""
    import math

    import torch

    if not isinstance(report, list) or len(report) != len(G1_CASES) or not all(isinstance(c, dict) for c in report):
        raise Fail("the test reported no outputs of the student's code to check")
    for (m, n_embd, _), case in zip(G1_CASES, report):
        if case.get("learnable") is not True:
            raise Fail("DownProjectBlock's basis C must be learnable (an nn.Parameter that requires grad)")
        (values,) = _tensors([case.get("values")], 1)
        if values.numel() != m * n_embd:
            raise Fail("the test reported no outputs of the student's code to check")
        # xavier_uniform_ on (1, m, C): U(-b, b), b = sqrt(6 / (m*C + C)); on an (m, C) tensor: b = sqrt(6 / (m +
        # C)).  Either is accepted.  A uniform sample of m*C >= 256 values has max |C| <= 0.8 b with probability
        # 0.8**256 < 1e-24.
        # Uniform, not normal: max |C| / std(C) is sqrt(3) = 1.73 for a uniform sample; the test asks < 2.15.
        # For m*C >= 256 uniform values the sample std falls 19 % below its expectation (ratio >= 2.15) with
        # probability < 1e-8; 256 normal values (xavier_normal_) stay below 2.15 std with probability
        # (1 - 0.0316)**256 < 3e-4, and a real student's xavier_normal_ basis measured 2.4-4.7.
        low = math.sqrt(6.0 / (m * n_embd + n_embd))
        high = math.sqrt(6.0 / (m + n_embd))
        top = values.abs().max().item()
        if not (0.8 * low <= top <= high + 1e-6) or top / values.std().item() >= 2.15:
            raise Fail(f"DownProjectBlock's basis C ranges over +-{top:.3g} (max/std {top / values.std().item():.2f}, "
                       f"a uniform sample gives about 1.73); initialise it with nn.init.xavier_uniform_ (for shape "
                       f"(1, {m}, {n_embd}) that is U(-{low:.3g}, {low:.3g}))")
        before, after = _tensors(case.get("outputs"), 2, (2, m, n_embd))
        if torch.allclose(after, before, atol=1e-4):
            raise Fail("DownProjectBlock ignores its basis C: changing C does not change the output (C gives "
                       "the queries of the cross-attention)")


def _changes(ctx, fn, base, positions, rows):
    """Beside the student's code: fn(base) and, for each position p, fn of base with row p of its `rows`-th
    argument moved by random noise (not a constant: a layer norm on a query would remove it)."""
    import torch

    outputs = [fn(*base)]
    for p in positions:
        args = [a.clone() for a in base]
        args[rows][:, p] += torch.randn(args[rows].size(0), args[rows].size(-1))
        outputs.append(fn(*args))
    return outputs


def _changed_rows(report, positions, shape):
    """For the judge: which output rows each change moved, from what _changes reported."""
    outputs = _tensors(report, len(positions) + 1, shape)
    return [_rows_changed(out, outputs[0]) for out in outputs[1:]]


@grader_test("1g-2-basic", "DownProjectBlock is causal: bottleneck row j depends only on inputs 0..j", timeout=30)
def test_1g_2(ctx):
    import torch

    block = _block(ctx, "DownProjectBlock", _perceiver_config(ctx))
    with torch.no_grad():
        ctx.report(_changes(ctx, lambda x: _down(ctx, block, x, 8), [torch.randn(2, 20, 32)], G2_POSITIONS, 0))


G2_POSITIONS = (0, 3, 7)


@grader_judge("1g-2-basic")
def judge_1g_2(ctx, report):
    """Changing input position t leaves bottleneck rows j < t as they were and changes row t."""
    for t, changed in zip(G2_POSITIONS, _changed_rows(report, G2_POSITIONS, (2, 8, 32))):
        if any(changed[:t]):
            raise Fail(f"DownProjectBlock is not causal: changing input position {t} changed bottleneck rows "
                       f"{[j for j in range(t) if changed[j]]}; row j may only depend on inputs 0..j")
        if not changed[t]:
            raise Fail(f"DownProjectBlock: changing input position {t} did not change bottleneck row {t} (the "
                       "bottleneck must attend to the input)")


@grader_test("1g-3-basic", "UpProjectBlock: (B, m, C), (B, T, C) -> (B, T, C); the input x gives the queries",
             timeout=30)
def test_1g_3(ctx):
    import torch

    block = _block(ctx, "UpProjectBlock", _perceiver_config(ctx))
    with torch.no_grad():
        for b, t in SHAPES:
            _up(ctx, block, torch.randn(b, 8, 32), torch.randn(b, t, 32))
        base = [torch.randn(2, 8, 32), torch.randn(2, 20, 32)]
        ctx.report(_changes(ctx, lambda y, x: _up(ctx, block, y, x), base, G3_POSITIONS, 1))


G3_POSITIONS = (2, 7, 15)


@grader_judge("1g-3-basic")
def judge_1g_3(ctx, report):
    """The up block returns the input's shape, and output row t depends on x only through x[t] (x is the
    query: each position asks the bottleneck for itself)."""
    for t, changed in zip(G3_POSITIONS, _changed_rows(report, G3_POSITIONS, (2, 20, 32))):
        if not changed[t] or any(changed[:t] + changed[t + 1:]):
            raise Fail(f"UpProjectBlock: changing x at position {t} changed output rows "
                       f"{[i for i, c in enumerate(changed) if c]}; row t must depend on x at position t only "
                       "(x gives the queries; the bottleneck y gives keys and values)")


@grader_test("1g-4-basic", "UpProjectBlock is causal: output row t uses bottleneck rows 0..t only", timeout=30)
def test_1g_4(ctx):
    import torch

    block = _block(ctx, "UpProjectBlock", _perceiver_config(ctx))
    with torch.no_grad():
        base = [torch.randn(2, 8, 32), torch.randn(2, 20, 32)]
        ctx.report(_changes(ctx, lambda y, x: _up(ctx, block, y, x), base, G4_POSITIONS, 0))


G4_POSITIONS = (0, 3, 7)


@grader_judge("1g-4-basic")
def judge_1g_4(ctx, report):
    """Changing bottleneck row j leaves output rows t < j as they were and changes row j."""
    for j, changed in zip(G4_POSITIONS, _changed_rows(report, G4_POSITIONS, (2, 20, 32))):
        if any(changed[:j]):
            raise Fail(f"UpProjectBlock is not causal: changing bottleneck row {j} changed output rows "
                       f"{[t for t in range(j) if changed[t]]}; row t may only use bottleneck rows 0..t")
        if not changed[j]:
            raise Fail(f"UpProjectBlock ignores the bottleneck: changing its row {j} did not change output "
                       f"row {j}")


def _perceiver_runs(ctx, net, idx):
    """Run net(idx) and record, by class, what the handout's blocks saw: [(kind, input length, output length)]."""
    model = ctx.student("model")
    kinds = {"down": model.DownProjectBlock, "up": model.UpProjectBlock, "block": getattr(model, "Block", ())}
    runs = []
    handles = []

    def hook(module, inputs, output, kind):
        first = inputs[0] if inputs else None
        out = output[0] if isinstance(output, tuple) else output
        runs.append([kind, int(getattr(first, "shape", (0, 0))[1]), int(getattr(out, "shape", (0, 0))[1])])

    for module in net.modules():
        # the first class that matches: a DownProjectBlock written as a subclass of Block is still the down block
        kind = next((k for k, cls in kinds.items() if cls and isinstance(module, cls)), None)
        if kind:
            handles.append(module.register_forward_hook(lambda mod, i, o, kind=kind: hook(mod, i, o, kind)))
    try:
        call("the perceiver GPT's forward", ctx.submission_dir, net, idx)
    finally:
        for h in handles:
            h.remove()
    return runs


@grader_test("1g-5-basic", "initialize_perceiver_model builds a perceiver: down block, middle blocks at length m, "
             "up block", timeout=30)
def test_1g_5(ctx):
    import torch

    helper, model = ctx.student("helper"), ctx.student("model")
    cases = []
    for m in G5_BOTTLENECKS:
        cfg = model.GPTConfig(30, 64, n_layer=4, n_head=2, n_embd=32, embd_pdrop=0.0, resid_pdrop=0.0,
                              attn_pdrop=0.0)
        args = (cfg, m) if m else (cfg,)
        net = call("initialize_perceiver_model", ctx.submission_dir, helper.initialize_perceiver_model, *args)
        if net is None:
            raise Fail("initialize_perceiver_model returned None: its part (g) code in helper.py is missing")
        case = {"type": type(net).__name__, "is_gpt": isinstance(net, model.GPT)}
        if case["is_gpt"]:
            case["runs"] = _perceiver_runs(ctx, net.eval(), torch.randint(0, 30, (2, 40)))
        cases.append(case)
    ctx.report(cases)


G5_BOTTLENECKS = (8, None)  # None: called without bottleneck_dim, whose default is 32


@grader_judge("1g-5-basic")
def judge_1g_5(ctx, report):
    """initialize_perceiver_model(mconf, bottleneck_dim) returns a GPT that runs one DownProjectBlock, its middle
    Blocks on bottleneck_dim positions (32 by default) and one UpProjectBlock back to the input length."""
    if not isinstance(report, list) or len(report) != len(G5_BOTTLENECKS) or not all(isinstance(c, dict)
                                                                                  for c in report):
        raise Fail("the test reported no outputs of the student's code to check")
    for m, case in zip(G5_BOTTLENECKS, report):
        call_note = "" if m else " (called without bottleneck_dim, whose default is 32)"
        m = m or 32
        if case.get("is_gpt") is not True:
            raise Fail(f"initialize_perceiver_model returned a {case.get('type')}, not a model.GPT")
        runs = case.get("runs")
        if not isinstance(runs, list) or not all(isinstance(r, list) and len(r) == 3 for r in runs):
            raise Fail("the test reported no outputs of the student's code to check")
        downs = [tuple(r) for r in runs if r[0] == "down"]
        ups = [tuple(r) for r in runs if r[0] == "up"]
        middle = sorted({r[1] for r in runs if r[0] == "block"})
        if not downs or not ups:
            raise Fail("initialize_perceiver_model returned a model that runs no DownProjectBlock/UpProjectBlock: "
                       "it must set mconf.perceiver = True before building GPT(mconf)")
        if len(downs) != 1 or len(ups) != 1 or downs[0][2] != m or ups[0][2] != 40:
            raise Fail(f"the perceiver must run one DownProjectBlock down to bottleneck_dim = {m} positions and one "
                       f"UpProjectBlock back to the input length 40{call_note}; it ran {downs + ups}")
        if middle != [m]:
            raise Fail(f"the perceiver's middle Blocks ran on {middle} positions, not bottleneck_dim = {m}"
                       f"{call_note}: initialize_perceiver_model must set mconf.bottleneck_dim = bottleneck_dim")


@grader_test("1g-6-basic", "the perceiver GPT from initialize_perceiver_model is causal", timeout=30)
def test_1g_6(ctx):
    import torch

    helper, model = ctx.student("helper"), ctx.student("model")
    cfg = model.GPTConfig(30, 64, n_layer=3, n_head=2, n_embd=32, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0)
    net = call("initialize_perceiver_model", ctx.submission_dir, helper.initialize_perceiver_model, cfg, 8)
    if net is None:
        raise Fail("initialize_perceiver_model returned None: its part (g) code in helper.py is missing")
    net.eval()
    kinds = sorted({kind for kind, _, _ in _perceiver_runs(ctx, net, torch.randint(0, 30, (1, 16)))})
    outputs = []
    if {"down", "up"} <= set(kinds):
        with torch.no_grad():
            torch.manual_seed(1)
            idx = torch.randint(0, 30, (2, 64))
            base, _ = call("the perceiver GPT's forward", ctx.submission_dir, net, idx)
            outputs.append(_require_tensor(base, "the perceiver GPT's forward", (2, 64, 30)))
            for t in G6_POSITIONS:
                changed = idx.clone()
                changed[:, t:] = (idx[:, t:] + torch.randint(1, 30, (2, 64 - t))) % 30
                out, _ = call("the perceiver GPT's forward", ctx.submission_dir, net, changed)
                outputs.append(out)
    ctx.report({"kinds": kinds, "outputs": outputs})


G6_POSITIONS = (3, 8, 20, 63)


@grader_judge("1g-6-basic")
def judge_1g_6(ctx, report):
    """The model runs a DownProjectBlock and an UpProjectBlock (a vanilla GPT is not the perceiver this test
    is about); changing the tokens from position t on changes no logit before t, and changes some logit after."""
    import torch

    report = report if isinstance(report, dict) else {}
    if not {"down", "up"} <= set(report.get("kinds") or ()):
        raise Fail("initialize_perceiver_model returned a model that runs no DownProjectBlock/UpProjectBlock, so "
                   "there is no perceiver to check: it must set mconf.perceiver = True before building GPT(mconf)")
    base, *outs = _tensors(report.get("outputs"), len(G6_POSITIONS) + 1, (2, 64, 30))
    for t, out in zip(G6_POSITIONS, outs):
        if not torch.allclose(out[:, :t], base[:, :t], atol=1e-5):
            raise Fail(f"the perceiver is not causal: changing the tokens from position {t} on changed the "
                       f"logits before position {t}")
        if torch.equal(out[:, t:], base[:, t:]):
            raise Fail(f"the perceiver ignores its input: changing the tokens from position {t} on changed no "
                       "logits")


@grader_test("1g-7-basic", "finetune a perceiver with pretrained parameters: loads them; the TrainerConfig",
             timeout=30)
def test_1g_7(ctx):
    _finetune_case(ctx, pretrained=True, perceiver=True)


@grader_judge("1g-7-basic")
def judge_1g_7(ctx, facts):
    """finetune works for the perceiver as for the vanilla model: loads the parameters; 10 epochs, batch 256,
    learning rate 6e-4 (the default finetune_lr), lr decay, 512*20 warmup tokens, any num_workers."""
    _finetune_judge(ctx, facts, dict(max_epochs=10, batch_size=256, learning_rate=6e-4, lr_decay=True,
                                     warmup_tokens=512 * 20, num_workers=WORKERS), pretrained=True)


def _readings(ctx, ref, cls, m, args):
    """The outputs of the block as the handout and the course's hints allow it to be written, computed with the
    reference's layers (holding the same weights as the student's, so every LayerNorm is the same function).

    The course's hints put the layer norm of the attention sub-layer on C (down block) and on y (up block); a
    copy of Block puts it on the attention's input.  So the query, the keys/values or both may be normalised,
    and the residual stream may start from the query, from its normalised form, or not at all: the handout's
    equations (3) and (4) define the block's first output as the cross-attention alone, and Block's residual
    cannot be copied as it is into the down block (T rows in, m out); 8 of 26 real solutions we graded
    dropped it.  The MLP sub-layer is Block's in every reading: h + mlp(layer_norm(h))."""
    import torch.nn as nn

    attention = ctx.solution("attention").CausalCrossAttention
    ln = next(m for m in ref.modules() if isinstance(m, nn.LayerNorm))
    attn = next(m for m in ref.modules() if isinstance(m, attention))
    mlp = next(c for c in ref.children() if not isinstance(c, (nn.LayerNorm, attention)))
    if cls == "DownProjectBlock":
        (x,) = args
        query, kv = _basis(ref, m, x.size(-1)).reshape(1, m, x.size(-1)), x
    else:
        y, x = args
        query, kv = x, y
    outputs = {}
    for name, norm_q, norm_kv in (("layer norm on the query", True, False),
                                  ("layer norm on the keys/values", False, True),
                                  ("layer norm on both", True, True)):
        q, k = (ln(query) if norm_q else query), (ln(kv) if norm_kv else kv)
        for start in ("query", "normalised query", None) if norm_q else ("query", None):
            residual = {"query": query, "normalised query": q, None: 0}[start]
            h = residual + attn(k, q)
            outputs[f"{name}, " + (f"residual from the {start}" if start else "no residual")] = h + mlp(ln(h))
    return outputs


def _block_inputs(cls):
    """The inputs on which a block is compared with the reference (fixed: the judge draws the same)."""
    import torch

    gen = torch.Generator().manual_seed(7)
    if cls == "DownProjectBlock":
        return [(torch.randn(b, t, 32, generator=gen),) for b, t in SHAPES]
    return [(torch.randn(b, 8, 32, generator=gen), torch.randn(b, t, 32, generator=gen)) for b, t in SHAPES]


def _report_block(ctx, cls):
    """Beside the student's code: the block's parameter shapes and its outputs on _block_inputs, with weights
    set by shape (_fill_by_shape); the judge (_compare_block) compares them with the reference's layers."""
    import torch

    mine = _block(ctx, cls, _perceiver_config(ctx))
    shapes = _fill_by_shape(mine, 32)
    outputs = []
    with torch.no_grad():
        for args in _block_inputs(cls):
            shape = (args[0].size(0), 8, 32) if cls == "DownProjectBlock" else tuple(args[1].shape)
            got = call(f"{cls}.forward", ctx.submission_dir, mine, *args)
            outputs.append(_require_tensor(got, f"{cls}.forward", shape).detach().float().cpu())
    ctx.report({"shapes": shapes, "outputs": outputs})


def _compare_block(ctx, report, cls):
    """The judge: the student's block and the reference's layers, given the same weights by shape
    (_fill_by_shape), agree in one of the readings the course's text allows (_readings), the same one for
    every input."""
    import torch

    ref_model = ctx.solution("model")
    ref_cfg = _perceiver_config(ctx, "solution")
    ref = getattr(ref_model, cls)(ref_cfg).eval()
    _check_shapes(_reported_shapes(report), _fill_by_shape(ref, 32), cls, flexible=((32,),))
    inputs = _block_inputs(cls)
    outputs = report.get("outputs")
    if not isinstance(outputs, list) or len(outputs) != len(inputs):
        raise Fail(f"the test reported no outputs of {cls} to compare")
    agree = None
    with torch.no_grad():
        for args, got in zip(inputs, outputs):
            readings = _readings(ctx, ref, cls, ref_cfg.bottleneck_dim, args)
            want = ref(*args)
            if not any(torch.allclose(out, want, atol=1e-5) for out in readings.values()):
                raise Fail(f"the reference's {cls} is none of the readings (a problem of the grading set-up)")
            got = _require_tensor(got, f"{cls}.forward", tuple(want.shape)).float()
            diffs = {name: (got - out.float()).abs().max().item() for name, out in readings.items()}
            close = {name for name, d in diffs.items() if d <= 1e-4}
            agree = close if agree is None else agree & close
            if not agree:
                shapes = ", ".join(str(tuple(a.shape)) for a in args)
                raise Fail(f"{cls}'s outputs for inputs {shapes} differ from the handout's block when both hold the "
                           f"same weights (largest difference {min(diffs.values()):.3g} from the nearest reading: "
                           "cross-attention with a residual connection, a layer norm on the query and/or the "
                           "keys/values, then Block's MLP sub-layer with its own residual)")


@grader_test("1g-0-hidden", "DownProjectBlock computes the handout's block (same weights as the reference's)",
             timeout=30, needs=("solution",))
def test_1g_0_hidden(ctx):
    """With the same weights (matched by shape), the down block's output equals the reference layers' in one
    reading: layer norm on C, on the input or on both (_readings)."""
    _report_block(ctx, "DownProjectBlock")


@grader_judge("1g-0-hidden")
def judge_1g_0_hidden(ctx, report):
    _compare_block(ctx, report, "DownProjectBlock")


@grader_test("1g-1-hidden", "UpProjectBlock computes the handout's block (same weights as the reference's)",
             timeout=30, needs=("solution",))
def test_1g_1_hidden(ctx):
    """With the same weights (matched by shape), the up block's output equals the reference layers' in one
    reading: layer norm on y, on the input x or on both (_readings)."""
    _report_block(ctx, "UpProjectBlock")


@grader_judge("1g-1-hidden")
def judge_1g_1_hidden(ctx, report):
    _compare_block(ctx, report, "UpProjectBlock")


_register_predictions("1g-2-hidden", "perceiver.pretrain.dev.predictions",
                      "perceiver.pretrain.dev.predictions: accuracy threshold")
_register_predictions("1g-3-hidden", "perceiver.pretrain.test.predictions",
                      "perceiver.pretrain.test.predictions: accuracy threshold")


# -- the written part: extra credit 3a-3d (3e and the attention cost are practice) --------------------------
#
# The checks and their false-failure bounds are in grader_written.py; each test runs one on the student's
# attention_exploration.py.  They share one worker (one torch import for eight quick checks).


WRITTEN = dict(timeout=20, extra_credit=True, group="written")


def _written(ctx, check):
    """Beside the student's code: the check runs on a Recorder of attention_exploration.py, and what the
    student's functions returned is reported; a check that fails here fails the test at once."""
    import grader_written  # next to this file; imports torch, so only inside a worker

    recorder = grader_written.Recorder(ctx.student("attention_exploration"))
    getattr(grader_written, check)(recorder)
    ctx.report(recorder.calls)


def _judge_written(check):
    """The judge: the same check on a Replay of what was reported (grader_written.py, "Record and replay")."""

    def judge(ctx, calls):
        import grader_written

        getattr(grader_written, check)(grader_written.Replay(calls))

    return judge


def _register_written(tid, description, check, rule):
    def test(ctx):
        _written(ctx, check)

    test.__doc__ = rule
    grader_test(tid, description, **WRITTEN)(test)
    grader_judge(tid)(_judge_written(check))


_register_written("3a-0-basic", "3a copy_query: c ~= v_j for unit, non-orthogonal keys", "check_3a",
                  "copy_query(k, j) gives a query whose attention output is (nearly) v_j.")
_register_written("3b-0-basic", "3b average_query: c ~= (v_a + v_b)/2 for orthonormal keys", "check_3b",
                  "average_query(k, a, b) gives a query whose output is (nearly) the mean of v_a and v_b.")
_register_written("3c-0-basic", "3c(i) gaussian_average_query: c ~= (v_a + v_b)/2 for keys near the means", "check_3c",
                  "With keys drawn near their means, the query still averages v_a and v_b.")
_register_written("3d-0-basic", "3d(i) two_head_queries: (c1 + c2)/2 ~= (v_a + v_b)/2", "check_3d_average",
                  "Two heads whose outputs average to the mean of v_a and v_b.")
_register_written("3d-1-basic", "3d(i) two_head_queries: the two heads differ (q1 = q2 is forbidden)", "check_3d_distinct",
                  "The two heads' queries are not the same query.")
_register_written("3d-2-basic", "3d(ii) two heads keep c near (v_a + v_b)/2 when k_a is perturbed", "check_3d_spread",
                  "Under the 3d(ii) perturbation of k_a the two heads keep c near the mean.")
_register_written("3e-0-basic", "3e(ii) kqv_matrices: c2 ~= u_b and c1 ~= u_b - u_c", "check_3e",
                  "The key/query/value matrices of 3e(ii) give c2 = u_b and c1 = u_b - u_c.")
_register_written("1g-9-basic", "1g attention cost of the vanilla and Perceiver models", "check_1g",
                  "The attention cost formulas of the vanilla and Perceiver models.")


if __name__ == "__main__":
    sys.exit(main())
