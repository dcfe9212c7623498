#!/usr/bin/env python3
"""Which submissions' params files descend one from another, across a class: copied params.

A params file uploaded by two students, or one student's finetuned a few steps further by another, stays near its
source: a finetuning moves a pretraining's weights a few tenths of their size at most.  Two runs that did not come
one from the other are far apart, even from the same random start, once each trained for thousands of steps
(the drift of checks/lineage.py, which the grader measures between a student's own finetuned and pretrain files):

    drift(a, b) = |a - b| / |b|

over the weight matrices both files hold in the same shape (not biases, LayerNorm gains or 0/1 masks: every run
starts them at the same constants), where those hold at least COVER of the smaller file's.  Two files of one class
are compared both ways, and the larger of the two drifts counts: "a is within d of b" holds whichever of them was
copied.  A pair of submissions is flagged where any of their files of one variant (vanilla or perceiver: each
deliverable against the same one, and a finetuned file against the other's pretrain file, ...) is within
lineage.DRIFT_CEILING of the other.

Near is evidence only where honest runs are far.  The course's default seed gives every student the same random
start, and a run is deterministic where its code and data are: every correct student's vanilla model trained
without pretraining is one computation, and two such runs, one in float32 and one in bfloat16, ended 0.047 apart
(docs/benchmarks.md).  So a deliverable that most of the class holds near another submission's is the class's
rule, stated in the report, and no pair of two such files is flagged (COMMON_SHARE, COMMON_FROM); copying joins a
few.

A class of hundreds holds thousands of files of 13 MB each: too many to hold, and a million pairs to compare.
So each weight matrix is folded into SKETCH numbers, a count sketch (each entry added, with a sign drawn for its
position, to a bucket drawn for it: the draws depend on the tensor's name and shape and on a secret of the run
only, the same in every file of the run; a difference a student aligned with known draws would measure many times
its size), whose distances are the weights' own within 1 % on a course model's (docs/benchmarks.md; a few
% on the tests' small ones): a bucket sums a hundred entries or more, whose signs make the cross terms cancel on
average.  A matrix of SKETCH entries or fewer is kept whole.  Each file is read once, and every pair is a few
matrix products.

What weights cannot show: a copy changed in ways that leave the model's function as it was (the hidden units of
an MLP permuted, a query scaled up and its key down, a constant added under a LayerNorm) is as far from its
source as another run is (docs/attacks.md).

Reading a student's params file is reading untrusted bytes (torch.load with weights_only: plain tensors, no code
of anyone's): grade_class runs this file as a process of its own with the grader's memory bound and a time limit
(compare_class), which prints one JSON object; it imports no student code.  Each submission's files have
SECONDS_PER_SUBMISSION to be read, and one whose files kill the process is left out on a second run: one upload
never costs the class its comparison.  Run by hand:

    python tools/params_similarity.py < request.json     # {"submissions": [[name, path], ...], "secret": hex}
"""

import hashlib
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
from typing import NamedTuple

import srcpath
from srcpath import SRC

srcpath.use(SRC)
from kit.course import PARAMS_FILES, WRITTEN_BY  # noqa: E402  (the deliverables, and the target of each)
from kit import upload  # noqa: E402  (which copy of a file an upload's grading reads: the same rule)
from checks.lineage import DRIFT_CEILING, load_params, trainable  # noqa: E402  (the measure and its bar)
from graderUtil import Fail  # noqa: E402
from grading.worker import WORKER_ADDRESS_SPACE  # noqa: E402  (the memory a grading's process may take)

SKETCH = 1024  # numbers a weight matrix is folded into
# A course model has 27 weight matrices (the perceiver a few more) of 3.3 million entries: a file of more matrices
# than this is no model of the course's, and is not compared (each costs SKETCH numbers, held for the whole class)
MAX_MATRICES = 200
CACHED = 16 << 20  # entries whose sketch draws are kept for the next file (two course models' take 7 million)
# the share of the weight entries of the smaller of two files that they must hold in common (a name, a shape)
# before they are compared: a perceiver's own blocks are named as its author chose, the rest as the given code names
# it; and a file padded with a tensor the model never reads is compared as the model it holds
COVER = 0.5
# Near files are the class's rule, not evidence, for a deliverable that more than COMMON_SHARE of the submissions
# holding it hold within the ceiling of another's, in a class of COMMON_FROM such submissions or more: its runs
# were one computation (every student's vanilla model trained without pretraining, from the course's default seed,
# on one data order).  Copying joins a few students; one computation joins most.
COMMON_SHARE = 0.5
COMMON_FROM = 10
SECONDS = 60  # the comparison's time limit: this plus SECONDS_PER_FILE per params file of the class
SECONDS_PER_FILE = 2
# a submission whose files take longer than this to read is not compared (a course-size file takes a tenth of a
# second; a file of a million tiny tensors, minutes): one upload never holds the class's comparison up.  Seconds of
# the processor's time (the reading's own, on one thread), not of the clock: on cores a training shares, the clock
# gave a course-size file 20 s and more
SECONDS_PER_SUBMISSION = 20


class ParamsPair(NamedTuple):
    """Two submissions' params files of one variant within the drift ceiling of each other."""
    a: str
    file_a: str
    b: str
    file_b: str
    drift: float  # the larger of drift(a, b) and drift(b, a)


class Nearest(NamedTuple):
    """A file and the nearest file of another submission of its variant: the class's distribution of distances."""
    name: str
    file: str
    other: str
    other_file: str
    drift: float


PAIR_COLUMNS = ["submission_a", "file_a", "submission_b", "file_b", "drift"]


def variant(fname):
    """The model a params file holds (the variant of the run.sh target that writes it)."""
    return WRITTEN_BY[fname].variant


_draws = {}  # (name, shape) -> (bucket of each entry, its sign): the same in every file, kept up to CACHED entries
# Drawn from a secret of the run (compare_class's): with draws a student could compute, a difference aligned with
# them would measure many times its size
SALT = {"secret": b""}


def draws(key, size):
    import torch

    if key in _draws:
        return _draws[key]
    seed = int.from_bytes(hashlib.sha256(SALT["secret"] + repr(key).encode()).digest()[:8], "little")
    g = torch.Generator().manual_seed(seed)
    drawn = (torch.randint(SKETCH, (size,), generator=g), torch.randint(2, (size,), generator=g).double() * 2 - 1)
    if size + sum(b.numel() for b, _ in _draws.values()) <= CACHED:  # a file's odd shapes never fill the memory
        _draws[key] = drawn
    return drawn


def sketch(state, fname="the file"):
    """{(name, shape): (SKETCH numbers or fewer, |tensor|^2, entries)} of a params state's weight matrices, or a
    Fail where it holds more than MAX_MATRICES of them."""
    import torch

    names = [n for n in trainable(state) if state[n].dim() >= 2]
    if len(names) > MAX_MATRICES:
        raise Fail(f"{fname} holds {len(names)} weight matrices, where a model of the course's has a few dozen")
    out = {}
    for name in names:
        t = state[name]
        flat = t.detach().reshape(-1).double()
        key = (name, tuple(t.shape))
        if flat.numel() <= SKETCH:
            folded = flat.clone()
        else:
            bucket, sign = draws(key, flat.numel())
            folded = torch.zeros(SKETCH, dtype=torch.float64).index_add_(0, bucket, flat * sign)
        folded, size = folded.float(), float(flat.pow(2).sum())  # float32: a class's sketches are held
        if not (bool(torch.isfinite(folded).all()) and size < float("inf")):
            raise Fail(f"{fname} holds weights too large to compare (near the largest float32), where a trained "
                       "model's are near 0.1")
        out[key] = (folded, size, flat.numel())
    return out


class TooSlow(BaseException):
    """A submission's files took more than SECONDS_PER_SUBMISSION of processor time to read (not an Exception: the
    loader's own `except Exception` must not take it for a broken file and go on without a clock)."""


# The clock of SECONDS_PER_SUBMISSION: the process's processor time (ITIMER_PROF, user and system), which a load on
# the machine does not stretch; a reading that waits (a slow disk) is bounded by the process's own time limit, which
# leaves the submission it was reading out on the next run (compare_class)
TIMER = getattr(signal, "ITIMER_PROF", None)
TIMER_SIGNAL = getattr(signal, "SIGPROF", None)


def _too_slow(signum, frame):
    raise TooSlow


def read_class(submissions, progress=None):
    """([(name, file, sketch)], [(name, file, why it was not compared)]) of every params file of the submissions
    ([(name, path of its zip or folder)]), the copies their grading read (kit/upload.py), each submission's within
    SECONDS_PER_SUBMISSION.  progress: a stream told "reading K" before the K-th submission is read (compare_class's:
    which one stopped a process that died)."""
    import torch  # before any file: a process that cannot hold torch fails as a whole, not per file

    names = upload.deliverable_names(sorted(p.name for p in (SRC / "submission").glob("*.py")))
    files, problems = [], []
    timed = TIMER is not None and hasattr(signal, "setitimer")
    before = signal.signal(TIMER_SIGNAL, _too_slow) if timed else None
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the processor time a reading takes is its own: one thread's
    try:
        for k, (name, path) in enumerate(submissions):
            if progress is not None:
                print(f"reading {k}", file=progress, flush=True)
            own = []
            try:
                if timed:
                    signal.setitimer(TIMER, SECONDS_PER_SUBMISSION)
                _read_submission(name, path, names, own, problems)
                files += own
            except TooSlow:
                problems.append((name, "", f"its params files took more than {SECONDS_PER_SUBMISSION} s of "
                                           "processor time to read (a course-size file takes a tenth of a second): "
                                           "not compared"))
            finally:
                if timed:
                    signal.setitimer(TIMER, 0)
    finally:
        torch.set_num_threads(threads)
        if timed:  # the caller's handler again (a test calls this in its own process)
            signal.signal(TIMER_SIGNAL, before)
    return files, problems


def _read_submission(name, path, names, files, problems):
    """read_class's work on one submission: its files' sketches into files, what could not be read into problems."""
    try:
        with upload.Upload(path) as up:
            chosen = up.choose(names).chosen
            for fname in PARAMS_FILES:
                if fname not in chosen:
                    continue
                try:
                    folded = sketch(load_params(io.BytesIO(up.read(chosen[fname])), fname), fname)
                except Fail as e:
                    problems.append((name, fname, upload.shown(str(e)[:400], 300)))
                    continue
                except Exception as e:  # noqa: BLE001 - whatever an upload's bytes cause: that file alone
                    problems.append((name, fname, f"{fname} could not be compared ({type(e).__name__}: "
                                                  f"{upload.shown(str(e)[:400])})"))
                    continue
                if folded:
                    files.append((name, fname, folded))
                else:
                    problems.append((name, fname, f"{fname} holds no weight matrix"))
    except (OSError, ValueError) as e:  # an upload that cannot be read (upload.UploadError is a ValueError)
        problems.append((name, "", f"{upload.shown(str(e)[:400], 300)}: not compared"))


def drifts(sketches):
    """The matrix of the larger drift of each two of `sketches` (of one variant), and where it was measured: over
    the matrices both hold in one shape, which hold at least COVER of the smaller file's weight entries, and where
    neither is all zeros."""
    import torch

    n = len(sketches)
    moved = torch.zeros(n, n, dtype=torch.float64)  # |a - b|^2 over the matrices both hold
    size = torch.zeros(n, n, dtype=torch.float64)  # |b|^2 over them (b: the column)
    common = torch.zeros(n, n, dtype=torch.float64)  # their entries
    total = torch.tensor([float(sum(v[2] for v in s.values())) for s in sketches], dtype=torch.float64)
    for key in sorted({k for s in sketches for k in s}):
        idx = torch.tensor([i for i, s in enumerate(sketches) if key in s])
        folded = torch.stack([sketches[i][key][0] for i in idx.tolist()]).double()
        squares = folded.pow(2).sum(1)
        gram = folded @ folded.T
        rows, cols = idx[:, None], idx[None, :]
        moved[rows, cols] += (squares[:, None] + squares[None, :] - 2 * gram).clamp(min=0)
        size[rows, cols] += torch.tensor([sketches[i][key][1] for i in idx.tolist()], dtype=torch.float64)[None, :]
        common[rows, cols] += float(sketches[int(idx[0])][key][2])
    measured = (common >= COVER * torch.minimum(total[:, None], total[None, :])) & (size > 0) & (size.T > 0)
    one_way = (moved / size.clamp(min=1e-300)).sqrt()
    return torch.maximum(one_way, one_way.T), measured


class Common(NamedTuple):
    """A deliverable that most of the class holds within the ceiling of another submission's: `near` of the
    `files` submissions that hold it."""
    file: str
    near: int
    files: int


def compare(files):
    """From read_class's files: the pairs of files of different submissions within DRIFT_CEILING of each other
    ([ParamsPair], the nearest first), each file's nearest file of another submission ([Nearest]), and the
    deliverables that most of the class holds near another submission's ([Common]): the class's runs of them were
    one computation (one seed, one data order, the same code), near without copying, and no pair of two such
    files is flagged; and the files that no file of another submission could be compared with, with why."""
    near, nearest, held, twinned, alone = [], [], {}, {}, []
    for kind in sorted({variant(f) for _, f, _ in files}):
        group = [(n, f) for n, f, _ in files if variant(f) == kind]
        distance, measured = (m.numpy() for m in drifts([s for n, f, s in files if variant(f) == kind]))
        for i, (name, fname) in enumerate(group):
            best, others = None, False
            for j, (other, ofile) in enumerate(group):
                others = others or other != name
                if other == name or not measured[i, j] or not math.isfinite(float(distance[i, j])):
                    continue
                d = round(float(distance[i, j]), 4)
                if best is None or d < best.drift:
                    best = Nearest(name, fname, other, ofile, d)
                if d <= DRIFT_CEILING and ofile == fname:
                    twinned.setdefault(fname, set()).add(name)
                if i < j and d <= DRIFT_CEILING:
                    (a, fa), (b, fb) = sorted([(name, fname), (other, ofile)])
                    near.append(ParamsPair(a, fa, b, fb, d))
            held.setdefault(fname, set()).add(name)
            if best is not None:
                nearest.append(best)
            elif others:
                alone.append((name, fname, f"{fname} shares too few of its weight matrices (by name and shape) with "
                                           f"every other submission's {kind} files to be compared with them"))
    common = [Common(f, len(twinned.get(f, ())), len(names)) for f, names in sorted(held.items())
              if len(names) >= COMMON_FROM and len(twinned.get(f, ())) > COMMON_SHARE * len(names)]
    rule = {c.file for c in common}
    pairs = [p for p in near if not (p.file_a in rule and p.file_b in rule)]
    return sorted(pairs, key=lambda p: (p.drift, p.a, p.b, p.file_a, p.file_b)), nearest, common, alone


# ----------------------------------------------------------------------------------------------------------
# As a process of its own (grade_class's side: compare_class).


def main():
    """The process compare_class runs: a request on its standard input ({"submissions": [[name, path], ...],
    "secret": hex, "address_space": bytes}), one JSON object on its standard output."""
    request = json.load(sys.stdin)
    if request.get("address_space") and os.name == "posix":  # set here, not by the parent: it may hold threads
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (request["address_space"], request["address_space"]))
    SALT["secret"] = bytes.fromhex(request.get("secret", ""))
    files, problems = read_class([(str(n), str(p)) for n, p in request["submissions"]], progress=sys.stderr)
    print("comparing", file=sys.stderr, flush=True)  # no submission's files are read from here on
    pairs, nearest, common, alone = compare(files)
    json.dump({"files": len(files), "pairs": [list(p) for p in pairs], "nearest": [list(n) for n in nearest],
               "common": [list(c) for c in common], "problems": [list(p) for p in problems + alone]}, sys.stdout)
    return 0


class Comparison(NamedTuple):
    """What compare_class found: the files compared, the flagged pairs, each file's nearest, the deliverables whose
    files are near in most pairs, the files that could not be compared and why, and why there is no comparison at
    all ('' where there is one)."""
    files: int
    pairs: list
    nearest: list
    common: list
    problems: list
    failed: str


MAX_STOPPERS = 3  # submissions whose files may stop the comparison, each left out in turn, before it gives up


def compare_class(submissions, count):
    """Run this file on the submissions ([(name, path)]) in a process of its own, within the grader's memory bound
    and SECONDS + SECONDS_PER_FILE * count seconds (count: an upper bound of the params files), and return its
    Comparison.  Whatever the process prints is checked field by field: a Comparison with `failed` set says why
    it holds nothing.  A process that dies or runs out of time while it reads a submission's files is run again
    without that submission (at most MAX_STOPPERS times), whose files are then listed as not compared: one
    upload's bytes never cost the class its comparison."""
    # absolute (never resolved: a link stays a link, which the upload refuses): the process runs in src/, where a
    # folder typed relative to the instructor's own (../class) is another folder, or none
    left, stopped = [(name, os.path.abspath(path)) for name, path in submissions], []
    while True:
        found, reading = _compare_once(left, count)
        if not found.failed or reading is None or not 0 <= reading < len(left) or len(stopped) == MAX_STOPPERS:
            break
        stopped.append((left[reading][0], found.failed))
        del left[reading]
    said = [(name, "", f"its params files stopped the comparison ({why}): not compared") for name, why in stopped]
    return found._replace(problems=found.problems + said)


def _compare_once(submissions, count):
    """(Comparison, the index of the submission whose files were being read when the process failed, or None)."""
    limit = SECONDS + SECONDS_PER_FILE * count
    request = json.dumps({"submissions": [[n, str(p)] for n, p in submissions], "secret": os.urandom(16).hex(),
                          "address_space": WORKER_ADDRESS_SPACE})
    try:
        proc = subprocess.run([sys.executable, __file__], input=request, capture_output=True, text=True,
                              timeout=limit, cwd=str(SRC))
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Comparison(0, [], [], [], [], f"it did not finish within {limit} s"), _reading(stderr)
    if proc.returncode != 0:
        said = ([line for line in proc.stderr.strip().splitlines() if not _PROGRESS.fullmatch(line)]
                or ["no output"])[-1]
        failed = f"it failed (exit status {proc.returncode}: {upload.shown(said, 300)})"
        return Comparison(0, [], [], [], [], failed), _reading(proc.stderr)
    try:
        found = json.loads(proc.stdout)
        pairs = [ParamsPair(str(a), str(fa), str(b), str(fb), float(d)) for a, fa, b, fb, d in found["pairs"]]
        nearest = [Nearest(str(a), str(fa), str(b), str(fb), float(d)) for a, fa, b, fb, d in found["nearest"]]
        common = [Common(str(f), int(n), int(m)) for f, n, m in found["common"]]
        problems = [(str(a), str(f), str(why)) for a, f, why in found["problems"]]
        return Comparison(int(found["files"]), pairs, nearest, common, problems, ""), None
    except (ValueError, TypeError, KeyError):
        return Comparison(0, [], [], [], [], "its output was not the comparison"), None


_PROGRESS = re.compile(r"reading (\d+)|comparing")


def _reading(stderr):
    """The index of the submission the process was reading last, from its progress lines; None where it had
    finished reading (or never began)."""
    last = None
    for line in stderr.splitlines():
        m = _PROGRESS.fullmatch(line)
        if m:
            last = int(m.group(1)) if m.group(1) is not None else None
    return last


if __name__ == "__main__":
    if sys.argv[1:]:  # it takes its request on standard input only: --help (or anything) says so
        help_asked = sys.argv[1:] in (["-h"], ["--help"])
        print(__doc__.split("\n\n")[0] + "\n\nusage: python tools/params_similarity.py < request.json  "
              "(grade_class runs it: see the module's docstring)", file=sys.stdout if help_asked else sys.stderr)
        sys.exit(0 if help_asked else 2)
    sys.exit(main())
