"""Pretrain, finetune or evaluate the character-level GPT of the assignment.

Examples (run.sh wraps these with the course's file names):
  python src/run.py --function pretrain --variant vanilla --writing_params_path vanilla.pretrain.params
  python src/run.py --function finetune --variant vanilla --reading_params_path vanilla.pretrain.params \
      --writing_params_path vanilla.finetune.params --finetune_corpus_path src/data/birth_places_train.tsv
  python src/run.py --function evaluate --variant vanilla --reading_params_path vanilla.finetune.params \
      --eval_corpus_path src/data/birth_dev.tsv --outputs_path vanilla.pretrain.dev.predictions

The course hyperparameters are the defaults; the override flags exist for small runs (smoke tests, CPU demos).
Training writes WRITING_PARAMS_PATH.log.csv (one row per step; python src/plot_losses.py draws it) and, at the
end of the first epoch and then of an epoch at least half a minute after the last save, WRITING_PARAMS_PATH.ckpt:
if a run is interrupted, the same command with --resume continues it.
Where tensorboard is installed, training also writes the course's TensorBoard log into the folder expt/ beside
this file (the course's folder and run names; --tb_expt_name names the run): `tensorboard --logdir expt`, typed
in this folder, shows it.
"""

import argparse
import os
import sys
import time
from datetime import datetime
from pathlib import Path

from kit import course  # the course's model size, bottleneck and learning rates
from kit import decoding, fileio, params_file, parts, training, watch
from submission import dataset, helper, model, trainer, utils

SRC = Path(__file__).resolve().parent

DEFAULT_PRETRAIN_CORPUS = SRC / "data" / course.DATA_FILES["corpus"]
# The course writes its TensorBoard logs to expt/ beside its run.py; $TB_DIR moves them (the tests do)
DEFAULT_TB_DIR = os.environ.get("TB_DIR") or str(SRC / "expt")


def count(least):
    """An argparse type: a whole number of at least `least` (0 epochs would save an untrained model over a
    trained one; 0 heads or a batch of 0 fail deep inside torch)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is less than {least}")
        return value
    return parse


class Once(argparse.Action):
    """A flag that says what a run is (its function, variant and files): given twice, the later one would silently
    win, and ./run.sh passes these from its target before the student's extra flags."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, f"_given_{self.dest}", False):
            parser.error(f"{option_string} is given twice; ./run.sh sets it from the target, so leave it out of the "
                         "extra flags (or run another target)")
        setattr(namespace, f"_given_{self.dest}", True)
        setattr(namespace, self.dest, values)


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--function", required=True, choices=["pretrain", "finetune", "evaluate"], action=Once)
    p.add_argument("--variant", required=True, choices=["vanilla", "perceiver"], action=Once)
    p.add_argument("--pretrain_corpus_path", default=str(DEFAULT_PRETRAIN_CORPUS), action=Once,
                   help="corpus the vocabulary is built from (and pretraining reads); default src/data/wiki.txt")
    p.add_argument("--writing_params_path", action=Once, help="where pretrain/finetune save the parameters")
    p.add_argument("--reading_params_path", action=Once, help="parameters to start finetuning from, or to evaluate")
    p.add_argument("--finetune_corpus_path", action=Once, help="birthplace TSV to finetune on")
    p.add_argument("--eval_corpus_path", action=Once, help="birthplace TSV whose questions are answered")
    p.add_argument("--outputs_path", action=Once, help="where evaluate writes one predicted place per line")
    p.add_argument("--bottleneck_dim", type=int, default=course.BOTTLENECK_DIM)
    p.add_argument("--pretrain_lr", type=float, default=course.PRETRAIN_LR)
    p.add_argument("--finetune_lr", type=float, default=course.FINETUNE_LR)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cuda, mps or cpu (default: the fastest available)")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the model for training (the course's flag; ./run.sh TARGET compile)")
    p.add_argument("--no-compile", dest="compile", action="store_false", help="train uncompiled (the default)")
    p.add_argument("--backend", default="inductor",
                   help="torch.compile's backend with --compile (the course's: inductor, aot_eager or cudagraphs)")
    p.add_argument("--tb_expt_name", default="run",
                   help="the run's name in its TensorBoard log folder (the course's flag; default: run)")
    p.add_argument("--tb_dir", default=DEFAULT_TB_DIR,
                   help="where TensorBoard logs go, one folder per run, when tensorboard is installed "
                        "(default: expt/ beside run.py, or $TB_DIR)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted pretrain/finetune from WRITING_PARAMS_PATH.ckpt (written at the end "
                        "of an epoch, at most every half minute; removed once the params are saved); run with "
                        "the same flags as before")
    small = p.add_argument_group("overrides for small runs (default: the course's values)")
    small.add_argument("--max_epochs", type=count(1))
    small.add_argument("--batch_size", type=count(1))
    small.add_argument("--num_workers", type=count(0))
    small.add_argument("--n_layer", type=count(1), default=course.MODEL["n_layer"])
    small.add_argument("--n_head", type=count(1), default=course.MODEL["n_head"])
    small.add_argument("--n_embd", type=count(1), default=course.MODEL["n_embd"])
    small.add_argument("--block_size", type=count(2), default=course.MODEL["block_size"])
    small.add_argument("--dropout", type=float, help="all three dropout rates (course: 0.1)")
    small.add_argument("--precision", choices=training.PRECISIONS, default="auto",
                       help="how training computes (weights and loss stay fp32); auto: on a GPU the course's "
                            "numerics (fp32 without TF32, the attention written out, the course's AdamW), as the "
                            "course's own code computes; on a CPU bf16 autocast where it computes bf16 natively "
                            "(AVX512-BF16 or AMX), else fp32.  fp32 and bf16: that precision, with the course's "
                            "numerics on a GPU.  fast: a GPU's fast path (bf16 where it computes bf16 natively, "
                            "fused attention kernels, fused AdamW, TF32), faster but not yet shown to learn there; "
                            "auto on a CPU")
    small.add_argument("--no_progress", action="store_true", help="hide the progress bar")
    return p


class UserError(Exception):
    """Something the user can fix (a path, a file's contents, a flag): one sentence, exit status 2."""


def fail(message, status=2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def require(args, *names):
    for name in names:
        if getattr(args, name) is None:
            raise UserError(f"--function {args.function} needs --{name}")


def require_file(path, what, hint="check the path"):
    if not Path(path).is_file():
        raise UserError(f"{what} {path} does not exist; {hint}")


def require_lines(path, what):
    """The non-blank lines of a text file; a file with none is a user error, not an empty training run."""
    lines = [line for line in Path(path).read_text(encoding="utf-8").split("\n") if line.strip()]
    if not lines:
        raise UserError(f"{what} {path} has no lines; pass a file with one example per line")
    return lines


def require_writable(path, flag):
    """Checked before any training, so that hours of training never end in a file that cannot be written."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"--{flag} {path} is a directory; pass a file name, e.g. {p / 'out'}")
    folder = p.resolve().parent
    if not folder.is_dir():
        raise UserError(f"--{flag} {path}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK):  # a read-only mount, or another user's folder
        raise UserError(f"--{flag} {path}: the folder {folder} is not writable; write somewhere else "
                        "(./run.sh: set OUT_DIR)")


def check_options(args):
    """Every user error that can be seen before the model exists, each as one sentence."""
    needed = {"pretrain": ["writing_params_path"],
              "finetune": ["writing_params_path", "finetune_corpus_path"],
              "evaluate": ["reading_params_path", "eval_corpus_path", "outputs_path"]}[args.function]
    require(args, *needed)
    if args.function != "evaluate":
        check_resume(args)
    elif args.resume:
        raise UserError("--resume applies to pretrain and finetune, not evaluate")
    if args.compile and args.function != "evaluate":
        problem = training.compile_problem(trainer.pick_device(args.device), args.backend)
        if problem is not None:
            raise UserError(problem)
    if args.n_embd % args.n_head:
        raise UserError(f"--n_embd {args.n_embd} must be a multiple of --n_head {args.n_head}: each head gets an "
                        "equal share of the embedding")
    if args.variant == "perceiver" and not 1 <= args.bottleneck_dim <= args.block_size:
        raise UserError(f"--bottleneck_dim {args.bottleneck_dim} must be between 1 and the block size "
                        f"{args.block_size}: the bottleneck is at most as long as the sequence it summarises")
    data_hint = "pass the right path (./run.sh reads src/data/ or $DATA_DIR)"
    require_file(args.pretrain_corpus_path, "pretraining corpus", data_hint)
    for name in ("finetune_corpus_path", "eval_corpus_path"):
        if getattr(args, name) is not None:
            require_file(getattr(args, name), name.replace("_path", "").replace("_", " "), data_hint)
    if args.reading_params_path is not None:
        require_file(args.reading_params_path, "parameter file",
                     "train it first (./run.sh with no target lists the targets)")
    for name in ("writing_params_path", "outputs_path"):
        if getattr(args, name) is not None:
            require_writable(getattr(args, name), name)


def check_data(args, vocab):
    """The TSVs parse, and every character is in the vocabulary (the given NameDataset says what is wrong with
    a finetuning file, check_eval_file with an eval file): checked here, before student code runs, so that a
    ValueError raised later is a bug to see with its traceback, not a user error."""
    if args.finetune_corpus_path is not None:
        require_lines(args.finetune_corpus_path, "finetune corpus")
        try:
            dataset.NameDataset(Path(args.finetune_corpus_path).read_text(encoding="utf-8"), vocab)
        except ValueError as e:
            raise UserError(f"{args.finetune_corpus_path}: {e}") from None
    if args.eval_corpus_path is not None:
        require_lines(args.eval_corpus_path, "eval corpus")
        check_eval_file(args.eval_corpus_path, vocab)


def check_eval_file(path, vocab):
    """Every question of an eval TSV is made of the vocabulary's characters, and either every line has an answer
    or none has (the test set's are held out; utils.evaluate_places decides by the first line): each problem
    named with its line, before the model answers anything."""
    lines = [(n, line.split("\t")) for n, line in enumerate(fileio.read_lines(path), 1) if line.strip()]
    for n, fields in lines:
        stray = next((c for c in fields[0] if c not in vocab.stoi), None)
        if stray is not None:
            raise UserError(f"{path} line {n} has the character {stray!r}, which the pretraining corpus does not: "
                            "remove it from the file, or pass the corpus the model was pretrained on with "
                            "--pretrain_corpus_path")
    if len(lines[0][1]) > 1:
        unanswered = next((n for n, fields in lines if len(fields) < 2 or not fields[1]), None)
        if unanswered is not None:
            raise UserError(f"{path} line {unanswered} has no place after a tab, where its first line has one: "
                            "give every line its place, or none")


def check_params(args, net):
    """The parameter file is readable and fits this model (corpus, variant, size), before any training.
    A file from the course's code, which also holds the attention masks, fits: the model is told to keep
    its own masks when finetune loads the file."""
    if args.reading_params_path is not None:
        try:
            state = params_file.read_params(args.reading_params_path)
        except ValueError as e:
            raise UserError(str(e)) from None
        problem = params_file.params_problem(net, state, args.reading_params_path)
        if problem is not None:
            raise UserError(problem)
        params_file.keep_own_masks(net)


def build_model(args, vocab_size):
    extra = {}
    if args.dropout is not None:
        extra = dict(embd_pdrop=args.dropout, resid_pdrop=args.dropout, attn_pdrop=args.dropout)
    mconf = model.GPTConfig(vocab_size, args.block_size, n_layer=args.n_layer, n_head=args.n_head,
                            n_embd=args.n_embd, **extra)
    return parts.new_model(helper, args.variant, mconf, args.bottleneck_dim)


def apply_overrides(tconf, args):
    """Small-run overrides; everything else stays as the helper set it (the course's values), except that the
    course's DataLoader workers (4) are capped at the cores this machine gives the run (training.fit_workers)."""
    for name in ("max_epochs", "batch_size", "num_workers"):
        if getattr(args, name) is not None:
            setattr(tconf, name, getattr(args, name))
    if args.num_workers is None:
        tconf.num_workers = training.fit_workers(tconf.num_workers)
    tconf.show_progress = not args.no_progress


def check_resume(args):
    """--resume with no checkpoint, or a fresh run that would overwrite one: refused before any work."""
    ckpt = Path(f"{args.writing_params_path}.ckpt")
    if args.resume and not ckpt.is_file():
        raise UserError(f"--resume: there is no checkpoint {ckpt} to continue from; run without --resume to start over")
    if not args.resume and ckpt.is_file():
        raise UserError(f"{ckpt} holds an interrupted run: add --resume to continue it, or delete it to start over")


def tensorboard_log_dir(args):
    """The course's TensorBoard folder for this run:
    <tb_dir>/<function>/<tb_expt_name>_<variant>_<bottleneck>_pt_lr_<lr>_ft_lr_<lr>_<date-time>."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    name = (f"{args.tb_expt_name}_{args.variant}_{args.bottleneck_dim}_pt_lr_{args.pretrain_lr:f}_"
            f"ft_lr_{args.finetune_lr:f}_{stamp}")
    return Path(args.tb_dir) / args.function / name


def run_training(args, result, name, part, device):
    tconf, trainer_obj = parts.training_pair(result, name, part)
    apply_overrides(tconf, args)
    numerics = training.place(trainer_obj, device, args.precision, compile=args.compile, backend=args.backend)
    # the checkpoint (for --resume), the loss log and the watch on the run's learning live beside the params,
    # hooked in as callbacks so that the course's signatures stay as they are
    checkpoint = Path(f"{args.writing_params_path}.ckpt")
    training.add_run_callbacks(trainer_obj, checkpoint_path=checkpoint, resume=args.resume,
                               log_path=f"{args.writing_params_path}.log.csv",
                               hint=numerics_hint(args, numerics, device))
    start = time.time()
    try:
        parts.trained(helper.train, trainer_obj.model, args.writing_params_path, trainer_obj)
    except training.CheckpointError as e:  # a corrupt or mismatched checkpoint given to --resume
        raise UserError(str(e)) from None
    except watch.TrainingStopped as e:  # the loss or the parameters stopped being numbers
        kept = f"; {checkpoint} holds the last good epoch, which --resume continues" if checkpoint.is_file() else ""
        fail(f"{e}{kept}", status=3)
    print(f"saved {args.writing_params_path} ({time.time() - start:.0f} s)")
    # the params are the run's result now; the checkpoint would only make the next run refuse to start
    checkpoint.unlink(missing_ok=True)


def numerics_hint(args, numerics, device):
    """What to try when a run's loss stops being a number or stays on the plateau, by the numerics it ran with."""
    if args.precision == "fast" and device.type == "cuda":
        return "--precision fast is not yet shown to learn on a GPU: train with the default --precision"
    if numerics.precision == "bf16":
        return "try --precision fp32"
    return ""


def evaluate(args, net, vocab, device):
    params_file.load_params(net, args.reading_params_path)
    net.eval()
    questions = decoding.read_questions(args.eval_corpus_path)
    start = time.time()
    # batched greedy decoding: the same predictions as the course's loop, one question at a time
    predictions = decoding.predict_places(net, questions, vocab, device)
    if not args.no_progress:
        print(f"answered {len(questions)} questions in {time.time() - start:.1f} s")
    decoding.write_predictions(args.outputs_path, predictions)
    if not decoding.has_answers(args.eval_corpus_path):  # asked first: evaluate_places would say it too
        print(f"Predictions written to {args.outputs_path}; {args.eval_corpus_path} has no answers, so no accuracy.")
        return
    total, correct = utils.evaluate_places(args.eval_corpus_path, predictions)
    print(f"Correct: {correct:.0f} out of {total:.0f}: {correct / total * 100:.2f}%")


def main(argv=None):
    args = build_parser().parse_args(argv)
    utils.set_seed(args.seed)
    # Two kinds of error, two treatments.  A user error (a path, a file's contents, a flag) is one
    # sentence and exit status 2, found before anything is written.  An empty student region is one
    # sentence naming the function to write, exit status 1.  Anything else raised while the student's
    # code runs is a bug in it: it keeps its traceback.
    try:
        check_options(args)
        text = Path(args.pretrain_corpus_path).read_text(encoding="utf-8")
        if not text.strip():
            raise UserError(f"pretraining corpus {args.pretrain_corpus_path} has no lines; pass the corpus "
                            "the model is pretrained on")
        try:
            pretrain_dataset = dataset.CharCorruptionDataset(text, args.block_size)
        except ValueError as e:  # given code: a reserved character in the corpus
            raise UserError(str(e)) from None
        check_data(args, pretrain_dataset)
        net = build_model(args, pretrain_dataset.vocab_size)
        check_params(args, net)
        device = trainer.pick_device(args.device)  # the one choice of device, for training or evaluation
        net.to(device)
        # the course's TensorBoard writer, handed to helper.py as the course does (None without tensorboard)
        writer = None if args.function == "evaluate" else training.tensorboard_writer(tensorboard_log_dir(args))
        try:
            if args.function == "pretrain":
                parts.check_corruption(pretrain_dataset)
                result = helper.pretrain(pretrain_dataset, args.block_size, net, args.pretrain_lr, writer)
                run_training(args, result, "pretrain", "f", device)
            elif args.function == "finetune":
                result = helper.finetune(args.reading_params_path, args.finetune_corpus_path, pretrain_dataset,
                                         args.block_size, net, args.finetune_lr, writer)
                run_training(args, result, "finetune", "c", device)
            else:
                evaluate(args, net, pretrain_dataset, device)
        finally:
            if writer is not None:
                writer.close()  # the last steps' events reach the file
    except UserError as e:
        fail(str(e))
    except parts.NotImplementedPart as e:
        fail(str(e), status=1)


if __name__ == "__main__":
    main()
