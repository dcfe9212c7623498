"""tools/experiment.py: the whole experiment in one command (resumable, one results file), and the calibration of a
data set's thresholds row from its results.

The run is rehearsed on the tiny world of conftest with the course's model for a few epochs (--pretrain-args /
--finetune-args), once, interrupted in its first training run and continued; calibrate reads results files made
from that run's record (a full-size run takes hours on a CPU)."""

import copy
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kit import course
from conftest import ROOT, SRC, make_world

import margins

# one xdist worker runs this module, so that the rehearsal every test reads (a minute) is run once; its grade at the
# end runs the grader as root with a user id of its worker's own (conftest.free_uid), beside the other root tests
pytestmark = [pytest.mark.xdist_group("experiment"), pytest.mark.grader]

TOOL = ROOT / "tools" / "experiment.py"
# a finetuning of 8 epochs: the first is interrupted once its first epoch's checkpoint is written, with 7 to go
ARGS = ["--seeds", "0", "--pretrain-args", "--max_epochs 1", "--finetune-args", "--max_epochs 8"]


def experiment(*args, timeout=600):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """(data, results path, results, log of the interrupted run): one seed stopped by SIGTERM during its first
    training run (once its first checkpoint is written), then the same command run again to the end."""
    root = tmp_path_factory.mktemp("experiment")
    data = root / "data"
    data.mkdir()
    make_world(data, held_out=True)
    out = root / "results.json"
    argv = [sys.executable, str(TOOL), "run", "--out", str(out), "--data-dir", str(data), *ARGS]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    checkpoint = root / "results.work" / "seed-0" / "vanilla.model.params.ckpt"
    deadline = time.monotonic() + 300
    while not checkpoint.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    first_log, _ = proc.communicate(timeout=120)
    interrupted = json.loads(out.read_text(encoding="utf-8"))
    assert proc.returncode == 130, first_log
    again = experiment("run", "--out", str(out), "--data-dir", str(data), *ARGS)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    # a score short of the full one is said to be the rehearsal's (its flags named), not the kit's
    assert "(a rehearsal: run.py's flags were changed (pretrain: --max_epochs 1; finetune: --max_epochs 8)" in \
        again.stdout, again.stdout[-3000:]
    return data, out, json.loads(out.read_text(encoding="utf-8")), interrupted, checkpoint


def test_an_interrupted_run_keeps_its_checkpoint_and_the_same_command_resumes_it(rehearsal):
    data, out, results, interrupted, checkpoint = rehearsal
    first = interrupted["seeds"]["0"]["targets"]["vanilla_finetune_without_pretrain"]
    assert first["status"] == "interrupted" and first["seconds"] > 0
    log = Path(first["log"]).read_text(encoding="utf-8")
    runs = [line for line in log.splitlines() if line.startswith("# ")]
    assert len(runs) == 2 and "--resume" not in runs[0] and runs[1].endswith("--resume"), runs
    assert not checkpoint.exists()  # run.py removes it once the params are saved
    done = results["seeds"]["0"]["targets"]["vanilla_finetune_without_pretrain"]
    assert done["status"] == "done" and done["seconds"] > first["seconds"]  # both attempts counted


def test_the_results_file_holds_every_figure_the_calibration_needs(rehearsal):
    data, out, results, _, _ = rehearsal
    assert results["kind"] == "cs224n-experiment"
    assert results["device"]["type"] == "cpu" and results["device"]["torch"] and results["device"]["precision"]
    assert results["config"]["model"] == course.MODEL and results["config"]["course"] is False
    seed = results["seeds"]["0"]
    assert [t for t in seed["targets"]] == [t.name for t in course.TARGETS]
    assert all(t["status"] == "done" and t["seconds"] > 0 for t in seed["targets"].values())
    for fname in course.PREDICTION_FILES:  # dev and test: the data folder holds the answers
        entry = seed["predictions"][fname]
        assert entry["total"] == 10 and 0 <= entry["correct"] <= 10 and entry["accuracy"] == entry["correct"] / 10
    for pname in ("vanilla.model.params", "vanilla.finetune.params", "perceiver.finetune.params"):
        train = seed["models"][pname]["train"]
        assert train["asked"] == 30 and train["constant_correct"] >= 1 and 0 <= train["correct"] <= 30
    for pname in ("vanilla.finetune.params", "perceiver.finetune.params", "vanilla.pretrain.params",
                  "perceiver.pretrain.params"):
        corpus = seed["models"][pname]["corpus"]
        assert corpus["lines"] == 41 and corpus["gain"] == pytest.approx(1 - corpus["loss"] / corpus["unigram"],
                                                                          abs=1e-3)
    for pname in ("vanilla.model.params", "vanilla.finetune.params", "perceiver.finetune.params"):
        assert "pretraining" not in seed["models"][pname]  # its pretraining bars read its pretrain file's record
    for pname in ("vanilla.pretrain.params", "perceiver.pretrain.params"):  # what the pretraining learned
        pretraining = seed["models"][pname]["pretraining"]
        assert pretraining["lines"] == 41 and pretraining["gain"] == pytest.approx(
            1 - pretraining["loss"] / pretraining["unigram"], abs=1e-3)
        if pretraining["plain_gain"] > 0:  # its share: corrupted lines against the same lines as plain text
            assert pretraining["share"] == pytest.approx(pretraining["gain"] / pretraining["plain_gain"], abs=1e-3)
    for pname, matrices in (("vanilla.finetune.params", 27), ("perceiver.finetune.params", 28)):
        drift = seed["models"][pname]["drift"]  # how far its finetuning moved the pretrain file's weights
        assert drift["compared"] == matrices and drift["unmatched"] == [] and drift["drift"] > 0, drift
    assert "drift" not in seed["models"]["vanilla.model.params"]  # finetuned from no pretrain file
    grade = results["grade"]
    assert grade["seed"] == 0 and grade["max_score"] == 74
    # a few epochs teach the tiny world nothing: only the prediction tests may fail
    assert set(grade["not_passed"]) <= {"1d-0-hidden", "1d-1-hidden", "1f-1-hidden", "1f-2-hidden", "1g-1-hidden",
                                        "1g-2-hidden"}, grade
    assert grade["score"] == 74 - sum(3 if t.startswith("1d") else 5 if t == "1f-1-hidden" else 8 if t ==
                                      "1f-2-hidden" else 2 for t in grade["not_passed"])


def test_the_same_command_again_runs_only_what_is_missing(rehearsal):
    data, out, results, _, _ = rehearsal
    folder = out.with_suffix(".work") / "seed-0"
    missing = folder / "perceiver.pretrain.dev.predictions"
    missing.unlink()
    logs = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.log")}
    r = experiment("run", "--out", str(out), "--data-dir", str(data), *ARGS)
    assert r.returncode == 0, r.stderr[-2000:]
    assert missing.is_file()
    changed = [name for name, text in logs.items() if (folder / name).read_text(encoding="utf-8") != text]
    assert changed == ["perceiver_eval_dev_with_pretrain.log"], changed


def test_another_experiment_in_the_same_results_file_is_refused(rehearsal):
    data, out, _, _, _ = rehearsal
    r = experiment("run", "--out", str(out), "--data-dir", str(data), "--seeds", "0", "--small")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "holds another experiment" in r.stderr


# -- calibrate -----------------------------------------------------------------------------------------------


def full_size(results, seeds, scale=1.0, unpretrained=0.5):
    """The rehearsal's record as if it came from the course's configuration: `seeds` copies of its seed, each
    prediction accuracy and statistic scaled by scale + 0.01 * seed (so that the seeds differ); the held-out gain
    of the model finetuned without pretraining is `unpretrained`."""
    made = copy.deepcopy(results)
    made["config"] = dict(made["config"], overrides={"pretrain": [], "finetune": []}, course=True)
    made["grade"] = dict(made["grade"], score=74, not_passed={})
    seed = made["seeds"]["0"]
    made["seeds"] = {}
    for k in range(seeds):
        s = copy.deepcopy(seed)
        for entry in s["predictions"].values():
            entry["correct"] = round(entry["total"] * (scale + 0.01 * k) * 0.4)
            entry["accuracy"] = entry["correct"] / entry["total"]
        for stats in s["models"].values():
            if "train" in stats:
                stats["train"]["correct"] = round(stats["train"]["asked"] * min(1.0, (scale + 0.01 * k) * 0.8))
                stats["train"]["question_gain"] = round((scale + 0.01 * k) * 6.0, 4)
                stats["train"]["question_evidence"] = round((scale + 0.01 * k) * 40.0, 2)
            if "corpus" in stats:
                stats["corpus"]["gain"] = round((scale + 0.01 * k) * 0.6, 4)
            if "pretraining" in stats:
                stats["pretraining"]["gain"] = round((scale + 0.01 * k) * 0.5, 4)
                stats["pretraining"]["share"] = round(0.9 + 0.01 * k, 4)
                stats["pretraining"]["bigram_gain"] = round((scale + 0.01 * k) * 0.4, 4)
            if "drift" in stats:
                stats["drift"]["drift"] = round((scale + 0.01 * k) * 0.1, 4)
        for name, stats in s["models"].items():
            if "heldout" in stats:
                stats["heldout"]["heldout_gain"] = (unpretrained if name == "vanilla.model.params"
                                                    else round((scale + 0.01 * k) * 4.0, 4))
        made["seeds"][str(k)] = s
    return made


def lowest(made, get):
    return min(get(seed) for m in made for seed in m["seeds"].values())


def points_copy(tmp_path):
    path = tmp_path / "points.json"
    path.write_text((SRC / "points.json").read_text(encoding="utf-8"), encoding="utf-8")
    return path


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_calibrate_writes_the_row_of_the_data_set_with_its_bars_and_evidence(rehearsal, tmp_path):
    import grader  # noqa: F401  (configures the harness: the file that identifies a data set)
    import graderUtil

    data, _, results, _, _ = rehearsal
    points = points_copy(tmp_path)
    made = [full_size(results, 2), full_size(results, 1, 0.9)]
    files = [write(tmp_path, "a.json", made[0]), write(tmp_path, "b.json", made[1])]
    r = experiment("calibrate", *files, "--points", str(points), "--row", "tiny", "--description", "the tiny world")
    assert r.returncode == 0, r.stderr
    table = graderUtil.load_points(points)
    name, row, recognised = graderUtil.select_thresholds(table["thresholds"], data)
    assert (name, recognised) == ("tiny", True)
    assert row["calibrated"] is True and row["description"] == "the tiny world"

    def half(x):  # the bar: the margin 0.5 of the lowest measured, rounded down to 3 decimals
        return int(500 * x + 1e-9) / 1000

    pretrain_dev = lowest(made, lambda s: s["predictions"]["vanilla.pretrain.dev.predictions"]["accuracy"])
    assert row["vanilla.pretrain.dev.predictions"] == {"min_accuracy": half(pretrain_dev)}
    nopretrain = lowest(made, lambda s: s["predictions"]["vanilla.nopretrain.test.predictions"]["correct"])
    assert row["vanilla.nopretrain.test.predictions"] == {"min_correct": max(1, nopretrain // 2)}
    # the question's bar: the evidence where noise is not, the same for every file (no share of a run)
    assert row["learned"]["vanilla.model.params"] == {"min_question_evidence": 4.0}
    assert all(rule["min_question_evidence"] == 4.0 and "min_question_gain" not in rule
               for rule in row["learned"].values())
    question = lowest(made, lambda s: s["models"]["perceiver.finetune.params"]["train"]["question_evidence"])
    assert row["evidence"]["learned"]["measured"]["perceiver.finetune.params question evidence"]["min"] == question
    gain = lowest(made, lambda s: s["models"]["perceiver.finetune.params"]["corpus"]["gain"])
    assert row["learned"]["perceiver.finetune.params"]["min_corpus_gain"] == half(gain) == 0.27
    heldout = lowest(made, lambda s: s["models"]["vanilla.finetune.params"]["heldout"]["heldout_gain"])
    assert row["learned"]["vanilla.finetune.params"]["min_heldout_gain"] == half(heldout) == 1.8
    assert "min_heldout_gain" not in row["learned"]["vanilla.model.params"]
    # the perceiver's pretraining is measured on the params it was finetuned from; it has no held-out bar
    pretraining = lowest(made, lambda s: s["models"]["perceiver.pretrain.params"]["pretraining"]["gain"])
    assert row["learned"]["perceiver.finetune.params"]["min_pretraining_gain"] == half(pretraining) == 0.225
    # its share (corrupted lines against plain ones) at 0.8 of the lowest: half would pass a plain model of the text
    share = lowest(made, lambda s: s["models"]["perceiver.pretrain.params"]["pretraining"]["share"])
    assert row["learned"]["perceiver.finetune.params"]["min_pretraining_share"] == 0.72 == round(0.8 * share, 3)
    # its gain over the judge's bigram (a table of the previous character): half the lowest, as a gain's bar
    over = lowest(made, lambda s: s["models"]["perceiver.pretrain.params"]["pretraining"]["bigram_gain"])
    assert row["learned"]["perceiver.finetune.params"]["min_pretraining_bigram_gain"] == half(over) == 0.18
    assert "min_heldout_gain" not in row["learned"]["perceiver.finetune.params"]
    # the vanilla model's pretraining likewise; the drift bar at the most a finetuning moved, over the margin
    assert row["learned"]["vanilla.finetune.params"]["min_pretraining_share"] == 0.72
    drift = max(seed["models"]["perceiver.finetune.params"]["drift"]["drift"] for m in made
                for seed in m["seeds"].values())
    assert row["learned"]["perceiver.finetune.params"]["max_finetune_drift"] == 0.202 == round(drift / 0.5, 3)
    evidence = row["evidence"]["accuracy"]
    assert evidence["seeds"] == 3 and evidence["margin"] == 0.5 and evidence["device"].startswith("cpu")
    assert evidence["measured"]["vanilla.pretrain.dev.predictions"]["min"] == pretrain_dev
    assert row["evidence"]["learned"] == evidence
    # the other rows are as they were
    before = json.loads((SRC / "points.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in table["thresholds"]["rows"].items() if k != "tiny"} == before["thresholds"]["rows"]
    assert table["tests"] == before["tests"]
    # each bar's margin (tools/margins.py): the weakest seed of the files it reads; no attack measured on this data
    margin = {m["bar"]: m for m in row["evidence"]["margins"]}
    assert set(margin) == {bar for rule in row["learned"].values() for bar in rule}
    finetuned = ("vanilla.finetune.params", "perceiver.finetune.params")
    assert margin["min_corpus_gain"]["weakest_correct"]["value"] == min(
        lowest(made, lambda s, f=f: s["models"][f]["corpus"]["gain"]) for f in finetuned)
    assert margin["max_finetune_drift"]["weakest_correct"]["value"] == max(
        seed["models"][f]["drift"]["drift"] for m in made for seed in m["seeds"].values() for f in finetuned)
    assert not any("strongest_attack" in m for m in margin.values()) and margins.problems(row) == []
    # calibrated again after an attack was measured on this data set: kept where the new bar stops it, else refused
    bar = min(rule.get("min_corpus_gain", 1) for rule in row["learned"].values())
    for attack, refused in ((bar - 0.05, False), (bar + 0.05, True)):
        table = json.loads(points.read_text(encoding="utf-8"))
        tiny = table["thresholds"]["rows"]["tiny"]
        next(m for m in tiny["evidence"]["margins"] if m["bar"] == "min_corpus_gain")["strongest_attack"] = {
            "value": attack, "run": "a model made by hand"}
        points.write_text(json.dumps(table), encoding="utf-8")
        r = experiment("calibrate", *files, "--points", str(points))
        assert (r.returncode == 2) == refused, r.stderr
        assert ("min_corpus_gain: the strongest attack" in r.stderr) == refused, r.stderr
        if not refused:
            after = json.loads(points.read_text(encoding="utf-8"))["thresholds"]["rows"]["tiny"]
            assert {"value": attack, "run": "a model made by hand"} in [
                m.get("strongest_attack") for m in after["evidence"]["margins"]]


@pytest.mark.parametrize("case", ["small", "two seeds", "two data sets", "not every point", "no row",
                                  "a pretraining with no share", "a finetuning that moved far",
                                  "a pretraining no better than a bigram", "results without the bigram's gain"])
def test_calibrate_refuses_results_that_cannot_set_a_bar_with_one_sentence(rehearsal, tmp_path, case):
    _, _, results, _, _ = rehearsal
    points = points_copy(tmp_path)
    before = points.read_text(encoding="utf-8")
    made = [full_size(results, 3)]
    extra = ["--row", "tiny"]
    if case == "small":
        made = [results, full_size(results, 3)]
    elif case == "two seeds":
        made = [full_size(results, 2)]
    elif case == "two data sets":
        other = full_size(results, 1)
        other["data"] = dict(other["data"], birth_dev_sha256="0" * 64)
        made.append(other)
    elif case == "not every point":
        made[0]["grade"] = dict(made[0]["grade"], score=71)
    elif case == "no row":
        extra = []
    elif case == "a pretraining with no share":  # its gain on plain text not above 0: a run that learned nothing
        made[0]["seeds"]["1"]["models"]["perceiver.pretrain.params"]["pretraining"]["share"] = None
    elif case == "a finetuning that moved far":  # a bar of 0.6: models not one from the other can be that near
        made[0]["seeds"]["1"]["models"]["vanilla.finetune.params"]["drift"]["drift"] = 0.3
    elif case == "a pretraining no better than a bigram":  # a bar of 0 cannot tell it from a table written by hand
        made[0]["seeds"]["2"]["models"]["vanilla.pretrain.params"]["pretraining"]["bigram_gain"] = 0.0
    elif case == "results without the bigram's gain":
        del made[0]["seeds"]["0"]["models"]["perceiver.pretrain.params"]["pretraining"]["bigram_gain"]
    files = [write(tmp_path, f"{k}.json", m) for k, m in enumerate(made)]
    r = experiment("calibrate", *files, "--points", str(points), *extra)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    expected = {"small": "smaller configuration than the course's", "two seeds": "needs at least 3",
                "two data sets": "different data sets", "not every point": "did not earn every point",
                "no row": "give --row NAME",
                "a pretraining with no share": "has no pretraining share in every seed",
                "a finetuning that moved far": "a drift bar of 0.600 is above 0.5",
                "a pretraining no better than a bigram": "no better than the corpus's bigram (a bar of 0.000)",
                "results without the bigram's gain": "has no gain over the bigram in every seed"}[case]
    assert expected in r.stderr, r.stderr
    assert points.read_text(encoding="utf-8") == before


def test_calibrate_refuses_runs_whose_question_evidence_the_bar_would_fail(rehearsal, tmp_path):
    """The question's bar is fixed where noise is not (4 standard errors): runs whose weakest seed is below it are
    refused (the bar would fail a correct run), runs that clear it are not, however small their gain in nats."""
    _, _, results, _, _ = rehearsal
    for scale, refused in ((0.1, False), (0.09, True)):  # the weakest seed's evidence: 4.0, then 3.6
        made = full_size(results, 3, scale=scale, unpretrained=0.0)
        r = experiment("calibrate", write(tmp_path, "a.json", made), "--points", str(points_copy(tmp_path)),
                       "--row", "t")
        assert (r.returncode == 2) == refused, r.stderr
        assert ("3.60 standard errors above 0, below the bar of 4" in r.stderr) == refused, r.stderr


def test_calibrate_refuses_a_heldout_bar_that_a_model_without_pretraining_reaches(rehearsal, tmp_path):
    """The held-out bars (half the lowest a pretrained model reached: 2.0 nats here) must sit above what the same
    runs' model finetuned without pretraining reached, which knows only what the names suggest."""
    _, _, results, _, _ = rehearsal
    for unpretrained, refused in ((1.9, False), (2.0, True)):
        made = full_size(results, 3, unpretrained=unpretrained)
        r = experiment("calibrate", write(tmp_path, "a.json", made), "--points", str(points_copy(tmp_path)),
                       "--row", "t")
        assert (r.returncode == 2) == refused, r.stderr
        assert ("cannot tell pretraining from its absence" in r.stderr) == refused, r.stderr


def test_a_rehearsal_of_the_calibration_writes_an_uncalibrated_row_into_a_scratch_copy_only(rehearsal, tmp_path):
    import grader  # noqa: F401
    import graderUtil

    data, _, results, _, _ = rehearsal
    small = copy.deepcopy(results)
    small["seeds"] = {str(k): copy.deepcopy(results["seeds"]["0"]) for k in range(3)}
    files = [write(tmp_path, "small.json", small)]
    r = experiment("calibrate", *files, "--rehearsal", "--row", "tiny")
    assert r.returncode == 2 and "give --points a scratch copy" in r.stderr, r.stderr
    r = experiment("calibrate", *files, "--rehearsal", "--row", "tiny", "--points", str(tmp_path / "none.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is not a file; copy src/points.json" in r.stderr, \
        r.stderr
    points = points_copy(tmp_path)
    r = experiment("calibrate", *files, "--rehearsal", "--row", "tiny", "--points", str(points))
    assert r.returncode == 0, r.stderr
    name, row, _ = graderUtil.select_thresholds(graderUtil.load_points(points)["thresholds"], data)
    assert name == "tiny" and row["calibrated"] is False and "not for grading" in row["evidence"]["accuracy"]["rehearsal"]
    assert set(row["learned"]) == {"vanilla.model.params", "vanilla.finetune.params", "perceiver.finetune.params"}
