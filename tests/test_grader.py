"""The autograder (src/grader.py): fair to the reference solution, strict with planted bugs, never dies.

Every run grades a copy of src/ in a temporary folder (so submissions can be emptied or broken there) on a
tiny self-made data world; the reference solution is a copy of src/submission importable as `solution`.
"""

import hashlib
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from warnings import catch_warnings, simplefilter

import pytest

import course_params
from conftest import COURSE_DATA, ROOT, SRC, make_world

import grader
import graderUtil

PENDING = grader.PENDING_MESSAGE
POINTS = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["tests"]
PREDICTION_TESTS = {"1d-0-hidden": "vanilla.nopretrain.dev.predictions",
                    "1d-1-hidden": "vanilla.nopretrain.test.predictions",
                    "1f-0-hidden": "vanilla.pretrain.dev.predictions",
                    "1f-1-hidden": "vanilla.pretrain.test.predictions",
                    "1g-2-hidden": "perceiver.pretrain.dev.predictions",
                    "1g-3-hidden": "perceiver.pretrain.test.predictions"}
SOLUTION_TESTS = ["1c-0-hidden", "1g-0-hidden", "1g-1-hidden"]
# the handout's points per part: 64 for the coding parts, 10 of extra credit for the written part
HANDOUT_POINTS = {"1c": 4, "1d": 6, "1e": 20, "1f": 20, "1g": 14}
EXTRA_CREDIT = {"3a": 2, "3b": 2, "3c": 3, "3d": 3}


# -- helpers ---------------------------------------------------------------------------------------------


def copy_src(dest, mutations=None, append=None):
    """Copy the grader's files (grader.GRADING_FILES) and the submission package into dest/src; apply mutations {file in submission/: [(old, new), ...]} (each `old` must occur, so
    a mutation never silently misses) and append code {file in submission/: text} (a class or function defined
    again at the end of a module replaces the reference's, whatever the reference's code looks like)."""
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
    return [line.split("\t")[1] for line in (Path(data) / name).read_text(encoding="utf-8").splitlines()]


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
    """{test id: "passed" or "failed"}: the verdicts the grader gives src's submission on `selection`, computed
    in this process with the harness's own steps: each group's tests beside a fresh import of the student's code,
    as a fresh worker runs them (without the reference), then each passed test's judge (a judging Context, which
    never imports student code), both through grading.worker.run_test, which seeds each test from its id as a
    worker does; a test slower than its time limit fails, and vouching applies as in the parent
    (grading.report.vouch).  What the grader's processes add (privileges, memory limits, the protocol, judges
    apart from the student's code, the summary) is tested through the grader itself; the other correct readings
    and the planted bugs need the verdicts, and each of them would otherwise cost a grader run (its fork
    server's torch import, a worker and a judge).  The agreement of the two ways is a test
    (test_grading_here_gives_the_graders_verdicts)."""
    import torch

    from grading import report
    from grading.cli import in_order
    from grading.context import Context
    from grading.worker import run_test

    specs = dict(grader.REGISTRY)
    tids = in_order(specs, selection)
    assert tids and not any("answers" in specs[t].needs for t in tids), "prediction tests need the grader itself"
    assert not any(specs[t].info or specs[t].judge is None for t in tids), "only tests whose judge decides them"
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
        status, message, vouches, seconds = run_test(specs[tid], tid, ctx)
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
    report.vouch([specs[t] for t in tids], results)
    return {t: r["status"] for t, r in results.items()}


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


# -- fixtures ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def public_data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("public"), answers=False)


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    return make_solution(tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="module")
def reference_src(tmp_path_factory):
    return copy_src(tmp_path_factory.mktemp("ref-src"))


# -- the table ---------------------------------------------------------------------------------------------


def test_points_table_matches_the_registered_tests():
    assert set(POINTS) == set(grader.REGISTRY)
    for tid, pts in POINTS.items():
        assert re.fullmatch(r"[1-9][a-z]-\d+-(basic|hidden)", tid)
        assert isinstance(pts, int) and pts >= 0
        if tid in grader.REGISTRY and not grader.REGISTRY[tid].extra_credit:
            assert (pts == 0) == grader.REGISTRY[tid].info


def _local_imports(path):
    """The files of src/ that the Python file `path` imports, anywhere in it (inside functions and try blocks
    too, `from . import x` included), named as in GRADING_FILES: a module of a package brings the package's
    __init__.py too (`from grading.runner import Runner`: grading/__init__.py and grading/runner.py)."""
    import ast

    package = path.resolve().parent.relative_to(SRC.resolve()).parts  # () for a module of src/ itself
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()
            module = ".".join(base + tuple(node.module.split(".") if node.module else ()))
            names = ([module] if module else []) + [f"{module}.{a.name}" if module else a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "submission":  # the student's package: a grading copy gets it from the submission
                continue
            for k in range(1, len(parts) + 1):
                here = SRC.joinpath(*parts[:k])
                if here.with_suffix(".py").is_file():
                    found.add("/".join(parts[:k]) + ".py")
                elif (here / "__init__.py").is_file():
                    found.add("/".join(parts[:k]) + "/__init__.py")
                else:
                    break
    return found


def test_grading_files_hold_every_module_the_grader_imports():
    """grader.GRADING_FILES is the one list of what a grading copy needs (grade_class copies it, the bundle is
    checked against it, a worker imports it before it drops its privileges): every module of src/ that one of
    its files imports is in it, and so is the points table."""
    listed = set(graderUtil.grading_paths(grader.GRADING_FILES))
    assert "points.json" in listed and all((SRC / name).is_file() for name in listed)
    for name in sorted(n for n in listed if n.endswith(".py")):
        missing = _local_imports(SRC / name) - listed
        assert not missing, f"{name} imports {sorted(missing)}, which grader.GRADING_FILES lacks"
    # the check sees an import hidden in a function, as checks/written.py's of attention_simulation is, and the
    # harness's package module by module
    assert "attention_simulation.py" in _local_imports(SRC / "checks/written.py")
    assert {"grading/__init__.py", "grading/cli.py", "grading/registry.py"} <= _local_imports(SRC / "graderUtil.py")
    assert "grading/protocol.py" in _local_imports(SRC / "grading" / "runner.py")


def test_points_add_up_to_the_handouts_per_part():
    written = {t for t, spec in grader.REGISTRY.items() if spec.extra_credit}
    assert written == {"3a-0-basic", "3b-0-basic", "3c-0-basic", "3d-0-basic", "3d-1-basic", "3d-2-basic",
                       "3e-0-basic", "1g-9-basic"}
    per_part = {}
    for tid, pts in POINTS.items():
        per_part.setdefault(tid.split("-")[0], [0, 0])[tid in written] += pts
    assert {part: pts for part, (pts, _) in per_part.items() if pts or part in HANDOUT_POINTS} == HANDOUT_POINTS
    assert {part: pts for part, (_, pts) in per_part.items() if pts} == EXTRA_CREDIT
    assert sum(HANDOUT_POINTS.values()) == 64 and sum(EXTRA_CREDIT.values()) == 10
    # checks beyond the handout are practice: the written 3e and the 1g attention-cost check earn nothing
    assert POINTS["3e-0-basic"] == 0 and POINTS["1g-9-basic"] == 0
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]
    assert table["default"] in table["rows"]
    for row in table["rows"].values():
        assert set(PREDICTION_TESTS.values()) <= set(row)
    course = table["rows"]["course"]
    assert course["vanilla.pretrain.dev.predictions"] == {"min_accuracy": 0.10}
    assert course["vanilla.pretrain.test.predictions"] == {"min_accuracy": 0.09}
    # the course grader's bar for this version (the handout's 6 % is an expectation, not the bar)
    assert course["perceiver.pretrain.dev.predictions"] == {"min_accuracy": 0.024}
    assert course["perceiver.pretrain.test.predictions"] == {"min_accuracy": 0.020}
    assert "2.4%" in course["description"] and "expectation" in course["description"]
    assert course["vanilla.nopretrain.dev.predictions"] == {"min_correct": 1}


def test_threshold_row_is_chosen_by_the_data(tmp_path, data):
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]
    name, row, recognised = grader.select_thresholds(table, data)
    assert (name, recognised) == ("course", False) and row is table["rows"]["course"]
    digest = hashlib.sha256((data / "birth_dev.tsv").read_bytes()).hexdigest()
    table["rows"]["builtin"]["birth_dev_sha256"] = [digest]
    assert grader.select_thresholds(table, data)[:3:2] == ("builtin", True)
    crlf = tmp_path / "crlf"
    crlf.mkdir()
    (crlf / "birth_dev.tsv").write_bytes((data / "birth_dev.tsv").read_bytes().replace(b"\n", b"\r\n"))
    assert grader.select_thresholds(table, crlf)[0] == "builtin"  # line endings do not matter
    assert grader.select_thresholds(table, tmp_path / "nowhere")[:3:2] == ("course", False)


@pytest.mark.skipif(not (COURSE_DATA / "birth_dev.tsv").is_file(), reason="official course data not present")
def test_course_data_is_recognised():
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]
    assert grader.select_thresholds(table, COURSE_DATA)[:3:2] == ("course", True)


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
    assert "% on dev" in r.tests["1d-0-basic"]["output"]  # the baseline number is reported


def test_hidden_tests_are_graded_with_solution_and_answers(tmp_path, data, solution):
    """Everything graded, the written part included: the reference earns exactly 64 points + 10 extra credit."""
    src = copy_src(tmp_path)
    predictions = write_predictions(tmp_path / "pred", data, "correct")
    r = run_grader(src, data=data, solution=solution, predictions=predictions)
    validate_results_json(r.json)
    assert r.failed() == [], r.stdout
    assert "Total: 64/64 points" in r.stdout and "Extra credit: 10/10 points" in r.stdout
    assert r.json["score"] == 74 and sum(t["max_score"] for t in r.json["tests"]) == 74
    assert r.tests["3e-0-basic"]["max_score"] == 0 and r.tests["3e-0-basic"]["tags"] == ["practice"]
    assert "10/10 correct" in r.tests["1f-0-hidden"]["output"]


@pytest.mark.parametrize("visibility", ["visible", "after_published"])
def test_hidden_results_are_shown_only_as_the_instructor_says(tmp_path, data, solution, visibility):
    """points.json's hidden_visibility (or --hidden-visibility) decides who sees a hidden test's result.  The
    course's behaviour, the default, shows everything; after_published leaves nothing that a student sees
    (results.json's top-level output and score, the grader's printed lines, which Gradescope keeps as stdout)
    telling a hidden test's result or the hidden total, while each hidden test's entry keeps its result for
    the day grades are published."""
    src = copy_src(tmp_path, mutations={"dataset.py": [("int(self.block_size * 3 / 4)", "int(self.block_size * 3 / 4) - 1")]})
    if visibility != "visible":
        table = json.loads((src / "points.json").read_text(encoding="utf-8"))
        table["hidden_visibility"] = visibility
        (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    predictions = write_predictions(tmp_path / "pred", data, "correct")
    (predictions / "vanilla.pretrain.dev.predictions").write_text("Atlantis\n" * 10, encoding="utf-8")
    r = run_grader(src, "1e-1-basic", "1f", "1g-0-hidden", data=data, solution=solution, predictions=predictions)
    validate_results_json(r.json, visibility) if visibility == "visible" else None
    hidden = {"1f-0-hidden": "failed", "1f-1-hidden": "passed", "1g-0-hidden": "passed"}
    for tid, status in hidden.items():  # the results are all there, for the instructor and for later
        assert r.tests[tid]["visibility"] == visibility and r.status(tid) == status
    assert r.status("1e-1-basic") == "failed" and r.tests["1e-1-basic"]["visibility"] == "visible"
    seen = [r.json["output"]] + ([r.stdout] if r.json["stdout_visibility"] == "visible" else [])
    if visibility == "visible":
        assert "Total hidden: 9/14 points" in r.json["output"] and r.json["score"] == 9 + 7
        assert all(re.search(rf"{tid}\s.*(PASS|FAIL)", r.json["output"]) for tid in hidden)
        return
    assert "score" not in r.json and r.json["stdout_visibility"] == "hidden"  # Gradescope adds the tests up
    for text in seen + [r.stdout]:  # the printed lines keep it to themselves too
        assert "Total hidden" not in text and "Total:" not in text and "10/10 correct" not in text
        for tid in hidden:
            lines = [line for line in text.splitlines() if tid in line]
            assert lines and not any(re.search(r"PASS|FAIL|passed|failed|\d+/(5|8|1)\b", l) for l in lines), lines
    assert "Total basic: 7/11 points" in r.json["output"]  # the visible tests' results stay visible
    assert "1e-1-basic" in r.json["output"] and "FAIL" in r.json["output"]


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
    writes its own reports can claim.  Where the reference runs, they count only with 1g-0-hidden, which compares
    the values; on the student's machine they stand alone.  Under after_published their result is kept with
    the hidden ones' (it would tell 1g-0-hidden's); the up block's, whose comparison passed, counts."""
    src = copy_src(tmp_path, append={"model.py": SHIFTED_DOWN_BLOCK})
    vouched = ["1g-0-basic", "1g-2-basic"]
    if grading != "visible":
        table = json.loads((src / "points.json").read_text(encoding="utf-8"))
        table["hidden_visibility"] = "visible" if grading == "student" else grading
        (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    r = run_grader(src, *vouched, "1g-3-basic", "1g-7-basic", "1g-0-hidden", "1g-1-hidden", data=data,
                   solution=None if grading == "student" else solution)
    if grading == "student":
        assert r.status("1g-0-hidden") == "pending" and all(r.status(t) == "passed" for t in vouched), r.stdout
        return
    assert r.status("1g-0-hidden") == "failed" and r.status("1g-1-hidden") == "passed", r.stdout
    assert r.status("1g-3-basic") == "passed" and r.tests["1g-3-basic"]["score"] == 1
    for tid in vouched:
        assert r.status(tid) == "failed" and r.tests[tid]["score"] == 0
        assert "counts only when 1g-0-hidden finds" in r.tests[tid]["output"]
    if grading == "visible":
        assert "Total basic: 2/4 points" in r.json["output"] and r.json["score"] == 3
        return
    assert r.tests["1g-0-basic"]["visibility"] == r.tests["1g-3-basic"]["visibility"] == "after_published"
    for text in (r.json["output"], r.stdout):
        lines = [line for line in text.splitlines() if "1g-0-basic" in line]
        assert lines and not any(re.search(r"PASS|FAIL", line) for line in lines), lines
        assert "counts only when" not in text
    assert "Total basic: 1/1 points" in r.json["output"]  # 1g-7-basic, which nothing vouches for
    assert "and 3 basic tests worth 3 points that they vouch for" in r.json["output"]


def test_solution_found_as_an_importable_package(tmp_path, reference_src, solution, data):
    """Without --solution-dir the grader looks for an importable `solution` package (the grading bundle's)."""
    shutil.copytree(solution, reference_src / "solution")
    try:
        r = run_grader(reference_src, *SOLUTION_TESTS, data=data)
    finally:
        shutil.rmtree(reference_src / "solution")
    assert r.passed() == sorted(SOLUTION_TESTS)


@pytest.mark.parametrize("kind", ["wrong", "short"])
def test_prediction_files_that_fail(tmp_path, reference_src, data, solution, kind):
    predictions = write_predictions(tmp_path / "pred", data, kind)
    r = run_grader(reference_src, *PREDICTION_TESTS, data=data, solution=solution, predictions=predictions)
    assert r.failed() == sorted(PREDICTION_TESTS)
    for tid, fname in PREDICTION_TESTS.items():
        out = r.tests[tid]["output"]
        assert fname in out
        if kind == "wrong":  # lines the params do not give: nothing counts
            assert "earns no accuracy points" in out and "differ on 10 of 10 lines" in out, out
            assert "line 1: the file says 'Atlantis'" in out, out
        else:
            assert "has 9 lines but there are 10 questions" in out


def test_missing_prediction_files_name_the_target(tmp_path, reference_src, data, solution):
    r = run_grader(reference_src, "1d-0-hidden", "1g-3-hidden", data=data, solution=solution, predictions=tmp_path)
    assert "./run.sh vanilla_eval_dev_without_pretrain" in r.tests["1d-0-hidden"]["output"]
    assert "./run.sh perceiver_eval_test_with_pretrain" in r.tests["1g-3-hidden"]["output"]


def test_thresholds_come_from_the_row_of_the_data(tmp_path, data, solution):
    """A calibrated row for the tiny world: 5 of 10 right passes 40 %, fails 60 %.  The predictions are what
    the params give; half of the answers are other places."""
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
    pred = write_predictions(tmp_path / "pred", data, "correct")
    r = run_grader(src, "1f-0-hidden", "1f-1-hidden", data=half_right, solution=solution, predictions=pred)
    assert r.status("1f-0-hidden") == "passed" and r.status("1f-1-hidden") == "failed"
    assert "'builtin'" in r.tests["1f-1-hidden"]["output"] and "60%" in r.tests["1f-1-hidden"]["output"]
    assert "accuracy thresholds: 'builtin' (recognised by its birth_dev.tsv, uncalibrated)" in r.stdout


# -- an empty submission -----------------------------------------------------------------------------------

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


# each test's failure message must name the missing piece
MISSING_PIECE = {
    "1c-0-basic": "initialize_vanilla_model", "1c-1-basic": "finetune", "1c-2-basic": "train",
    "1c-0-hidden": "initialize_vanilla_model",
    "1e-0-basic": "__getitem__", "1e-1-basic": "__getitem__", "1e-2-basic": "__getitem__",
    "1e-3-basic": "__getitem__", "1e-4-basic": "__getitem__", "1e-5-basic": "__getitem__",
    "1e-6-basic": "__getitem__",
    "1f-0-basic": "pretrain", "1f-1-basic": "finetune",
    "1g-0-basic": "DownProjectBlock", "1g-1-basic": "DownProjectBlock", "1g-2-basic": "DownProjectBlock",
    "1g-3-basic": "UpProjectBlock", "1g-4-basic": "UpProjectBlock", "1g-5-basic": "initialize_perceiver_model",
    "1g-6-basic": "initialize_perceiver_model", "1g-7-basic": "DownProjectBlock",
    "1g-0-hidden": "DownProjectBlock", "1g-1-hidden": "UpProjectBlock",
    **PREDICTION_TESTS,
}


def test_empty_submission_runs_to_the_summary_and_earns_nothing(tmp_path, data, solution):
    src = copy_src(tmp_path)
    assert empty_student_parts(src) >= 8
    r = run_grader(src, data=data, solution=solution, predictions=tmp_path / "no-predictions")
    validate_results_json(r.json)
    assert r.json["score"] == 0
    assert sorted(MISSING_PIECE) == sorted(t for t, spec in grader.REGISTRY.items()
                                           if POINTS[t] and not spec.extra_credit)
    for tid, piece in MISSING_PIECE.items():
        assert r.status(tid) == "failed", (tid, r.tests[tid]["output"])
        assert piece in r.tests[tid]["output"], (tid, r.tests[tid]["output"])
    for tid in (t for t, spec in grader.REGISTRY.items() if spec.extra_credit and POINTS[t]):
        assert r.status(tid) == "failed" and "not implemented" in r.tests[tid]["output"], tid
    assert "Traceback" not in r.stdout


# The attack of issue 28: student code walks up the stack to the worker's loop, takes its `send` (which signs with
# the key the worker holds), reports the test that runs as passed and exits before the test's own result.
FORGE_VERDICTS = """
import os as _os
import sys as _sys
_frame = _sys._getframe()
while _frame is not None and not ("send" in _frame.f_locals and "tid" in _frame.f_locals):
    _frame = _frame.f_back
if _frame is not None:  # the worker's loop, whose tid is the test that runs now
    _frame.f_locals["send"]({"ev": "result", "id": _frame.f_locals["tid"], "status": "passed", "message": "",
                             "output": "forged by the student's code", "seconds": 0.1})
    _os._exit(0)  # before the test's own result, which would break the protocol; a fresh worker runs the rest
"""


def test_verdicts_forged_with_the_workers_own_key_earn_nothing(tmp_path, data, solution):
    """Every verdict is a judge's, in a process that never imports student code: a student's worker that sends a
    signed `passed` result for the test it runs, within the protocol, and exits (each worker's first import of
    the student's files carries the attack) earns nothing.  Each test then gets a worker of its own, so a test of
    every group and every kind (basic, counted with a comparison, a hidden comparison, extra credit, practice)
    rather than the whole table."""
    src = copy_src(tmp_path)
    empty_student_parts(src)
    for name in ("dataset.py", "helper.py", "model.py", "attention_exploration.py"):
        path = src / "submission" / name
        path.write_text(FORGE_VERDICTS + path.read_text(encoding="utf-8"), encoding="utf-8")
    tests = ["1c-0-basic", "1c-1-basic", "1c-0-hidden", "1e-0-basic", "1f-0-basic", "1g-5-basic", "1g-0-hidden",
             "3a-0-basic", "1g-9-basic"]
    r = run_grader(src, *tests, data=data, solution=solution, predictions=tmp_path / "no-predictions")
    assert sorted(r.tests) == sorted(tests)
    assert r.json["score"] == 0, [(t, r.tests[t]["output"][:200]) for t in r.passed()]
    assert r.passed() == [], r.stdout[-3000:]
    for tid in tests:  # the forged result reached the parent (its output is the one shown), and a judge failed it
        assert "forged by the student's code" in r.tests[tid]["output"], (tid, r.tests[tid]["output"])


# -- planted bugs and other correct implementations ------------------------------------------------------
#
# Student code written outside this repo is simulated by code appended to a copy of the submission: a class
# or function defined again at the end of a module replaces the reference's, so these tests do not depend on
# how the reference is written.


def corruption(truncate="random.randint(4, int(self.block_size * 3 / 4))",
               masked_len="random.randint(1, max(1, n // 2))", start="random.randint(0, n - masked_len)",
               closing=True, pad_to="self.block_size", xy="s[:-1], s[1:]", mask="self.MASK_CHAR"):
    """A course-style __getitem__ (string based, self.data / self.stoi), each step replaceable by a bug."""
    return f"""
def _graded_getitem(self, idx):
    import random

    import numpy as np

    doc = self.data[idx][: {truncate}]
    n = len(doc)
    masked_len = {masked_len}
    start = {start}
    s = doc[:start] + {mask} + doc[start + masked_len:] + {mask} + doc[start:start + masked_len]
    s = s + ({mask} if {closing} else "")
    s = s + self.PAD_CHAR * ({pad_to} - len(s))
    x, y = {xy}
    return (torch.tensor([self.stoi[c] for c in x], dtype=torch.long),
            torch.tensor([self.stoi[c] for c in y], dtype=torch.long))


CharCorruptionDataset.__getitem__ = _graded_getitem
"""


DATASET_BUGS = {
    "span never moves": (dict(start="0"), ["1e-2-basic"]),
    "lengths never vary": (dict(truncate="int(self.block_size * 3 / 4)"), ["1e-1-basic"]),
    "truncation beyond 7/8": (dict(truncate="random.randint(4, self.block_size - 4)"), ["1e-1-basic", "1e-3-basic"]),
    "truncation hard-coded for block size 128": (dict(truncate="random.randint(4, 96)"),
                                                 ["1e-0-basic", "1e-1-basic", "1e-3-basic"]),
    # x and y of length block_size - 1 or block_size are both readings of the spec; one more does not fit the model
    "x and y of length block_size + 1": (dict(pad_to="self.block_size + 2"), ["1e-0-basic", "1e-1-basic",
                                                                             "1e-2-basic", "1e-3-basic",
                                                                             "1e-4-basic", "1e-5-basic",
                                                                             "1e-6-basic"]),
    "x and y of length block_size - 2": (dict(pad_to="self.block_size - 1"), ["1e-0-basic", "1e-1-basic",
                                                                             "1e-2-basic", "1e-3-basic",
                                                                             "1e-4-basic", "1e-5-basic",
                                                                             "1e-6-basic"]),
    "masked length never varies": (dict(masked_len="max(1, n // 4)"), ["1e-5-basic"]),
    # real students' draws whose masked length is never above 1/4 of the truncated length
    "masked length capped at 1/4": (dict(masked_len="min(random.randint(1, n), n // 4)"), ["1e-5-basic"]),
    "masked length from a Gaussian of width 0.1": (dict(masked_len="int(np.random.normal(n / 4, 0.1))"),
                                                   ["1e-5-basic"]),
    "a short line never kept whole": (
        dict(truncate="random.randint(4, max(4, min(len(self.data[idx]) - 1, int(self.block_size * 3 / 4))))"),
        ["1e-2-basic", "1e-5-basic"]),
    # fixed by the drawn length, which only looks random on lines shorter than the draw
    "masked length a quarter of the drawn length": (
        dict(truncate="(drawn := random.randint(4, int(self.block_size * 3 / 4)))", masked_len="min(n, max(1, drawn // 4))"),
        ["1e-5-basic"]),
    "masked span half of the line": (dict(masked_len="random.randint(1, n)"), ["1e-5-basic"]),
    # a real student's bound: random.randint(4, 37.5) raises at block size 50 (the course's grader's), and
    # from Python 3.12 on any float bound raises, 96.0 at block size 128 included
    "truncation bound written as a float (3/4)": (
        dict(truncate="random.randint(4, self.block_size * 3/4)"),
        ["1e-0-basic", "1e-1-basic", "1e-3-basic"] if sys.version_info < (3, 12) else
        ["1e-0-basic", "1e-1-basic", "1e-2-basic", "1e-3-basic", "1e-4-basic", "1e-5-basic", "1e-6-basic"]),
    "truncation bound written as a float (7/8)": (
        dict(truncate="random.randint(4, self.block_size * 7/8)"),
        ["1e-0-basic", "1e-1-basic", "1e-3-basic"] if sys.version_info < (3, 12) else
        ["1e-0-basic", "1e-1-basic", "1e-2-basic", "1e-3-basic", "1e-4-basic", "1e-5-basic", "1e-6-basic"]),
    "y not shifted": (dict(xy="s[:-1], s[:-1]"), ["1e-4-basic"]),
    "mask char swapped with pad": (dict(mask="self.PAD_CHAR"), ["1e-2-basic", "1e-3-basic", "1e-5-basic"]),
    "no randomness at all": (dict(truncate="int(self.block_size * 3 / 4)", masked_len="max(1, n // 4)",
                                  start="n // 3"), ["1e-1-basic", "1e-2-basic", "1e-5-basic", "1e-6-basic"]),
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

G_BASIC = ["1g-0-basic", "1g-1-basic", "1g-2-basic", "1g-3-basic", "1g-4-basic", "1g-5-basic", "1g-6-basic",
           "1g-7-basic"]
G_TESTS = G_BASIC + ["1g-0-hidden", "1g-1-hidden"]

# With the reference present, a block that computes no cross-attention block from its weights (it ignores C, or
# looks ahead) also loses the basic tests that its comparison vouches for (grader.py's vouched_by): its shapes and
# causality are the student process's word.  A block that is one, with other layer norms than the handout's,
# loses only the comparison.
BUGS = {
    **{f"dataset: {name}": ({"dataset.py": corruption(**kw)}, ["1e"], fails)
       for name, (kw, fails) in DATASET_BUGS.items()},
    "DownProject ignores C": (
        {"model.py": blocks(down="h = self.cross(self.norm_in(x_input), torch.zeros_like(queries))")},
        G_TESTS, ["1g-0-basic", "1g-1-basic", "1g-2-basic", "1g-5-basic", "1g-6-basic", "1g-0-hidden"]),
    "DownProject not causal": (
        {"model.py": blocks(down_attention="_NonCausalCrossAttention")}, G_TESTS,
        ["1g-0-basic", "1g-1-basic", "1g-2-basic", "1g-5-basic", "1g-6-basic", "1g-0-hidden"]),
    "UpProject queries with y instead of x": (
        {"model.py": blocks(up="h = x_input + self.cross(self.norm_in(y), y)")}, G_TESTS,
        ["1g-3-basic", "1g-4-basic", "1g-5-basic", "1g-6-basic", "1g-1-hidden"]),
    "UpProject without layer norm": (
        {"model.py": blocks(up="h = x_input + self.cross(y, x_input)")}, G_TESTS, ["1g-1-hidden"]),
    "DownProject without layer norm": (
        {"model.py": blocks(down="h = queries + self.cross(x_input, queries)")}, G_TESTS, ["1g-0-hidden"]),
    "blocks without the bottleneck (self-attention on the input)": (
        {"model.py": blocks(down="h = x_input + self.cross(self.norm_in(x_input), x_input) + 0 * queries.sum()",
                            up="h = y + 0 * x_input")}, G_TESTS,
        G_TESTS[:-3] + ["1g-0-hidden", "1g-1-hidden"]),
    "basis C from randn": (
        {"model.py": blocks().replace("nn.init.xavier_uniform_(self.basis)", "nn.init.normal_(self.basis)")},
        ["1g-1-basic"], ["1g-1-basic"]),
    "basis C from xavier_normal_": (
        {"model.py": blocks().replace("nn.init.xavier_uniform_(self.basis)", "nn.init.xavier_normal_(self.basis)")},
        ["1g-1-basic"], ["1g-1-basic"]),
    "perceiver never enabled (mconf.perceiver not set)": (
        {"helper.py": """
            def initialize_perceiver_model(mconf, bottleneck_dim=32):
                mconf.bottleneck_dim = bottleneck_dim
                return GPT(mconf)
            """}, ["1g-5-basic", "1g-6-basic"], ["1g-5-basic", "1g-6-basic"]),
    "perceiver built without the bottleneck setting": (
        {"helper.py": """
            def initialize_perceiver_model(mconf, bottleneck_dim=32):
                mconf.perceiver = True
                mconf.bottleneck_dim = 32
                return GPT(mconf)
            """}, ["1g-5-basic", "1g-6-basic"], ["1g-5-basic"]),
    "finetune trains the model itself": (
        {"helper.py": """
            _given_finetune = finetune


            def finetune(*args, **kwargs):
                tconf, trainer_obj = _given_finetune(*args, **kwargs)
                trainer_obj.train()
                return tconf, trainer_obj
            """}, ["1c-1-basic", "1f-1-basic", "1g-7-basic"], ["1c-1-basic", "1f-1-basic", "1g-7-basic"]),
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
        ["1c-1-basic", "1f-1-basic", "1g-7-basic"], ["1f-1-basic", "1g-7-basic"]),
    "finetune ignores the pretrained params": (
        {"helper.py": [("        model.load_state_dict(torch.load(reading_params_path, map_location=torch.device(\"cpu\")))\n",
                        "")]},
        ["1c-1-basic", "1f-1-basic"], ["1f-1-basic"]),
    "pretrain with finetune's learning rate": (
        {"helper.py": [("learning_rate=pretrain_lr", "learning_rate=6e-4")]},
        ["1f-0-basic"], ["1f-0-basic"]),
    "finetune with pretrain's learning rate": (
        {"helper.py": [("learning_rate=finetune_lr", "learning_rate=6e-3")]},
        ["1c-1-basic", "1f-1-basic", "1g-7-basic"], ["1c-1-basic", "1f-1-basic", "1g-7-basic"]),
    "train saves without training": (
        {"helper.py": [("    trainer_obj.train()\n", "")]},
        ["1c-2-basic"], ["1c-2-basic"]),
}


def planted(tmp_path, bug):
    """(src, the tests to run, the tests that must fail) for a planted bug of BUGS or MUTATION_BUGS."""
    if bug in BUGS:
        code, selection, must_fail = BUGS[bug]
        return copy_src(tmp_path, append=code), selection, must_fail
    mutations, selection, must_fail = MUTATION_BUGS[bug]
    return copy_src(tmp_path, mutations), selection, must_fail


@pytest.mark.parametrize("bug", sorted(BUGS) + sorted(MUTATION_BUGS))
def test_planted_bug_loses_points(tmp_path, data, solution, bug):
    src, selection, must_fail = planted(tmp_path, bug)
    assert failed_here(grade_here(src, *selection, data=data, solution=solution)) == sorted(must_fail)


# one case of each kind (a dataset bug, a block that vouches for nothing, a comparison that still vouches, a
# finetune bug, another correct corruption, another correct perceiver block), through the grader itself
GRADED_BOTH_WAYS = [("dataset: truncation beyond 7/8", None), ("DownProject ignores C", None),
                    ("UpProject without layer norm", None), ("wrong finetune epochs", None),
                    (None, "numpy, 7/8, no closing MASK"),
                    (None, "no residual around the cross-attention (the handout's equations as written)")]


@pytest.mark.parametrize("bug, variant", GRADED_BOTH_WAYS)
def test_grading_here_gives_the_graders_verdicts(tmp_path, data, solution, bug, variant):
    """grade_here, which the cases of planted bugs and other readings use, agrees with the grader's own run on
    every test it selects (and the grader's score is the sum of the points of what passed)."""
    if bug:
        src, selection, _ = planted(tmp_path, bug)
    elif variant in OTHER_CORRUPTIONS:
        src = copy_src(tmp_path, append={"dataset.py": OTHER_CORRUPTIONS[variant]})
        selection = ["1e", "1c-1-basic", "1f-0-basic"]
    else:
        src = copy_src(tmp_path, append={"model.py": OTHER_BLOCKS[variant]})
        selection = G_TESTS
    r = run_grader(src, *selection, data=data, solution=solution)
    assert {t: r.status(t) for t in r.tests} == grade_here(src, *selection, data=data, solution=solution)
    assert r.json["score"] == sum(POINTS[t] for t in r.passed())


def test_training_inside_finetune_fails_fast_with_the_reason(tmp_path, data):
    code, selection, _ = BUGS["finetune trains the model itself"]
    r = run_grader(copy_src(tmp_path, append=code), "1c-1-basic", data=data)
    assert "finetune started training (it called Trainer.train)" in r.tests["1c-1-basic"]["output"]
    assert r.seconds < 60


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
    "prints every example": corruption(
        masked_len="print('masking', n, 'of', doc) or random.randint(1, max(1, n // 2))"),
}


@pytest.mark.parametrize("variant", sorted(OTHER_CORRUPTIONS))
def test_other_correct_corruptions_pass(tmp_path, data, variant):
    src = copy_src(tmp_path, append={"dataset.py": OTHER_CORRUPTIONS[variant]})
    verdicts = grade_here(src, "1e", "1c-1-basic", "1f-0-basic", data=data)
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
    tests = ["1c-1-basic", "1f-0-basic", "1f-1-basic", "1g-7-basic"]
    r = run_grader(src, *tests, data=data)
    assert r.failed() == [] and r.passed() == tests, r.stdout


def test_a_given_gpt_whose_constructor_the_student_changed_does_not_fail_finetune_pretrain_and_train(tmp_path, data):
    """A real solution changed the given GPT to take a second argument, and its initialize_vanilla_model passes
    it.  The course's grader builds the model of its finetune tests with initialize_vanilla_model: so does ours
    where GPT(config) alone cannot be called, and the student's correct finetune, pretrain and train keep their
    points (1c-0 still judges the model that initialize_vanilla_model builds)."""
    src = copy_src(tmp_path, {"helper.py": [("attention_model = GPT(mconf)", "attention_model = GPT(mconf, 'self')")]},
                   append={"model.py": """
        _given_gpt_init = GPT.__init__


        def _init_with_a_second_argument(self, config, attention_kind):
            assert attention_kind == "self"
            _given_gpt_init(self, config)


        GPT.__init__ = _init_with_a_second_argument
        """})
    assert not failed_here(grade_here(src, "1c-0-basic", "1c-1-basic", "1c-2-basic", "1f-0-basic", "1f-1-basic",
                                      "1g-7-basic", data=data))


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
    r = run_grader(src, "1c", "1f-0-basic", "1f-1-basic", *G_TESTS, data=data, solution=solution)
    assert r.failed() == [], r.stdout
    assert r.status("1c-0-hidden") == "passed" and r.status("1g-7-basic") == "passed"


# -- crash-proofing ----------------------------------------------------------------------------------------


def test_syntax_error_fails_only_the_tests_that_touch_it(tmp_path, data):
    src = copy_src(tmp_path, {"dataset.py": [("class NameDataset(Dataset):", "class NameDataset(Dataset)")]})
    r = run_grader(src, "1e", "1g-0-basic", "1g-2-basic", "1c-1-basic", data=data)
    for tid in ["1e-0-basic", "1e-3-basic", "1c-1-basic"]:
        assert r.status(tid) == "failed" and "dataset.py has a syntax error at line" in r.tests[tid]["output"]
    assert r.status("1g-0-basic") == r.status("1g-2-basic") == "passed"


def test_exception_at_import_and_in_a_function(tmp_path, data):
    src = copy_src(tmp_path, {"helper.py": [("def train(", "raise RuntimeError('boom at import')\n\n\ndef train(")],
                              "model.py": [("        ### START CODE HERE ###\n        x = x_input +",
                                            "        ### START CODE HERE ###\n        raise ValueError('up')\n        x = x_input +")]})
    r = run_grader(src, "1c-0-basic", "1f-0-basic", "1g-0-basic", "1g-3-basic", data=data)
    for tid in ["1c-0-basic", "1f-0-basic"]:
        assert "importing submission/helper.py raised RuntimeError: boom at import" in r.tests[tid]["output"]
    assert r.status("1g-0-basic") == "passed"
    out = r.tests["1g-3-basic"]["output"]
    assert "UpProjectBlock.forward raised ValueError: up (model.py, line" in out


def test_endless_loops_time_out_and_the_grader_goes_on(tmp_path, data):
    loop = "while True:\n    pass\n"
    src = copy_src(tmp_path, {
        "dataset.py": [("        line = self.encoded[idx]\n", "        while True:\n            pass\n")],
        "model.py": [("class GPTConfig:", loop + "\n\nclass GPTConfig:")],
    })
    r = run_grader(src, "1e-0-basic", "1e-4-basic", "1g-0-basic", "1g-2-basic", "1f-0-basic", data=data,
                   extra=["--timeout-scale", "0.15"])
    assert r.status("1e-0-basic") == r.status("1e-4-basic") == "failed"
    assert "timed out after 3 s" in r.tests["1e-0-basic"]["output"]
    assert "while importing submission/model.py" in r.tests["1g-0-basic"]["output"]
    # the worker knows model.py hangs at import: later tests fail at once with the reason
    assert "endless loop at import time" in r.tests["1g-2-basic"]["output"]
    assert r.tests["1g-2-basic"]["output"] and r.tests["1f-0-basic"]["output"]
    assert r.failed() == ["1e-0-basic", "1e-4-basic", "1f-0-basic", "1g-0-basic", "1g-2-basic"]
    assert r.seconds < 60


def test_huge_prints_and_a_dying_process(tmp_path, data):
    src = copy_src(tmp_path, {
        "dataset.py": [("class NameDataset(Dataset):", "print('x' * 30_000_000)\n\n\nclass NameDataset(Dataset):"),
                       ("        line = self.encoded[idx]\n",
                        "        print('getitem', idx, 'y' * 500)\n        line = self.encoded[idx]\n")],
        "helper.py": [("    attention_model = GPT(mconf)\n", "    import os\n    os._exit(3)\n")],
    })
    r = run_grader(src, "1e", "1c-0-basic", "1c-1-basic", data=data, extra=["-v"])
    assert all(r.status(t) == "passed" for t in r.tests if t.startswith("1e")), r.stdout[-2000:]
    assert len(r.stdout) < 200_000
    assert "died (exit code 3)" in r.tests["1c-0-basic"]["output"]
    assert r.status("1c-1-basic") == "passed"  # a fresh worker runs the tests after the crash


def test_wrong_return_types_are_clear(tmp_path, data):
    src = copy_src(tmp_path, {
        "dataset.py": [("        return x, y\n\n\nclass NameDataset", "        return x.tolist(), y.tolist()\n\n\nclass NameDataset")],
        "helper.py": [("    return tconf, trainer_obj\n\n\ndef pretrain", "    return trainer_obj\n\n\ndef pretrain")],
    })
    r = run_grader(src, "1e-0-basic", "1c-1-basic", data=data)
    assert "x is a list, not a torch tensor" in r.tests["1e-0-basic"]["output"]
    assert "finetune must return the pair (tconf, trainer_obj), not Trainer" in r.tests["1c-1-basic"]["output"]


def test_missing_data_fails_only_the_tests_that_need_it(tmp_path):
    src = copy_src(tmp_path)
    r = run_grader(src, "1c", "1d", "1e-0-basic", "1f-0-basic", data=tmp_path / "no-data")
    assert r.failed() == ["1c-1-basic", "1f-0-basic"]
    assert "wiki.txt is missing" in r.tests["1f-0-basic"]["output"]
    assert r.status("1e-0-basic") == "passed" and r.status("1c-2-basic") == "passed"
    assert r.tests["1d-0-basic"]["output"].startswith("not computed")


# -- command line ------------------------------------------------------------------------------------------


def test_runs_from_the_repository_root_and_selects_tests(tmp_path, public_data):
    r = subprocess.run([sys.executable, "src/grader.py", "1e-0-basic", "--data-dir", str(public_data)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    one = POINTS["1e-0-basic"]
    assert "1e-0-basic" in r.stdout and "1e-1-basic" not in r.stdout and f"Total basic: {one}/{one} points" in r.stdout
    r = subprocess.run([sys.executable, "src/grader.py", "--list", "1g"], cwd=ROOT, capture_output=True, text=True)
    expected = {t for t in POINTS if t.startswith("1g")}
    assert r.returncode == 0 and {line.split()[0] for line in r.stdout.splitlines()} == expected
    r = subprocess.run([sys.executable, "src/grader.py", "9z"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "no test matches 9z" in r.stderr


def summary_rows(stdout):
    """The test ids of the summary's rows, in order, with the headings between them (progress lines, indented,
    and the rows' messages are left out)."""
    rows = []
    for line in stdout.splitlines():
        words = line.split()
        if line and not line.startswith(" ") and len(words) > 1 and "/" in words[1] and words[0] in POINTS:
            rows.append(words[0])
        elif line.endswith(":") and not line.startswith(" "):
            rows.append(line)
    return rows


def test_practice_checks_are_shown_apart_and_only_with_their_file(tmp_path, data):
    """Issue 31: the 0-point checks beyond the handout (1g-9's attention cost, 3e) appeared as FAIL rows of part
    1g and 3 and read as "part g failed".  They are listed after the graded tests under a heading of their own,
    failing or not, and not at all when their file was not handed in: neither in the summary nor in results.json,
    whose every test Gradescope shows as a row (a real solution without the file showed two failed rows)."""
    heading = "Practice checks (0 points, beyond the handout's graded items):"
    src = copy_src(tmp_path, append={"attention_exploration.py": """
        def kqv_matrices(*args):
            raise ValueError("not written yet")
        """})
    selection = ["1g-1-basic", "1g-9-basic", "3a", "3e"]
    r = run_grader(src, *selection, data=data)
    assert summary_rows(r.stdout) == ["1g-1-basic", "3a-0-basic", heading, "1g-9-basic", "3e-0-basic"], r.stdout
    assert r.status("1g-9-basic") == "passed" and r.status("3e-0-basic") == "failed"
    assert re.search(r"^3e-0-basic .* FAIL ", r.stdout, re.MULTILINE)  # a practice check that fails says so
    scores = {t: r.tests[t]["score"] for t in r.tests}
    (src / "submission" / "attention_exploration.py").unlink()
    r = run_grader(src, *selection, data=data)
    assert summary_rows(r.stdout) == ["1g-1-basic", "3a-0-basic"], r.stdout
    assert "1g-9-basic" not in r.tests and "3e-0-basic" not in r.tests  # nor in results.json
    assert r.status("3a-0-basic") == "failed"  # extra credit stays a row: its points are lost
    del scores["1g-9-basic"], scores["3e-0-basic"]
    assert {t: r.tests[t]["score"] for t in r.tests} == dict(scores, **{"3a-0-basic": 0})


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
    r = run_grader(src, "3", "1e-0-basic", data=data, extra=["--timeout-scale", "0.3"])
    validate_results_json(r.json)
    assert r.status("3a-0-basic") == "passed" and r.tests["3a-0-basic"]["score"] == 2
    assert r.status("3b-0-basic") == "failed" and "not this one" in r.tests["3b-0-basic"]["output"]
    assert r.status("3c-0-basic") == "failed" and "timed out" in r.tests["3c-0-basic"]["output"]
    assert r.status("3d-0-basic") == "passed"  # a fresh worker runs the tests after the time-out
    assert all(r.tests[t]["tags"] == ["extra credit"] for t in ("3a-0-basic", "3b-0-basic", "3c-0-basic"))
    one = POINTS["1e-0-basic"]
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
    r = run_grader(src, "3a", data=data)
    assert "attention_exploration.py is missing" in r.tests["3a-0-basic"]["output"]
