"""How the tests grade: a copy of src/ to grade (with mutations of the student's files), a reference `solution`,
a data world, prediction files, and the ways to run a grading (grader.py in a process of its own, or its steps in
this process: grade_here).  tests/checks/, tests/harness/ and tests/tools/ share them; their fixtures are in
conftest.py."""

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from warnings import catch_warnings, simplefilter

import course_params
from conftest import SRC, make_world

import grader
import graderUtil
from kit.fileio import read_tsv

PENDING = grader.PENDING_MESSAGE
POINTS = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["tests"]
PREDICTION_TESTS = {"1d-0-hidden": "vanilla.nopretrain.dev.predictions",
                    "1d-1-hidden": "vanilla.nopretrain.test.predictions",
                    "1f-1-hidden": "vanilla.pretrain.dev.predictions",
                    "1f-2-hidden": "vanilla.pretrain.test.predictions",
                    "1g-1-hidden": "perceiver.pretrain.dev.predictions",
                    "1g-2-hidden": "perceiver.pretrain.test.predictions"}



def copy_src(dest, mutations=None, append=None):
    """Copy the grader's files (grader.GRADING_FILES) and the submission package into dest/src; apply mutations
    {file in submission/: [(old, new), ...]} (each `old` must occur, so a mutation never silently misses) and
    append code {file in submission/: text} (a class or function defined again at the end of a module replaces
    the reference's, whatever the reference's code looks like)."""
    src = Path(dest) / "src"
    src.mkdir(parents=True)
    for name in graderUtil.grading_paths(grader.GRADING_FILES):  # the grader's one list of what a grading copy needs
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SRC / name, src / name)
    shutil.copytree(SRC / "submission", src / "submission",
                    ignore=shutil.ignore_patterns("__pycache__", "*.params", "*.predictions", "*.tmp*"))
    for name, edits in (mutations or {}).items():
        path = src / "submission" / name
        text = path.read_text(encoding="utf-8")
        for old, new in edits:
            assert old in text, f"mutation target not found in {name}: {old!r}"
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    for name, code in (append or {}).items():
        path = src / "submission" / name
        path.write_text(path.read_text(encoding="utf-8") + "\n\n" + textwrap.dedent(code), encoding="utf-8")
    return src


def make_solution(dest):
    """A reference `solution` package: the instructor's src/submission, copied."""
    pkg = Path(dest) / "solution"
    shutil.copytree(SRC / "submission", pkg, ignore=shutil.ignore_patterns("__pycache__", "*.params", "*.predictions"))
    return pkg


def make_data(dest, answers=True):
    """The tiny world of conftest plus, optionally, the held-out answers birth_test.tsv; the dev and held-out
    answers are those of the course-size models of tests/course_params.py, so that their own predictions
    (write_predictions' "correct") are right and agree with the params submitted with them."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    make_world(dest)
    return course_params.fit_data(dest, held_out=answers)


def gold(data, split):
    name = "birth_dev.tsv" if split == "dev" else "birth_test.tsv"
    return [row[1] for row in read_tsv(Path(data) / name)]


def write_predictions(folder, data, kind):
    """Prediction files built from the answers, beside the params of the models whose answers the data holds
    (make_data): all correct (what the params give), all wrong (what they do not give), or one line short."""
    folder = Path(folder)
    course_params.copy_params(data, folder)
    for fname in PREDICTION_TESTS.values():
        answers = gold(data, "dev" if ".dev." in fname else "test")
        if kind == "correct":
            lines = answers
        elif kind == "wrong":
            lines = ["Atlantis"] * len(answers)
        elif kind == "short":
            lines = answers[:-1]
        else:
            raise ValueError(kind)
        (folder / fname).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


class Run:
    def __init__(self, proc, results, seconds):
        self.proc, self.json, self.seconds = proc, results, seconds
        self.stdout = proc.stdout
        self.tests = {t["number"]: t for t in results["tests"]} if results else {}

    def status(self, tid):
        """The status results.json states (passed, failed, info or pending), checked against Gradescope's own
        field, which only knows passed and failed."""
        t = self.tests[tid]
        status = t["extra_data"]["status"]
        assert t.get("status") == {"info": "passed", "pending": None}.get(status, status), t
        return status

    def failed(self):
        return sorted(tid for tid in self.tests if self.status(tid) == "failed")

    def passed(self):
        return sorted(tid for tid in self.tests if self.status(tid) == "passed")


def run_grader(src, *selection, data=None, solution=None, predictions=None, extra=(), cwd=None, timeout=300,
               launcher=()):
    """Run src's grader.py on `selection` (through `launcher`, a command that runs the rest of the command line,
    when given) and return its Run; the grader must finish and write results.json."""
    out = Path(src).parent / f"results-{len(list(Path(src).parent.glob('results-*.json')))}.json"
    args = [*launcher, sys.executable, str(Path(src) / "grader.py"), *selection, "--json", str(out), *extra]
    if data is not None:
        args += ["--data-dir", str(data)]
    if solution is not None:
        args += ["--solution-dir", str(solution)]
    if predictions is not None:
        args += ["--predictions-dir", str(predictions)]
    import time

    started = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd or str(src))
    seconds = time.monotonic() - started
    results = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert results is not None, proc.stdout[-3000:]
    assert "Total basic" in proc.stdout or "Total hidden" in proc.stdout or "Extra credit" in proc.stdout
    return Run(proc, results, seconds)


def grade_here(src, *selection, data, solution=None):
    """{test id: "passed" or "failed"}: the verdicts the grader gives src's submission on `selection` (judged_here's
    statuses)."""
    return {t: r["status"] for t, r in judged_here(src, *selection, data=data, solution=solution).items()}


def judged_here(src, *selection, data, solution=None):
    """{test id: {"status": "passed" or "failed", "message": the test's message}}: what the grader gives src's
    submission on `selection`, computed in this process with the harness's own steps: each group's tests beside a
    fresh import of the student's code, as a fresh worker runs them (without the reference), then each passed
    test's judge (a judging Context, which never imports student code), both through grading.worker.run_test,
    which seeds each test from its id as a worker does; a test slower than its time limit fails, and vouching
    applies as in the parent (grading.vouching.vouch).  What the grader's processes add (privileges, memory limits,
    the protocol, judges apart from the student's code, the summary) is tested through the grader itself; the other
    correct readings, the planted bugs and the checks' messages need the verdicts and the messages, and each of
    them would otherwise cost a grader run (its fork server's torch import, a worker and a judge).  The agreement
    of the two ways is a test (test_grading_here_gives_the_graders_verdicts)."""
    import torch

    from grading import vouching
    from grading.cli import in_order
    from grading.context import Context
    from grading.worker import run_test

    specs = dict(grader.REGISTRY)
    tids = in_order(specs, selection)
    assert tids and not any("answers" in specs[t].needs for t in tids), "prediction tests need the grader itself"
    assert not any(specs[t].info or specs[t].check is None for t in tids), "only tests whose judge decides them"
    tids = [t for t in tids if solution is not None or "solution" not in specs[t].needs]
    reports = Path(src).parent / f"reports-{len(list(Path(src).parent.glob('reports-*')))}"
    reports.mkdir()
    cfg = {"submission_dir": str(Path(src) / "submission"), "solution_dir": None, "data_dir": str(data),
           "predictions_dir": str(reports), "report_dir": str(reports)}
    groups = {}
    for t in tids:
        groups.setdefault(specs[t].group, []).append(t)

    def take_the_submission_modules():  # this process's submission.* (another test's): each group imports its own
        return {m: sys.modules.pop(m) for m in list(sys.modules) if m == "submission" or m.startswith("submission.")}

    def run(tid, ctx):
        status, message, vouches, _, _, seconds = run_test(specs[tid], tid, ctx)
        if message.startswith("KeyboardInterrupt"):
            raise KeyboardInterrupt
        if seconds > specs[tid].timeout:
            status, message = "failed", f"timed out after {specs[tid].timeout} s"
        return {"status": status, "message": message, "vouches": vouches}

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a worker's
    others = take_the_submission_modules()
    results = {}
    try:
        with catch_warnings():
            simplefilter("ignore")  # the student code's warnings go to its output in a worker, not to pytest's
            for group in groups.values():
                take_the_submission_modules()
                student = Context(cfg, lambda message: None)
                results.update({t: run(t, student) for t in group})
            take_the_submission_modules()
            judge = Context(dict(cfg, judge=True, solution_dir=str(solution) if solution else None),
                            lambda message: None)
            for t in [t for t in tids if results[t]["status"] == "passed"]:
                results[t] = run(t, judge)
    finally:
        take_the_submission_modules()
        sys.modules.update(others)
        torch.set_num_threads(threads)
    vouching.vouch([specs[t] for t in tids], results)
    return {t: {"status": r["status"], "message": r["message"]} for t, r in results.items()}


def failed_here(verdicts):
    return sorted(t for t, status in verdicts.items() if status == "failed")


def validate_results_json(results, visibility="visible"):
    """The fields of Gradescope's results.json that the grader promises (hidden tests' results shown as
    `visibility` says: the course's default shows them)."""
    assert isinstance(results["score"], (int, float))
    assert isinstance(results["execution_time"], (int, float))
    assert isinstance(results["output"], str)
    assert isinstance(results["tests"], list) and results["tests"]
    for t in results["tests"]:
        assert set(t) >= {"name", "number", "score", "max_score", "output", "visibility"}
        assert isinstance(t["name"], str) and isinstance(t["number"], str) and isinstance(t["output"], str)
        assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
        assert 0 <= t["score"] <= t["max_score"] or "extra credit" in t.get("tags", [])
        assert t["visibility"] == (visibility if t["number"].endswith("-hidden") else "visible")
        assert t["extra_data"]["status"] in ("passed", "failed", "info", "pending")
    assert results["score"] == sum(t["score"] for t in results["tests"])


REGION = re.compile(r"^([ \t]*)### START CODE HERE ###\n.*?^[ \t]*### END CODE HERE ###", re.M | re.S)


def empty_student_parts(src):
    """Empty every START/END region of the copied submission, keeping the markers and a `pass`."""
    emptied = 0
    for path in (src / "submission").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        new, n = REGION.subn(lambda m: f"{m[1]}### START CODE HERE ###\n{m[1]}pass\n{m[1]}### END CODE HERE ###", text)
        path.write_text(new, encoding="utf-8")
        emptied += n
    return emptied


def answers_of(path):
    return [line.split("\t")[1] for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def rehearse(bundle, root, files, prepare=None):
    """Lay out Gradescope's folders under root, upload files {name: text or bytes} as the student does (the flat
    zip that collect_submission writes, which Gradescope unpacks into submission/), run the bundle.
    prepare(source), when given, returns more files to upload, after changing the unpacked bundle (its data)."""
    import zipfile

    import collect_submission

    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    if prepare is not None:
        files = {**files, **prepare(root / "source")}
    mine = root / "student"
    mine.mkdir()
    for name, text in files.items():
        if isinstance(text, bytes):
            (mine / name).write_bytes(text)
        else:
            (mine / name).write_text(text, encoding="utf-8")
    assert collect_submission.main(["--submission_dir", str(mine), "--out", str(root / "submission.zip")]) == 0
    with zipfile.ZipFile(root / "submission.zip") as zf:
        assert all("/" not in n for n in zf.namelist())
        zf.extractall(root / "submission")
    if "grader.py" in files:  # an extra file uploaded by hand must be ignored
        (root / "submission" / "grader.py").write_text(files["grader.py"], encoding="utf-8")
    # setup.sh's venv, standing in: a script under the venv's path that runs this Python (run_autograder
    # must run the grader with it; a symbolic link would lose this Python's own venv, if it runs in one).  And
    # Gradescope runs its own copy of run_autograder, in /autograder, not the bundle's.
    (root / "venv" / "bin").mkdir(parents=True)
    (root / "venv" / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (root / "venv" / "bin" / "python").chmod(0o755)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    r = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True,
                       env={**__import__("os").environ, "AUTOGRADER_ROOT": str(root)}, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    import json

    results = json.loads((root / "results" / "results.json").read_text())
    for test in results["tests"]:
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
    return results
