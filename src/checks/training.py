"""What finetune and pretrain build (parts c, f and g): the TrainerConfig's numbers and the Trainer; and what
initialize_vanilla_model and train do (part c).

grader.py's tests of finetune and pretrain lean on this.  The student's worker calls them the way run.py does,
with Trainer.train replaced by a tripwire (without_training), and reports what they returned as data
(observe_finetune, observe_pretrain; observe_vanilla_model and observe_train for the other two).  The judge
compares that data with the numbers the test writes out (check_finetune, check_pretrain; check_vanilla_model
and check_train).
"""

from graderUtil import Fail, call
from kit.fileio import read_tsv
from checks.perceiver import require_blocks


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
        return isinstance(got, numbers.Integral) and not isinstance(got, bool) and int(got) >= 0
    if isinstance(want, bool):
        return isinstance(got, (bool, numbers.Integral)) and got == want
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        return False
    return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=0.0)


class TrainingStarted(BaseException):
    """Stands in for Trainer.train while finetune or pretrain runs.  A BaseException, so that `call` (which
    turns an Exception into a Fail) lets it through to without_training, which says what happened."""


def without_training(ctx, fn_name, fn, *args):
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


def require_pair(result, fn_name):
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


def _built(ctx, tconf, trainer_obj, model, names):
    """Beside the student's code: what finetune or pretrain built, as data (the judge decides on it)."""
    trainer = ctx.student("trainer")
    return {"tconf_type": type(tconf).__name__, "is_tconf": isinstance(tconf, trainer.TrainerConfig),
            "tconf": {name: _plain(getattr(tconf, name, None)) for name in names},
            "trainer_type": type(trainer_obj).__name__, "is_trainer": isinstance(trainer_obj, trainer.Trainer),
            "config_is_tconf": getattr(trainer_obj, "config", None) is tconf,
            "model_is_model": getattr(trainer_obj, "model", None) is model,
            "test_dataset_none": getattr(trainer_obj, "test_dataset", None) is None}


def _check_built(facts, expected, fn_name, what):
    """The TrainerConfig's hyperparameters against the numbers a test writes out (the course's helper.py lists
    them for finetune and pretrain; the course's grader checks the same values), then the Trainer.  An expected
    value written as a function of the corpus's length (final_tokens) is computed from the reported one."""
    if not isinstance(facts, dict) or not isinstance(facts.get("tconf"), dict):
        raise Fail(f"the test reported nothing of what {fn_name} built")
    if facts.get("is_tconf") is not True:
        raise Fail(f"{fn_name}: tconf is a {facts.get('tconf_type')}, not a trainer.TrainerConfig")
    if not isinstance(facts.get("corpus_len"), int):
        raise Fail(f"the test reported nothing of what {fn_name} built")
    wrong = []
    for name, want in expected.items():
        want = want(facts["corpus_len"]) if callable(want) else want
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


def corpus(ctx, block_size):
    """The student's CharCorruptionDataset over the data folder's wiki.txt (cached per block size)."""
    key = ("corpus", block_size)
    if key not in ctx.cache:
        text = ctx.read_data("wiki.txt")
        dataset = ctx.student("dataset")
        ctx.cache[key] = call(f"CharCorruptionDataset(<wiki.txt>, {block_size})", ctx.submission_dir,
                              dataset.CharCorruptionDataset, text, block_size)
    return ctx.cache[key]


def tiny_gpt(ctx, vocab_size, block_size, seed, perceiver=False, bottleneck_dim=16, n_layer=2):
    import torch

    model = ctx.student("model")
    kwargs = dict(n_layer=n_layer, n_head=2, n_embd=32)
    cfg = model.GPTConfig(vocab_size, block_size, **kwargs)
    if perceiver:
        cfg.perceiver, cfg.bottleneck_dim = True, bottleneck_dim
        require_blocks(ctx, cfg)
    torch.manual_seed(seed)
    if takes_config_alone(model.GPT, cfg):
        return call("GPT(config)", ctx.submission_dir, model.GPT, cfg)
    # The given GPT's constructor takes other arguments in this submission (given code the student changed): the
    # model is built as the course's grader builds it, by the student's own initialize_*_model, so that finetune,
    # pretrain and train are not failed for it (1c-3 judges the vanilla model itself).
    helper = ctx.student("helper")
    if perceiver:
        net = call("initialize_perceiver_model", ctx.submission_dir, helper.initialize_perceiver_model, cfg,
                   bottleneck_dim)
    else:
        net = call("initialize_vanilla_model", ctx.submission_dir, helper.initialize_vanilla_model, cfg)
    if net is None:
        raise Fail("GPT(config) cannot be called with the config alone (its constructor was changed), and "
                   f"initialize_{'perceiver' if perceiver else 'vanilla'}_model returned None")
    return net


def takes_config_alone(cls, cfg):
    """Whether cls(cfg) binds to cls's constructor (the given GPT's signature)."""
    import inspect

    try:
        inspect.signature(cls).bind(cfg)
        return True
    except (TypeError, ValueError):
        return False


# what the worker reports of the TrainerConfig (finetune's and pretrain's alike)
TCONF_NAMES = ("max_epochs", "batch_size", "learning_rate", "lr_decay", "warmup_tokens", "num_workers",
                  "final_tokens")


def observe_finetune(ctx, block, pretrained, perceiver=False):
    """Beside the student's code: finetune(...) as run.py calls it, on the data folder's training file, with its
    default finetune_lr, without training; what it built (check_finetune decides).  With reading_params_path,
    whether the model holds the saved parameters."""
    import torch

    ds = corpus(ctx, block)
    train_path = ctx.data_path("birth_places_train.tsv")
    helper = ctx.student("helper")
    dataset = ctx.student("dataset")
    n_layer = 3 if perceiver else 2
    try:
        model = tiny_gpt(ctx, ds.vocab_size, block, seed=2, perceiver=perceiver, n_layer=n_layer)
        source = (tiny_gpt(ctx, ds.vocab_size, block, seed=1, perceiver=perceiver, n_layer=n_layer) if pretrained
                  else None)
    except Fail as e:
        if not perceiver:
            raise
        # the test is of finetune, but it needs a perceiver built by the student's part (g) first: say which part
        raise Fail(f"finetune was not reached: this test finetunes a perceiver built by your model.py, and building it "
                   f"failed in part (g)'s blocks (1g-3-basic to 1g-9-basic test them): {e}") from None
    params = None
    if pretrained:
        params = ctx.tmp / "pretrained.params"
        torch.save(source.state_dict(), params)
        params = str(params)
    result = without_training(ctx, "finetune", helper.finetune, params, str(train_path), ds, block, model)
    tconf, trainer_obj = require_pair(result, "finetune")
    facts = _built(ctx, tconf, trainer_obj, model, TCONF_NAMES)
    data = getattr(trainer_obj, "train_dataset", None)
    facts.update(corpus_len=len(ds), data_type=type(data).__name__,
                 is_name_dataset=isinstance(data, dataset.NameDataset),
                 data_len=len(data) if isinstance(data, dataset.NameDataset) else None)
    if pretrained:
        # parameters, not the state dict: buffers (the course's attention masks) are not what pretraining learns
        facts["differs"] = next((k for k, (want, got) in enumerate(zip(source.parameters(), model.parameters()))
                                 if not torch.equal(got.detach().cpu(), want.detach().cpu())), None)
    return facts


def observe_pretrain(ctx, block):
    """Beside the student's code: pretrain(pretrain_dataset, block_size, model) as run.py calls it, on a tiny
    GPT and corpus, with training tripped (without_training): the TrainerConfig's numbers, the Trainer's, the
    corpus's length and whether the Trainer trains on that dataset itself (check_pretrain decides)."""
    ds = corpus(ctx, block)
    helper = ctx.student("helper")
    model = tiny_gpt(ctx, ds.vocab_size, block, seed=4)
    result = without_training(ctx, "pretrain", helper.pretrain, ds, block, model)
    tconf, trainer_obj = require_pair(result, "pretrain")
    facts = _built(ctx, tconf, trainer_obj, model, TCONF_NAMES)
    facts.update(corpus_len=len(ds), trains_on_dataset=getattr(trainer_obj, "train_dataset", None) is ds)
    return facts


def check_pretrain(ctx, report, expected):
    """The judge of observe_pretrain: tconf holds the `expected` numbers and the Trainer trains the given model on
    pretrain_dataset itself."""
    facts = report if isinstance(report, dict) else {}
    _check_built(facts, expected, "pretrain", "pretrain")
    if facts.get("trains_on_dataset") is not True:
        raise Fail("pretrain: the Trainer must train on pretrain_dataset itself")


def check_finetune(ctx, report, expected, pretrained):
    """The judge of observe_finetune: tconf holds the `expected` numbers, the Trainer trains the given model on a
    NameDataset of the training file, and with reading_params_path the model holds the saved parameters."""
    facts = report if isinstance(report, dict) else {}
    train_path = ctx.data_path("birth_places_train.tsv")
    n_train = len(read_tsv(train_path))
    fn_name = "finetune " + ("with" if pretrained else "without") + " pretrained parameters"
    _check_built(facts, expected, "finetune", fn_name)
    if facts.get("is_name_dataset") is not True:
        raise Fail(f"finetune: the Trainer's training data must be a NameDataset, not {facts.get('data_type')}")
    if facts.get("data_len") != n_train:
        raise Fail(f"finetune: the NameDataset has {facts.get('data_len')} examples but {train_path.name} has "
                   f"{n_train} lines")
    if pretrained and ("differs" not in facts or facts["differs"] is not None):
        raise Fail("finetune: the pretrained parameters from reading_params_path were not loaded into "
                   f"the model (load the state dict saved there into it); parameter {facts.get('differs')} differs")


def observe_train(ctx, epochs):
    """Beside the student's code: train(model, path, trainer_obj) as run.py calls it, on a tiny GPT and data,
    with a Trainer of the given epochs; whether it wrote the parameters file, whether that holds the model's state
    dict, and whether training changed the model (the judge decides on these facts)."""
    import torch
    from torch.utils.data import TensorDataset

    helper, trainer = ctx.student("helper"), ctx.student("trainer")
    net = tiny_gpt(ctx, 20, 16, seed=3)
    before = {k: v.detach().clone() for k, v in net.state_dict().items()}
    x = torch.randint(2, 20, (32, 15))
    data = TensorDataset(x, torch.roll(x, -1, dims=1))
    tconf = trainer.TrainerConfig(max_epochs=epochs, batch_size=8, learning_rate=1e-3, num_workers=0, device="cpu",
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
    return facts


def vanilla_config(model_module, sizes):
    """The GPTConfig of `sizes` (vocab, block, n_layer, n_head, n_embd), from the student's model.py or the
    reference's."""
    return model_module.GPTConfig(sizes["vocab"], sizes["block"], n_layer=sizes["n_layer"], n_head=sizes["n_head"],
                                  n_embd=sizes["n_embd"])


def vanilla_model(ctx, sizes):
    """Beside the student's code: (initialize_vanilla_model(mconf), mconf) for the GPTConfig of `sizes`; a Fail
    where it returns nothing."""
    helper, model = ctx.student("helper"), ctx.student("model")
    mconf = vanilla_config(model, sizes)
    net = call("initialize_vanilla_model", ctx.submission_dir, helper.initialize_vanilla_model, mconf)
    if net is None:
        raise Fail("initialize_vanilla_model returned None: part (c) in helper.py returns the vanilla model that "
                   "mconf describes")
    return net, mconf


def observe_vanilla_model(ctx, sizes):
    """Beside the student's code: what initialize_vanilla_model built from a GPTConfig of these sizes (its class,
    whether it is a perceiver, its blocks, block size and the shape of its logits on 2 sequences of 10 tokens);
    the judge decides on these facts."""
    import torch

    net, cfg = vanilla_model(ctx, sizes)
    facts = {"type": type(net).__name__, "is_gpt": isinstance(net, ctx.student("model").GPT),
             "perceiver": bool(getattr(net, "perceiver", False) or getattr(cfg, "perceiver", False))}
    if facts["is_gpt"]:
        facts.update(blocks=len(net.blocks), block_size=net.get_block_size())
        tokens = torch.randint(0, sizes["vocab"], (2, 10))
        logits, _ = call("the vanilla GPT's forward", ctx.submission_dir, net, tokens)
        facts["logits_shape"] = list(getattr(logits, "shape", ()))
    return facts


def check_vanilla_model(ctx, report, sizes):
    """The judge of observe_vanilla_model: a model.GPT, no perceiver, with the blocks and block size of `sizes`
    and logits of shape (2, 10, vocab)."""
    facts = report if isinstance(report, dict) else {}
    if facts.get("is_gpt") is not True:
        raise Fail(f"initialize_vanilla_model returned a {facts.get('type')}, not a model.GPT")
    if facts.get("perceiver") is not False:
        raise Fail("initialize_vanilla_model built a perceiver; the vanilla variant is the given GPT, built from mconf "
                   "as it is")
    if facts.get("blocks") != sizes["n_layer"] or facts.get("block_size") != sizes["block"]:
        raise Fail("initialize_vanilla_model did not build the model that mconf describes")
    if facts.get("logits_shape") != [2, 10, sizes["vocab"]]:
        raise Fail(f"the model's logits have shape {tuple(facts.get('logits_shape') or ())}")


def check_train(ctx, report):
    """The judge of observe_train: the parameters file was written, holds the model's state dict, and the model
    had trained before it was saved."""
    facts = report if isinstance(report, dict) else {}
    if facts.get("written") is not True:
        raise Fail("train did not write the parameters file at writing_params_path: it trains the model, then saves "
                   "the trained model's parameters there")
    if facts.get("state_saved") is not True:
        raise Fail("train saved something other than the model's state dict at writing_params_path (the trainer "
                   "module has a helper that saves one)")
    if facts.get("trained") is not True:
        raise Fail("train saved the parameters without training: the file must hold the model after the trainer "
                   "has trained it")
