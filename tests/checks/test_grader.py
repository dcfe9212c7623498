"""The grader's checks on whole submissions (src/grader.py and src/checks/): fair to the reference solution and to
every reading the handout allows, strict with planted bugs.  The table's own facts are test_table.py's.

Every run grades a copy of src/ in a temporary folder (so submissions can be emptied or broken there) on a
tiny self-made data world; the reference solution is a copy of src/submission importable as `solution`
(tests/gradings.py).  What keeps a grading alive whatever the code does is tests/harness/test_harness.py's.
"""

import json
import re
import shutil
import subprocess
import sys

import pytest

from gradings import (PENDING, POINTS, PREDICTION_TESTS, copy_src, failed_here, grade_here, judged_here,
                      run_grader, validate_results_json, write_predictions)

import grader

# every test here grades a submission: through grader.py, or with its steps in this process (grade_here,
# judged_here)
pytestmark = pytest.mark.grader


# -- the reference solution ------------------------------------------------------------------------------


def test_reference_solution_earns_every_basic_point_and_hidden_tests_are_pending(reference_src, public_data):
    r = run_grader(reference_src, data=public_data)
    validate_results_json(r.json)
    basic = [tid for tid in grader.REGISTRY if tid.endswith("-basic") and not grader.REGISTRY[tid].extra_credit]
    assert r.failed() == []
    assert all(r.status(tid) == "passed" for tid in basic if POINTS[tid]), r.stdout
    total_basic = sum(POINTS[t] for t in basic)
    assert f"Total basic: {total_basic}/{total_basic} points" in r.stdout
    hidden = [tid for tid in grader.REGISTRY if tid.endswith("-hidden")]
    for tid in hidden:
        t = r.tests[tid]
        assert r.status(tid) == "pending" and t["score"] == 0 and "status" not in t
        assert t["output"].startswith(PENDING)
        assert "%" not in t["output"] and "correct" not in t["output"]  # no expected value, no threshold
    assert f"{len(hidden)} tests worth {sum(POINTS[t] for t in hidden)} points pending" in r.stdout
    assert "% on dev" in r.tests["1d-2-basic"]["output"]  # the baseline number is reported


def test_hidden_tests_are_graded_with_solution_and_answers(tmp_path, data, solution, monkeypatch, capsys):
    """Everything graded, the written part included: the reference earns exactly 64 points + 10 extra credit.  Off
    root, as on a student's laptop or an instructor's (the grader is told it is not root when this suite runs as
    root): no copies, no user switch, the tests run as before and the hidden tests are decided by judge processes
    all the same.  As root, the reference's bundle grading earns every point too (tests/harness/
    test_grader_isolation.py)."""
    from grading import users

    monkeypatch.setattr(users, "privileged", lambda: False)  # where the worker and main ask it
    predictions = write_predictions(tmp_path / "pred", data, "correct")
    out = tmp_path / "results.json"
    assert grader.main(["--json", str(out), "--data-dir", str(data), "--solution-dir", str(solution),
                        "--predictions-dir", str(predictions)]) == 0
    printed = capsys.readouterr().out
    results = json.loads(out.read_text(encoding="utf-8"))
    validate_results_json(results)
    tests = {t["number"]: t for t in results["tests"]}
    assert [t for t in tests if tests[t]["extra_data"]["status"] == "failed"] == [], printed[-3000:]
    assert "student code runs as" not in printed
    assert "Total: 64/64 points" in printed and "Extra credit: 10/10 points" in printed
    assert results["score"] == 74 and sum(t["max_score"] for t in results["tests"]) == 74
    assert tests["3e-0-basic"]["max_score"] == 0 and tests["3e-0-basic"]["tags"] == ["practice"]
    assert "10/10 correct" in tests["1f-1-hidden"]["output"]


# A down block with the right shape and no look-ahead that computes something other than the handout's block:
# the bug of a student who adds a constant, and all that code which writes its own reports needs to show.
SHIFTED_DOWN_BLOCK = """
class DownProjectBlock(DownProjectBlock):
    def forward(self, x_input):
        return super().forward(x_input) + 1.0
"""


@pytest.mark.parametrize("grading", ["student", "visible", "after_published"])
def test_block_checks_count_only_with_the_comparison_that_vouches_for_them(tmp_path, data, solution, grading):
    """The down block's basic checks (shape, causality) hold for any shaped, causal output, which code that
    writes its own reports can claim.  Where the reference runs, they count only with 1g-3-hidden, which compares
    the values; on the student's machine they stand alone.  Under after_published their result is kept with
    the hidden ones' (it would tell 1g-3-hidden's); the up block's, whose comparison passed, counts."""
    src = copy_src(tmp_path, append={"model.py": SHIFTED_DOWN_BLOCK})
    vouched = ["1g-3-basic", "1g-5-basic"]
    if grading != "visible":
        table = json.loads((src / "points.json").read_text(encoding="utf-8"))
        table["hidden_visibility"] = "visible" if grading == "student" else grading
        (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    r = run_grader(src, *vouched, "1g-6-basic", "1g-0-basic", "1g-3-hidden", "1g-4-hidden", data=data,
                   solution=None if grading == "student" else solution)
    if grading == "student":
        assert r.status("1g-3-hidden") == "pending" and all(r.status(t) == "passed" for t in vouched), r.stdout
        return
    assert r.status("1g-3-hidden") == "failed" and r.status("1g-4-hidden") == "passed", r.stdout
    assert r.status("1g-6-basic") == "passed" and r.tests["1g-6-basic"]["score"] == 1
    for tid in vouched:
        assert r.status(tid) == "failed" and r.tests[tid]["score"] == 0
        assert "counts only when 1g-3-hidden finds" in r.tests[tid]["output"]
    if grading == "visible":
        assert "Total basic: 2/4 points" in r.json["output"] and r.json["score"] == 3
        return
    assert r.tests["1g-3-basic"]["visibility"] == r.tests["1g-6-basic"]["visibility"] == "after_published"
    for text in (r.json["output"], r.stdout):
        lines = [line for line in text.splitlines() if "1g-3-basic" in line]
        assert lines and not any(re.search(r"PASS|FAIL", line) for line in lines), lines
        assert "counts only when" not in text
    assert "Total basic: 1/1 points" in r.json["output"]  # 1g-0-basic, which nothing vouches for
    assert "and 3 basic tests worth 3 points that they vouch for" in r.json["output"]


def test_prediction_files_that_fail(tmp_path, reference_src, data, solution):
    """Each deliverable's dev file holds lines that its params do not give, and its test file one line fewer than
    there are questions (one grading for both kinds): every prediction test fails, saying why."""
    predictions = write_predictions(tmp_path / "pred", data, "wrong")
    short = write_predictions(tmp_path / "short", data, "short")
    for fname in PREDICTION_TESTS.values():
        if ".test." in fname:
            shutil.copy(short / fname, predictions / fname)
    r = run_grader(reference_src, *PREDICTION_TESTS, data=data, solution=solution, predictions=predictions)
    assert r.failed() == sorted(PREDICTION_TESTS)
    for tid, fname in PREDICTION_TESTS.items():
        out = r.tests[tid]["output"]
        assert fname in out
        reason = r.tests[tid]["extra_data"].get("reason")  # what kind of failure, for the class report's roster
        if ".dev." in fname:  # lines the params do not give: nothing counts
            assert "earns no accuracy points" in out and "differ on 10 of 10 lines" in out, out
            assert "line 1: the file says 'Atlantis'" in out, out
            assert reason == "predictions-not-from-params", r.tests[tid]
        else:
            assert "has 9 lines but there are 10 questions" in out, out
            assert reason is None, r.tests[tid]


def test_a_suffix_one_character_short_is_named_with_the_truncation_it_looks_like(tmp_path, data):
    """A suffix that stops one character before the end of the truncated text makes prefix + masked + suffix one
    short: the truncation's test sees 3..96 and cannot tell that from a draw off by one, so its message names both
    (it blamed the draw alone)."""
    src = copy_src(tmp_path, append={"dataset.py": corruption().replace(
        "doc[start + masked_len:] + {mask}".format(mask="self.MASK_CHAR"),
        "doc[start + masked_len:max(start + masked_len, n - 1)] + self.MASK_CHAR")})
    result = judged_here(src, "1e-0-basic", data=data)["1e-0-basic"]
    out = result["message"]
    assert result["status"] == "failed" and "ranged over 3.." in out, out
    assert "the suffix runs from the end of the masked span to the end of the truncated text" in out, out


def test_a_swapped_suffix_and_masked_span_is_named_and_costs_the_rearrangement_alone(tmp_path, data):
    """x = prefix + MASK + masked + MASK + suffix: 1e-1 (the rearrangement) fails and its message says that the masked
    content and the suffix are swapped (it said only that prefix + masked + suffix must begin the line); 1e-3 reads
    the span as the dataset orders it and passes (it failed too, under a title about the span's length)."""
    src = copy_src(tmp_path, append={"dataset.py": corruption(swapped=True)})
    results = judged_here(src, "1e-1-basic", "1e-3-basic", data=data)
    out = results["1e-1-basic"]["message"]
    assert results["1e-1-basic"]["status"] == "failed" and "swapped" in out, out
    assert "the suffix comes right after the prefix's MASK_CHAR" in out, out
    assert "doc[" not in out and "masked_len" not in out  # what is wrong, not the solution's line
    assert results["1e-3-basic"]["status"] == "passed", results["1e-3-basic"]["message"]


def test_missing_prediction_files_name_the_target(tmp_path, reference_src, data, solution):
    """The message names the target that writes the file and the student's folder, never the copy of it that a
    grading as root makes in its sandbox; where the answers are absent, so does the pending test's note."""
    r = run_grader(reference_src, "1d-0-hidden", "1g-2-hidden", data=data, solution=solution, predictions=tmp_path)
    assert "./run.sh vanilla_eval_dev_without_pretrain" in r.tests["1d-0-hidden"]["output"]
    assert "./run.sh perceiver_eval_test_with_pretrain" in r.tests["1g-2-hidden"]["output"]
    for tid in ("1d-0-hidden", "1g-2-hidden"):
        assert f"is missing from {tmp_path}:" in r.tests[tid]["output"], r.tests[tid]["output"]
    public = tmp_path / "public"
    shutil.copytree(data, public, ignore=shutil.ignore_patterns("birth_test.tsv"))
    r = run_grader(reference_src, "1d-0-hidden", data=public, predictions=tmp_path)
    assert r.status("1d-0-hidden") == "pending"
    assert f"is missing from {tmp_path}:" in r.tests["1d-0-hidden"]["output"], r.tests["1d-0-hidden"]["output"]


def test_a_students_grader_says_when_a_finetuned_file_was_not_finetuned_from_the_pretrain_file_beside_it(
        tmp_path, reference_src, data):
    """Where the answers are absent (a student's machine), the prediction tests are pending, and their note says
    what the judge will find of the files' lineage: vanilla.finetune.params beside another model's
    vanilla.pretrain.params, that it was not finetuned from it, with what to run again; the perceiver's files,
    which descend from one another, get no such note."""
    import course_params

    pred = write_predictions(tmp_path / "pred", data, "correct")
    course_params.save(course_params.course_net("vanilla", course_params.vocab(data), seed=5),
                       pred / "vanilla.pretrain.params")
    public = tmp_path / "public"
    shutil.copytree(data, public, ignore=shutil.ignore_patterns("birth_test.tsv"))
    r = run_grader(reference_src, "1f-1-hidden", "1g-1-hidden", data=public, predictions=pred)
    assert r.status("1f-1-hidden") == r.status("1g-1-hidden") == "pending"
    note = r.tests["1f-1-hidden"]["output"]
    assert "(note: vanilla.finetune.params is " in note, note
    assert "it was not finetuned from this vanilla.pretrain.params, " in note, note
    assert ("and vanilla.pretrain.dev.predictions will earn no accuracy points. Run ./run.sh "
            "vanilla_finetune_with_pretrain and the evaluations again") in note, note
    assert "note:" not in r.tests["1g-1-hidden"]["output"], r.tests["1g-1-hidden"]["output"]


def test_a_students_note_on_the_lineage_reads_the_weights_and_not_the_course_starters_mask_buffers(tmp_path):
    """The course starter's attention registers its causal mask (0s and 1s, 128 x 128 a layer) as a buffer, which the
    state dict saves beside the weights: as large as a trained model's weights, it would bring two unrelated files
    within a fifth of their distance, and the note would not come.  Two models of unrelated random starts, each
    holding those masks: the note says the finetuned file was not finetuned from the other; the pretrain file's
    weights 5 % smaller, as a finetuning moves them, get none."""
    import torch

    from checks.predictions import descent_note
    from submission import helper, model

    row = {"learned": {"vanilla.finetune.params": {"max_finetune_drift": 0.4}}}

    def course_style(seed):  # a course-size model at its initialisation, with the course starter's masks
        torch.manual_seed(seed)
        net = helper.initialize_vanilla_model(model.GPTConfig(60, 128, n_layer=4, n_head=8, n_embd=256))
        masks = {f"blocks.{i}.attn.mask": torch.tril(torch.ones(128, 128)).view(1, 1, 128, 128) for i in range(4)}
        return dict(net.state_dict(), **masks)

    pretrained = course_style(0)
    torch.save(pretrained, tmp_path / "vanilla.pretrain.params")
    torch.save(course_style(1), tmp_path / "vanilla.finetune.params")
    note = descent_note("vanilla.pretrain.dev.predictions", tmp_path, row)
    assert "it was not finetuned from this vanilla.pretrain.params" in note, note
    drift = int(re.search(r"vanilla.finetune.params is (\d+) % of the size", note)[1])
    assert 130 < drift < 150, note  # about sqrt(2): two independent draws of weights of one size
    torch.save({k: v if k.endswith(".mask") else 0.95 * v for k, v in pretrained.items()},
               tmp_path / "vanilla.finetune.params")
    assert descent_note("vanilla.pretrain.dev.predictions", tmp_path, row) == ""


def test_the_prediction_points_need_the_pretraining_the_params_were_finetuned_from(tmp_path, reference_src, data,
                                                                                   solution):
    """The pretrain files the handout asks for must have learned the pretraining's task (the span-corrupted lines of
    wiki.txt).  perceiver.pretrain.params missing, or a vanilla.pretrain.params that never saw a corrupted line (the
    finetuned params made by hand, which know their training questions and the corpus as plain text, and are
    their own pretrain file: no drift), the files finetuned from them earn nothing, each saying why; the vanilla
    model finetuned without pretraining is not asked for one.  (The perceiver's never-pretrained case is graded
    through the bundle: test_a_perceiver_never_pretrained_earns_no_prediction_point_through_the_bundle.)"""
    pred = write_predictions(tmp_path / "pred", data, "correct")
    (pred / "perceiver.pretrain.params").unlink()
    shutil.copy(pred / "vanilla.finetune.params", pred / "vanilla.pretrain.params")
    r = run_grader(reference_src, "1d-0-hidden", "1f-1-hidden", "1g-1-hidden", "1g-2-hidden", data=data,
                   solution=solution, predictions=pred)
    assert r.status("1d-0-hidden") == "passed", r.tests["1d-0-hidden"]["output"]
    for tid in ("1f-1-hidden", "1g-1-hidden", "1g-2-hidden"):
        out = r.tests[tid]["output"]
        assert r.status(tid) == "failed" and r.tests[tid]["score"] == 0 and "earns no accuracy points" in out, out
        if tid.startswith("1g"):
            assert "perceiver.pretrain.params is missing" in out and "./run.sh perceiver_pretrain" in out, out
        else:
            assert "vanilla.pretrain.params, which vanilla.finetune.params was finetuned from" in out, out
            assert "it has not been pretrained" in out and "./run.sh vanilla_pretrain" in out, out


def test_thresholds_come_from_the_row_of_the_data(tmp_path, data, solution):
    """A calibrated row for the tiny world: 5 of 10 right passes 40 %, fails 60 %.  The predictions are what
    the params give; half of the answers are other places (and the pretrain files learned the layouts that these
    answers draw for the pretraining statistic)."""
    half_right = tmp_path / "data"
    shutil.copytree(data, half_right)
    for name in ("birth_dev.tsv", "birth_test.tsv"):
        lines = (half_right / name).read_text(encoding="utf-8").splitlines()
        lines = lines[:5] + [line.split("\t")[0] + "\tAtlantis" for line in lines[5:]]
        (half_right / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    src = copy_src(tmp_path)
    table = json.loads((src / "points.json").read_text(encoding="utf-8"))
    row = table["thresholds"]["rows"]["builtin"]
    row["birth_dev_sha256"] = [grader.normalized_sha256(half_right / "birth_dev.tsv")]
    row["vanilla.pretrain.dev.predictions"] = {"min_accuracy": 0.4}
    row["vanilla.pretrain.test.predictions"] = {"min_accuracy": 0.6}
    (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    import course_params

    pred = write_predictions(tmp_path / "pred", data, "correct")
    for variant, name in course_params.PRETRAINED.items():  # pretrained on the layouts these answers draw
        shutil.copy(course_params.pretrained_file(half_right, variant=variant), pred / name)
    r = run_grader(src, "1f-1-hidden", "1f-2-hidden", data=half_right, solution=solution, predictions=pred)
    assert r.status("1f-1-hidden") == "passed" and r.status("1f-2-hidden") == "failed"
    assert "'builtin'" in r.tests["1f-2-hidden"]["output"] and "60%" in r.tests["1f-2-hidden"]["output"]
    assert "accuracy thresholds: 'builtin' (recognised by its birth_dev.tsv, uncalibrated)" in r.stdout



# -- planted bugs and other correct implementations ------------------------------------------------------
#
# Student code written outside this repo is simulated by code appended to a copy of the submission: a class
# or function defined again at the end of a module replaces the reference's, so these tests do not depend on
# how the reference is written.


def corruption(truncate="random.randint(4, int(self.block_size * 3 / 4))",
               masked_len="random.randint(1, max(1, n // 2))", start="random.randint(0, n - masked_len)",
               closing=True, pad_to="self.block_size", xy="s[:-1], s[1:]", mask="self.MASK_CHAR", dtype="torch.long",
               swapped=False):
    """A course-style __getitem__ (string based, self.data / self.stoi), each step replaceable by a bug (swapped:
    the masked span before the suffix)."""
    order = ("doc[start:start + masked_len] + {mask} + doc[start + masked_len:]" if swapped
             else "doc[start + masked_len:] + {mask} + doc[start:start + masked_len]").format(mask=mask)
    return f"""
def _graded_getitem(self, idx):
    import random

    import numpy as np

    doc = self.data[idx][: {truncate}]
    n = len(doc)
    masked_len = {masked_len}
    start = {start}
    s = doc[:start] + {mask} + {order}
    s = s + ({mask} if {closing} else "")
    s = s + self.PAD_CHAR * ({pad_to} - len(s))
    x, y = {xy}
    return (torch.tensor([self.stoi[c] for c in x], dtype={dtype}),
            torch.tensor([self.stoi[c] for c in y], dtype={dtype}))


CharCorruptionDataset.__getitem__ = _graded_getitem
"""


DATASET_BUGS = {
    "lengths never vary": (dict(truncate="int(self.block_size * 3 / 4)"), ["1e-0-basic"]),
    "truncation beyond 7/8": (dict(truncate="random.randint(4, self.block_size - 4)"), ["1e-0-basic", "1e-5-basic"]),
    "truncation hard-coded for block size 128": (dict(truncate="random.randint(4, 96)"),
                                                 ["1e-4-basic", "1e-0-basic", "1e-5-basic"]),
    # x and y of length block_size - 1 or block_size are both readings of the spec; one more does not fit the model,
    # which the shape's part (1e-4) and the padding's (1e-5) say: the text in them is judged by the other parts
    "x and y of length block_size + 1": (dict(pad_to="self.block_size + 2"), ["1e-4-basic", "1e-5-basic"]),
    "x and y of length block_size - 2": (dict(pad_to="self.block_size - 1"), ["1e-4-basic", "1e-5-basic"]),
    "x and y as int32 tensors": (dict(dtype="torch.int32"), ["1e-4-basic"]),
    "x and y as float tensors (torch.Tensor(ids))": (dict(dtype="torch.float32"), ["1e-4-basic"]),
    "a truncation never applied": (dict(truncate="len(self.data[idx])"), ["1e-0-basic", "1e-4-basic", "1e-5-basic"]),
    # a real student's padding counted from the whole line, not the truncated one: long lines get none
    "padding counted from the untruncated line": (dict(pad_to="self.block_size - len(self.data[idx]) + n"),
                                                  ["1e-4-basic", "1e-5-basic"]),
    "y ends with x's first character, not a PAD_CHAR": (dict(xy="s[:-1], s[1:-1] + s[0]"), ["1e-2-basic"]),
    "masked length never varies": (dict(masked_len="max(1, n // 4)"), ["1e-3-basic"]),
    # real students' draws whose masked length is never above 1/4 of the truncated length
    "masked length capped at 1/4": (dict(masked_len="min(random.randint(1, n), n // 4)"), ["1e-3-basic"]),
    "masked length from a Gaussian of width 0.1": (dict(masked_len="int(np.random.normal(n / 4, 0.1))"),
                                                   ["1e-3-basic"]),
    "a short line never kept whole": (
        dict(truncate="random.randint(4, max(4, min(len(self.data[idx]) - 1, int(self.block_size * 3 / 4))))"),
        ["1e-0-basic"]),
    # a real student's floor of 6, which cannot be drawn from a line of 5 characters: 1e-0's part alone
    "truncation drawn from 6 up": (
        dict(truncate="random.randint(6, min(len(self.data[idx]), int(self.block_size * 3 / 4)))"), ["1e-0-basic"]),
    # fixed by the drawn length, which only looks random on lines shorter than the draw
    "masked length a quarter of the drawn length": (
        dict(truncate="(drawn := random.randint(4, int(self.block_size * 3 / 4)))", masked_len="min(n, max(1, drawn // 4))"),
        ["1e-3-basic"]),
    "masked span half of the line": (dict(masked_len="random.randint(1, n)"), ["1e-3-basic"]),
    # a real student's bound: random.randint(4, 37.5) raises at block size 50 (the course's grader's), and
    # from Python 3.12 on any float bound raises, 96.0 at block size 128 included
    "truncation bound written as a float (3/4)": (
        dict(truncate="random.randint(4, self.block_size * 3/4)"),
        ["1e-4-basic", "1e-0-basic", "1e-5-basic"] if sys.version_info < (3, 12) else
        ["1e-4-basic", "1e-0-basic", "1e-1-basic", "1e-5-basic", "1e-2-basic", "1e-3-basic", "1e-6-basic"]),
    "truncation bound written as a float (7/8)": (
        dict(truncate="random.randint(4, self.block_size * 7/8)"),
        ["1e-4-basic", "1e-0-basic", "1e-5-basic"] if sys.version_info < (3, 12) else
        ["1e-4-basic", "1e-0-basic", "1e-1-basic", "1e-5-basic", "1e-2-basic", "1e-3-basic", "1e-6-basic"]),
    "y not shifted": (dict(xy="s[:-1], s[:-1]"), ["1e-2-basic"]),
    # the rearrangement's bug alone: the masked span's length is still the handout's, and 1e-3 reads it
    "suffix and masked span swapped": (dict(swapped=True), ["1e-1-basic"]),
    "mask char swapped with pad": (dict(mask="self.PAD_CHAR"), ["1e-1-basic", "1e-5-basic", "1e-3-basic"]),
    "no randomness at all": (dict(truncate="int(self.block_size * 3 / 4)", masked_len="max(1, n // 4)",
                                  start="n // 3"), ["1e-0-basic", "1e-3-basic", "1e-6-basic"]),
}

# the Perceiver blocks of the handout, written as a student might, with other attribute names; `cross` is the
# attention module, swapped out by the variants below
BLOCKS = """
class _GradedMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(),
                                 nn.Linear(4 * config.n_embd, config.n_embd), nn.Dropout(config.resid_pdrop))

    def forward(self, x):
        return self.net(x)


class DownProjectBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.basis = nn.Parameter(torch.empty({basis_shape}))
        nn.init.xavier_uniform_(self.basis)
        self.norm_in = nn.LayerNorm(config.n_embd){extra_norm}
        self.cross = {down_attention}(config)
        self.norm_out = nn.LayerNorm(config.n_embd)
        self.ffn = _GradedMLP(config)

    def forward(self, x_input):
        queries = self.basis.view(1, self.basis.size(-2), self.basis.size(-1))
        {down_body}
        return h + self.ffn(self.norm_out(h))


class UpProjectBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm_in = nn.LayerNorm(config.n_embd){extra_norm}
        self.cross = {up_attention}(config)
        self.norm_out = nn.LayerNorm(config.n_embd)
        self.ffn = _GradedMLP(config)

    def forward(self, y, x_input):
        {up_body}
        return h + self.ffn(self.norm_out(h))
"""

# attention written out by hand (no CausalCrossAttention): separate projections, causal mask made here
OWN_ATTENTION = """
import math as _math


class _OwnCrossAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.n_head
        self.wq = nn.Linear(config.n_embd, config.n_embd)
        self.wk = nn.Linear(config.n_embd, config.n_embd)
        self.wv = nn.Linear(config.n_embd, config.n_embd)
        self.out = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x_kv, x_q):
        B, Tk, C = x_kv.shape
        Tq, h = x_q.size(1), self.heads
        q = self.wq(x_q).view(x_q.size(0), Tq, h, C // h).transpose(1, 2)
        k = self.wk(x_kv).view(B, Tk, h, C // h).transpose(1, 2)
        v = self.wv(x_kv).view(B, Tk, h, C // h).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / _math.sqrt(C // h)
        allowed = torch.ones(Tq, Tk, dtype=torch.bool, device=x_kv.device).tril()
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(B, Tq, C))
"""

DOWN_OK = "h = queries + self.cross(self.norm_in(x_input), queries)"
UP_OK = "h = x_input + self.cross(self.norm_in(y), x_input)"


def blocks(attention="CausalCrossAttention", basis_shape="1, config.bottleneck_dim, config.n_embd", down=DOWN_OK,
           up=UP_OK, down_attention=None, extra_norm=False):
    """extra_norm: each block gets a third LayerNorm, `norm_q`, for the query."""
    code = BLOCKS.format(down_attention=down_attention or attention, up_attention=attention,
                         basis_shape=basis_shape, down_body=down, up_body=up,
                         extra_norm="\n        self.norm_q = nn.LayerNorm(config.n_embd)" if extra_norm else "")
    return OWN_ATTENTION + NON_CAUSAL + code


# the same attention without the causal mask
NON_CAUSAL = OWN_ATTENTION.replace("class _OwnCrossAttention", "class _NonCausalCrossAttention").replace(
    "allowed = torch.ones(Tq, Tk, dtype=torch.bool, device=x_kv.device).tril()",
    "allowed = torch.ones(Tq, Tk, dtype=torch.bool, device=x_kv.device)")

G_BASIC = ["1g-3-basic", "1g-4-basic", "1g-5-basic", "1g-6-basic", "1g-7-basic", "1g-8-basic", "1g-9-basic",
           "1g-0-basic"]
G_TESTS = G_BASIC + ["1g-3-hidden", "1g-4-hidden"]

# With the reference present, a block that computes no cross-attention block from its weights (it ignores C, or
# looks ahead) also loses the basic tests that its comparison vouches for (grader.py's vouched_by): its shapes and
# causality are the student process's word.  A block that is one, with other layer norms than the handout's,
# loses only the comparison.
BUGS = {
    **{f"dataset: {name}": ({"dataset.py": corruption(**kw)}, ["1e"], fails)
       for name, (kw, fails) in DATASET_BUGS.items()},
    "DownProject ignores C": (
        {"model.py": blocks(down="h = self.cross(self.norm_in(x_input), torch.zeros_like(queries))")},
        G_TESTS, ["1g-3-basic", "1g-4-basic", "1g-5-basic", "1g-8-basic", "1g-9-basic", "1g-3-hidden"]),
    "DownProject not causal": (
        {"model.py": blocks(down_attention="_NonCausalCrossAttention")}, G_TESTS,
        ["1g-3-basic", "1g-4-basic", "1g-5-basic", "1g-8-basic", "1g-9-basic", "1g-3-hidden"]),
    "UpProject queries with y instead of x": (
        {"model.py": blocks(up="h = x_input + self.cross(self.norm_in(y), y)")}, G_TESTS,
        ["1g-6-basic", "1g-7-basic", "1g-8-basic", "1g-9-basic", "1g-4-hidden"]),
    "UpProject without layer norm": (
        {"model.py": blocks(up="h = x_input + self.cross(y, x_input)")}, G_TESTS, ["1g-4-hidden"]),
    "DownProject without layer norm": (
        {"model.py": blocks(down="h = queries + self.cross(x_input, queries)")}, G_TESTS, ["1g-3-hidden"]),
    "blocks without the bottleneck (self-attention on the input)": (
        {"model.py": blocks(down="h = x_input + self.cross(self.norm_in(x_input), x_input) + 0 * queries.sum()",
                            up="h = y + 0 * x_input")}, G_TESTS,
        G_TESTS[:-3] + ["1g-3-hidden", "1g-4-hidden"]),
    "basis C from randn": (
        {"model.py": blocks().replace("nn.init.xavier_uniform_(self.basis)", "nn.init.normal_(self.basis)")},
        ["1g-4-basic"], ["1g-4-basic"]),
    "basis C from xavier_normal_": (
        {"model.py": blocks().replace("nn.init.xavier_uniform_(self.basis)", "nn.init.xavier_normal_(self.basis)")},
        ["1g-4-basic"], ["1g-4-basic"]),
    "perceiver never enabled (mconf.perceiver not set)": (
        {"helper.py": """
            def initialize_perceiver_model(mconf, bottleneck_dim=32):
                mconf.bottleneck_dim = bottleneck_dim
                return GPT(mconf)
            """}, ["1g-8-basic", "1g-9-basic"], ["1g-8-basic", "1g-9-basic"]),
    "perceiver built without the bottleneck setting": (
        {"helper.py": """
            def initialize_perceiver_model(mconf, bottleneck_dim=32):
                mconf.perceiver = True
                mconf.bottleneck_dim = 32
                return GPT(mconf)
            """}, ["1g-8-basic", "1g-9-basic"], ["1g-8-basic"]),
    "finetune trains the model itself": (
        {"helper.py": """
            _given_finetune = finetune


            def finetune(*args, **kwargs):
                tconf, trainer_obj = _given_finetune(*args, **kwargs)
                trainer_obj.train()
                return tconf, trainer_obj
            """}, ["1c-1-basic", "1f-3-basic", "1g-0-basic"], ["1c-1-basic", "1f-3-basic", "1g-0-basic"]),
    "pretrain trains the model itself": (
        {"helper.py": """
            _given_pretrain = pretrain


            def pretrain(*args, **kwargs):
                tconf, trainer_obj = _given_pretrain(*args, **kwargs)
                train(args[2], "pretrained.params", trainer_obj)
                return tconf, trainer_obj
            """}, ["1f-0-basic"], ["1f-0-basic"]),
}

MUTATION_BUGS = {  # small edits of helper.py's student regions
    "wrong finetune epochs": (
        {"helper.py": [("max_epochs = 10", "max_epochs = 75")]},
        ["1c-1-basic", "1f-3-basic", "1g-0-basic"], ["1f-3-basic", "1g-0-basic"]),
    "finetune ignores the pretrained params": (
        {"helper.py": [("        model.load_state_dict(torch.load(reading_params_path, map_location=torch.device(\"cpu\")))\n",
                        "")]},
        ["1c-1-basic", "1f-3-basic"], ["1f-3-basic"]),
    "pretrain with finetune's learning rate": (
        {"helper.py": [("learning_rate=pretrain_lr", "learning_rate=6e-4")]},
        ["1f-0-basic"], ["1f-0-basic"]),
    "finetune with pretrain's learning rate": (
        {"helper.py": [("learning_rate=finetune_lr", "learning_rate=6e-3")]},
        ["1c-1-basic", "1f-3-basic", "1g-0-basic"], ["1c-1-basic", "1f-3-basic", "1g-0-basic"]),
    "train saves without training": (
        {"helper.py": [("    trainer_obj.train()\n", "")]},
        ["1c-2-basic"], ["1c-2-basic"]),
}


CORRUPTION_TESTS = ["1e", "1c-1-basic", "1f-0-basic"]  # what another reading of the span corruption is graded on


def case_parts(case):
    """(code to append {file in submission/: text}, mutations {file: edits}, the tests to run, the tests that must
    fail) of a case of BUGS, MUTATION_BUGS, OTHER_CORRUPTIONS or OTHER_BLOCKS (the last two, correct, fail none)."""
    if case in BUGS:
        code, selection, must_fail = BUGS[case]
        return code, {}, selection, must_fail
    if case in MUTATION_BUGS:
        mutations, selection, must_fail = MUTATION_BUGS[case]
        return {}, mutations, selection, must_fail
    if case in OTHER_CORRUPTIONS:
        return {"dataset.py": OTHER_CORRUPTIONS[case]}, {}, CORRUPTION_TESTS, []
    return {"model.py": OTHER_BLOCKS[case]}, {}, G_TESTS, []


def planted(tmp_path, bug):
    """(src, the tests to run, the tests that must fail) for a planted bug of BUGS or MUTATION_BUGS."""
    code, mutations, selection, must_fail = case_parts(bug)
    return copy_src(tmp_path, mutations, code), selection, must_fail


# Lines of the reference's student regions: a message says what is wrong, as the course's hints do, and never hands
# out the solution's code
SOLUTION_CODE = ("trainer_obj.train()", "save_state_dict(", "GPT(mconf)", "load_state_dict(", "torch.load(")


@pytest.mark.parametrize("bug", sorted(BUGS) + sorted(MUTATION_BUGS))
def test_planted_bug_loses_points(tmp_path, data, solution, bug):
    """Each planted bug loses the parts it must lose, and no other; no message writes the solution's code."""
    src, selection, must_fail = planted(tmp_path, bug)
    judged = judged_here(src, *selection, data=data, solution=solution)
    assert failed_here({t: r["status"] for t, r in judged.items()}) == sorted(must_fail)
    for tid, r in judged.items():
        assert not [c for c in SOLUTION_CODE if c in r["message"]], (tid, r["message"])


# one case of each kind (a dataset bug, a block that vouches for nothing, a comparison that still vouches, a
# finetune bug, another correct corruption, another correct perceiver block), through the grader itself: two kinds
# in each submission, each in a file of its own (a grading of the grader is seconds of processes, grade_here's is
# not)
GRADED_BOTH_WAYS = {
    "a dataset bug and a comparison that still vouches": ("dataset: truncation beyond 7/8",
                                                          "UpProject without layer norm"),
    "a block that vouches for nothing and a finetune bug": ("DownProject ignores C", "wrong finetune epochs"),
    "another correct corruption and perceiver block": (
        "numpy, 7/8, no closing MASK", "no residual around the cross-attention (the handout's equations as written)"),
}


def submission_of(tmp_path, cases):
    """(src, the tests to run, the tests that must fail): the reference with each case (case_parts) in it, each in
    another file, every test that any of them selects, and every test that a bug among them must fail."""
    append, mutations, selection, must_fail = {}, {}, [], set()
    for case in cases:
        code, edits, tests, fails = case_parts(case)
        assert not (set(code) | set(edits)) & (set(append) | set(mutations)), f"{case}: two cases in one file"
        append.update(code)
        mutations.update(edits)
        selection += [t for t in tests if t not in selection]
        must_fail.update(fails)
    return copy_src(tmp_path, mutations, append), selection, sorted(must_fail)


@pytest.mark.parametrize("cases", list(GRADED_BOTH_WAYS.values()), ids=list(GRADED_BOTH_WAYS))
def test_grading_here_gives_the_graders_verdicts(tmp_path, data, solution, cases):
    """judged_here (grade_here's verdicts), which the cases of planted bugs, other readings and the checks'
    messages use, agrees with the grader's own run on every test it selects, verdict and message (the grader's
    output begins with the message), and the grader's score is the sum of the points of what passed."""
    src, selection, must_fail = submission_of(tmp_path, cases)
    r = run_grader(src, *selection, data=data, solution=solution)
    here = judged_here(src, *selection, data=data, solution=solution)
    assert {t: r.status(t) for t in r.tests} == {t: v["status"] for t, v in here.items()}
    for t, v in here.items():
        assert r.tests[t]["output"].startswith(v["message"] or r.status(t)), (t, v, r.tests[t]["output"])
    assert r.json["score"] == sum(POINTS[t] for t in r.passed())
    assert r.failed() == must_fail  # each case loses what it loses alone, and the correct ones nothing


def test_training_inside_finetune_fails_fast_with_the_reason(tmp_path, data):
    import time

    code, selection, _ = BUGS["finetune trains the model itself"]
    started = time.monotonic()
    result = judged_here(copy_src(tmp_path, append=code), "1c-1-basic", data=data)["1c-1-basic"]
    assert result["status"] == "failed" and "finetune started training (it called Trainer.train)" in result["message"]
    assert time.monotonic() - started < 60


# -- fairness: other implementations that follow the handout earn every point -----------------------------

OTHER_CORRUPTIONS = {
    "string-based, Gaussian masked length, 7/8, no closing MASK": corruption(
        truncate="random.randint(4, int(self.block_size * 7 / 8))",
        masked_len="max(0, min(n, round(random.gauss(n / 4, n / 8))))", closing=False),
    "list-based on the reference's encoded ids, masked length n/8..3n/8, 7/8, no closing MASK": """
        def _graded_getitem(self, idx):
            import random

            ids = self.encoded[idx].tolist()
            n = min(len(ids), random.randint(4, int(self.block_size * 7 / 8)))
            masked_len = random.randint(n // 8, 3 * n // 8)
            start = random.randint(0, n - masked_len)
            s = ids[:start] + [self.mask_id] + ids[start + masked_len:n] + [self.mask_id]
            s += ids[start:start + masked_len]
            s += [self.pad_id] * (self.block_size - len(s))
            return torch.tensor(s[:-1]), torch.tensor(s[1:])


        CharCorruptionDataset.__getitem__ = _graded_getitem
        """,
    "numpy, 7/8, no closing MASK": corruption(
        truncate="int(np.random.randint(4, int(self.block_size * 7 / 8) + 1))",
        masked_len="int(np.random.randint(1, max(1, n // 2) + 1))",
        start="int(np.random.randint(0, n - masked_len + 1))", closing=False),
    "torch random numbers, 3/4, closing MASK": corruption(
        truncate="int(torch.randint(4, int(self.block_size * 3 / 4) + 1, ()))",
        masked_len="int(torch.randint(1, max(1, n // 2) + 1, ()))",
        start="int(torch.randint(0, n - masked_len + 1, ()))"),
    "course-style: PAD_CHAR and MASK_CHAR only on the instance": """
        _given_init = CharCorruptionDataset.__init__


        def _course_init(self, data, block_size):
            self.MASK_CHAR = "\\u2047"
            self.PAD_CHAR = "\\u25A1"
            _given_init(self, data, block_size)


        del CharCorruptionDataset.PAD_CHAR, CharCorruptionDataset.MASK_CHAR, PAD_CHAR, MASK_CHAR
        CharCorruptionDataset.__init__ = _course_init
        """,
    # the course's given __init__ holds the spec's two numbers; a solution written from it reads them there
    "the course's max_context_size and masking_percent": corruption(
        truncate="random.randint(4, self.max_context_size)",
        masked_len="random.randint(1, max(1, round(2 * n * self.masking_percent)))"),
    "PAD_CHAR and MASK_CHAR only on the class": """
        del PAD_CHAR, MASK_CHAR
        """,
    # the course's spec gives x and y the length block_size in one sentence: padded one further, or shifted
    # with one PAD_CHAR added
    "x and y of length block_size (padded to block_size + 1)": corruption(pad_to="self.block_size + 1"),
    "x and y of length block_size (y gets one more PAD_CHAR)": corruption(xy="s, s[1:] + self.PAD_CHAR"),
    "torch random numbers, 7/8, no closing MASK": corruption(
        truncate="int(torch.randint(4, int(self.block_size * 7 / 8) + 1, ()))",
        masked_len="int(torch.randint(1, max(1, n // 2) + 1, ()))",
        start="int(torch.randint(0, n - masked_len + 1, ()))", closing=False),
    "truncated to at most the line's own length": corruption(
        truncate="random.randint(4, max(4, min(len(self.data[idx]), int(self.block_size * 3 / 4))))"),
    # where the span starts is not among the criteria the course's spec lists for full credit: a start that never
    # moves is a reading of it (the masked length stays random)
    "the span always at the start (prefix empty)": corruption(start="0"),
    "the span always at the end (suffix empty)": corruption(start="n - masked_len"),
    "the span always centred": corruption(start="(n - masked_len) // 2"),
    "prints every example": corruption(
        masked_len="print('masking', n, 'of', doc) or random.randint(1, max(1, n // 2))"),
}


@pytest.mark.parametrize("variant", sorted(OTHER_CORRUPTIONS))
def test_other_correct_corruptions_pass(tmp_path, data, variant):
    src = copy_src(tmp_path, append={"dataset.py": OTHER_CORRUPTIONS[variant]})
    verdicts = grade_here(src, *CORRUPTION_TESTS, data=data)
    assert verdicts == {t: "passed" for t in POINTS if t.startswith("1e") or t in ("1c-1-basic", "1f-0-basic")}


OTHER_BLOCKS = {
    "other attribute names": blocks(),
    "own attention math (no CausalCrossAttention)": blocks(attention="_OwnCrossAttention"),
    "basis C of shape (m, n_embd)": blocks(basis_shape="config.bottleneck_dim, config.n_embd"),
    # where the attention sub-layer's layer norm goes: the course's hints say on C (down) and on y (up), a copy
    # of Block puts it on the attention's input (the keys/values of the down block, the query of the up block)
    "layer norm on C (the course's hint) and on x in the up block": blocks(
        down="h = queries + self.cross(x_input, self.norm_in(queries))",
        up="h = x_input + self.cross(y, self.norm_in(x_input))"),
    "layer norm on both, a third LayerNorm": blocks(
        down="h = queries + self.cross(self.norm_in(x_input), self.norm_q(queries))",
        up="h = x_input + self.cross(self.norm_in(y), self.norm_q(x_input))", extra_norm=True),
    "layer norm on both, one LayerNorm": blocks(
        down="h = queries + self.cross(self.norm_in(x_input), self.norm_in(queries))",
        up="h = x_input + self.cross(self.norm_in(y), self.norm_in(x_input))"),
    "residual from the normalised C": blocks(
        down="h = (lambda q: q + self.cross(x_input, q))(self.norm_in(queries))"),
    # equations (3) and (4) give the cross-attention alone, and Block's residual does not fit the down block's
    # shapes: real students (8 of 26 graded) leave the residual out, with the hints' layer norms
    "no residual around the cross-attention (the handout's equations as written)": blocks(
        down="h = self.cross(x_input, self.norm_in(queries))", up="h = self.cross(self.norm_in(y), x_input)"),
    "no residual, layer norm on the keys/values of the down block": blocks(
        down="h = self.cross(self.norm_in(x_input), queries)"),
    "no residual, layer norm on both in the up block": blocks(
        up="h = self.cross(self.norm_in(y), self.norm_in(x_input))"),
}


@pytest.mark.parametrize("variant", sorted(OTHER_BLOCKS))
def test_other_correct_perceiver_blocks_earn_every_point(tmp_path, data, solution, variant):
    src = copy_src(tmp_path, append={"model.py": OTHER_BLOCKS[variant]})
    assert grade_here(src, *G_TESTS, data=data, solution=solution) == {t: "passed" for t in G_TESTS}


def test_learning_rates_written_as_the_hints_spell_them_earn_every_point(tmp_path, data):
    """The course's helper.py hints write learning_rate=6e-4 (finetune) and 6e-3 (pretrain); its grader calls
    finetune and pretrain with the default arguments.  A student who typed the hint's numbers is right."""
    src = copy_src(tmp_path, {"helper.py": [("learning_rate=finetune_lr", "learning_rate=6e-4"),
                                            ("learning_rate=pretrain_lr", "learning_rate=6e-3")]})
    tests = ["1c-1-basic", "1f-0-basic", "1f-3-basic", "1g-0-basic"]
    assert grade_here(src, *tests, data=data) == {t: "passed" for t in tests}


def test_a_given_gpt_whose_constructor_the_student_changed_does_not_fail_finetune_pretrain_and_train(tmp_path, data):
    """A real solution changed the given GPT to take a second argument, and its initialize_vanilla_model passes
    it.  The course's grader builds the model of its finetune tests with initialize_vanilla_model: so does ours
    where GPT(config) alone cannot be called, and the student's correct finetune, pretrain and train keep their
    points (1c-3 still judges the model that initialize_vanilla_model builds)."""
    src = copy_src(tmp_path, {"helper.py": [("attention_model = GPT(mconf)", "attention_model = GPT(mconf, 'self')")]},
                   append={"model.py": """
        _given_gpt_init = GPT.__init__


        def _init_with_a_second_argument(self, config, attention_kind):
            assert attention_kind == "self"
            _given_gpt_init(self, config)


        GPT.__init__ = _init_with_a_second_argument
        """})
    assert not failed_here(grade_here(src, "1c-3-basic", "1c-1-basic", "1c-2-basic", "1f-0-basic", "1f-3-basic",
                                      "1g-0-basic", data=data))


def test_course_style_attention_mask_buffers_are_fine(tmp_path, data, solution):
    """The course's given attention keeps its causal mask as a persistent buffer: the state dict then holds
    `attn.mask` entries the reference's has not.  The grader compares parameters, so nothing changes."""
    src = copy_src(tmp_path, append={"attention.py": """
        _given_init = _AttentionBase.__init__


        def _course_init(self, config):
            _given_init(self, config)
            self.register_buffer("mask", self.mask.clone(), persistent=True)


        _AttentionBase.__init__ = _course_init
        """})
    verdicts = grade_here(src, "1c", "1f-0-basic", "1f-3-basic", *G_TESTS, data=data, solution=solution)
    assert not failed_here(verdicts), verdicts
    assert verdicts["1c-0-hidden"] == "passed" and verdicts["1g-0-basic"] == "passed"


def test_wrong_return_types_are_clear(tmp_path, data):
    src = copy_src(tmp_path, {
        "dataset.py": [("        return x, y\n\n\nclass NameDataset", "        return x.tolist(), y.tolist()\n\n\nclass NameDataset")],
        "helper.py": [("    return tconf, trainer_obj\n\n\ndef pretrain", "    return trainer_obj\n\n\ndef pretrain")],
    })
    results = judged_here(src, "1e-4-basic", "1c-1-basic", data=data)
    assert "x is a list, not a torch tensor" in results["1e-4-basic"]["message"]
    assert "finetune must return the pair (tconf, trainer_obj), not Trainer" in results["1c-1-basic"]["message"]


# -- the written part's extra credit -----------------------------------------------------------------------

def test_written_tests_are_extra_credit(tmp_path, data):
    """The written part's tests are registered like the others; their points count apart as extra credit, a
    wrong or hanging construction fails only its own test, and a test without points is refused."""
    src = copy_src(tmp_path, append={"attention_exploration.py": """
        def average_query(*args):
            raise ValueError("not this one")


        def gaussian_average_query(*args):
            while True:
                pass
        """})
    r = run_grader(src, "3", "1e-4-basic", data=data, extra=["--timeout-scale", "0.3"])
    validate_results_json(r.json)
    assert r.status("3a-0-basic") == "passed" and r.tests["3a-0-basic"]["score"] == 2
    assert r.status("3b-0-basic") == "failed" and "not this one" in r.tests["3b-0-basic"]["output"]
    assert r.status("3c-0-basic") == "failed" and "timed out" in r.tests["3c-0-basic"]["output"]
    assert r.status("3d-0-basic") == "passed"  # a fresh worker runs the tests after the time-out
    assert all(r.tests[t]["tags"] == ["extra credit"] for t in ("3a-0-basic", "3b-0-basic", "3c-0-basic"))
    one = POINTS["1e-4-basic"]
    assert "Extra credit: 5/10 points" in r.stdout and f"Total basic: {one}/{one} points" in r.stdout
    # a test without points in the table is refused, the written part's as any other
    table = json.loads((src / "points.json").read_text(encoding="utf-8"))
    del table["tests"]["3b-0-basic"]
    (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    bad = subprocess.run([sys.executable, str(src / "grader.py"), "3a"], capture_output=True, text=True, cwd=src)
    assert bad.returncode == 2 and "test 3b-0-basic has no points" in bad.stderr
    table["tests"]["3b-0-basic"] = 2
    (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    # without the student's module the written tests fail with the reason
    (src / "submission" / "attention_exploration.py").unlink()
    result = judged_here(src, "3a", data=data)["3a-0-basic"]
    assert result["status"] == "failed" and "attention_exploration.py is missing" in result["message"], result
