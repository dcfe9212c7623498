"""The written-part checks: the reference passes, plausible wrong answers fail,
an emptied (student starter) module fails cleanly, and the simulation shows
two heads keeping c steadier than one."""

import importlib.util
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
import attention_simulation
import grader
from checks import written
from graderUtil import Fail
from submission import attention_exploration as reference

FUNCTIONS = ["copy_query", "average_query", "gaussian_average_query", "two_head_queries",
             "kqv_matrices", "vanilla_attention_cost", "perceiver_attention_cost"]
START, END = "### START CODE HERE ###", "### END CODE HERE ###"


def variant(**overrides):
    """The reference module with some functions replaced."""
    module = types.SimpleNamespace(**{name: getattr(reference, name) for name in FUNCTIONS})
    for name, fn in overrides.items():
        assert name in FUNCTIONS
        setattr(module, name, fn)
    return module


WRITTEN_IDS = {"3a-0-basic", "3b-0-basic", "3c-0-basic", "3d-0-basic", "3d-1-basic", "3d-2-basic", "3e-0-basic",
               "1g-10-basic"}


class _Context:
    """What a registered written test uses of the grader's Context: the student's module, and the report it
    hands to its judge."""

    def __init__(self, module):
        self.module = module
        self.reported = None

    def student(self, name):
        assert name == "attention_exploration"
        return self.module

    def report(self, obj):
        self.reported = obj


def outcome(module, test_id):
    """(passed, message) of one registered test of grader.py, run in this process on `module`."""
    try:
        spec = grader.REGISTRY[test_id]
        ctx = _Context(module)
        spec.fn(ctx)  # beside the student's code: records the answers
        spec.check(ctx, ctx.reported)  # the verdict: the same check, replayed on the recorded answers
    except Fail as err:
        return False, str(err)
    return True, ""


def results(module):
    return {test_id: outcome(module, test_id) for test_id in sorted(WRITTEN_IDS)}


def emptied_source(text):
    """What the release tool makes of a file: everything between the markers removed."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() == END:
            inside = False
        if not inside:
            out.append(line)
        if line.strip() == START:
            inside = True
    assert not inside, "unclosed START CODE HERE region"
    return "".join(out)


@pytest.fixture(scope="module")
def emptied_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("starter") / "attention_exploration.py"
    path.write_text(emptied_source(Path(reference.__file__).read_text()))
    spec = importlib.util.spec_from_file_location("starter_attention_exploration", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# The grader interface
# ---------------------------------------------------------------------------

def test_tests_are_registered_like_the_others():
    """grader.py registers the written checks with @grader_test: extra credit, one shared worker."""
    ids = {tid for tid, spec in grader.REGISTRY.items() if spec.group == "written"}
    assert ids == WRITTEN_IDS
    for test_id in ids:
        spec = grader.REGISTRY[test_id]
        assert spec.extra_credit and not spec.hidden and spec.timeout > 0
        assert "\n" not in spec.description


def test_reference_passes_every_check():
    for test_id, (passed, message) in results(reference).items():
        assert passed, f"{test_id}: {message}"


def test_cost_digests_match_the_reference():
    assert written.cost_digests(reference) == written.COST_DIGESTS


def test_every_function_has_one_student_region():
    text = Path(reference.__file__).read_text()
    for marker in (START, END):
        assert text.count(marker) == len(FUNCTIONS)
        for line in text.splitlines():
            if marker in line:
                assert line.strip() == marker


def test_emptied_module_fails_every_check_as_not_implemented(emptied_module):
    for name in FUNCTIONS:  # the starter still defines every function the grader calls
        assert callable(getattr(emptied_module, name, None)), f"the emptied module has no function {name}"
    verdicts = results(emptied_module)
    assert set(verdicts) == WRITTEN_IDS
    for test_id, (passed, message) in verdicts.items():
        assert not passed, test_id
        assert message.startswith("not implemented"), f"{test_id}: {message}"


# ---------------------------------------------------------------------------
# Plausible wrong answers, one or more per question
# ---------------------------------------------------------------------------

def unit_outer(u, v):
    return torch.outer(u, v) / (u @ u)


def kqv_only_x2(u_a, u_b, u_c, u_d):
    # Right for token 2, but q_1 = 0, so c_1 averages all three values.
    K = torch.eye(u_a.shape[0], dtype=u_a.dtype)
    return K, unit_outer(u_d, u_a), unit_outer(u_b, u_b) - unit_outer(u_c, u_c)


def kqv_no_minus_uc(u_a, u_b, u_c, u_d):
    K, Q, _ = reference.kqv_matrices(u_a, u_b, u_c, u_d)
    return K, Q, unit_outer(u_b, u_b)


def kqv_weak_logits(u_a, u_b, u_c, u_d):
    # Right pattern, but every logit is at most 1: the softmax never commits.
    K, Q, V = reference.kqv_matrices(u_a, u_b, u_c, u_d)
    return K, Q / (u_a @ u_a), V


def kqv_standard_basis(u_a, u_b, u_c, u_d):
    # Pretends u_a..u_d are beta e_1..beta e_4: works only in that frame.
    d = u_a.shape[0]
    beta = u_a.norm()
    e = torch.eye(d, dtype=u_a.dtype) * beta
    return reference.kqv_matrices(e[0], e[1], e[2], e[3])


def lopsided_heads(means, a, b, scale):
    # Head 1 prefers a over b by exactly `scale` but gives both huge logits:
    # right on the means, yet as fragile as one head when k_a is perturbed.
    big = 100 * scale
    return big * means[a] + (big - scale) * means[b], scale * means[b]


WRONG = [
    # (check that must fail, function, wrong answer, what it gets wrong)
    ("3a-0-basic", "copy_query", lambda keys, j, scale: keys[j], "no scale"),
    ("3a-0-basic", "copy_query", lambda keys, j, scale: scale * keys[j], "ignores a similar key"),
    ("3b-0-basic", "average_query", lambda keys, a, b, scale: 3 * scale * keys[a], "q = t k_a"),
    ("3b-0-basic", "average_query", lambda keys, a, b, scale: keys[a] + keys[b], "no scale"),
    ("3b-0-basic", "average_query", lambda keys, a, b, scale: scale * (2 * keys[a] + keys[b]), "unequal"),
    ("3c-0-basic", "gaussian_average_query", lambda means, a, b, scale: scale * means[a], "copies a"),
    ("3c-0-basic", "gaussian_average_query", lambda means, a, b, scale: means[a] + means[b], "no scale"),
    ("3d-0-basic", "two_head_queries", lambda means, a, b, scale: (scale * means[a], scale * means[a]),
     "both heads on a"),
    ("3d-0-basic", "two_head_queries", lambda means, a, b, scale: (means[a], means[b]), "no scale"),
    ("3d-1-basic", "two_head_queries",
     lambda means, a, b, scale: (scale * (means[a] + means[b]), scale * (means[a] + means[b])), "q1 = q2"),
    ("3d-1-basic", "two_head_queries",
     lambda means, a, b, scale: (scale * (means[a] + means[b]), scale * (means[a] + means[b]) + 1e-3 * means[a]),
     "q2 = q1 + tiny"),
    ("3d-2-basic", "two_head_queries",
     lambda means, a, b, scale: (scale * (means[a] + means[b]), scale * (means[a] + means[b])), "q1 = q2"),
    ("3d-2-basic", "two_head_queries", lopsided_heads, "lopsided head"),
    ("3e-0-basic", "kqv_matrices", lambda u_a, u_b, u_c, u_d: (torch.eye(u_a.shape[0]),) * 3, "identity"),
    ("3e-0-basic", "kqv_matrices", kqv_only_x2, "works only for x_2"),
    ("3e-0-basic", "kqv_matrices", kqv_no_minus_uc, "V keeps u_c"),
    ("3e-0-basic", "kqv_matrices", kqv_weak_logits, "logits do not grow with beta"),
    ("3e-0-basic", "kqv_matrices", kqv_standard_basis, "hard-codes the frame"),
    ("1g-10-basic", "vanilla_attention_cost", lambda L, ell, m: L * ell, "linear in ell"),
    ("1g-10-basic", "vanilla_attention_cost", lambda L, ell, m: ell * ell, "forgets L"),
    ("1g-10-basic", "perceiver_attention_cost", lambda L, ell, m: ell * m + (L - 2) * m * m, "no up-projection"),
    ("1g-10-basic", "perceiver_attention_cost", lambda L, ell, m: L * m * m, "only the bottleneck"),
    ("1g-10-basic", "perceiver_attention_cost", lambda L, ell, m: 2 * ell * m + L * m * m, "L instead of L - 2"),
]


@pytest.mark.parametrize("test_id, name, fn, why", WRONG, ids=[f"{w[0]}:{w[3]}" for w in WRONG])
def test_wrong_answer_fails_its_check(test_id, name, fn, why):
    passed, message = outcome(variant(**{name: fn}), test_id)
    assert not passed, f"{why} should fail {test_id}"
    assert message and not message.startswith("not implemented"), message


def test_distinctness_and_spread_are_separate_from_the_average():
    """q1 = q2 and the lopsided heads both get c right on the means (3d-0)."""
    same = lambda means, a, b, scale: (scale * (means[a] + means[b]),) * 2  # noqa: E731
    for fn in (same, lopsided_heads):
        passed, message = outcome(variant(two_head_queries=fn), "3d-0-basic")
        assert passed, message
    assert outcome(variant(two_head_queries=lopsided_heads), "3d-1-basic")[0]


def test_exact_closest_key_scaling_is_what_3a_needs():
    """Half the required margin on the closest key is not enough."""
    def half_margin(keys, j, scale):
        return 0.5 * reference.copy_query(keys, j, scale)
    assert not outcome(variant(copy_query=half_margin), "3a-0-basic")[0]


@pytest.mark.parametrize("bad, expected", [
    ("a string", "must be a torch tensor"),
    (torch.zeros(3, 3), "must have shape"),
])
def test_wrong_types_fail_clearly(bad, expected):
    passed, message = outcome(variant(copy_query=lambda keys, j, scale: bad), "3a-0-basic")
    assert not passed and expected in message


def test_nan_and_crashes_fail_clearly():
    def nan_query(keys, a, b, scale):
        return torch.full((keys.shape[1],), float("nan"))

    def crash(keys, a, b, scale):
        raise ValueError("boom")

    assert "NaN" in outcome(variant(average_query=nan_query), "3b-0-basic")[1]
    assert "average_query raised ValueError: boom" in outcome(variant(average_query=crash), "3b-0-basic")[1]
    one_head = variant(two_head_queries=lambda means, a, b, scale: (means[a],))
    assert "tuple of 2" in outcome(one_head, "3d-0-basic")[1]
    as_text = variant(vanilla_attention_cost=lambda L, ell, m: "L ell^2")
    assert "must return a number" in outcome(as_text, "1g-10-basic")[1]
    fraction = variant(perceiver_attention_cost=lambda L, ell, m: 0.5)
    assert "whole number" in outcome(fraction, "1g-10-basic")[1]


def test_numpy_and_float32_answers_are_accepted():
    def float32_query(keys, a, b, scale):
        return reference.average_query(keys, a, b, scale).float()

    def numpy_query(keys, a, b, scale):
        return reference.gaussian_average_query(keys, a, b, scale).numpy()

    module = variant(average_query=float32_query, gaussian_average_query=numpy_query,
                     vanilla_attention_cost=lambda L, ell, m: float(L * ell * ell))
    for test_id in ("3b-0-basic", "3c-0-basic", "1g-10-basic"):
        passed, message = outcome(module, test_id)
        assert passed, message


# ---------------------------------------------------------------------------
# The simulation
# ---------------------------------------------------------------------------

def test_simulation_two_heads_spread_less_than_one():
    result = attention_simulation.simulate(reference, n_samples=2000, seed=0)
    single = attention_simulation.summarize(result["single"]["weight_a"])
    two = attention_simulation.summarize(result["two"]["weight_a"])
    assert single["std"] > 0.35 and single["min"] < 0.05 and single["max"] > 0.95
    assert two["std"] < 0.5 * single["std"]
    assert result["two"]["stray"].mean() < 0.5 * result["single"]["stray"].mean()


def test_simulation_main_prints_and_skips_png_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    png = tmp_path / "c.png"
    assert attention_simulation.main(["--samples", "300", "--seed", "3", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "two heads" in out and "matplotlib is not installed" in out
    assert not png.exists()


def test_simulation_writes_png_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "c.png"
    assert attention_simulation.main(["--samples", "300", "--png", str(png)]) == 0
    assert png.stat().st_size > 0


def test_simulation_reports_missing_construction(emptied_module, capsys):
    assert attention_simulation.main(["--samples", "10"], module=emptied_module) == 1
    assert "implement it first" in capsys.readouterr().out


def test_simulation_runs_as_a_script():
    run = subprocess.run([sys.executable, str(SRC / "attention_simulation.py"), "--samples", "200"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "single head" in run.stdout and "two heads" in run.stdout


def test_the_verdict_is_the_replayed_checks_not_the_students_process():
    """The judge replays the check on what the student's functions returned: a report that answers other calls
    than the check makes, or answers that do not satisfy it, fail however the student's process ended."""
    spec = grader.REGISTRY["3a-0-basic"]
    ctx = _Context(reference)
    spec.fn(ctx)
    calls = ctx.reported
    assert calls and all(name == "copy_query" for name, _ in calls)
    spec.check(ctx, calls)  # the reference's own answers pass
    with pytest.raises(Fail, match="does not match"):
        spec.check(ctx, [["average_query", out] for _, out in calls])
    with pytest.raises(Fail, match="does not match"):
        spec.check(ctx, calls[:-1])
    with pytest.raises(Fail):
        spec.check(ctx, [[name, 0 * out] for name, out in calls])  # a zero query attends evenly
    with pytest.raises(Fail, match="no answers"):
        spec.check(ctx, None)
