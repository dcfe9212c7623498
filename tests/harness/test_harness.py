"""The harness (src/grading/) around any submission: a grading reaches its summary whatever the code does (a
syntax error, an exception, an endless loop, megabytes of output, a dying process, no data), verdicts forged
beside the student's code earn nothing, hidden results are shown as the instructor says, and the grading copy
holds every module the grader imports."""

import json
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, SRC
from gradings import (POINTS, PREDICTION_TESTS, copy_src, empty_student_parts, run_grader, validate_results_json,
                      write_predictions)

import grader
import graderUtil

SOLUTION_TESTS = ["1c-0-hidden", "1g-3-hidden", "1g-4-hidden"]


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


@pytest.mark.grader
@pytest.mark.parametrize("visibility", ["visible", "after_published"])
def test_hidden_results_are_shown_only_as_the_instructor_says(tmp_path, data, solution, visibility):
    """points.json's hidden_visibility (or --hidden-visibility) decides who sees a hidden test's result.  The
    course's behaviour, the default, shows everything; after_published leaves nothing that a student sees
    (results.json's top-level output and score, the grader's printed lines, which Gradescope keeps as stdout)
    telling a hidden test's result or the hidden total, while each hidden test's entry keeps its result for
    the day grades are published."""
    src = copy_src(tmp_path, mutations={"dataset.py": [("random.randint(4, self.max_context_size)",
                                                         "random.randint(4, self.max_context_size - 1)")]})
    if visibility != "visible":
        table = json.loads((src / "points.json").read_text(encoding="utf-8"))
        table["hidden_visibility"] = visibility
        (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    predictions = write_predictions(tmp_path / "pred", data, "correct")
    (predictions / "vanilla.pretrain.dev.predictions").write_text("Atlantis\n" * 10, encoding="utf-8")
    r = run_grader(src, "1e-0-basic", "1f", "1g-3-hidden", data=data, solution=solution, predictions=predictions)
    validate_results_json(r.json, visibility) if visibility == "visible" else None
    hidden = {"1f-1-hidden": "failed", "1f-2-hidden": "passed", "1g-3-hidden": "passed"}
    for tid, status in hidden.items():  # the results are all there, for the instructor and for later
        assert r.tests[tid]["visibility"] == visibility and r.status(tid) == status
    assert r.status("1e-0-basic") == "failed" and r.tests["1e-0-basic"]["visibility"] == "visible"
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
    assert "1e-0-basic" in r.json["output"] and "FAIL" in r.json["output"]


@pytest.mark.grader
def test_solution_found_as_an_importable_package(tmp_path, reference_src, solution, data):
    """Without --solution-dir the grader looks for an importable `solution` package (the grading bundle's)."""
    shutil.copytree(solution, reference_src / "solution")
    try:
        r = run_grader(reference_src, *SOLUTION_TESTS, data=data)
    finally:
        shutil.rmtree(reference_src / "solution")
    assert r.passed() == sorted(SOLUTION_TESTS)


# each test's failure message must name the missing piece
MISSING_PIECE = {
    "1c-3-basic": "initialize_vanilla_model", "1c-1-basic": "finetune", "1c-2-basic": "train",
    "1c-0-hidden": "initialize_vanilla_model",
    "1e-4-basic": "__getitem__", "1e-0-basic": "__getitem__", "1e-1-basic": "__getitem__",
    "1e-5-basic": "__getitem__", "1e-2-basic": "__getitem__", "1e-3-basic": "__getitem__",
    "1e-6-basic": "__getitem__",
    "1f-0-basic": "pretrain", "1f-3-basic": "finetune",
    "1g-3-basic": "DownProjectBlock", "1g-4-basic": "DownProjectBlock", "1g-5-basic": "DownProjectBlock",
    "1g-6-basic": "UpProjectBlock", "1g-7-basic": "UpProjectBlock", "1g-8-basic": "initialize_perceiver_model",
    "1g-9-basic": "initialize_perceiver_model", "1g-0-basic": "DownProjectBlock",
    "1g-3-hidden": "DownProjectBlock", "1g-4-hidden": "UpProjectBlock",
    **PREDICTION_TESTS,
}


@pytest.mark.grader
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
    # the finetune test of part (g) needs the student's perceiver first: its message says which part is missing
    assert "finetune was not reached" in r.tests["1g-0-basic"]["output"], r.tests["1g-0-basic"]["output"]
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


@pytest.mark.grader
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
    tests = ["1c-3-basic", "1c-1-basic", "1c-0-hidden", "1e-4-basic", "1f-0-basic", "1g-8-basic", "1g-3-hidden",
             "3a-0-basic", "1g-10-basic"]
    r = run_grader(src, *tests, data=data, solution=solution, predictions=tmp_path / "no-predictions")
    assert sorted(r.tests) == sorted(tests)
    assert r.json["score"] == 0, [(t, r.tests[t]["output"][:200]) for t in r.passed()]
    assert r.passed() == [], r.stdout[-3000:]
    for tid in tests:  # the forged result reached the parent (its output is the one shown), and a judge failed it
        assert "forged by the student's code" in r.tests[tid]["output"], (tid, r.tests[tid]["output"])


# -- crash-proofing ----------------------------------------------------------------------------------------


@pytest.mark.grader
def test_syntax_error_fails_only_the_tests_that_touch_it(tmp_path, data):
    src = copy_src(tmp_path, {"dataset.py": [("class NameDataset(Dataset):", "class NameDataset(Dataset)")]})
    r = run_grader(src, "1e", "1g-3-basic", "1g-5-basic", "1c-1-basic", data=data)
    for tid in ["1e-4-basic", "1e-5-basic", "1c-1-basic"]:
        assert r.status(tid) == "failed" and "dataset.py has a syntax error at line" in r.tests[tid]["output"]
    assert r.status("1g-3-basic") == r.status("1g-5-basic") == "passed"


@pytest.mark.grader
def test_exception_at_import_and_in_a_function(tmp_path, data):
    src = copy_src(tmp_path, {"helper.py": [("def train(", "raise RuntimeError('boom at import')\n\n\ndef train(")],
                              "model.py": [("        ### START CODE HERE ###\n        x = x_input +",
                                            "        ### START CODE HERE ###\n        raise ValueError('up')\n"
                                            "        x = x_input +")]})
    r = run_grader(src, "1c-3-basic", "1f-0-basic", "1g-3-basic", "1g-6-basic", data=data)
    for tid in ["1c-3-basic", "1f-0-basic"]:
        assert "importing submission/helper.py raised RuntimeError: boom at import" in r.tests[tid]["output"]
    assert r.status("1g-3-basic") == "passed"
    out = r.tests["1g-6-basic"]["output"]
    assert "UpProjectBlock.forward raised ValueError: up (model.py, line" in out


@pytest.mark.grader
def test_endless_loops_time_out_and_the_grader_goes_on(tmp_path, data):
    loop = "while True:\n    pass\n"
    src = copy_src(tmp_path, {
        "dataset.py": [("        line = self.encoded[idx]\n", "        while True:\n            pass\n")],
        "model.py": [("class GPTConfig:", loop + "\n\nclass GPTConfig:")],
    })
    r = run_grader(src, "1e-4-basic", "1e-2-basic", "1g-3-basic", "1g-5-basic", "1f-0-basic", data=data,
                   extra=["--timeout-scale", "0.15"])
    assert r.status("1e-4-basic") == r.status("1e-2-basic") == "failed"
    assert "timed out after 3 s" in r.tests["1e-4-basic"]["output"]
    assert "while importing submission/model.py" in r.tests["1g-3-basic"]["output"]
    # the worker knows model.py hangs at import: later tests fail at once with the reason
    assert "endless loop at import time" in r.tests["1g-5-basic"]["output"]
    assert r.tests["1g-5-basic"]["output"] and r.tests["1f-0-basic"]["output"]
    assert r.failed() == ["1e-2-basic", "1e-4-basic", "1f-0-basic", "1g-3-basic", "1g-5-basic"]
    assert r.seconds < 60


@pytest.mark.grader
def test_huge_prints_and_a_dying_process(tmp_path, data):
    src = copy_src(tmp_path, {
        "dataset.py": [("class NameDataset(Dataset):", "print('x' * 30_000_000)\n\n\nclass NameDataset(Dataset):"),
                       ("        line = self.encoded[idx]\n",
                        "        print('getitem', idx, 'y' * 500)\n        line = self.encoded[idx]\n")],
        "helper.py": [("    attention_model = GPT(mconf)\n", "    import os\n    os._exit(3)\n")],
    })
    r = run_grader(src, "1e", "1c-3-basic", "1c-1-basic", data=data, extra=["-v"])
    assert all(r.status(t) == "passed" for t in r.tests if t.startswith("1e")), r.stdout[-2000:]
    assert len(r.stdout) < 200_000
    assert "died (exit code 3)" in r.tests["1c-3-basic"]["output"]
    assert r.status("1c-1-basic") == "passed"  # a fresh worker runs the tests after the crash


@pytest.mark.grader
def test_missing_data_fails_only_the_tests_that_need_it(tmp_path):
    src = copy_src(tmp_path)
    r = run_grader(src, "1c", "1d", "1e-4-basic", "1f-0-basic", data=tmp_path / "no-data")
    assert r.failed() == ["1c-1-basic", "1f-0-basic"]
    assert "wiki.txt is missing" in r.tests["1f-0-basic"]["output"]
    assert r.status("1e-4-basic") == "passed" and r.status("1c-2-basic") == "passed"
    assert r.tests["1d-2-basic"]["output"].startswith("not computed")


# -- command line ------------------------------------------------------------------------------------------


@pytest.mark.grader
def test_runs_from_the_repository_root_and_selects_tests(tmp_path, public_data):
    r = subprocess.run([sys.executable, "src/grader.py", "1e-4-basic", "--data-dir", str(public_data)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    one = POINTS["1e-4-basic"]
    assert "1e-4-basic" in r.stdout and "1e-0-basic" not in r.stdout and f"Total basic: {one}/{one} points" in r.stdout
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


@pytest.mark.grader
def test_practice_checks_are_shown_apart_and_only_with_their_file(tmp_path, data):
    """Issue 31: the 0-point checks beyond the handout (1g-10's attention cost, 3e) appeared as FAIL rows of part
    1g and 3 and read as "part g failed".  They are listed after the graded tests under a heading of their own,
    failing or not, and not at all when their file was not handed in: neither in the summary nor in results.json,
    whose every test Gradescope shows as a row (a real solution without the file showed two failed rows)."""
    heading = "Practice checks (0 points, beyond the handout's graded items):"
    src = copy_src(tmp_path, append={"attention_exploration.py": """
        def kqv_matrices(*args):
            raise ValueError("not written yet")
        """})
    selection = ["1g-4-basic", "1g-10-basic", "3a", "3e"]
    r = run_grader(src, *selection, data=data)
    assert summary_rows(r.stdout) == ["1g-4-basic", "3a-0-basic", heading, "1g-10-basic", "3e-0-basic"], r.stdout
    assert r.status("1g-10-basic") == "passed" and r.status("3e-0-basic") == "failed"
    assert re.search(r"^3e-0-basic .* FAIL ", r.stdout, re.MULTILINE)  # a practice check that fails says so
    scores = {t: r.tests[t]["score"] for t in r.tests}
    (src / "submission" / "attention_exploration.py").unlink()
    r = run_grader(src, *selection, data=data)
    assert summary_rows(r.stdout) == ["1g-4-basic", "3a-0-basic"], r.stdout
    assert "1g-10-basic" not in r.tests and "3e-0-basic" not in r.tests  # nor in results.json
    assert r.status("3a-0-basic") == "failed"  # extra credit stays a row: its points are lost
    del scores["1g-10-basic"], scores["3e-0-basic"]
    assert {t: r.tests[t]["score"] for t in r.tests} == dict(scores, **{"3a-0-basic": 0})
