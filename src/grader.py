#!/usr/bin/env python3
"""Autograder for the pretraining assignment: parts 1c-1g (and the written part's extra credit, if present).

  python grader.py                        # every test; run from src/ (python src/grader.py works too)
  python grader.py 1e                     # one question part;  python grader.py 1e-0-basic: one test
  python grader.py --json results.json    # also write Gradescope's results.json
  python grader.py --list                 # the tests: points, time limits, the course grader's ids

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
from functools import partial

import graderUtil
from checks.dataset import (check_masked_lengths, check_padding, check_random, check_rearrangement, check_shift,
                            check_truncation, check_vocabulary, corruption_dataset, observe_examples,
                            observe_whole_line, random_lines)
from checks.perceiver import (check_basis, check_causal_perceiver, check_down_batch, check_down_causal,
                              check_perceiver_models, check_up_causal, check_up_queries, observe_basis,
                              observe_causal_perceiver, observe_down_causal, observe_down_shapes,
                              observe_perceiver_models, observe_up_causal, observe_up_queries)
from checks.predictions import check_file, check_london_baseline, observe_file, pending_note
from checks.replay import check_answers, observe_answers
from checks.training import (WORKERS, check_finetune, check_pretrain, check_train, check_vanilla_model,
                             observe_finetune, observe_pretrain, observe_train, observe_vanilla_model)
from graderUtil import (  # noqa: F401  (PENDING_MESSAGE .. select_thresholds: for the instructor's test suite)
    PENDING_MESSAGE, REGISTRY, Fail, grader_test, judge_only, load_points, main, normalized_sha256,
    seed_everything, select_thresholds)
from kit import course  # the course's facts: model size, targets, deliverables

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
# Of kit/ only course.py, fileio.py and baseline.py: its other modules import the student's package.
GRADING_FILES = ["grader.py", "graderUtil.py", "grading/", "checks/", "attention_simulation.py", "kit/__init__.py",
                 "kit/course.py", "kit/fileio.py", "kit/baseline.py", "points.json"]

# What only the hidden tests' judges read: the reference's block in every reading the grader accepts, a params
# file read as the course's model and its forward pass, the learning statistics.  They ship in the Gradescope bundle
# and grade_class's copy (GRADING_FILES' "checks/" holds them there), never in the student starter: they spell out
# what the student writes.  Their functions are taken by name (judge_only), imported when a hidden test runs.
# (checks/lineage.py ships to students: it spells out nothing they write, and their grader warns with it.)
JUDGE_ONLY_FILES = ["checks/readings.py", "checks/same_weights.py", "checks/params.py", "checks/decoder.py",
                    "checks/learned.py"]
observe_vanilla_logits = judge_only("checks.same_weights", "observe_vanilla_logits")
check_vanilla_logits = judge_only("checks.same_weights", "check_vanilla_logits")
observe_block_outputs = judge_only("checks.same_weights", "observe_block_outputs")
check_block_outputs = judge_only("checks.same_weights", "check_block_outputs")

graderUtil.configure(description=__doc__, student_deps=STUDENT_DEPS, held_out=[ANSWERS_FILE],
                     public_data=list(course.DATA_FILES.values()), dataset_file="birth_dev.tsv",
                     grading_files=GRADING_FILES)

# ----------------------------------------------------------------------------------------------------------
# The tests, in the handout's order, as a table: each test's id, its description (a one-line rule), and where it
# is the course grader's test, the course's id (course_id).  A test runs in a worker beside the student's code and
# only observes: it reports what the code computed, as data (an observe_* function of checks/, given the test's
# numbers).  Its check (a check_* function, given the numbers it checks) decides in a judge, a worker that never
# imports student code (docs/security.md).  torch is imported inside the workers; the parent never does.
#
# What the student's process reports can be anything its code writes.  A basic test that checks properties
# (shapes, causality) which zero tensors also have counts only with the hidden comparison that checks the same
# code's values against the reference at the same weights (vouched_by).  What finetune, pretrain and train call
# and with which numbers has nothing to compare: those tests say that they judge what the student's process reports.
AS_REPORTED = "(judged on what your code's process reports)"


PREDICTION_TESTS = {}  # test id -> the prediction file it grades (predictions_test; the class report reads it)


def predictions_test(tid, fname, description, course_id):
    """A prediction file's test: beside the student's code (none of which runs) only that the file is there with
    one line per question; the judge scores it against the held-out answers, counting a line only where the params
    that produced the file give it too (checks/predictions.py; the course's model is built from the reference)."""
    PREDICTION_TESTS[tid] = fname
    test = partial(observe_file, fname=fname)
    test.pending_note = partial(pending_note, fname)  # what a student's machine can say without the answers
    grader_test(tid, description, timeout=60, needs=("answers", "solution"), course_id=course_id,
                check=partial(check_file, fname=fname, gold_files=GOLD_FILES))(test)


def written_test(tid, description, check, course_id=None):
    """A written test: `check` (a function of checks/written.py, by name) runs on the student's
    attention_exploration.py, recording what its functions return; the judge runs the same check on that record
    (checks/replay.py).  The written part's tests share one worker (one process for eight quick checks)."""
    grader_test(tid, description, timeout=20, extra_credit=True, group="written", course_id=course_id,
                observe=partial(observe_answers, check=check), check=partial(check_answers, check=check))


# finetune and pretrain are called with their default learning rates, as the course's grader calls them.
FINETUNE_BLOCK = course.MODEL["block_size"]  # the block size run.py passes


def handout_config(max_epochs, batch_size, learning_rate, block):
    """The TrainerConfig the handout's hints give: a test's epochs, batch size and rate, then what finetune and
    pretrain share: learning-rate decay, 512 * 20 warm-up tokens, final_tokens = 200 * len(pretrain_dataset) *
    block_size (from the corpus the test built) and num_workers (any whole number >= 0: the hints say 4, later
    cohorts' 0)."""
    return dict(max_epochs=max_epochs, batch_size=batch_size, learning_rate=learning_rate, lr_decay=True,
                warmup_tokens=512 * 20, final_tokens=lambda corpus_len: 200 * corpus_len * block,
                num_workers=WORKERS)


def finetune_config(max_epochs):
    """finetune's TrainerConfig: batch 256 at its default rate, with or without pretrained parameters."""
    return handout_config(max_epochs, 256, course.FINETUNE_LR, FINETUNE_BLOCK)


# -- part (c): the vanilla model, finetune and train -------------------------------------------------------

C3_SIZES = dict(vocab=40, block=32, n_layer=3, n_head=2, n_embd=16)  # logits on 2 sequences of 10 tokens
grader_test("1c-3-basic", "initialize_vanilla_model returns a vanilla GPT built from mconf (counts with 1c-0-hidden)",
            timeout=30, vouched_by=("1c-0-hidden",),
            observe=partial(observe_vanilla_model, sizes=C3_SIZES), check=partial(check_vanilla_model, sizes=C3_SIZES))

grader_test("1c-1-basic", "finetune without pretrained parameters: the TrainerConfig and Trainer of the handout "
            f"{AS_REPORTED}", timeout=30, course_id="1c-1-basic",
            observe=partial(observe_finetune, block=FINETUNE_BLOCK, pretrained=False),
            check=partial(check_finetune, pretrained=False, expected=finetune_config(max_epochs=75)))

grader_test("1c-2-basic", f"train runs the trainer, then saves the trained parameters {AS_REPORTED}", timeout=30,
            observe=partial(observe_train, epochs=2), check=check_train)

VANILLA_HIDDEN = dict(vocab=256, block=128, n_layer=4, n_head=8, n_embd=256)  # logits on 2 sequences of 100 tokens
grader_test("1c-0-hidden", "the vanilla model computes what the reference computes (same weights)", timeout=30,
            needs=("solution",), course_id="1c-0-hidden",
            observe=partial(observe_vanilla_logits, sizes=VANILLA_HIDDEN),
            check=partial(check_vanilla_logits, sizes=VANILLA_HIDDEN))


# -- part (d): the London baseline and the prediction files ------------------------------------------------


@grader_test("1d-2-basic", "London baseline: accuracy on dev of always answering the most common training place",
             timeout=30, info=True, uses_torch=False,
             check=partial(check_london_baseline, train_file="birth_places_train.tsv", dev_file="birth_dev.tsv"))
def test_1d_london(ctx):
    """No student code: the number is the judge's, from the data alone."""


predictions_test("1d-0-hidden", "vanilla.nopretrain.dev.predictions",
                 "vanilla.nopretrain.dev.predictions: one line per question, enough correct", "1d-0-hidden")
predictions_test("1d-1-hidden", "vanilla.nopretrain.test.predictions",
                 "vanilla.nopretrain.test.predictions: one line per question, enough correct", "1d-1-hidden")


# -- part (e): CharCorruptionDataset -----------------------------------------------------------------------
#
# Two published variants of this spec are both right, as in the course's own grader: the handout's
# (truncate to 4..int(block_size*3/4), then prefix ⁇ suffix ⁇ masked ⁇) and the older one (truncate to
# 4..int(block_size*7/8), no closing ⁇).  The tests accept either, and randomness from any generator:
# Python's random, NumPy or torch.  They check that examples vary, never which generator drew them.
#
# Every test seeds random, NumPy and torch alike (seed_everything), so a given implementation always gets the
# same verdict; each number a check decides on keeps a correct implementation's false failures below 1e-6 even
# without the seed (the bounds are in checks/dataset.py).


E4_LINES = random_lines(1, [30, 70, 12, 200])


@grader_test("1e-4-basic", "vocabulary (PAD 0, MASK 1, then sorted characters); __getitem__ returns two "
             "LongTensors of length block_size-1 or block_size", timeout=20,
             check=partial(check_vocabulary, block=61, lines=E4_LINES))
def test_1e_4(ctx):
    """Id 0 is PAD_CHAR (□), id 1 MASK_CHAR (⁇), then the corpus's distinct characters in sorted order;
    every example is a pair of LongTensors of length block_size - 1 or block_size (both readings of the spec)."""
    ds = corruption_dataset(ctx, E4_LINES, 61)  # a block size that is no multiple of 4 or 8: int() bounds, not floats
    seed_everything(10)
    ctx.report(observe_examples(ctx, ds, range(len(E4_LINES))))


E0_DRAWS = {128: 4000, 50: 2000}  # block size: examples of a line of 600 characters
E0_WHOLE, E0_WHOLE_DRAWS = random_lines(10, [40])[0], 2000  # a line shorter than most drawn lengths


@grader_test("1e-0-basic", "truncation: length drawn from 4..int(block_size*3/4) (up to 7/8 accepted), covering "
             "the whole range; a short line can stay whole", timeout=20, course_id="1e-0-basic",
             check=partial(check_truncation, draws_by_block=E0_DRAWS, whole_line=E0_WHOLE,
                           whole_draws=E0_WHOLE_DRAWS))
def test_1e_0(ctx):
    """A long line is cut to a random length: every length of 4..int(block_size*3/4) occurs, none is below 4
    or above int(block_size*7/8) (the older variant's bound, which the course also accepts).  Block size 50 is the
    course's grader's: no multiple of 4, so a bound written as a float (37.5) cannot be drawn.  A line of 40
    characters has the length 40 among those that may be drawn: some examples keep it whole.  False failures:
    see checks/dataset.py."""
    line = random_lines(2, [600])
    reports = {}
    for block, draws in E0_DRAWS.items():
        ds = corruption_dataset(ctx, line, block)
        seed_everything(11)
        reports[block] = observe_examples(ctx, ds, [0] * draws)
    ds = corruption_dataset(ctx, [E0_WHOLE], 128)
    seed_everything(18)
    reports["whole"] = observe_examples(ctx, ds, [0] * E0_WHOLE_DRAWS)
    ctx.report(reports)


E1_LINES = random_lines(3, [9, 17, 40, 64, 90, 111, 113, 150, 300, 500])


@grader_test("1e-1-basic", "rearrangement prefix+MASK+suffix+MASK+masked(+MASK) rebuilds the line's start",
             timeout=20, course_id="1e-1-basic", check=partial(check_rearrangement, lines=E1_LINES, draws=1100))
def test_1e_1(ctx):
    """x reads prefix ⁇ suffix ⁇ masked ⁇ then PADs, and prefix + masked + suffix is the line's beginning (short
    lines too; the shortest has 9 characters, more than the course's grader's 7, so that a real student's
    truncation floor of 6, which 1e-0 fails, is not charged here again).  Where the masked span starts is the student's
    choice: the course's spec lists what full credit needs, and a random start is not on that list (a random
    length is, see 1e-3)."""
    ds = corruption_dataset(ctx, E1_LINES, 128)
    seed_everything(12)
    ctx.report(observe_examples(ctx, ds, [k % len(E1_LINES) for k in range(1100)]))


@grader_test("1e-5-basic", "padding: PAD_CHARs only at the end, up to block_size", timeout=20,
             check=partial(check_padding, blocks=(128, 50), draws=600))
def test_1e_5(ctx):
    """PAD_CHARs fill the string up to block_size and appear nowhere else."""
    lines = random_lines(5, [6, 20, 50, 100, 120, 400])
    reports = {}
    for block in (128, 50):
        ds = corruption_dataset(ctx, lines, block)
        seed_everything(14)
        reports[block] = observe_examples(ctx, ds, [k % len(lines) for k in range(600)])
    ctx.report(reports)


@grader_test("1e-2-basic", "x and y: y[i] is the character that follows x[i]", timeout=20, course_id="1e-2-basic",
             check=partial(check_shift, draws=400))
def test_1e_2(ctx):
    """x = masked_string[:-1], y = masked_string[1:]: y is x shifted by one, and ends in a PAD_CHAR."""
    lines = random_lines(6, [10, 60, 130, 400])
    ds = corruption_dataset(ctx, lines, 128)
    seed_everything(15)
    ctx.report(observe_examples(ctx, ds, [k % len(lines) for k in range(400)]))


E3_LINE, E3_WHOLE = random_lines(7, [600])[0], random_lines(8, [40])[0]  # a long line; one of 40 characters


@grader_test("1e-3-basic", "masked span: about 1/4 of the truncated length on average, random at every truncated "
             "length, sometimes shorter and sometimes longer than 1/4", timeout=60,  # up to ~37,000 draws: 6-16 s
             course_id="1e-3-basic", check=partial(check_masked_lengths, line=E3_LINE, whole_line=E3_WHOLE,
                                                   draws=4000))
def test_1e_3(ctx):
    """The masked content is 1/4 of the truncated length n on average (0.15..0.35 over 4000 examples of a long
    line), and its length is random with a chance of being more or less than n/4: over those examples both
    happen at least 5 % of the time, at most lengths n >= 16 it takes more than one value, and on draws that
    keep a line of 40 characters whole, lengths below 10 and above 10 both occur."""
    ds = corruption_dataset(ctx, [E3_LINE], 128)
    seed_everything(16)
    long_line = observe_examples(ctx, ds, [0] * 4000)
    ds = corruption_dataset(ctx, [E3_WHOLE], 128)
    seed_everything(17)
    ctx.report({"long": long_line, "whole": observe_whole_line(ctx, ds, E3_WHOLE)})


@grader_test("1e-6-basic", "examples are random: drawing one line again gives other examples", timeout=20,
             check=partial(check_random, lines=3, repeats=20))
def test_1e_6(ctx):
    """Each draw of a line is a new random example, from whichever generator (random, NumPy, torch)."""
    lines = random_lines(9, [80, 200, 300])
    ds = corruption_dataset(ctx, lines, 128)
    seed_everything(5)
    ctx.report(observe_examples(ctx, ds, [idx for idx in range(len(lines)) for _ in range(20)]))


# -- part (f): pretraining --------------------------------------------------------------------------------

PRETRAIN_BLOCK = 96  # not the course's 128: final_tokens must use the block size, not a constant 128
grader_test("1f-0-basic", f"pretrain: the TrainerConfig and Trainer of the handout {AS_REPORTED}", timeout=30,
            course_id="1f-0-basic", observe=partial(observe_pretrain, block=PRETRAIN_BLOCK),
            check=partial(check_pretrain, expected=handout_config(max_epochs=650, batch_size=128,
                                                                  learning_rate=course.PRETRAIN_LR,
                                                                  block=PRETRAIN_BLOCK)))

grader_test("1f-3-basic", "finetune with pretrained parameters: loads them; the TrainerConfig (10 epochs) "
            f"{AS_REPORTED}", timeout=30,
            observe=partial(observe_finetune, block=FINETUNE_BLOCK, pretrained=True),
            check=partial(check_finetune, pretrained=True, expected=finetune_config(max_epochs=10)))

predictions_test("1f-1-hidden", "vanilla.pretrain.dev.predictions",
                 "vanilla.pretrain.dev.predictions: accuracy threshold", "1f-1-hidden")
predictions_test("1f-2-hidden", "vanilla.pretrain.test.predictions",
                 "vanilla.pretrain.test.predictions: accuracy threshold", "1f-2-hidden")


# -- part (g): the perceiver ------------------------------------------------------------------------------
#
# The tests judge what the blocks compute, never what their attributes are called: the basis C is found as
# the one parameter of shape (1, m, n_embd) or (m, n_embd) (m is chosen so that no other layer has that
# shape), the blocks are found in a model by their class (DownProjectBlock, UpProjectBlock, Block: the names
# the handout gives), and a comparison with the reference gives both the same weights by shape alone.  The
# blocks are built from checks.perceiver.perceiver_config: bottleneck_dim m = 8, n_embd 32, 4 heads, block size
# 64, no dropout, where a test names no other numbers.

SHAPES = ((3, 20), (1, 64), (2, 8))  # (B, T) with T >= m = 8; T = m included
# the comparisons of each block with the reference's, which vouch for the basic tests of the whole perceiver
PERCEIVER_COMPARISONS = ("1g-3-hidden", "1g-4-hidden")

G3_CASES = ((8, 32, 4), (16, 48, 3))  # (m, n_embd, n_head); a sequence's bottleneck alone and within a batch
grader_test("1g-3-basic", "DownProjectBlock: (B, T, C) -> (B, m, C) for every T >= m (counts with 1g-3-hidden)",
            timeout=30, vouched_by=("1g-3-hidden",),
            observe=partial(observe_down_shapes, cases=G3_CASES, shapes=SHAPES),
            check=partial(check_down_batch, cases=G3_CASES))

G4_CASES = ((8, 32, 4), (24, 64, 4))  # (m, n_embd, n_head); C drawn by xavier_uniform_, changing C changes the output
grader_test("1g-4-basic", "the basis C: a learnable (1, m, n_embd) parameter, Xavier-uniform, used as the query "
            "(counts with 1g-3-hidden)", timeout=30, vouched_by=("1g-3-hidden",),
            observe=partial(observe_basis, sizes=G4_CASES), check=partial(check_basis, sizes=G4_CASES))

G5_POSITIONS = (0, 3, 7)  # input rows changed: bottleneck rows before each stay, the row itself changes
grader_test("1g-5-basic", "DownProjectBlock is causal: bottleneck row j depends only on inputs 0..j (counts with "
            "1g-3-hidden)", timeout=30, vouched_by=("1g-3-hidden",),
            observe=partial(observe_down_causal, positions=G5_POSITIONS),
            check=partial(check_down_causal, positions=G5_POSITIONS))

G6_POSITIONS = (2, 7, 15)  # rows of x changed: that output row alone changes
grader_test("1g-6-basic", "UpProjectBlock: (B, m, C), (B, T, C) -> (B, T, C); the input x gives the queries "
            "(counts with 1g-4-hidden)", timeout=30, vouched_by=("1g-4-hidden",),
            observe=partial(observe_up_queries, shapes=SHAPES, positions=G6_POSITIONS),
            check=partial(check_up_queries, positions=G6_POSITIONS))

G7_POSITIONS = (0, 3, 7)  # bottleneck rows changed: output rows before each stay, the row itself changes
grader_test("1g-7-basic", "UpProjectBlock is causal: output row t uses bottleneck rows 0..t only (counts with "
            "1g-4-hidden)", timeout=30, vouched_by=("1g-4-hidden",),
            observe=partial(observe_up_causal, positions=G7_POSITIONS),
            check=partial(check_up_causal, positions=G7_POSITIONS))

G8_BOTTLENECKS = (8, None)  # None: called without bottleneck_dim, whose default is 32
G8_LENGTH = 40  # tokens in the batch: one down block to m rows, middle Blocks at m, one up block back to 40
grader_test("1g-8-basic", "initialize_perceiver_model builds a perceiver: down block, middle blocks at length m, "
            "up block (counts with 1g-3-hidden and 1g-4-hidden)", timeout=30, vouched_by=PERCEIVER_COMPARISONS,
            observe=partial(observe_perceiver_models, bottlenecks=G8_BOTTLENECKS, length=G8_LENGTH),
            check=partial(check_perceiver_models, bottlenecks=G8_BOTTLENECKS, length=G8_LENGTH))

G9_POSITIONS = (3, 8, 20, 63)  # tokens changed from t on: no logit before t changes, some logit after does
grader_test("1g-9-basic", "the perceiver GPT from initialize_perceiver_model is causal (counts with 1g-3-hidden "
            "and 1g-4-hidden)", timeout=30, vouched_by=PERCEIVER_COMPARISONS,
            observe=partial(observe_causal_perceiver, positions=G9_POSITIONS),
            check=partial(check_causal_perceiver, positions=G9_POSITIONS))

grader_test("1g-0-basic", "finetune a perceiver with pretrained parameters: loads them; the TrainerConfig "
            f"{AS_REPORTED}", timeout=30, course_id="1g-0-basic",
            observe=partial(observe_finetune, block=FINETUNE_BLOCK, pretrained=True, perceiver=True),
            check=partial(check_finetune, pretrained=True, expected=finetune_config(max_epochs=10)))

# a practice check of the written kind: the attention cost of the two models (checks.written.check_1g)
written_test("1g-10-basic", "1g attention cost of the vanilla and Perceiver models", "check_1g")

# with the same weights (matched by shape), the block's output equals the reference layers' in a reading of the
# handout's block that the grader accepts
grader_test("1g-3-hidden", "DownProjectBlock computes the handout's block (same weights as the reference's)",
            timeout=30, needs=("solution",),
            observe=partial(observe_block_outputs, cls="DownProjectBlock", input_shapes=SHAPES),
            check=partial(check_block_outputs, cls="DownProjectBlock", input_shapes=SHAPES))
grader_test("1g-4-hidden", "UpProjectBlock computes the handout's block (same weights as the reference's)",
            timeout=30, needs=("solution",),
            observe=partial(observe_block_outputs, cls="UpProjectBlock", input_shapes=SHAPES),
            check=partial(check_block_outputs, cls="UpProjectBlock", input_shapes=SHAPES))

predictions_test("1g-1-hidden", "perceiver.pretrain.dev.predictions",
                 "perceiver.pretrain.dev.predictions: accuracy threshold", "1g-1-hidden")
predictions_test("1g-2-hidden", "perceiver.pretrain.test.predictions",
                 "perceiver.pretrain.test.predictions: accuracy threshold", "1g-2-hidden")


# -- the written part: extra credit 3a-3d (3e is practice) -------------------------------------------------
#
# The checks and their false-failure bounds are in checks/written.py.  The course grades 3a-3d by hand, under the
# same ids; its 3d-0-basic (3 points) is our 3d-0..3d-2 (1 point each).


written_test("3a-0-basic", "3a copy_query: c ~= v_j for unit, non-orthogonal keys", "check_3a", course_id="3a-0-basic")
written_test("3b-0-basic", "3b average_query: c ~= (v_a + v_b)/2 for orthonormal keys", "check_3b",
             course_id="3b-0-basic")
written_test("3c-0-basic", "3c(i) gaussian_average_query: c ~= (v_a + v_b)/2 for keys near the means", "check_3c",
             course_id="3c-0-basic")
written_test("3d-0-basic", "3d(i) two_head_queries: (c1 + c2)/2 ~= (v_a + v_b)/2", "check_3d_average",
             course_id="3d-0-basic")
written_test("3d-1-basic", "3d(i) two_head_queries: the two heads differ (q1 = q2 is forbidden)",
             "check_3d_distinct", course_id="3d-0-basic")
written_test("3d-2-basic", "3d(ii) two heads keep c near (v_a + v_b)/2 when k_a is perturbed", "check_3d_spread",
             course_id="3d-0-basic")
written_test("3e-0-basic", "3e(ii) kqv_matrices: c2 ~= u_b and c1 ~= u_b - u_c", "check_3e")


if __name__ == "__main__":
    sys.exit(main())
