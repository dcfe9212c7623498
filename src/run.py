"""Pretrain, finetune or evaluate the character-level GPT of the assignment.

Examples (run.sh wraps these with the course's file names):
  python src/run.py --function pretrain --variant vanilla --writing_params_path vanilla.pretrain.params
  python src/run.py --function finetune --variant vanilla --reading_params_path vanilla.pretrain.params \
      --writing_params_path vanilla.finetune.params --finetune_corpus_path src/data/birth_places_train.tsv
  python src/run.py --function evaluate --variant vanilla --reading_params_path vanilla.finetune.params \
      --eval_corpus_path src/data/birth_dev.tsv --outputs_path vanilla.pretrain.dev.predictions

The course hyperparameters are the defaults; the override flags exist for small runs (smoke tests, CPU demos).
Training writes WRITING_PARAMS_PATH.log.csv (one row per step; python tools/plot_losses.py draws it) and, after
every epoch, WRITING_PARAMS_PATH.ckpt: if a run is interrupted, the same command with --resume continues it.
"""

import argparse
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent
sys.path.insert(0, str(SRC))

from submission import dataset, helper, model, trainer, utils  # noqa: E402

DEFAULT_PRETRAIN_CORPUS = SRC / "data" / "wiki.txt"

# Course model configuration: 4 layers, 8 heads, width 256, blocks of 128 characters.
COURSE_MODEL = dict(n_layer=4, n_head=8, n_embd=256, block_size=128)


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--function", required=True, choices=["pretrain", "finetune", "evaluate"])
    p.add_argument("--variant", required=True, choices=["vanilla", "perceiver"])
    p.add_argument("--pretrain_corpus_path", default=str(DEFAULT_PRETRAIN_CORPUS),
                   help="corpus the vocabulary is built from (and pretraining reads); default src/data/wiki.txt")
    p.add_argument("--writing_params_path", help="where pretrain/finetune save the parameters")
    p.add_argument("--reading_params_path", help="parameters to start finetuning from, or to evaluate")
    p.add_argument("--finetune_corpus_path", help="birthplace TSV to finetune on")
    p.add_argument("--eval_corpus_path", help="birthplace TSV whose questions are answered")
    p.add_argument("--outputs_path", help="where evaluate writes one predicted place per line")
    p.add_argument("--bottleneck_dim", type=int, default=32)
    p.add_argument("--pretrain_lr", type=float, default=6e-3)
    p.add_argument("--finetune_lr", type=float, default=6e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cuda, mps or cpu (default: the fastest available)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted pretrain/finetune from WRITING_PARAMS_PATH.ckpt (written after "
                        "every epoch, removed once the params are saved); run with the same flags as before")
    small = p.add_argument_group("overrides for small runs (default: the course's values)")
    small.add_argument("--max_epochs", type=int)
    small.add_argument("--batch_size", type=int)
    small.add_argument("--num_workers", type=int)
    small.add_argument("--n_layer", type=int, default=COURSE_MODEL["n_layer"])
    small.add_argument("--n_head", type=int, default=COURSE_MODEL["n_head"])
    small.add_argument("--n_embd", type=int, default=COURSE_MODEL["n_embd"])
    small.add_argument("--block_size", type=int, default=COURSE_MODEL["block_size"])
    small.add_argument("--dropout", type=float, help="all three dropout rates (course: 0.1)")
    small.add_argument("--precision", choices=["auto", "bf16", "fp32"], default="auto",
                       help="training precision; auto: bf16 autocast on GPUs that compute it natively (compute "
                            "capability 8.0+, not T4/V100) and on CPUs with native bf16 (AVX512-BF16 or AMX), "
                            "else fp32 (weights and loss stay fp32)")
    small.add_argument("--compile", action="store_true",
                       help="torch.compile the model for training (CUDA only: on a CPU it was measured slower)")
    small.add_argument("--no_progress", action="store_true", help="hide the progress bar")
    return p


def fail(message, status=2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def require(args, *names):
    for name in names:
        if getattr(args, name) is None:
            fail(f"--function {args.function} needs --{name}")


def require_file(path, what, hint="check the path"):
    if not Path(path).is_file():
        fail(f"{what} {path} does not exist; {hint}")


def implemented(value, name):
    if value is None:
        fail(f"{name} in src/submission/helper.py returned None: implement it first", status=1)
    return value


def build_model(args, vocab_size):
    extra = {}
    if args.dropout is not None:
        extra = dict(embd_pdrop=args.dropout, resid_pdrop=args.dropout, attn_pdrop=args.dropout)
    mconf = model.GPTConfig(vocab_size, args.block_size, n_layer=args.n_layer, n_head=args.n_head,
                            n_embd=args.n_embd, **extra)
    if args.variant == "vanilla":
        return implemented(helper.initialize_vanilla_model(mconf), "initialize_vanilla_model")
    return implemented(helper.initialize_perceiver_model(mconf, args.bottleneck_dim), "initialize_perceiver_model")


def apply_overrides(tconf, args):
    """Small-run overrides; everything else stays as the helper set it (the course's values)."""
    for name in ("max_epochs", "batch_size", "num_workers", "device"):
        if getattr(args, name) is not None:
            setattr(tconf, name, getattr(args, name))
    tconf.precision = args.precision
    tconf.compile = args.compile
    tconf.show_progress = not args.no_progress


def check_resume(args):
    """Refuse before any work: --resume with no checkpoint, or a fresh run that would overwrite one."""
    ckpt = Path(f"{args.writing_params_path}.ckpt")
    if args.resume and not ckpt.is_file():
        fail(f"--resume: there is no checkpoint {ckpt} to continue from; run without --resume to start over")
    if not args.resume and ckpt.is_file():
        fail(f"{ckpt} holds an interrupted run: add --resume to continue it, or delete it to start over")


def run_training(args, result, name):
    tconf, trainer_obj = implemented(result, name)
    apply_overrides(tconf, args)
    # resuming and the loss log live beside the params; set here so the course's signatures stay as they are
    tconf.checkpoint_path = f"{args.writing_params_path}.ckpt"
    tconf.resume = args.resume
    tconf.log_path = f"{args.writing_params_path}.log.csv"
    trainer_obj.device = trainer.pick_device(tconf.device)
    trainer_obj.model.to(trainer_obj.device)
    if args.compile and trainer_obj.device.type != "cuda":
        print(f"note: --compile only applies on CUDA; training on {trainer_obj.device.type} runs uncompiled",
              file=sys.stderr)
    params = Path(args.writing_params_path)
    before = params.stat().st_mtime_ns if params.is_file() else None
    start = time.time()
    try:
        helper.train(trainer_obj.model, args.writing_params_path, trainer_obj)
    except trainer.CheckpointError as e:
        fail(str(e))
    print(f"saved {args.writing_params_path} ({time.time() - start:.0f} s)")
    # the params are the run's result now; the checkpoint would only make the next run refuse to start
    if params.is_file() and params.stat().st_mtime_ns != before:
        Path(tconf.checkpoint_path).unlink(missing_ok=True)


def evaluate(args, net, vocab):
    device = trainer.pick_device(args.device)
    net.to(device)
    utils.load_params(net, args.reading_params_path)
    net.eval()
    questions = utils.read_questions(args.eval_corpus_path)
    start = time.time()
    # batched greedy decoding: the same predictions as utils.predict_place one question at a time
    predictions = utils.predict_places(net, questions, vocab, device)
    if not args.no_progress:
        print(f"answered {len(questions)} questions in {time.time() - start:.1f} s")
    utils.write_lines_atomic(args.outputs_path, predictions)
    total, correct = utils.evaluate_places(args.eval_corpus_path, predictions)
    if total > 0:
        print(f"Correct: {correct:.0f} out of {total:.0f}: {correct / total * 100:.2f}%")
    else:
        print(f"Predictions written to {args.outputs_path}; no answers provided, so no accuracy.")


def main(argv=None):
    args = build_parser().parse_args(argv)
    utils.set_seed(args.seed)
    needed = {"pretrain": ["writing_params_path"],
              "finetune": ["writing_params_path", "finetune_corpus_path"],
              "evaluate": ["reading_params_path", "eval_corpus_path", "outputs_path"]}[args.function]
    require(args, *needed)
    if args.function != "evaluate":
        check_resume(args)
    elif args.resume:
        fail("--resume applies to pretrain and finetune, not evaluate")
    data_hint = "pass the right path, or regenerate the built-in data with python src/data/generate.py"
    require_file(args.pretrain_corpus_path, "pretraining corpus", data_hint)
    for name in ("finetune_corpus_path", "eval_corpus_path"):
        if getattr(args, name) is not None:
            require_file(getattr(args, name), name.replace("_path", "").replace("_", " "), data_hint)
    if args.reading_params_path is not None:
        require_file(args.reading_params_path, "parameter file",
                     "train it first (./run.sh with no target lists the targets)")

    text = Path(args.pretrain_corpus_path).read_text(encoding="utf-8")
    pretrain_dataset = dataset.CharCorruptionDataset(text, args.block_size)
    net = build_model(args, pretrain_dataset.vocab_size)
    if args.device:
        net.to(args.device)
    try:
        if args.function == "pretrain":
            result = helper.pretrain(pretrain_dataset, args.block_size, net, args.pretrain_lr)
            run_training(args, result, "pretrain")
        elif args.function == "finetune":
            result = helper.finetune(args.reading_params_path, args.finetune_corpus_path, pretrain_dataset,
                                     args.block_size, net, args.finetune_lr)
            run_training(args, result, "finetune")
        else:
            evaluate(args, net, pretrain_dataset)
    except ValueError as e:  # user-caused problems (wrong variant, malformed TSV, unknown character)
        fail(str(e))


if __name__ == "__main__":
    main()
