"""What grader.py gives the harness: its tests (grader_test, Spec, REGISTRY), the Fail that carries a check's
message, and the few facts of the assignment it tells through configure()."""

from functools import partial
from pathlib import Path
from types import SimpleNamespace

SRC = Path(__file__).resolve().parents[1]  # src/, the grader's folder
POINTS_FILE = SRC / "points.json"
GRADER_SCRIPT = SRC / "grader.py"  # the workers run it: it registers the tests, then calls main()

# What grader.py tells the harness (configure), in one place that every module reads when it needs it: the
# --help text (grader.py's docstring), the student modules each student module imports (importing them
# first, one by one, tells which file is broken or hangs), the held-out files whose presence makes the tests
# that need "answers" run, the public data files (the only ones a sandboxed worker gets), and the data file
# whose SHA-256 picks the row of accuracy thresholds.
# The files of a grading copy (grader.py's GRADING_FILES, packages and files): a worker imports the Python modules
# among them before it drops its privileges.
settings = SimpleNamespace(description=None, student_deps={}, held_out=(), public_data=(), dataset_file=None,
                           grading_files=())


def grading_paths(entries, src=SRC):
    """The files that grading_files entries name, relative to src/: a file as itself, a package ("grading/") as
    every .py file in it, its __init__.py included, so that a module added to a package needs no new entry."""
    paths = []
    for entry in entries:
        if entry.endswith("/"):
            paths += sorted(p.relative_to(src).as_posix() for p in (Path(src) / entry).glob("*.py"))
        else:
            paths.append(entry)
    return paths


def configure(description=None, student_deps=None, held_out=None, public_data=None, dataset_file=None,
              grading_files=None):
    if description is not None:
        settings.description = description
    if student_deps is not None:
        settings.student_deps = dict(student_deps)
    if held_out is not None:
        settings.held_out = tuple(held_out)
    if public_data is not None:
        settings.public_data = tuple(public_data)
    if dataset_file is not None:
        settings.dataset_file = dataset_file
    if grading_files is not None:
        settings.grading_files = tuple(grading_files)


# The test registry.  A test has two sides (docs/security.md).  Its function runs beside the student's code, gets a
# Context and observes: it hands what the code computed to ctx.report, or fails at once by raising (Fail or
# AssertionError carry the message), which can only cost the student.  Its check runs in a judge:
# check(ctx, report) passes by returning and fails by raising; its verdict is the test's, and a string it returns
# is shown as an informational message.


class Spec:
    def __init__(self, tid, description, fn, timeout, needs=(), info=False, points=None, extra_credit=False,
                 group=None, uses_torch=True, vouched_by=(), check=None, course_id=None):
        self.id = tid
        self.description = description
        self.fn = fn
        self.timeout = float(timeout)
        self.needs = tuple(needs)  # "solution" and/or "answers": pending where absent
        self.info = info  # 0 points, reports a number
        self.points = points
        self.extra_credit = extra_credit
        self.uses_torch = uses_torch  # the worker imports torch before its first test
        self.part = tid.split("-")[0]
        self.group = group or self.part  # tests of one group share a worker process
        self.kind = tid.rsplit("-", 1)[-1]
        self.check = check  # check(ctx, report): decides the test in a judge, a worker without student code
        # The judged comparisons that vouch for this test's data (vouching.vouch): where they ran, this test
        # counts only if they vouch (they passed, or failed on a genuine block: Mismatch)
        self.vouched_by = tuple(vouched_by)
        self.course_id = course_id  # the course grader's id of this test, where it is the course's test (else None)

    @property
    def hidden(self):
        return self.kind == "hidden"


REGISTRY = {}


def judge_only(module, name):
    """The function `name` of `module`, a module that ships with the hidden tests alone (grader.JUDGE_ONLY_FILES:
    the Gradescope bundle and grade_class's copy hold it, the student starter does not), imported when a test
    calls it: the starter's grader registers and lists the hidden tests without it."""
    import importlib

    def call_it(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call_it.__name__ = call_it.__qualname__ = name
    call_it.judge_only = (module, name)  # what it stands for (the instructor's test suite follows it)
    return call_it


def grader_test(tid, description, check, timeout=30, needs=(), info=False, extra_credit=False, group=None,
                uses_torch=True, vouched_by=(), course_id=None, observe=None):
    """Register fn(ctx) as test `tid`, decided by check(ctx, report).  The check runs after fn passed in the
    student's worker, in a judge that has the reference solution and the held-out answers (docs/security.md);
    `report` is what fn gave ctx.report (tensors, numbers, strings, lists, dicts), or None.
    needs: "solution" and/or "answers" (pending where absent); info: a 0-point test that reports a number;
    extra_credit: its points count apart; group: tests of one group share a worker process (default: the question
    part, e.g. 1e); vouched_by: the hidden tests whose judged comparison vouches for what this test's student side
    reports (where they run, it counts only if they pass); course_id: the course grader's id for this test.
    A decorator; or, with observe, a test that reports what observe(ctx) returns, which needs no function."""
    if not callable(check):  # a verdict reached beside student code could be the student's code's
        raise TypeError(f"test {tid} has no check: every verdict comes from a judge")

    def register(fn):
        REGISTRY[tid] = Spec(tid, description, fn, timeout, needs, info, extra_credit=extra_credit, group=group,
                             uses_torch=uses_torch, vouched_by=vouched_by, check=check, course_id=course_id)
        return fn

    return register if observe is None else register(partial(_report, observe))


def _report(observe, ctx):
    ctx.report(observe(ctx))


class Fail(Exception):
    """A failed check, with the message shown to the student.  reason: what kind of failure it is, where a tool
    acts on it (one of grading.protocol.REASONS; a judge's result carries it into results.json), else None."""

    reason = None


class PredictionsNotFromParams(Fail):
    """A prediction file whose lines the submitted params file does not give (checks/predictions.py): no accuracy
    point counts.  The strongest sign the class report shows: the files are not one run's."""

    reason = "predictions-not-from-params"


class Mismatch(Fail):
    """A judged comparison that failed on data that still came from a genuine computation (a block that computes
    a cross-attention block from its weights, though not the handout's): its failure costs its own points, and
    it still vouches for the tests that count with it (Spec.vouched_by)."""


class StudentImportError(Fail):
    """A student module that could not be imported (its message says why)."""


class MissingFile(StudentImportError):
    """A student module whose file was not handed in: its test's result says so (`missing`), so that a practice
    check of a file the handout does not ask for is left out of what the student reads (report.unshown_practice)."""
