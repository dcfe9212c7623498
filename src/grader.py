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
A basic test whose description says "counts with" a hidden test (the shapes and causality of a block) earns its
point at grading time only if that hidden comparison finds that the same code computes a block of the kind from
the same weights (the handout's, or one with other layer norms, residual or MLP).

Each test runs in a separate process with a time limit: code that fails to import, raises, loops forever or
prints megabytes fails only the tests that touch it, and the grader always reaches the summary (exit status 0).
Points are in points.json, next to this file, together with the accuracy thresholds of the prediction tests.
"""

import sys

from kit import course  # the course's facts: model size, targets, deliverables
from checks import predictions
import graderUtil
from graderUtil import (  # noqa: F401  (PENDING_MESSAGE .. select_thresholds: for the instructor's test suite)
    PENDING_MESSAGE, REGISTRY, Fail, grader_judge, grader_test, load_points, main, normalized_sha256, seed_everything,
    select_thresholds)
from checks.dataset import (check_masked_lengths, check_padding, check_random, check_rearrangement, check_shift,
                            check_truncation, check_vocabulary, corruption_dataset, observe, observe_whole,
                            random_lines)
from checks.perceiver import (build_block, changed_rows, changes, check_basis, check_causal_perceiver,
                              check_down_batch, check_perceiver_models, observe_basis, observe_causal_perceiver,
                              observe_down_shapes, observe_perceiver_models, perceiver_config, run_down, run_up)
from checks.same_weights import compare_block, compare_vanilla, report_block, report_vanilla
from checks.training import (WORKERS, check_train, check_vanilla_model, finetune_case, finetune_judge, judge_training,
                             pretrain_case, train_facts, vanilla_model_facts)

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
ANSWERS_FILE = "birth_test.tsv"  # held out: present only where submissions are graded
GOLD_FILES = {"dev": course.DATA_FILES["dev"], "test": ANSWERS_FILE}  # the answers each prediction is scored on

# What a grading copy needs beside the student's package and the data: this script, the packages and modules of
# ours it imports (at its top or inside a test; a package, "grading/", is copied whole), and the points table.
# The one list of them: a worker imports these modules before it drops its privileges (the grader's folder is out
# of its reach afterwards), the instructor's class grading copies exactly these, the Gradescope bundle is refused
# when it lacks one, and the instructor's test suite checks the list against the imports it finds in these files.
# Of kit/ only course.py: its other modules import the student's package.
GRADING_FILES = ["grader.py", "graderUtil.py", "grading/", "checks/", "attention_simulation.py", "kit/__init__.py",
                 "kit/course.py", "points.json"]

graderUtil.configure(description=__doc__, student_deps=STUDENT_DEPS, held_out=[ANSWERS_FILE],
                     dataset_file="birth_dev.tsv", grading_files=GRADING_FILES)

# ----------------------------------------------------------------------------------------------------------
# The tests, in the handout's order.  They run in worker processes; torch is imported inside them (the parent
# never imports it).  A test runs beside the student's code and reports what it computed, as data; its judge,
# a process that never imports student code, decides on that data.  The checks they lean on are in the
# modules imported above; two kinds of test are made whole from another module's check:


def _register_predictions(tid, fname, description):
    """A prediction file's test (checks/predictions.py): beside the student's code, only that the file is there
    with one line per question; the judge scores it against the held-out answers."""
    # the judge needs the reference's code: the course's model is built from it
    grader_test(tid, description, timeout=60, needs=("answers", "solution"))(predictions.file_test(fname))
    grader_judge(tid)(predictions.file_judge(fname, GOLD_FILES))


# A written check (checks/written.py) runs on the student's attention_exploration.py; the written part's tests
# share one worker (one process for eight quick checks).
WRITTEN = dict(timeout=20, extra_credit=True, group="written")


def _register_written(tid, description, check, rule):
    """Beside the student's code the check runs on a Recorder of attention_exploration.py and what the student's
    functions returned is reported (a check that fails there fails the test at once); the judge runs the same
    check on a Replay of that report (checks/replay.py), and only its verdict counts."""

    def test(ctx):
        from checks import replay  # next to this file; imports torch, so only inside a worker
        from checks import written

        recorder = replay.Recorder(ctx.student("attention_exploration"))
        getattr(written, check)(recorder)
        ctx.report(recorder.calls)

    def judge(ctx, calls):
        from checks import replay
        from checks import written

        getattr(written, check)(replay.Replay(calls))

    test.__doc__ = rule
    grader_test(tid, description, **WRITTEN)(test)
    grader_judge(tid)(judge)


# What the student's process reports can be anything its code writes.  A basic test that checks properties
# (shapes, causality) which zero tensors also have counts only with the hidden comparison that checks the same
# code's values against the reference at the same weights (vouched_by; without a reference, on a student's
# machine, it stands alone).  A comparison that fails on a genuine block (a cross-attention block from these
# weights with other layer norms, residual or MLP: graderUtil.Mismatch) costs its own point and still vouches.
# What finetune, pretrain and train call and with which numbers has nothing to compare: those tests say that they
# judge what the student's process reports.
AS_REPORTED = "(judged on what your code's process reports)"


# -- part (c): the vanilla model, finetune and train -------------------------------------------------------


C0_SIZES = dict(vocab=40, block=32, n_layer=3, n_head=2, n_embd=16)  # run on 2 sequences of 10 tokens


@grader_test("1c-0-basic", "initialize_vanilla_model returns a vanilla GPT built from mconf (counts with "
             "1c-0-hidden)", timeout=30, vouched_by=("1c-0-hidden",))
def test_1c_0(ctx):
    ctx.report(vanilla_model_facts(ctx, C0_SIZES))


@grader_judge("1c-0-basic")
def judge_1c_0(ctx, facts):
    """initialize_vanilla_model(mconf) is GPT(mconf): the model that mconf describes (3 blocks, block size 32,
    logits of shape (2, 10, 40) on 2 sequences of 10 tokens), not a perceiver."""
    check_vanilla_model(facts, C0_SIZES)


FINETUNE_BLOCK = 128  # the block size run.py passes (course.MODEL)


@grader_test("1c-1-basic", "finetune without pretrained parameters: the TrainerConfig and Trainer of the handout "
             f"{AS_REPORTED}", timeout=30)
def test_1c_1(ctx):
    finetune_case(ctx, FINETUNE_BLOCK, pretrained=False)


@grader_judge("1c-1-basic")
def judge_1c_1(ctx, facts):
    """Without pretrained parameters, called with the default finetune_lr (as the course's grader does): 75
    epochs, batch 256, learning rate 6e-4, lr decay, 512*20 warmup tokens, 200*len(pretrain_dataset)*block_size
    final tokens, any num_workers (AnyWorkers); the Trainer trains a NameDataset of the training file; finetune
    returns (tconf, trainer_obj) without training."""
    finetune_judge(ctx, facts, dict(max_epochs=75, batch_size=256, learning_rate=6e-4, lr_decay=True,
                                     warmup_tokens=512 * 20, num_workers=WORKERS), FINETUNE_BLOCK, pretrained=False)


@grader_test("1c-2-basic", f"train runs the trainer, then saves the trained parameters {AS_REPORTED}", timeout=30)
def test_1c_2(ctx):
    ctx.report(train_facts(ctx, epochs=2))


@grader_judge("1c-2-basic")
def judge_1c_2(ctx, facts):
    """train(model, path, trainer_obj) calls trainer_obj.train() and then saves the model's state dict."""
    check_train(facts)


VANILLA_HIDDEN = dict(vocab=256, block=128, n_layer=4, n_head=8, n_embd=256)  # 2 sequences of 100 tokens


@grader_test("1c-0-hidden", "the vanilla model computes what the reference computes (same weights)", timeout=30,
             needs=("solution",))
def test_1c_0_hidden(ctx):
    """initialize_vanilla_model gives the reference's model: same parameter shapes, same logits once both hold
    the same weights.  Here the student's logits with weights set by shape; the judge compares."""
    report_vanilla(ctx, VANILLA_HIDDEN)


@grader_judge("1c-0-hidden")
def judge_1c_0_hidden(ctx, report):
    compare_vanilla(ctx, report, VANILLA_HIDDEN)


# -- part (d): the London baseline and the prediction files ------------------------------------------------
#
# A prediction file earns its accuracy points only with the params that produced it: the judge loads them into
# the course's model and decodes every question itself, without the student's code (checks/predictions.py).


@grader_test("1d-0-basic", "London baseline: accuracy on dev of always answering the most common training place",
             timeout=30, info=True, uses_torch=False)
def test_1d_london(ctx):
    """No student code: the number is the judge's, from the data alone."""


@grader_judge("1d-0-basic")
def judge_1d_london(ctx, report):
    return predictions.london_baseline(ctx, "birth_places_train.tsv", "birth_dev.tsv")


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
# Every test seeds random, NumPy and torch alike (seed_everything), so a given implementation always gets the
# same verdict; each number a judge checks keeps a correct implementation's false failures below 1e-6 even
# without the seed (the bounds are in checks/dataset.py).  A test only draws examples and reports them as data
# (observe); the judge reads them (checks.dataset's check_* functions, given the numbers the test drew with).


E0_LINES = random_lines(1, [30, 70, 12, 200])


@grader_test("1e-0-basic", "vocabulary (PAD 0, MASK 1, then sorted characters); __getitem__ returns two "
             "LongTensors of length block_size-1 or block_size", timeout=20)
def test_1e_0(ctx):
    ds = corruption_dataset(ctx, E0_LINES, 61)  # a block size that is no multiple of 4 or 8: int() bounds, not floats
    seed_everything(10)
    ctx.report(observe(ctx, ds, range(len(E0_LINES))))


@grader_judge("1e-0-basic")
def judge_1e_0(ctx, report):
    """Id 0 is PAD_CHAR (□), id 1 MASK_CHAR (⁇), then the corpus's distinct characters in sorted order;
    every example is a pair of LongTensors of length block_size - 1 or block_size (both readings of the spec)."""
    check_vocabulary(report, 61, E0_LINES)


E1_DRAWS = {128: 4000, 50: 2000}  # block size: examples of a line of 600 characters


@grader_test("1e-1-basic", "truncation: length drawn from 4..int(block_size*3/4) (up to 7/8 accepted), covering "
             "the whole range", timeout=20)
def test_1e_1(ctx):
    line = random_lines(2, [600])
    reports = {}
    for block, draws in E1_DRAWS.items():
        ds = corruption_dataset(ctx, line, block)
        seed_everything(11)
        reports[block] = observe(ctx, ds, [0] * draws)
    ctx.report(reports)


@grader_judge("1e-1-basic")
def judge_1e_1(ctx, report):
    """A long line is cut to a random length: every length of 4..int(block_size*3/4) occurs, none is below 4
    or above int(block_size*7/8) (the older variant's bound, which the course also accepts).  Block size 50 is the
    course's grader's: no multiple of 4, so a bound written as a float (37.5) cannot be drawn.  False failures: see
    checks/dataset.py."""
    check_truncation(report, E1_DRAWS)


E2_LINES = random_lines(3, [5, 9, 17, 40, 64, 90, 111, 113, 150, 300, 500])
E2_WHOLE = random_lines(4, [40])[0]  # a line that draws keep whole with block size 128


@grader_test("1e-2-basic", "rearrangement prefix+MASK+suffix+MASK+masked(+MASK) rebuilds the line's start; the "
             "masked span's start varies", timeout=60)  # a correct reading needs ~37,000 draws: 6-16 s measured
def test_1e_2(ctx):
    ds = corruption_dataset(ctx, E2_LINES, 128)
    seed_everything(12)
    samples = observe(ctx, ds, [k % len(E2_LINES) for k in range(1100)])
    # where the masked span starts must vary (draws that keep a line of 40 characters whole, see above)
    ds = corruption_dataset(ctx, [E2_WHOLE], 128)
    seed_everything(13)
    ctx.report({"samples": samples, "whole": observe_whole(ctx, ds, E2_WHOLE)})


@grader_judge("1e-2-basic")
def judge_1e_2(ctx, report):
    """x reads prefix ⁇ suffix ⁇ masked ⁇ then PADs, prefix + masked + suffix is the line's beginning (short
    lines too), and where the masked span starts is random."""
    check_rearrangement(report, E2_LINES, 1100, E2_WHOLE)


@grader_test("1e-3-basic", "padding: PAD_CHARs only at the end, up to block_size", timeout=20)
def test_1e_3(ctx):
    lines = random_lines(5, [6, 20, 50, 100, 120, 400])
    reports = {}
    for block in (128, 50):
        ds = corruption_dataset(ctx, lines, block)
        seed_everything(14)
        reports[block] = observe(ctx, ds, [k % len(lines) for k in range(600)])
    ctx.report(reports)


@grader_judge("1e-3-basic")
def judge_1e_3(ctx, report):
    """PAD_CHARs fill the string up to block_size and appear nowhere else."""
    check_padding(report, (128, 50), 600)


@grader_test("1e-4-basic", "x and y: y[i] is the character that follows x[i]", timeout=20)
def test_1e_4(ctx):
    lines = random_lines(6, [10, 60, 130, 400])
    ds = corruption_dataset(ctx, lines, 128)
    seed_everything(15)
    ctx.report(observe(ctx, ds, [k % len(lines) for k in range(400)]))


@grader_judge("1e-4-basic")
def judge_1e_4(ctx, report):
    """x = masked_string[:-1], y = masked_string[1:]: y is x shifted by one, and ends in a PAD_CHAR."""
    check_shift(report, 400)


@grader_test("1e-5-basic", "masked span: about 1/4 of the truncated length on average, random at every truncated "
             "length, sometimes shorter and sometimes longer than 1/4", timeout=60)  # as 1e-2: up to ~37,000 draws
def test_1e_5(ctx):
    line = random_lines(7, [600])
    ds = corruption_dataset(ctx, line, 128)
    seed_everything(16)
    long_line = observe(ctx, ds, [0] * 4000)
    ds = corruption_dataset(ctx, random_lines(8, [40]), 128)
    seed_everything(17)
    ctx.report({"long": long_line, "whole": observe_whole(ctx, ds, random_lines(8, [40])[0])})


@grader_judge("1e-5-basic")
def judge_1e_5(ctx, report):
    """The masked content is 1/4 of the truncated length n on average (0.15..0.35 over 4000 examples of a long
    line), and its length is random with a chance of being more or less than n/4: over those examples both
    happen at least 5 % of the time, at most lengths n >= 16 it takes more than one value, and on draws that
    keep a line of 40 characters whole, lengths below 10 and above 10 both occur."""
    check_masked_lengths(report, random_lines(7, [600])[0], random_lines(8, [40])[0], draws=4000)


@grader_test("1e-6-basic", "examples are random: drawing one line again gives other examples", timeout=20)
def test_1e_6(ctx):
    lines = random_lines(9, [80, 200, 300])
    ds = corruption_dataset(ctx, lines, 128)
    seed_everything(5)
    ctx.report(observe(ctx, ds, [idx for idx in range(len(lines)) for _ in range(20)]))


@grader_judge("1e-6-basic")
def judge_1e_6(ctx, report):
    """Each draw of a line is a new random example, from whichever generator (random, NumPy, torch)."""
    check_random(report, 3, 20)


# -- part (f): pretraining --------------------------------------------------------------------------------


PRETRAIN_BLOCK = 96  # not the course's 128: final_tokens must use the block size, not a constant 128


@grader_test("1f-0-basic", f"pretrain: the TrainerConfig and Trainer of the handout {AS_REPORTED}", timeout=30)
def test_1f_0(ctx):
    pretrain_case(ctx, PRETRAIN_BLOCK)


@grader_judge("1f-0-basic")
def judge_1f_0(ctx, facts):
    """Called with the default pretrain_lr (as the course's grader does): 650 epochs, batch 128, learning rate
    6e-3, lr decay, 512*20 warmup tokens, 200*len(dataset)*block_size final tokens, any num_workers; the Trainer
    trains on pretrain_dataset itself; pretrain returns (tconf, trainer_obj) without training."""
    facts = facts if isinstance(facts, dict) else {}
    if not isinstance(facts.get("corpus_len"), int):
        raise Fail("the test reported nothing of what pretrain built")
    judge_training(facts, dict(max_epochs=650, batch_size=128, learning_rate=6e-3, lr_decay=True,
                                warmup_tokens=512 * 20, final_tokens=200 * facts["corpus_len"] * PRETRAIN_BLOCK,
                                num_workers=WORKERS), "pretrain", "pretrain")
    if facts.get("trains_on_dataset") is not True:
        raise Fail("pretrain: the Trainer must train on pretrain_dataset itself")


@grader_test("1f-1-basic", "finetune with pretrained parameters: loads them; the TrainerConfig (10 epochs) "
             f"{AS_REPORTED}", timeout=30)
def test_1f_1(ctx):
    finetune_case(ctx, FINETUNE_BLOCK, pretrained=True)


@grader_judge("1f-1-basic")
def judge_1f_1(ctx, facts):
    """With reading_params_path: the model holds the pretrained parameters; 10 epochs, the rest as without
    pretraining (default finetune_lr: learning rate 6e-4)."""
    finetune_judge(ctx, facts, dict(max_epochs=10, batch_size=256, learning_rate=6e-4, lr_decay=True,
                                     warmup_tokens=512 * 20, num_workers=WORKERS), FINETUNE_BLOCK, pretrained=True)


_register_predictions("1f-0-hidden", "vanilla.pretrain.dev.predictions",
                      "vanilla.pretrain.dev.predictions: accuracy threshold")
_register_predictions("1f-1-hidden", "vanilla.pretrain.test.predictions",
                      "vanilla.pretrain.test.predictions: accuracy threshold")


# -- part (g): the perceiver ------------------------------------------------------------------------------
#
# The tests judge what the blocks compute, never what their attributes are called: the basis C is found as
# the one parameter of shape (1, m, n_embd) or (m, n_embd) (m is chosen so that no other layer has that
# shape), the blocks are found in a model by their class (DownProjectBlock, UpProjectBlock, Block: the names
# the handout gives), and a comparison with the reference gives both the same weights by shape alone.  The
# blocks are built from perceiver.perceiver_config: bottleneck_dim m = 8, n_embd 32, 4 heads, block size
# 64, no dropout, where a test names no other numbers.

SHAPES = ((3, 20), (1, 64), (2, 8))  # (B, T) with T >= m = 8; T = m included
# the comparisons of each block with the reference's, which vouch for the basic tests of the whole perceiver
PERCEIVER_COMPARISONS = ("1g-0-hidden", "1g-1-hidden")


G0_CASES = ((8, 32, 4), (16, 48, 3))


@grader_test("1g-0-basic", "DownProjectBlock: (B, T, C) -> (B, m, C) for every T >= m (counts with 1g-0-hidden)",
             timeout=30, vouched_by=("1g-0-hidden",))
def test_1g_0(ctx):
    ctx.report(observe_down_shapes(ctx, G0_CASES, SHAPES))


@grader_judge("1g-0-basic")
def judge_1g_0(ctx, report):
    """The down block maps (B, T, n_embd) to (B, bottleneck_dim, n_embd), each sequence on its own."""
    check_down_batch(report, G0_CASES)


G1_CASES = ((8, 32, 4), (24, 64, 4))


@grader_test("1g-1-basic", "the basis C: a learnable (1, m, n_embd) parameter, Xavier-uniform, used as the query "
             "(counts with 1g-0-hidden)", timeout=30, vouched_by=("1g-0-hidden",))
def test_1g_1(ctx):
    ctx.report(observe_basis(ctx, G1_CASES))


@grader_judge("1g-1-basic")
def judge_1g_1(ctx, report):
    """C is an nn.Parameter of shape (1, m, n_embd) (or (m, n_embd)) drawn by nn.init.xavier_uniform_, and it
    is the query: changing C changes the output."""
    check_basis(report, G1_CASES)


G2_POSITIONS = (0, 3, 7)


@grader_test("1g-2-basic", "DownProjectBlock is causal: bottleneck row j depends only on inputs 0..j (counts with "
             "1g-0-hidden)", timeout=30, vouched_by=("1g-0-hidden",))
def test_1g_2(ctx):
    import torch

    block = build_block(ctx, "DownProjectBlock", perceiver_config(ctx))
    with torch.no_grad():
        ctx.report(changes(ctx, lambda x: run_down(ctx, block, x, 8), [torch.randn(2, 20, 32)], G2_POSITIONS, 0))


@grader_judge("1g-2-basic")
def judge_1g_2(ctx, report):
    """Changing input position t leaves bottleneck rows j < t as they were and changes row t."""
    for t, changed in zip(G2_POSITIONS, changed_rows(report, G2_POSITIONS, (2, 8, 32))):
        if any(changed[:t]):
            raise Fail(f"DownProjectBlock is not causal: changing input position {t} changed bottleneck rows "
                       f"{[j for j in range(t) if changed[j]]}; row j may only depend on inputs 0..j")
        if not changed[t]:
            raise Fail(f"DownProjectBlock: changing input position {t} did not change bottleneck row {t} (the "
                       "bottleneck must attend to the input)")


G3_POSITIONS = (2, 7, 15)


@grader_test("1g-3-basic", "UpProjectBlock: (B, m, C), (B, T, C) -> (B, T, C); the input x gives the queries "
             "(counts with 1g-1-hidden)", timeout=30, vouched_by=("1g-1-hidden",))
def test_1g_3(ctx):
    import torch

    block = build_block(ctx, "UpProjectBlock", perceiver_config(ctx))
    with torch.no_grad():
        for b, t in SHAPES:
            run_up(ctx, block, torch.randn(b, 8, 32), torch.randn(b, t, 32))
        base = [torch.randn(2, 8, 32), torch.randn(2, 20, 32)]
        ctx.report(changes(ctx, lambda y, x: run_up(ctx, block, y, x), base, G3_POSITIONS, 1))


@grader_judge("1g-3-basic")
def judge_1g_3(ctx, report):
    """The up block returns the input's shape, and output row t depends on x only through x[t] (x is the
    query: each position asks the bottleneck for itself)."""
    for t, changed in zip(G3_POSITIONS, changed_rows(report, G3_POSITIONS, (2, 20, 32))):
        if not changed[t] or any(changed[:t] + changed[t + 1:]):
            raise Fail(f"UpProjectBlock: changing x at position {t} changed output rows "
                       f"{[i for i, c in enumerate(changed) if c]}; row t must depend on x at position t only "
                       "(x gives the queries; the bottleneck y gives keys and values)")


G4_POSITIONS = (0, 3, 7)


@grader_test("1g-4-basic", "UpProjectBlock is causal: output row t uses bottleneck rows 0..t only (counts with "
             "1g-1-hidden)", timeout=30, vouched_by=("1g-1-hidden",))
def test_1g_4(ctx):
    import torch

    block = build_block(ctx, "UpProjectBlock", perceiver_config(ctx))
    with torch.no_grad():
        base = [torch.randn(2, 8, 32), torch.randn(2, 20, 32)]
        ctx.report(changes(ctx, lambda y, x: run_up(ctx, block, y, x), base, G4_POSITIONS, 0))


@grader_judge("1g-4-basic")
def judge_1g_4(ctx, report):
    """Changing bottleneck row j leaves output rows t < j as they were and changes row j."""
    for j, changed in zip(G4_POSITIONS, changed_rows(report, G4_POSITIONS, (2, 20, 32))):
        if any(changed[:j]):
            raise Fail(f"UpProjectBlock is not causal: changing bottleneck row {j} changed output rows "
                       f"{[t for t in range(j) if changed[t]]}; row t may only use bottleneck rows 0..t")
        if not changed[j]:
            raise Fail(f"UpProjectBlock ignores the bottleneck: changing its row {j} did not change output "
                       f"row {j}")


G5_BOTTLENECKS = (8, None)  # None: called without bottleneck_dim, whose default is 32
G5_LENGTH = 40  # tokens in the batch


@grader_test("1g-5-basic", "initialize_perceiver_model builds a perceiver: down block, middle blocks at length m, "
             "up block (counts with 1g-0-hidden and 1g-1-hidden)", timeout=30, vouched_by=PERCEIVER_COMPARISONS)
def test_1g_5(ctx):
    ctx.report(observe_perceiver_models(ctx, G5_BOTTLENECKS, G5_LENGTH))


@grader_judge("1g-5-basic")
def judge_1g_5(ctx, report):
    """initialize_perceiver_model(mconf, bottleneck_dim) returns a GPT that runs one DownProjectBlock, its middle
    Blocks on bottleneck_dim positions (32 by default) and one UpProjectBlock back to the input length."""
    check_perceiver_models(report, G5_BOTTLENECKS, G5_LENGTH)


G6_POSITIONS = (3, 8, 20, 63)


@grader_test("1g-6-basic", "the perceiver GPT from initialize_perceiver_model is causal (counts with 1g-0-hidden "
             "and 1g-1-hidden)", timeout=30, vouched_by=PERCEIVER_COMPARISONS)
def test_1g_6(ctx):
    ctx.report(observe_causal_perceiver(ctx, G6_POSITIONS))


@grader_judge("1g-6-basic")
def judge_1g_6(ctx, report):
    """The model runs a DownProjectBlock and an UpProjectBlock (a vanilla GPT is not the perceiver this test
    is about); changing the tokens from position t on changes no logit before t, and changes some logit after."""
    check_causal_perceiver(report, G6_POSITIONS)


@grader_test("1g-7-basic", "finetune a perceiver with pretrained parameters: loads them; the TrainerConfig "
             f"{AS_REPORTED}", timeout=30)
def test_1g_7(ctx):
    finetune_case(ctx, FINETUNE_BLOCK, pretrained=True, perceiver=True)


@grader_judge("1g-7-basic")
def judge_1g_7(ctx, facts):
    """finetune works for the perceiver as for the vanilla model: loads the parameters; 10 epochs, batch 256,
    learning rate 6e-4 (the default finetune_lr), lr decay, 512*20 warmup tokens, any num_workers."""
    finetune_judge(ctx, facts, dict(max_epochs=10, batch_size=256, learning_rate=6e-4, lr_decay=True,
                                     warmup_tokens=512 * 20, num_workers=WORKERS), FINETUNE_BLOCK, pretrained=True)


# a practice check of the written kind: the attention cost of the two models (written.check_1g)
_register_written("1g-9-basic", "1g attention cost of the vanilla and Perceiver models", "check_1g",
                  "The attention cost formulas of the vanilla and Perceiver models.")


@grader_test("1g-0-hidden", "DownProjectBlock computes the handout's block (same weights as the reference's)",
             timeout=30, needs=("solution",))
def test_1g_0_hidden(ctx):
    """With the same weights (matched by shape), the down block's output equals the reference layers' in one
    reading: layer norm on C, on the input or on both (block_readings)."""
    report_block(ctx, "DownProjectBlock", SHAPES)


@grader_judge("1g-0-hidden")
def judge_1g_0_hidden(ctx, report):
    compare_block(ctx, report, "DownProjectBlock", SHAPES)


@grader_test("1g-1-hidden", "UpProjectBlock computes the handout's block (same weights as the reference's)",
             timeout=30, needs=("solution",))
def test_1g_1_hidden(ctx):
    """With the same weights (matched by shape), the up block's output equals the reference layers' in one
    reading: layer norm on y, on the input x or on both (block_readings)."""
    report_block(ctx, "UpProjectBlock", SHAPES)


@grader_judge("1g-1-hidden")
def judge_1g_1_hidden(ctx, report):
    compare_block(ctx, report, "UpProjectBlock", SHAPES)


_register_predictions("1g-2-hidden", "perceiver.pretrain.dev.predictions",
                      "perceiver.pretrain.dev.predictions: accuracy threshold")
_register_predictions("1g-3-hidden", "perceiver.pretrain.test.predictions",
                      "perceiver.pretrain.test.predictions: accuracy threshold")


# -- the written part: extra credit 3a-3d (3e is practice) -------------------------------------------------
#
# The checks and their false-failure bounds are in checks/written.py; each test runs one on the student's
# attention_exploration.py (_register_written, above).


_register_written("3a-0-basic", "3a copy_query: c ~= v_j for unit, non-orthogonal keys", "check_3a",
                  "copy_query(k, j) gives a query whose attention output is (nearly) v_j.")
_register_written("3b-0-basic", "3b average_query: c ~= (v_a + v_b)/2 for orthonormal keys", "check_3b",
                  "average_query(k, a, b) gives a query whose output is (nearly) the mean of v_a and v_b.")
_register_written("3c-0-basic", "3c(i) gaussian_average_query: c ~= (v_a + v_b)/2 for keys near the means", "check_3c",
                  "With keys drawn near their means, the query still averages v_a and v_b.")
_register_written("3d-0-basic", "3d(i) two_head_queries: (c1 + c2)/2 ~= (v_a + v_b)/2", "check_3d_average",
                  "Two heads whose outputs average to the mean of v_a and v_b.")
_register_written("3d-1-basic", "3d(i) two_head_queries: the two heads differ (q1 = q2 is forbidden)",
                  "check_3d_distinct",
                  "The two heads' queries are not the same query.")
_register_written("3d-2-basic", "3d(ii) two heads keep c near (v_a + v_b)/2 when k_a is perturbed", "check_3d_spread",
                  "Under the 3d(ii) perturbation of k_a the two heads keep c near the mean.")
_register_written("3e-0-basic", "3e(ii) kqv_matrices: c2 ~= u_b and c1 ~= u_b - u_c", "check_3e",
                  "The key/query/value matrices of 3e(ii) give c2 = u_b and c1 = u_b - u_c.")


if __name__ == "__main__":
    sys.exit(main())
