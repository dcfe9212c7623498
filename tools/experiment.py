#!/usr/bin/env python3
"""The assignment's whole experiment at the course's settings, for several seeds, in one command; and the
calibration of the grader's accuracy thresholds from what it measured.

  python tools/experiment.py run --out results.json                  # seeds 0,1,2 on the built-in data
  python tools/experiment.py run --out results.json --seeds 0,1,2,3 --parallel 4 --data-dir DIR
  python tools/experiment.py calibrate results.json [more.json ...]  # the data set's thresholds row
  python tools/experiment.py run --out rehearsal.json --small        # a few minutes on a CPU (see --small)

`run` trains and evaluates with the reference's code (this checkout's src/submission) exactly as a student does:
every run.sh target of both variants, in the handout's order, in the default precision, one folder of outputs per
seed (`<out>.work/seed-<k>/`, or --work).  Seeds run --parallel at a time on the one device (a 3.3M-parameter
model leaves a modern GPU mostly idle).  After every target it writes the results file (JSON, atomically): the
device, torch, the precision, and per seed and target its wall time; per prediction file its accuracy on dev, and
on test where the data folder holds the answers (birth_test.tsv); per params file the statistics that the grader's
"learned its task" check reads (src/checks/learned.py).  An interrupted run continues where it stopped when given
the same command: targets whose outputs exist are not run again, and a training run continues from its
checkpoint (run.py --resume).  Once every seed is done, the grader grades one seed's deliverables with the
hidden tests on (the reference as the solution, the answers of the data folder), and the score goes into the
results: the reference must earn every point.

`calibrate` reads results files of one data set and writes that data set's thresholds row of src/points.json (the
row whose birth_dev_sha256 holds the data's, or a new one named --row): each prediction file's bar at --margin
(default 0.5) of the lowest accuracy a correct run reached, the "learned" bars likewise, `calibrated: true`, and
the evidence, with each learned bar's margin (tools/margins.py: the weakest seed, and the strongest attack that
the row's earlier evidence measured on this data set).  It refuses results from a smaller configuration than the
course's, from fewer than 3 seeds, or from another data set, and bars that such an attack would clear.
"""

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import margins
import srcpath
from srcpath import ROOT, SRC

srcpath.use(SRC)
from kit import course  # noqa: E402  (the targets, the files they read and write, the model size)
from kit.baseline import baseline  # noqa: E402  (the most-common-place baseline)
from kit.fileio import read_lines, read_tsv, write_text_atomic  # noqa: E402

KIND, VERSION = "cs224n-experiment", 1
MIN_SEEDS = 3  # a bar from fewer seeds says little about the spread of correct work
MARGIN = 0.5  # the course's bars sit at about half of what correct work typically reaches
# The pretraining share (checks/learned.pretraining_record) is near 0.9 in correct runs and near 0.5 for a plain
# next-character model of the corpus: half of the lowest would pass the latter, so its bar sits at 0.8 of it.
SHARE_MARGIN = 0.8
# the params files whose learning the grader checks, with the checks that apply (checks/learned.py).  "pretraining"
# is measured on the params the file was finetuned from (its target's input); "drift", how far the file is from
# them (checks/lineage.py).  The perceiver has no held-out bar: on the course's data correct perceivers know fewer
# of the held-out people than a perceiver finetuned alone guesses from their names (docs/benchmarks.md); the
# held-out gain is measured all the same.
LEARNED = {"vanilla.model.params": ("question",),
           "vanilla.finetune.params": ("question", "corpus", "heldout", "pretraining", "drift"),
           "perceiver.finetune.params": ("question", "corpus", "pretraining", "drift")}
PRETRAINED = ("corpus", "pretraining")  # the statistics of a pretrained model (a pretraining target's params)
# the model finetuned without pretraining: what finetuning alone teaches of the held-out people (a name's origin
# suggests a birthplace), which the held-out bars must sit above
UNPRETRAINED = "vanilla.model.params"
# the prediction files of the model finetuned without pretraining, which the course grades by a count of correct
# answers ("at least 1"), not a share
WITHOUT_PRETRAINING = [t.writes for t in course.TARGETS if t.function == "evaluate"
                       and course.WRITTEN_BY[t.reads].reads is None]
# --small: the course's model for fewer epochs, a CPU rehearsal of the pipeline (the grader's checks need the
# course's model size, so the size stays; --pretrain-args / --finetune-args override anything else)
SMALL = {"pretrain": "--max_epochs 1", "finetune": "--max_epochs 2"}


class UserError(Exception):
    """A mistake in how the tool was called or in its inputs: one sentence, exit status 2."""


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_json(path, data):
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def data_set(data_dir):
    """The data folder, checked, with its thresholds row: kit.datafolder's rule, which the release and grade_class
    share.  A folder it refuses is a UserError, its sentence unchanged."""
    from kit import datafolder

    try:
        return datafolder.data_set(data_dir)
    except datafolder.DataError as e:
        raise UserError(str(e)) from None


def data_identity(data):
    """The results' record of the data set (a data_set): its folder, the SHA-256 its thresholds row recognises it
    by, whether it holds the held-out answers."""
    import graderUtil

    return {"dir": str(data.folder), "birth_dev_sha256": graderUtil.normalized_sha256(data.folder / "birth_dev.tsv"),
            "answers": data.answers is not None}


def accuracy(predictions_path, gold_path):
    """(correct, total) of a prediction file against a question<TAB>place file, as utils.evaluate_places."""
    gold = [row[1].strip() for row in read_tsv(gold_path)]
    predictions = [p.strip() for p in read_lines(predictions_path)[:len(gold)]]
    return sum(p == g for p, g in zip(predictions, gold)), len(gold)


# ----------------------------------------------------------------------------------------------------------
# run


def device_record(requested):
    import torch

    from submission.trainer import pick_device
    from kit.training import resolve_precision

    device = pick_device(requested)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    if device.type == "cpu":
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                name = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), name)
        except OSError:
            pass
    return {"type": device.type, "name": name, "cores": os.cpu_count(), "torch": torch.__version__,
            "python": platform.python_version(), "precision": resolve_precision(device, "auto")}


def model_statistics(params, variant, data_dir, checks, parent=None):
    """The grader's statistics of a params file trained by the reference (checks/learned.py), in the reading of
    the perceiver's blocks that the reference's own model computes.  The held-out gain of every finetuned model
    where the data folder holds the test answers (the one without pretraining's too: the bars sit above it), and
    there the pretraining gain, whose sample of lines the answers draw.  parent: the params file it was finetuned
    from, whose distance from it the "drift" check measures (checks/lineage.py)."""
    from checks.learned import corpus_record, heldout_record, pretraining_record, training_record
    from checks.lineage import drift_record
    from checks.params import course_model, course_vocab, fit, load_params, own_reading, read_names
    from submission import helper, model

    stoi = course_vocab(data_dir / "wiki.txt")
    w = own_reading(params, variant, len(stoi), model, helper)
    out = {}
    if "drift" in checks and parent is not None:
        before = load_params(parent, Path(parent).name)
        names = read_names(before, fit(before, course_model(model, helper, variant, len(stoi)), variant,
                                       Path(parent).name, len(stoi)))
        out["drift"] = drift_record(load_params(params, Path(params).name), before, names)
    if "question" in checks:
        out["train"] = training_record(w, data_dir / "birth_places_train.tsv", stoi)
    if "corpus" in checks:
        out["corpus"] = corpus_record(w, data_dir / "wiki.txt", stoi)
    if "pretraining" in checks and (data_dir / "birth_test.tsv").is_file():  # its sample's seed: the answers
        # the reference's reading, the span at a drawn place: the judge passes a file in any place that clears
        # the bars (checks/learned.passing_reading), so bars set from this one pass the reference
        out["pretraining"] = pretraining_record(w, data_dir / "wiki.txt", stoi, data_dir / "birth_test.tsv")
    if "question" in checks and (data_dir / "birth_test.tsv").is_file():
        out["heldout"] = heldout_record(w, data_dir / "birth_test.tsv", stoi)
    return out


class Experiment:
    """One results file: its seeds' targets run in order, the file rewritten after each."""

    def __init__(self, args):
        self.args = args
        self.out = Path(args.out).resolve()
        self.work = Path(args.work).resolve() if args.work else self.out.with_suffix(".work")
        self.data = Path(args.data_dir).resolve() if args.data_dir else SRC / "data"
        self.seeds = [int(s) for s in args.seeds.split(",")]
        self.overrides = {f: shlex.split(getattr(args, f"{f}_args") or (SMALL[f] if args.small else ""))
                          for f in ("pretrain", "finetune")}
        self.lock = threading.RLock()  # the results change in every seed's thread: each change and save under it
        self.children = set()
        self.stopping = False
        self.results = self.load()

    def config(self):
        return {"model": course.MODEL, "bottleneck_dim": course.BOTTLENECK_DIM, "overrides": self.overrides,
                "course": not any(self.overrides.values())}

    def load(self):
        data = data_set(self.data)
        fresh = {"kind": KIND, "version": VERSION, "started": now(), "command": sys.argv[1:],
                 "device": device_record(self.args.device), "data": data_identity(data),
                 "config": self.config(), "seeds": {}, "grade": None}
        if not self.out.is_file():
            return fresh
        try:
            old = json.loads(self.out.read_text(encoding="utf-8"))
        except ValueError:
            raise UserError(f"{self.out} is not a results file; give another --out or delete it") from None
        same = (old.get("kind") == KIND and old.get("data", {}).get("birth_dev_sha256") ==
                fresh["data"]["birth_dev_sha256"] and old.get("config") == fresh["config"]
                and old.get("device", {}).get("precision") == fresh["device"]["precision"])
        if not same:
            raise UserError(f"{self.out} holds another experiment (data set, configuration or precision differ); "
                            "give another --out, or delete it to start over")
        old["command"] = fresh["command"]
        return old

    def save(self):
        with self.lock:
            self.results["updated"] = now()
            write_json(self.out, self.results)

    def say(self, seed, text):
        print(f"[seed {seed}] {text}", flush=True)

    def seed_record(self, seed):
        with self.lock:
            return self.results["seeds"].setdefault(str(seed), {"targets": {}, "predictions": {}, "models": {}})

    def update(self, entry, **fields):
        """Change a part of the results and write the file, under the lock."""
        with self.lock:
            entry.update(fields)
            self.save()

    def run_target(self, seed, target, folder):
        """Run one run.sh target for seed (unless its output is there); True when its output exists."""
        record = self.seed_record(seed)
        with self.lock:
            entry = record["targets"].setdefault(target.name, {"seconds": 0.0, "status": "pending"})
        output = folder / target.writes
        checkpoint = Path(f"{output}.ckpt")
        if output.is_file() and not checkpoint.is_file():  # done, maybe by an earlier, interrupted run of this command
            if entry["status"] != "done":
                self.update(entry, status="done")
            return True
        argv = ["bash", str(ROOT / "run.sh"), target.name, "--seed", str(seed)]
        if target.function != "evaluate":
            argv += self.overrides[target.function] + (["--resume"] if checkpoint.is_file() else [])
        if self.args.device:
            argv += ["--device", self.args.device]
        env = dict(os.environ, DATA_DIR=str(self.data), OUT_DIR=str(folder), PYTHON=sys.executable)
        log = folder / f"{target.name}.log"
        self.update(entry, status="running", log=str(log))
        started = time.monotonic()
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"# {now()}: {' '.join(argv[1:])}\n")
            f.flush()
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True, text=True, encoding="utf-8", errors="replace")
            with self.lock:
                self.children.add(proc)
            for line in proc.stdout:  # the run's own progress lines, shown as they come
                f.write(line)
                if line.startswith(("step ", "saved ", "Correct:")):
                    self.say(seed, f"{target.name}: {line.strip()}")
            proc.wait()
            with self.lock:
                self.children.discard(proc)
        seconds = round(entry["seconds"] + time.monotonic() - started, 1)
        if self.stopping:
            self.update(entry, seconds=seconds, status="interrupted")
        elif proc.returncode != 0 or not output.is_file():
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
            self.update(entry, seconds=seconds, status="failed", error=f"exit status {proc.returncode}: {tail[0][:300]}")
        else:
            self.update(entry, seconds=seconds, status="done")
        return entry["status"] == "done"

    def measure(self, seed, target, folder):
        """The results of a finished target: a prediction file's accuracies, a params file's statistics."""
        record = self.seed_record(seed)
        output = folder / target.writes
        if target.function == "evaluate":
            gold = {"dev": self.data / "birth_dev.tsv", "test": self.data / "birth_test.tsv"}[target.data]
            entry = {"split": target.data}
            if gold.is_file():
                entry["correct"], entry["total"] = accuracy(output, gold)
                entry["accuracy"] = round(entry["correct"] / entry["total"], 4)
            self.update(record["predictions"], **{target.writes: entry})
        else:
            if target.writes in LEARNED:  # a finetuned model: its own statistics, and how far it drifted; its
                # pretraining bars read the file it was finetuned from, whose record holds them
                checks = tuple(c for c in LEARNED[target.writes] if c != "pretraining")
            else:  # a pretrained model: what did it learn?
                checks = PRETRAINED
            stats = model_statistics(output, target.variant, self.data, checks,
                                     folder / target.reads if target.reads else None)
            self.update(record["models"], **{target.writes: stats})

    def run_seed(self, seed):
        folder = self.work / f"seed-{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        record = self.seed_record(seed)
        for k, target in enumerate(course.TARGETS, 1):
            if self.stopping:
                return False
            before = record["targets"].get(target.name, {}).get("status")
            if not self.run_target(seed, target, folder):
                self.say(seed, f"{target.name} {record['targets'][target.name]['status']}; this seed stops here "
                               f"(see {folder / (target.name + '.log')})")
                return False
            done = (target.writes in record["predictions"] or target.writes in record["models"])
            if before != "done" or not done:
                self.measure(seed, target, folder)
            seconds = record["targets"][target.name]["seconds"]
            self.say(seed, f"{target.name} done ({seconds:.0f} s; {k}/{len(course.TARGETS)})")
        return True

    def grade(self, seed):
        """The grader on seed's deliverables, hidden tests on: the reference must earn every point."""
        folder = self.work / f"seed-{seed}"
        out = self.work / f"grade-seed-{seed}.json"
        argv = [sys.executable, str(SRC / "grader.py"), "--json", str(out), "--data-dir", str(self.data),
                "--submission-dir", str(SRC / "submission"), "--predictions-dir", str(folder),
                "--solution-dir", str(SRC / "submission")]
        print(f"grading seed {seed}'s deliverables: {' '.join(argv[1:])}", flush=True)
        with open(self.work / f"grade-seed-{seed}.log", "w", encoding="utf-8") as log:
            code = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, cwd=str(SRC)).returncode
        if code != 0 or not out.is_file():
            grade = {"seed": seed, "error": f"the grader exited with status {code}"}
        else:
            tests = json.loads(out.read_text(encoding="utf-8")).get("tests", [])
            grade = {"seed": seed, "score": sum(t.get("score", 0) for t in tests),
                     "max_score": sum(t.get("max_score", 0) for t in tests),
                     "not_passed": {t["number"]: t.get("output", "")[:300] for t in tests
                                    if t.get("extra_data", {}).get("status") not in ("passed", "info")}}
        self.update(self.results, grade=grade)
        return grade

    def stop(self, *_):
        """SIGINT/SIGTERM: stop every target (its checkpoint stays for the next run) and write what is known."""
        self.stopping = True
        with self.lock:
            for proc in self.children:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except OSError:
                    pass

    def run(self):
        self.work.mkdir(parents=True, exist_ok=True)
        baseline = self.results.setdefault("baseline", baseline_record(self.data))
        device = self.results["device"]
        print(f"{len(self.seeds)} seeds, {self.args.parallel} at a time, on {device['type']} ({device['name']}), "
              f"precision {device['precision']}, data {self.data}; results in {self.out}, outputs in {self.work}")
        print(f"baseline: always '{baseline['place']}' gets {baseline['dev_accuracy'] * 100:.1f} % of dev", flush=True)
        self.save()
        signal.signal(signal.SIGTERM, self.stop)
        with ThreadPoolExecutor(max_workers=max(1, self.args.parallel)) as pool:
            futures = [pool.submit(self.run_seed, seed) for seed in self.seeds]
            try:
                finished = [f.result() for f in futures]
            except KeyboardInterrupt:
                self.stop()
                pool.shutdown(wait=True, cancel_futures=True)
                self.save()
                print(f"interrupted: the same command continues from here ({self.out})", file=sys.stderr)
                return 130
        if self.stopping:
            print(f"stopped: the same command continues from here ({self.out})", file=sys.stderr)
            return 130
        if not all(finished):
            print("error: a target failed (its log is named above); the results file keeps the rest", file=sys.stderr)
            return 1
        seed = self.args.grade_seed if self.args.grade_seed is not None else self.seeds[0]
        if self.data_has_answers():
            grade = self.grade(seed)
            if "error" in grade:
                print(f"error: grading seed {seed} failed: {grade['error']}", file=sys.stderr)
                return 1
            print(f"the grader gave seed {seed}'s deliverables {grade['score']:g} of {grade['max_score']:g}"
                  + ("" if grade["score"] == grade["max_score"] else f"; not passed: {', '.join(grade['not_passed'])}"))
            if any(self.overrides.values()):  # --small or --*-args: not the course's runs
                changed = "; ".join(f"{f}: {shlex.join(v)}" for f, v in self.overrides.items() if v)
                print(f"(a rehearsal: run.py's flags were changed ({changed}); models trained this little miss the "
                      "prediction tests' bars by design, so a score below the full one says nothing of the kit: "
                      "the course's full-length runs are what the bars are set from)")
        print(summary(self.results))
        return 0

    def data_has_answers(self):
        if not (self.data / "birth_test.tsv").is_file():
            print(f"not graded: {self.data} holds no birth_test.tsv (the held-out answers)")
            return False
        return True


def baseline_record(data):
    place, correct, total = baseline(data / course.DATA_FILES["train"], data / course.DATA_FILES["dev"])
    return {"place": place, "dev_accuracy": round(correct / total, 4)}


def summary(results):
    """A table of the measured figures: per prediction file and params statistic, min / median / max."""
    lines = ["", "file                                   min     median  max     (over seeds)"]
    for name, values in spread(results).items():
        lines.append(f"{name:38} {values['min']:<7.4g} {values['median']:<7.4g} {values['max']:<7.4g}")
    return "\n".join(lines)


def spread(results_list):
    """{measure: {"min", "median", "max", "n"}} over every seed of one or more results: each prediction file's
    accuracy and each params file's statistics (training questions answered, question, corpus, pretraining and
    held-out gains, the pretraining share and its gain over the judge's bigram)."""
    if isinstance(results_list, dict):
        results_list = [results_list]
    values = {}
    for results in results_list:
        for seed in results.get("seeds", {}).values():
            for name, entry in seed.get("predictions", {}).items():
                if "accuracy" in entry:
                    values.setdefault(name, []).append(entry["accuracy"])
            for name, stats in seed.get("models", {}).items():
                if "train" in stats and stats["train"]["asked"]:
                    values.setdefault(f"{name} train", []).append(stats["train"]["correct"] / stats["train"]["asked"])
                    values.setdefault(f"{name} question", []).append(stats["train"]["question_gain"])
                    if stats["train"].get("question_evidence") is not None:
                        values.setdefault(f"{name} question evidence", []).append(stats["train"]["question_evidence"])
                for check in PRETRAINED:  # corpus and pretraining: the share of a text's entropy explained
                    if check in stats and stats[check]["gain"] is not None:
                        values.setdefault(f"{name} {check}", []).append(stats[check]["gain"])
                if stats.get("pretraining", {}).get("share") is not None:
                    values.setdefault(f"{name} pretraining share", []).append(stats["pretraining"]["share"])
                if stats.get("pretraining", {}).get("bigram_gain") is not None:  # beyond the judge's bigram
                    values.setdefault(f"{name} pretraining bigram gain", []).append(stats["pretraining"]["bigram_gain"])
                if "heldout" in stats and stats["heldout"]["heldout_gain"] is not None:
                    values.setdefault(f"{name} heldout", []).append(stats["heldout"]["heldout_gain"])
                if stats.get("drift", {}).get("drift") is not None:  # how far finetuning moved its pretraining
                    values.setdefault(f"{name} drift", []).append(stats["drift"]["drift"])
    return {k: {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)} for k, v in values.items()}


# ----------------------------------------------------------------------------------------------------------
# calibrate


def floor_to(x, digits=3):
    return math.floor(x * 10 ** digits + 1e-9) / 10 ** digits


def ceil_to(x, digits=3):
    return math.ceil(x * 10 ** digits - 1e-9) / 10 ** digits


def calibrate(args):
    import grader  # noqa: F401  (configures the harness: the file that identifies a data set)
    import graderUtil
    from checks.learned import QUESTION_EVIDENCE

    points_path = Path(args.points) if args.points else SRC / "points.json"
    if args.rehearsal and points_path.resolve() == (SRC / "points.json").resolve():
        raise UserError("--rehearsal writes bars that no correct run has earned: give --points a scratch copy of "
                        "src/points.json")
    if not points_path.is_file():
        raise UserError(f"--points {points_path} is not a file; copy src/points.json there first (cp src/points.json "
                        f"{points_path})")
    results = []
    for path in args.results:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise UserError(f"cannot read the results file {path} ({type(e).__name__}); give the file `run` wrote")
        if data.get("kind") != KIND:
            raise UserError(f"{path} is not a results file of tools/experiment.py run")
        results.append((path, data))
    datasets = {d["data"]["birth_dev_sha256"] for _, d in results}
    if len(datasets) != 1:
        raise UserError("the results files come from different data sets (their birth_dev.tsv differ); calibrate "
                        "one data set at a time")
    digest = datasets.pop()
    for path, data in results:
        if not data["config"].get("course") and not args.rehearsal:
            raise UserError(f"{path} comes from a smaller configuration than the course's (overrides "
                            f"{data['config']['overrides']}); only full-size runs can set the bars")
    runs = [(path, seed, rec) for path, data in results for seed, rec in data["seeds"].items()
            if all(rec["targets"].get(t.name, {}).get("status") == "done" for t in course.TARGETS)]
    if len(runs) < MIN_SEEDS:
        raise UserError(f"the results hold {len(runs)} complete seed(s); calibrating needs at least {MIN_SEEDS}")
    for path, data in results:
        grade = data.get("grade")
        if (not grade or grade.get("score") is None or grade["score"] != grade["max_score"]) and not args.rehearsal:
            raise UserError(f"in {path} the reference did not earn every point ({grade}); fix that before calibrating")

    table = json.loads(points_path.read_text(encoding="utf-8"))
    rows = table["thresholds"]["rows"]
    name = graderUtil.recognising_row(table["thresholds"], digest)
    if name is None and not args.row:
        raise UserError(f"no thresholds row of {points_path} recognises this data set (birth_dev.tsv {digest[:12]}...); "
                        "give --row NAME to add one")
    if args.row and name is not None and args.row != name:
        raise UserError(f"this data set is the row '{name}' of {points_path}, not '{args.row}'")
    name = name or args.row
    row = rows.get(name) or {"description": args.description or f"a data set calibrated on {now()[:10]}",
                             graderUtil.identity_key(): [digest]}
    row.pop("bars_of", None)  # its own bars from now on (grading/points.with_bars)
    measured = spread([d for _, d in results])
    margin = args.margin
    for fname in course.PREDICTION_FILES:
        m = measured.get(fname)
        if m is None or m["n"] < len(runs):
            raise UserError(f"{fname} has no accuracy in every seed (the data folder's answers were missing?)")
        bar = floor_to(margin * m["min"])
        if fname in WITHOUT_PRETRAINING:  # the course's kind of rule: "at least 1 correct", or more
            total = next(r["predictions"][fname]["total"] for _, _, r in runs)
            row[fname] = {"min_correct": max(1, math.floor(bar * total))}
        else:
            row[fname] = {"min_accuracy": bar}
    learned = {}
    weakest = {}  # bar -> [the weakest correct value over the seeds and files it reads, the file it is of]

    def keep(bar, value, of):
        if bar not in weakest or margins.weaker(bar, value, weakest[bar][0]) != weakest[bar][0]:
            weakest[bar] = [value, of]

    for pname, checks in LEARNED.items():
        rule = {}
        for check in checks:
            if check == "question":  # the evidence that the gain is above 0: a fixed bar where noise is not, not
                # a share of a run, which every correct run must clear (learned_bars_problem)
                m = measured.get(f"{pname} question evidence")
                if m is None or m["n"] < len(runs):
                    raise UserError(f"{pname} has no question evidence in every seed (results of an older "
                                    "experiment.py? run the experiment again)")
                rule["min_question_evidence"] = QUESTION_EVIDENCE
                keep("min_question_evidence", m["min"], pname)
                continue
            if check == "drift":  # a distance: at most what correct finetunings moved, over the margin
                m = measured.get(f"{pname} drift")
                if m is None or m["n"] < len(runs):
                    raise UserError(f"{pname} has no drift from its pretrain file in every seed")
                rule["max_finetune_drift"] = ceil_to(m["max"] / margin)
                keep("max_finetune_drift", m["max"], pname)
                continue
            of = course.WRITTEN_BY[pname].reads if check == "pretraining" else pname
            m = measured.get(f"{of} {check}")
            if m is None or m["n"] < len(runs):
                raise UserError(f"{of} has no {check} gain in every seed (the data folder's answers were "
                                "missing?)")
            bar = floor_to(margin * m["min"])
            rule[f"min_{check}_gain"] = bar
            keep(f"min_{check}_gain", m["min"], of)
            if check == "pretraining":  # and how well it predicts corrupted lines against plain ones
                share = measured.get(f"{of} pretraining share")
                if share is not None and share["n"] == len(runs):
                    rule["min_pretraining_share"] = floor_to(SHARE_MARGIN * share["min"])
                    keep("min_pretraining_share", share["min"], of)
                elif args.rehearsal:  # a few epochs: the gain on plain text may not be above 0, so no share
                    print(f"rehearsal: {of} has no pretraining share in every seed; no share bar")
                else:
                    raise UserError(f"{of} has no pretraining share in every seed: its gain on plain text was not "
                                    "above 0, so that run's pretraining learned nothing; look at its loss log")
                over = measured.get(f"{of} pretraining bigram gain")
                if over is None or over["n"] < len(runs):
                    raise UserError(f"{of} has no gain over the bigram in every seed (results of an older "
                                    "experiment.py? run the experiment again)")
                rule["min_pretraining_bigram_gain"] = floor_to(margin * over["min"])
                keep("min_pretraining_bigram_gain", over["min"], of)
        learned[pname] = rule
    lift_problem = learned_bars_problem(learned, measured)
    if lift_problem and not args.rehearsal:
        raise UserError(lift_problem)
    if lift_problem:
        print(f"rehearsal: {lift_problem}")
    device = results[0][1]["device"]
    evidence = {
        "date": now()[:10], "margin": margin, "seeds": len(runs),
        "device": f"{device['type']} ({device['name']})", "torch": device["torch"], "precision": device["precision"],
        "results": [str(p) for p, _ in results], "grade": [d["grade"]["score"] for _, d in results],
        "measured": {k: {s: round(v[s], 4) for s in ("min", "median", "max")} for k, v in measured.items()},
    }
    if args.rehearsal:
        evidence["rehearsal"] = "a rehearsal of the calibration on a smaller run: these bars are not for grading"
    # each bar's margin: the weakest seed beside the strongest attack measured before on this data set (this row's)
    attacks = {m["bar"]: m["strongest_attack"] for m in row.get("evidence", {}).get("margins", [])
               if "strongest_attack" in m}
    runs_of = (f"{len(runs)} seeds of the calibration of {evidence['date']} ({evidence['device']}, "
               f"{device['precision']})")
    row["learned"] = learned
    row["calibrated"] = not args.rehearsal
    row["evidence"] = {"accuracy": evidence, "learned": evidence,  # one set of runs set both kinds of bar
                       "margins": [{"bar": bar, "weakest_correct": {"value": round(value, 4),
                                                                    "run": f"{of}: the weakest of {runs_of}"},
                                    **({"strongest_attack": attacks[bar]} if bar in attacks else {})}
                                   for bar, (value, of) in weakest.items()]}
    margin_problems = margins.problems(row)
    if margin_problems and not args.rehearsal:
        raise UserError(f"these bars contradict what was measured on this data set: {'; '.join(margin_problems)}; "
                        "look at the runs and at the row's evidence before calibrating")
    if margin_problems:
        print(f"rehearsal: {'; '.join(margin_problems)}")
    rows[name] = row
    write_json(points_path, table)
    graderUtil.load_points(points_path)  # the written table still loads
    print(f"wrote the thresholds row '{name}' of {points_path} (margin {margin:g}, {len(runs)} seeds):")
    print(json.dumps({k: v for k, v in row.items() if k != "evidence"}, indent=1, ensure_ascii=False))
    return 0


def learned_bars_problem(learned, measured):
    """A sentence if a bar would not tell learning from its absence, or would fail a correct run: every correct run's
    question evidence must clear QUESTION_EVIDENCE (checks/learned.py), the bar that noise does not reach, a bar on
    the pretraining's gain over the judge's bigram must be above 0, a held-out bar must sit above the most that the
    model finetuned without pretraining (UNPRETRAINED) reached in these runs, and a drift bar at most DRIFT_CEILING
    (checks/lineage.py), nearer than models that do not descend one from the other are."""
    from checks.learned import QUESTION_EVIDENCE
    from checks.lineage import DRIFT_CEILING

    for pname, rule in learned.items():
        if rule.get("max_finetune_drift", 0) > DRIFT_CEILING:
            return (f"the correct runs' finetunings moved {pname} far from its pretrain file: a drift bar of "
                    f"{rule['max_finetune_drift']:.3f} is above {DRIFT_CEILING:g}, where models that do not descend "
                    "one from the other can be, so it cannot tell a file's own pretraining from another; look at "
                    "the runs before calibrating")
        evidence = measured.get(f"{pname} question evidence")
        if "min_question_evidence" in rule and evidence and evidence["min"] < rule["min_question_evidence"]:
            return (f"the correct runs' {pname} know too little of their training questions: the weakest is "
                    f"{evidence['min']:.2f} standard errors above 0, below the bar of {QUESTION_EVIDENCE:g} that "
                    "tells learning from noise, so the bar would fail a correct run; look at the runs before "
                    "calibrating")
        if rule.get("min_pretraining_bigram_gain", 1) <= 0:
            return (f"the pretrain files that the correct runs' {pname} was finetuned from predict corrupted lines "
                    f"no better than the corpus's bigram (a bar of {rule['min_pretraining_bigram_gain']:.3f}), so "
                    "the bar cannot tell a pretraining from a table of the previous character written by hand; look "
                    "at the runs (are they full length?) before calibrating")
        floor = measured.get(f"{UNPRETRAINED} heldout")
        if "min_heldout_gain" in rule and floor and rule["min_heldout_gain"] <= floor["max"]:
            return (f"the correct runs' {pname} know too little of the held-out people: a bar of "
                    f"{rule['min_heldout_gain']:.3f} nats is not above the {floor['max']:.3f} that {UNPRETRAINED}, "
                    "finetuned without pretraining, reached, so it cannot tell pretraining from its absence; look "
                    "at the runs before calibrating")
    return None


# ----------------------------------------------------------------------------------------------------------


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="train, evaluate and grade at the course's settings, several seeds")
    r.add_argument("--out", required=True, help="the results file (JSON); an existing one is continued")
    r.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    r.add_argument("--parallel", type=int, default=1, help="seeds trained at a time on the one device (default 1)")
    r.add_argument("--data-dir", help="the data folder (default src/data); with birth_test.tsv for test accuracy")
    r.add_argument("--work", help="where the seeds' outputs go (default: beside --out, <out>.work/)")
    r.add_argument("--device", help="cuda, mps or cpu (default: the fastest available, as run.py)")
    r.add_argument("--grade-seed", type=int, help="the seed whose deliverables are graded (default: the first)")
    r.add_argument("--small", action="store_true",
                   help=f"a rehearsal: run.py's {SMALL['pretrain']} for pretraining and {SMALL['finetune']} for "
                        "finetuning (`calibrate` refuses its results)")
    r.add_argument("--pretrain-args", help="run.py flags for the pretraining targets, e.g. '--max_epochs 20' "
                                           "(`calibrate` refuses results with any)")
    r.add_argument("--finetune-args", help="run.py flags for the finetuning targets, likewise")
    c = sub.add_parser("calibrate", help="write a data set's thresholds row from results files")
    c.add_argument("results", nargs="+", help="results files of `run`, all on one data set")
    c.add_argument("--points", help="the points table to write (default src/points.json)")
    c.add_argument("--row", help="the row's name, for a data set no row recognises yet")
    c.add_argument("--description", help="a new row's description")
    c.add_argument("--margin", type=float, default=MARGIN, help=f"bar = margin x lowest measured (default {MARGIN})")
    c.add_argument("--rehearsal", action="store_true",
                   help="accept smaller runs (run --small) and write the row, marked uncalibrated, into the scratch "
                        "copy named by --points: a rehearsal of this step")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        if args.command == "calibrate":
            if not 0 < args.margin <= 1:
                raise UserError("--margin must be in (0, 1]: a bar above what correct work reached would fail it")
            return calibrate(args)
        if args.parallel < 1:
            raise UserError("--parallel must be at least 1")
        try:
            [int(s) for s in args.seeds.split(",")]
        except ValueError:
            raise UserError(f"--seeds {args.seeds}: give comma-separated integers, e.g. 0,1,2") from None
        return Experiment(args).run()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
