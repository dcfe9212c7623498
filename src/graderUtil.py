"""The grader's machinery (the course calls this module graderUtil.py): grader.py holds the tests.

What lives here: the test registry (`grader_test`, `Spec`, `Fail`), the worker processes that run each test
in isolation with a time limit and capture its output, the `Context` a test uses to reach the student's
code, the reference solution and the data, the points table and accuracy thresholds, the summary, Gradescope's
results.json, and the command line.  Nothing here knows what the assignment asks: grader.py registers its tests
and calls configure() with the few facts the harness needs (which student modules import which, the held-out
files, the file that identifies a data set).

Who can reach what (see "Isolation" below).  Every test has two halves: the test runs in a worker process beside
the student's code and only reports what that code computed, as data (`ctx.report`); its judge
(`grader_judge`) decides, in a second worker that never imports student code, from that data alone (and the
reference solution or the held-out answers where it needs them).  What the student's process concludes never
counts: a test it fails fails (failing early can only cost the student), a test it passes is the judge's to
decide, so code that patches the grader in its own memory or forges the worker's messages wins nothing.  Run as root (Gradescope), every worker that runs student code drops to an
unprivileged user in a session of its own, sees copies of the submission and of the data without the held-out
answers, and cannot read the answers, the reference or the results; whatever it started is killed before the
summary is written.

Run the grader through grader.py (`python grader.py --help`): the worker processes run grader.py too, so
that they know its tests.
"""

import argparse
import hashlib
import hmac
import io
import json
import os
import queue
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SRC = Path(__file__).resolve().parent
POINTS_FILE = SRC / "points.json"
GRADER_SCRIPT = SRC / "grader.py"  # the workers run it: it registers the tests, then calls main()

DESCRIPTION = __doc__  # the --help text: grader.py gives its own docstring through configure()
PENDING_MESSAGE = "hidden - graded after submission"
STARTUP_TIMEOUT = 120.0  # seconds for a worker process to import torch and report ready
IDLE_TIMEOUT = 60.0  # seconds between two tests of one worker (the harness's own work)
MESSAGE_CHARS = 1500  # longest failure message kept
OUTPUT_CHARS = 1000  # head and tail of a test's captured output kept
EXIT_GRACE = 0.5  # seconds to read what a worker wrote before it exited (its pipes may stay open elsewhere)
REPORT_BYTES = 16 << 20  # largest report a student's worker may hand to a judge
# What a report may unpack to.  torch.save writes a zip archive whose members are stored, not compressed, so a
# report's members fill at most its own REPORT_BYTES; a member that claims more, or is compressed (1 MB of
# DEFLATE can inflate to gigabytes inside the judge's torch.load), is refused before anything loads it.
REPORT_UNPACKED_BYTES = 64 << 20
REPORT_MEMBERS = 4096  # a report of a few dozen tensors has a few dozen members
# The protocol between a worker and the parent: no honest line is longer (a result's message and output are
# cut to MESSAGE_CHARS and 2 * OUTPUT_CHARS characters, JSON-escaped twice), and no honest worker sends more
# messages than ready and done, plus start, result and an import/imported pair per student module for a test.
MESSAGE_LINE_BYTES = 256 << 10
MESSAGES_PER_WORKER = 8
MESSAGES_PER_TEST = 40
# As root, student code runs as a user id of this run's own: the first of these that is free (claim_worker_user;
# GRADER_WORKER_USER, a name or a number, wins).  Below the uids that systemd hands out on its own
# (61184..65519) and above the usual human accounts; an id that names a user or a group is skipped.
WORKER_UIDS = range(59000, 60000)

# Resource limits of a worker that runs student code, set in drop_privileges with the hard limit equal to the
# soft one, so that nothing it runs can raise them again; what it starts inherits them.
# Address space: grading the reference on the course's data (every test, the hidden ones with course-size
# models, the prediction files' checks with course-size params included) peaked at 0.81 GiB of virtual memory
# (VmPeak) in a worker computing on one thread and 0.93 GiB on two, most of it torch's own mappings: each
# thread adds its stack and a malloc arena.  The limit is WORKER_ADDRESS_SPACE plus THREAD_ADDRESS_SPACE per
# thread the worker computes on (4.25 GiB for one): about five times the measured peak, and a submission that
# allocates more gets a MemoryError (its test fails) instead of the machine's memory.
WORKER_ADDRESS_SPACE = 4 << 30
THREAD_ADDRESS_SPACE = 256 << 20
# Processes and threads: RLIMIT_NPROC counts every process and every thread of the worker user together (the
# workers of a run at a time, what earlier ones left).  Grading the reference, one worker computing on two
# threads had 5 threads (a worker has torch's pool plus a few of Python's), and the user never more than 5:
# about cores + 6 for two workers on any machine.  128 leaves room for that up to 120 cores and a DataLoader's
# processes besides; 300 threads, or a fork bomb, do not fit: the fork or the thread start fails inside the
# student's code.
WORKER_PROCESSES = 128
# Largest file a worker may write (an honest one writes its reports, at most REPORT_BYTES, and parameter files
# of small models): a larger write fails with EFBIG (Python raises OSError) instead of filling the disk.
WORKER_FILE_BYTES = 64 << 20
# CPU seconds of a worker process: its tests' time limits times its threads, plus STARTUP_CPU for importing
# torch.  The time limits already stop the worker; this bounds the processes it leaves behind (each has the
# same budget of its own), which would otherwise compete with the grading for the CPU until its end.
STARTUP_CPU = 60

# What grader.py tells the harness (configure): the student modules each student module imports (importing
# them first, one by one, tells which file is broken or hangs), the held-out files whose presence makes the
# tests that need "answers" run, and the data file whose SHA-256 picks the row of accuracy thresholds.
# The files of a grading copy (grader.py's GRADING_FILES): a worker imports the Python modules among them
# before it drops its privileges.
STUDENT_DEPS = {}
HELD_OUT = ()
DATASET_FILE = None
GRADING_FILES = ()


def configure(description=None, student_deps=None, held_out=None, dataset_file=None, grading_files=None):
    global DESCRIPTION, STUDENT_DEPS, HELD_OUT, DATASET_FILE, GRADING_FILES
    if description is not None:
        DESCRIPTION = description
    if student_deps is not None:
        STUDENT_DEPS = dict(student_deps)
    if held_out is not None:
        HELD_OUT = tuple(held_out)
    if dataset_file is not None:
        DATASET_FILE = dataset_file
    if grading_files is not None:
        GRADING_FILES = tuple(grading_files)


# ----------------------------------------------------------------------------------------------------------
# The test registry.  A test function gets a Context and passes by returning; it fails by raising (Fail or
# AssertionError carry the message).  A string it returns is shown as an informational message.


class Spec:
    def __init__(self, tid, description, fn, timeout, needs=(), info=False, points=None, extra_credit=False,
                 group=None, uses_torch=True):
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
        self.judge = None  # judge(ctx, report): decides the test in a worker without student code

    @property
    def hidden(self):
        return self.kind == "hidden"


REGISTRY = {}


def grader_test(tid, description, timeout=30, needs=(), info=False, extra_credit=False, group=None,
                uses_torch=True):
    """Register fn(ctx) as test `tid`.  needs: "solution" and/or "answers" (pending where absent); info: a
    0-point test that reports a number; extra_credit: its points count apart; group: tests of one group share a
    worker process (default: the question part, e.g. 1e)."""
    def register(fn):
        REGISTRY[tid] = Spec(tid, description, fn, timeout, needs, info, extra_credit=extra_credit, group=group,
                             uses_torch=uses_torch)
        return fn

    return register


def grader_judge(tid):
    """Register the judge of test `tid`: judge(ctx, report) runs after the test passed in the student's worker,
    in a trusted worker that has the reference solution and the held-out answers and never imports student
    code; `report` is what the test gave ctx.report (tensors, numbers, strings, lists, dicts), or None.  The
    judge's verdict is the test's: a test with a judge passes only if its judge passes."""

    def register(fn):
        REGISTRY[tid].judge = fn
        return fn

    return register


class Fail(Exception):
    """A failed check, with the message shown to the student."""


class StudentImportError(Fail):
    pass


# ----------------------------------------------------------------------------------------------------------
# Worker side: runs tests in a child process and reports over a private pipe.


class Capture(io.TextIOBase):
    """Stands in for sys.stdout / sys.stderr in a worker: keeps the first and last OUTPUT_CHARS characters."""

    def __init__(self):
        super().__init__()
        self.reset()

    def reset(self):
        self.head, self.tail, self.total = "", "", 0

    @property
    def encoding(self):
        return "utf-8"

    def writable(self):
        return True

    def isatty(self):
        return False

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        n = len(s)
        self.total += n
        if len(self.head) < OUTPUT_CHARS:
            self.head += s[: OUTPUT_CHARS - len(self.head)]
        self.tail = s[-OUTPUT_CHARS:] if n >= OUTPUT_CHARS else (self.tail + s)[-OUTPUT_CHARS:]
        return n

    def excerpt(self):
        if self.total <= OUTPUT_CHARS:
            return self.head
        if self.total <= 2 * OUTPUT_CHARS:
            return self.head + self.tail[-(self.total - OUTPUT_CHARS):]
        cut = self.total - 2 * OUTPUT_CHARS
        return f"{self.head}\n[... {cut} characters of output cut ...]\n{self.tail}"


def load_package(name, directory, run_init=True):
    """Import the folder `directory` as the top-level package `name` (whatever the folder is called).  With
    run_init=False its __init__.py is not run: a package whose __init__ imports every module would otherwise
    fail whole when one of them is broken, and the broken file could no longer be named."""
    import importlib.machinery
    import importlib.util

    directory = Path(directory)
    init = directory / "__init__.py"
    if init.is_file() and run_init:
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(directory)])
    else:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(directory)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def where(exc, directory):
    """' (dataset.py, line 87, in __getitem__)' for the innermost traceback frame in `directory`, or ''."""
    if directory is None:
        return ""
    directory = str(Path(directory).resolve())
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            path = str(Path(frame.filename).resolve())
        except (OSError, ValueError):
            continue
        if path.startswith(directory + os.sep):
            found = f" ({Path(path).name}, line {frame.lineno}, in {frame.name})"
    return found


def describe(exc, directory=None):
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > 300:
        first = first[:300] + "..."
    return f"{type(exc).__name__}: {first}{where(exc, directory)}" if first else f"{type(exc).__name__}{where(exc, directory)}"


class Context:
    """What a test function may use: the student's modules (in a student's worker) or the reference's (in a
    judge's), the data, a temp folder, and ctx.report to hand what the student's code computed to the judge."""

    def __init__(self, cfg, send):
        self.cfg = cfg
        self.send = send
        self.judging = bool(cfg.get("judge"))
        self.report_dir = Path(cfg["report_dir"]) if cfg.get("report_dir") else None
        self.current = None  # the id of the test that runs
        self.submission_dir = Path(cfg["submission_dir"])
        self.solution_dir = Path(cfg["solution_dir"]) if cfg.get("solution_dir") else None
        self.data_dir = Path(cfg["data_dir"])
        self.predictions_dir = Path(cfg["predictions_dir"])
        self.thresholds = cfg.get("thresholds") or {}
        self.threshold_row = cfg.get("threshold_row", "?")
        self.hanging = set(cfg.get("hanging", []))
        self.failed = {}
        self.cache = {}
        self.tmp = None

    # -- the student's code --------------------------------------------------------------------------------
    def _import(self, package, directory, module, label):
        import importlib

        full = f"{package}.{module}" if module else package
        if full in sys.modules:
            return sys.modules[full]
        key = module or "__init__"
        if key in self.failed:
            raise StudentImportError(self.failed[key])
        if key in self.hanging:
            raise StudentImportError(f"importing {label}/{key}.py did not finish within the time limit of an "
                                     "earlier test (an endless loop at import time?)")
        if module and not (directory / f"{module}.py").is_file():
            self.failed[key] = f"{label}/{module}.py is missing"
            raise StudentImportError(self.failed[key])
        self.send({"ev": "import", "module": key})
        try:
            if module:
                return importlib.import_module(full)
            return load_package(package, directory, run_init=False)  # each module is imported on its own
        except SyntaxError as e:
            file = Path(e.filename).name if e.filename else f"{key}.py"
            self.failed[key] = f"{label}/{file} has a syntax error at line {e.lineno}: {e.msg}"
        except BaseException as e:  # noqa: BLE001 - anything raised while importing student code
            self.failed[key] = f"importing {label}/{key}.py raised {describe(e, directory)}"
        finally:
            self.send({"ev": "imported"})
        raise StudentImportError(self.failed[key])

    def student(self, name):
        """The student's module submission.<name> (imported on first use; a broken file is a clear Fail)."""
        if self.judging:
            raise RuntimeError("a judge never imports student code (a bug of the grader)")
        self._import("submission", self.submission_dir, None, "submission")
        for dep in STUDENT_DEPS.get(name, []) + [name]:
            module = self._import("submission", self.submission_dir, dep, "submission")
        return module

    def solution(self, name):
        """The reference solution's module solution.<name>."""
        import importlib

        if self.solution_dir is None:
            raise Fail("no reference solution here: only a judge (grader_judge) compares with it")
        try:
            if "solution" not in sys.modules:
                load_package("solution", self.solution_dir)
            return importlib.import_module(f"solution.{name}")
        except BaseException as e:  # noqa: BLE001
            raise Fail(f"the reference solution could not be imported (a problem of the grading set-up, not of "
                       f"the submission): {describe(e)}") from None

    # -- student's worker -> judge ---------------------------------------------------------------------------
    def report(self, obj):
        """Hand `obj` (tensors, numbers, strings, lists, dicts) to this test's judge, which loads it safely
        (torch.load with weights_only=True: no code of the student's runs there)."""
        import torch

        if self.report_dir is None:
            raise RuntimeError("no report folder configured (a bug of the grader)")
        torch.save(obj, self.report_dir / f"{self.current}.report")

    def load_report(self, tid):
        """The report of test tid (checked and copied by the parent), or None."""
        path = self.report_dir / f"{tid}.report" if self.report_dir else None
        if path is None or not path.is_file():
            return None
        import torch

        try:
            with open(path, "rb") as f:
                data = f.read(REPORT_BYTES + 1)
        except OSError:
            raise Fail("what the test reported could not be read") from None
        problem = report_problem(data) if len(data) <= REPORT_BYTES else "what the test reported is too large"
        if problem:  # checked before torch.load (the parent checked it too: here for a judge of its own)
            raise Fail(problem)
        try:
            return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001 - whatever the student's worker wrote
            raise Fail(f"what the test reported could not be read ({type(e).__name__})") from None

    # -- data ----------------------------------------------------------------------------------------------
    def data_path(self, name):
        path = self.data_dir / name
        if not path.is_file():
            raise Fail(f"data file {path} is missing: generate the data (see src/data/) or point the grader at "
                       "a data folder with --data-dir")
        return path

    def read_data(self, name):
        return self.data_path(name).read_text(encoding="utf-8")


def call(what, directory, fn, *args, **kwargs):
    """fn(*args): an exception in it becomes a Fail that names `what` and the line of the student's code."""
    try:
        return fn(*args, **kwargs)
    except Fail:
        raise
    except Exception as e:  # noqa: BLE001
        raise Fail(f"{what} raised {describe(e, directory)}") from None


def seed_everything(seed):
    import random

    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % (2**32))
    except ImportError:
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def exposed_by(folder, uid, gid):
    """The folder that a descriptor open on `folder` lets uid read from: walking up with '..' stops at the first
    folder above it that uid cannot search, so everything below that one's child on the way.  None if no
    folder above blocks the way."""
    path = Path(os.path.realpath(folder))
    below = path
    for parent in path.parents:
        try:
            if not permitted(os.stat(parent), uid, gid, 1):
                return str(below)
        except OSError:
            return str(below)
        below = parent
    return None


def reachable_imports(uid, gid, private=()):
    """Before a worker drops its privileges: the folders of the Python installation on sys.path that uid cannot
    reach (a Python installed under /root, say) are opened here, and sys.path and the imported packages'
    __path__ name them through /proc/self/fd, which a process may always follow for its own descriptors, so
    that student code can import what the grader's Python has.  A descriptor also opens the folders above it
    (exposed_by), so one is opened only if what it exposes and the `private` paths (the answers, the
    reference, the results, the grader's folder) do not overlap.  Returns the descriptors to keep."""
    import site

    install = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    try:
        install += site.getsitepackages() + [site.getusersitepackages()]
    except Exception:  # noqa: BLE001 - a virtualenv's old site module
        pass
    install = {os.path.realpath(p) for p in install}
    private = [os.path.realpath(p) for p in private]

    def inside(path, folder):
        return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)

    opened = {}
    for entry in sys.path:
        real = os.path.realpath(entry or ".")
        if (real in opened or not os.path.isdir(real) or readable_by(real, uid, gid)
                or not any(inside(real, folder) for folder in install)):
            continue
        exposed = exposed_by(real, uid, gid)
        if exposed is None or any(inside(p, exposed) or inside(exposed, p) for p in private):
            continue
        opened[real] = os.open(real, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))

    def through_fd(path):
        real = os.path.realpath(path)
        for folder, fd in opened.items():
            if inside(real, folder):
                return f"/proc/self/fd/{fd}" + real[len(folder):]
        return path

    sys.path[:] = [through_fd(entry) if entry else entry for entry in sys.path]
    for module in list(sys.modules.values()):
        path = getattr(module, "__path__", None)
        if isinstance(path, list):
            path[:] = [through_fd(p) for p in path]
    sys.path_importer_cache.clear()
    return sorted(opened.values())


def set_limit(which, value):
    """Set resource limit `which` (a resource.RLIMIT_*) to value, soft and hard, or to the hard limit already in
    place if that is lower: a process may lower its hard limits, never raise them."""
    import resource

    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def drop_privileges(cfg, keep_fd):
    """In a worker, before any student code: become cfg's unprivileged user for good (real, effective and saved
    ids, no supplementary groups), with only stdin, stdout, stderr, the protocol descriptor and those of
    reachable_imports open, under the resource limits of cfg["limits"], in the private folder the parent made
    for this worker, which becomes the user's only here, and which HOME and TMPDIR name only from here on."""
    import importlib

    for name in GRADING_FILES:  # the grader's own modules (grader_written.py, ...): from here on, the
        stem = Path(name).stem  # grader's folder is out of reach.  The script itself runs as __main__.
        if name.endswith(".py") and stem != GRADER_SCRIPT.stem and stem not in sys.modules:
            try:
                importlib.import_module(stem)
            except Exception:  # noqa: BLE001 - its tests fail with the reason
                pass
    keep = sorted({keep_fd, *reachable_imports(cfg["uid"], cfg["gid"], cfg.get("private", []) + [str(SRC)])})
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
    tmp = cfg["tmp_dir"]
    # The parent made the folder root's alone (Sandbox.private_dir): until this line no process of the worker
    # user could put anything in it, so nothing it holds was read while this process was root (a .pth file in
    # HOME's site-packages, say, which a Python started with user site on runs at start-up).  It is handed over
    # after every privileged step: the next lines only change ids and limits, and read nothing.
    folder = os.open(tmp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    os.fchown(folder, cfg["uid"], cfg["gid"])
    os.setgroups([])
    os.setgid(cfg["gid"])
    os.setuid(cfg["uid"])
    if os.getuid() == 0 or os.geteuid() == 0 or os.getegid() == 0:
        raise SystemExit("the worker could not drop its privileges")
    import resource

    limits = cfg.get("limits") or {}
    # after setuid: RLIMIT_NPROC counts the processes of the real user id, which is now the worker user's
    for which, key in ((resource.RLIMIT_AS, "memory"), (resource.RLIMIT_NPROC, "processes"),
                       (resource.RLIMIT_FSIZE, "file"), (resource.RLIMIT_CPU, "cpu")):
        if limits.get(key):
            set_limit(which, int(limits[key]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past RLIMIT_FSIZE fails (OSError), not kills
    os.fchdir(folder)
    os.close(folder)
    os.environ.update(HOME=tmp, TMPDIR=tmp)
    tempfile.tempdir = tmp


def worker_main():
    """Child process: read the configuration from stdin, run the tests (or, with cfg["judge"], their judges),
    report each step on a private descriptor, every message signed with the key the parent sent."""
    cfg = json.loads(sys.stdin.read() or "{}")
    key = bytes.fromhex(cfg.pop("key", ""))
    proto_fd = os.dup(1)
    proto = os.fdopen(proto_fd, "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)  # output written below Python's level goes to the parent's (bounded) stderr reader
    sys.stdin = open(os.devnull, encoding="utf-8")
    capture = Capture()
    sys.stdout = sys.stderr = capture
    try:
        import faulthandler

        faulthandler.enable(file=sys.__stderr__)
    except Exception:  # noqa: BLE001
        pass

    def send(obj):
        # The signature keeps lines that student code writes to this descriptor from counting as messages.
        # It cannot stop code that reads the key from this process's memory; such code could claim a basic
        # test's verdict, never a hidden one's, which a judge that never imports student code decides.
        text = json.dumps(obj)
        mac = hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()
        proto.write(json.dumps({"m": text, "h": mac}) + "\n")
        proto.flush()

    if cfg.get("preimport", True):
        try:
            import numpy  # noqa: F401
            import torch

            torch.set_num_threads(max(1, int(cfg.get("threads", 1))))
        except ImportError:
            pass  # the tests that need torch fail with the reason
    specs = dict(REGISTRY)
    if cfg.get("uid") is not None:
        drop_privileges(cfg, proto_fd)
    judging = bool(cfg.get("judge"))
    ctx = Context(cfg, send)
    send({"ev": "ready"})
    for tid in cfg["tests"]:
        spec = specs.get(tid)
        send({"ev": "start", "id": tid})
        capture.reset()
        started = time.perf_counter()
        status, message = "passed", ""
        tmp = tempfile.TemporaryDirectory(prefix="grader-")
        ctx.tmp, ctx.current = Path(tmp.name), tid
        try:
            if spec is None or (judging and spec.judge is None):
                raise Fail(f"unknown test {tid}")
            seed_everything(zlib.crc32(tid.encode()))
            returned = spec.judge(ctx, ctx.load_report(tid)) if judging else spec.fn(ctx)
            if isinstance(returned, str):
                message = returned
        except Fail as e:
            status, message = "failed", str(e)
        except AssertionError as e:
            status, message = "failed", (str(e) or "a check failed") + where(e, ctx.submission_dir)
        except SystemExit as e:
            status, message = "failed", f"the code called sys.exit({e.code!r}){where(e, ctx.submission_dir)}"
        except MemoryError as e:
            status, message = "failed", f"ran out of memory{where(e, ctx.submission_dir)}"
        except BaseException as e:  # noqa: BLE001 - a test never takes the worker down
            status, message = "failed", describe(e, ctx.submission_dir)
        seconds = time.perf_counter() - started
        try:
            tmp.cleanup()
        except Exception:  # noqa: BLE001
            pass
        if len(message) > MESSAGE_CHARS:
            message = message[:MESSAGE_CHARS] + " [...]"
        send({"ev": "result", "id": tid, "status": status, "message": message, "output": capture.excerpt(),
              "seconds": round(seconds, 3)})
    send({"ev": "done"})
    proto.close()
    return 0


# ----------------------------------------------------------------------------------------------------------
# Isolation.  Run as root (Gradescope runs the autograder as root), the grader keeps the held-out answers, the
# reference solution and the results to itself.  A Sandbox holds, in a root-owned folder the workers can read
# but not change, copies of the submission (code, params, predictions) and of the data folder without the
# held-out files; each worker that runs student code gets a private temp folder there and drops to the
# unprivileged user before the student's first line runs.  The answers, the reference and the results stay
# where they are, readable only by root (the Gradescope bundle makes them so; the header warns otherwise).
# Nothing the worker user can write is read by a process while it is root: a worker's Python starts without
# user site-packages and PYTHON* variables, in an environment of the parent's making (Worker), and its folder
# becomes the user's only after the drop (drop_privileges).  When the grading ends, every process of the user
# is killed and every file and IPC object it owns is removed (Sandbox.close).


class UidClaim:
    """This grading run's hold on a worker user id, so that no other grader on the machine runs student code as
    the same user at the same time (each kills every process of its user when it ends).  On Linux the hold is
    an abstract socket named after the uid, which the kernel frees when this process ends, however it ends;
    elsewhere an exclusive lock on a file in a folder only root may change."""

    def __init__(self, uid):
        self.uid = uid
        self._held = None

    def acquire(self):
        import socket

        if sys.platform.startswith("linux"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # not inherited by the workers (PEP 446)
            try:
                sock.bind(f"\0cs224n-pretraining-grader-worker-uid-{self.uid}")
            except OSError:
                sock.close()
                return False
            self._held = sock
            return True
        import fcntl

        folder = Path(tempfile.gettempdir()) / "grader-worker-uids"
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise ValueError(f"{folder} is not a folder that only root may change; remove it")
        fd = os.open(folder / f"{self.uid}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._held = fd
        return True

    def release(self):
        held, self._held = self._held, None
        if held is None:
            return
        if isinstance(held, int):
            os.close(held)
        else:
            held.close()


def _named_user(name):
    """(uid, gid, label) of a user given by name or number; a number need not name an existing user."""
    import pwd

    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        uid, gid, label = entry.pw_uid, entry.pw_gid, entry.pw_name
    except KeyError:
        if not name.isdigit():
            raise ValueError(f"there is no user {name}; create it, or leave GRADER_WORKER_USER unset so that the "
                             "grader picks a free user id") from None
        uid = gid = int(name)
        label = f"uid {uid}"
    if uid == 0 or gid == 0:
        raise ValueError(f"the worker user {name} is root")
    return uid, gid, label


def _is_named_user(uid):
    import pwd

    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def claim_worker_user(user=None):
    """(uid, gid, label, claim): the user this run's workers run as, held for this run alone.  `user` (a name or
    a number), else GRADER_WORKER_USER, else the first id of WORKER_UIDS that names no user and no group, runs
    no process and no other grader holds: a user of the run's own, so that any number of graders can run at
    once as root and each kills only what it started."""
    user = user or os.environ.get("GRADER_WORKER_USER")
    if user:
        uid, gid, label = _named_user(str(user))
        claim = UidClaim(uid)
        if not claim.acquire():
            raise ValueError(f"another grader running now uses the worker user {label}; wait for it to finish, or "
                             "leave GRADER_WORKER_USER unset so that each grader gets a user id of its own")
        return uid, gid, label, claim
    for uid in unused_uids(WORKER_UIDS, len(WORKER_UIDS), claimed=True):
        claim = UidClaim(uid)
        if not claim.acquire():
            continue
        if user_pids(uid):  # it started running something between the look and the claim
            claim.release()
            continue
        return uid, uid, f"uid {uid}", claim
    raise ValueError(f"no user id of {WORKER_UIDS.start}..{WORKER_UIDS.stop - 1} is free for the student's code "
                     "(each is a user, a group, runs a process or is held by another grader); set "
                     "GRADER_WORKER_USER to an unprivileged user")


def permitted(st, uid, gid, bit):
    """Whether the mode bits of st give uid (in group gid only) `bit`: 4 read, 1 execute (search a folder)."""
    if st.st_uid == uid:
        return bool(st.st_mode >> 6 & bit)
    if st.st_gid == gid:
        return bool(st.st_mode >> 3 & bit)
    return bool(st.st_mode & bit)


def readable_by(path, uid, gid):
    """Whether uid (in group gid only) could read the file or enter the folder `path`, by the mode bits of it
    and of every folder above it (ACLs are not read)."""
    path = Path(path).resolve()
    try:
        for folder in reversed(path.parents):
            if not permitted(os.stat(folder), uid, gid, 1):
                return False
        st = os.stat(path)
    except OSError:
        return False
    return permitted(st, uid, gid, 1 if stat.S_ISDIR(st.st_mode) else 4)


def copy_plain(src, dst, skip=()):
    """Copy the regular files under src to dst (symbolic links and special files are left out, never
    followed), as root-owned files every user may read and nobody but root may change."""
    dst.mkdir(mode=0o755)
    os.chmod(dst, 0o755)
    if not Path(src).is_dir():
        return dst
    for entry in os.scandir(src):
        if entry.name in skip or entry.name == "__pycache__" or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            copy_plain(entry.path, dst / entry.name, skip)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, dst / entry.name, follow_symlinks=False)
            os.chmod(dst / entry.name, 0o644)
    return dst


def user_pids(uid):
    """The live (not zombie) processes whose real, effective or saved uid is uid."""
    pids = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="utf-8") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if fields.get("State", "").strip()[:1] in ("Z", "X"):
            continue
        if uid in [int(x) for x in fields.get("Uid", "").split()[:3]]:
            pids.append(int(entry))
    return pids


def unused_uids(candidates, n, claimed=False):
    """The first n user ids of `candidates` that no user and no group has and no process runs as; fewer if there
    are not n.  With claimed=True, a generator that yields them one by one (claim_worker_user stops at the
    first it can hold: looking at the processes of all the others would be wasted)."""
    import grp
    import pwd

    def free():
        for uid in candidates:
            try:
                pwd.getpwuid(uid)
                continue
            except KeyError:
                pass
            try:
                grp.getgrgid(uid)  # the id doubles as the workers' group: its members would share the sandbox
                continue
            except KeyError:
                pass
            if not user_pids(uid):
                yield uid

    if claimed:
        return free()
    found = []
    for uid in free():
        found.append(uid)
        if len(found) == n:
            break
    return found


def kill_user_processes(uid, gid, spare=(), rounds=100):
    """Kill every process of uid but those in `spare` (which ran before the grading: `nobody` may have daemons).
    Without any to spare, a child that becomes uid calls kill(-1, SIGKILL), which reaches all of them at once
    (a process forking meanwhile included) but not the caller; else each is killed by its pid.  Repeated until
    none is left; True when none is."""
    for _ in range(rounds):
        pids = [pid for pid in user_pids(uid) if pid not in spare]
        if not pids:
            return True
        if spare:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        else:
            pid = os.fork()
            if pid == 0:  # only system calls here, then _exit
                try:
                    os.setgroups([])
                    os.setgid(gid)
                    os.setuid(uid)
                    os.kill(-1, signal.SIGKILL)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
        time.sleep(0.05)
    return not [pid for pid in user_pids(uid) if pid not in spare]


class Sandbox:
    """The unprivileged side of one grading run as root: the user, and a root-owned folder that only the user's
    group may enter, with the copies the workers read (submission, predictions, data without the held-out
    files) and their private temp folders."""

    def __init__(self, submission_dir, predictions_dir, data_dir, held_out, user=None):
        self.uid, self.gid, self.user, self.claim = claim_worker_user(user)
        self.spare = set(user_pids(self.uid))  # not ours (a named user's daemons): close() leaves them alone
        # an id that names no user is this run's own (claim_worker_user): every file it owns was made by our
        # workers, and close() removes them; a named user's files (nobody's, say) may be older than the grading
        self.own_id = not _is_named_user(self.uid)
        self.base = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
        os.chown(self.base, 0, self.gid)  # the workers' group may enter, other users not (grade_class grades
        os.chmod(self.base, 0o750)  # several submissions at a time, each as a user of its own)
        self.submission_dir = copy_plain(submission_dir, self.base / "submission")
        self.predictions_dir = (self.submission_dir if Path(predictions_dir) == Path(submission_dir)
                                else copy_plain(predictions_dir, self.base / "predictions"))
        self.data_dir = copy_plain(data_dir, self.base / "data", skip=set(held_out))
        self.private = []  # what the workers' Python must not expose (reachable_imports): set by main
        self.count = 0
        self.lock = threading.Lock()

    def private_dir(self):
        """A new folder for one worker (its HOME, TMPDIR and working folder), root's alone until the worker,
        done with everything it does as root, hands it to the worker user (drop_privileges): a process of that
        user left by an earlier worker cannot plant anything in it that the next worker would read as root."""
        with self.lock:
            self.count += 1
            path = self.base / f"worker-{self.count}"
        path.mkdir(mode=0o700)
        os.chmod(path, 0o700)  # whatever the umask
        return path

    def worker_settings(self, tmp):
        return {"uid": self.uid, "gid": self.gid, "tmp_dir": str(tmp), "private": self.private}

    def close(self):
        """Kill everything the workers left behind, remove every file and IPC object the user made (in
        SHARED_FOLDERS and the sandbox; for an id of the run's own), and the folder, then let the user id go.
        Safe to call twice."""
        gone = kill_user_processes(self.uid, self.gid, self.spare)
        if self.own_id:
            remove_user_files(self.uid, self.gid, SHARED_FOLDERS + (str(self.base),))
            remove_user_ipc(self.uid)
        shutil.rmtree(self.base, ignore_errors=True)
        if gone:  # else its processes live on: no later grader may take the id (the claim ends with us)
            self.claim.release()
        return gone


# The folders where any user may create files (sticky, world-writable): a worker's files there are removed when
# the grading ends, with whatever the worker user made anywhere below them.
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock")


def remove_user_files(uid, gid, folders, depth=64):
    """Remove every file and folder owned by uid under `folders`, never following a link.  Only folders uid may
    search are walked (it cannot have made anything elsewhere: a user cannot give a file away, and cannot link
    one where it cannot write); a folder it owns goes whole.  Run once the user's processes are gone, so that
    nothing moves meanwhile.  Returns the paths removed."""
    removed = []

    def walk(path, level):
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid == uid:
                try:
                    if stat.S_ISDIR(st.st_mode):
                        shutil.rmtree(entry.path)  # fd-based where the platform allows: never follows a link
                    else:
                        os.unlink(entry.path)
                    removed.append(entry.path)
                except OSError:
                    pass
            elif stat.S_ISDIR(st.st_mode) and level < depth and permitted(st, uid, gid, 1):
                walk(entry.path, level + 1)

    seen = set()
    for folder in folders:
        real = os.path.realpath(folder)  # /var/lock is often a link to /run/lock
        if real not in seen and os.path.isdir(real):
            seen.add(real)
            walk(real, 0)
    return removed


def remove_user_ipc(uid):
    """Remove the System V shared memory segments, semaphore sets and message queues that uid owns: they live on
    after their process, outside any folder."""
    import ctypes

    if not os.path.isdir("/proc/sysvipc"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # this process's own C library (find_library would run ldconfig)
    except OSError:
        return
    ipc_rmid = 0
    for kind, remove in (("shm", lambda i: libc.shmctl(i, ipc_rmid, None)),
                         ("sem", lambda i: libc.semctl(i, 0, ipc_rmid)),
                         ("msg", lambda i: libc.msgctl(i, ipc_rmid, None))):
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                header = f.readline().split()
                rows = [dict(zip(header, line.split())) for line in f]
        except OSError:
            continue
        for row in rows:
            try:
                if int(row.get("uid", -1)) == uid or int(row.get("cuid", -1)) == uid:
                    remove(int(row["shmid" if kind == "shm" else "semid" if kind == "sem" else "msqid"]))
            except (KeyError, ValueError):
                continue


def report_problem(data):
    """Why the bytes of a report cannot be loaded safely, or None: it must be the zip archive torch.save writes,
    with at most REPORT_MEMBERS members, each stored as is (torch.save compresses nothing), at most
    REPORT_UNPACKED_BYTES together.  Read with zipfile, which unpacks nothing here."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except Exception:  # noqa: BLE001 - zipfile raises many kinds on a damaged archive
        return "what the test reported is not a file that torch.save writes"
    if len(members) > REPORT_MEMBERS:
        return f"what the test reported has {len(members)} parts, more than the {REPORT_MEMBERS} a report may have"
    unpacked = sum(m.file_size for m in members)
    if unpacked > REPORT_UNPACKED_BYTES:
        return (f"what the test reported unpacks to {unpacked / 2**20:.0f} MiB, more than the "
                f"{REPORT_UNPACKED_BYTES >> 20} MiB a report may hold")
    if any(m.compress_type != zipfile.ZIP_STORED or m.compress_size != m.file_size for m in members):
        return "what the test reported is compressed, and torch.save never compresses: it is not loaded"
    return None


def take_report(src_dir, tid, dst_dir, uid=None):
    """Copy the report of test tid from a student's worker folder into dst_dir, only if it is a regular file of
    at most REPORT_BYTES (owned by uid, when given) that report_problem accepts: never following a link, never
    blocking on a FIFO.  None if copied or if there is none; else why it was refused (the test fails)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(Path(src_dir) / f"{tid}.report", flags)
    except FileNotFoundError:
        return None
    except OSError:
        return "what the test reported is not a regular file"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
            return "what the test reported is not a regular file of the test's own"
        data = b""
        while len(data) <= REPORT_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
    except OSError:
        return "what the test reported could not be read"
    finally:
        os.close(fd)
    if len(data) > REPORT_BYTES:
        return f"what the test reported is larger than the {REPORT_BYTES >> 20} MiB a report may be"
    problem = report_problem(data)
    if problem is None:
        (Path(dst_dir) / f"{tid}.report").write_bytes(data)
    return problem


def worker_environment(threads):
    """The whole environment of a worker started as root: nothing of the parent's.  No HOME
    and no TMPDIR (drop_privileges sets them once the worker is unprivileged: before, a folder the worker user
    can write must not be where root's Python looks), a PATH of system folders only, UTF-8, and the thread
    counts the parent chose."""
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
           "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = str(max(1, int(threads)))
    return env


# ----------------------------------------------------------------------------------------------------------
# Parent side: schedule the tests on worker processes, enforce the time limits, add up the points.

_EOF = object()
_FLOOD = object()  # the worker sent more messages than its tests need


class Worker:
    """One child process running a list of tests; killed (with whatever it started) on a timeout.

    The pipes are read with plain os.read in daemon threads that never get joined and close their descriptor
    themselves: a process the child started may hold the pipes open after the child has gone, and nothing
    here waits for it.  That the child has exited is seen with waitid(WNOWAIT), which leaves it unreaped, so
    its pid (its process group's id) cannot be reused before kill() has signalled the group."""

    def __init__(self, cfg, env=None):
        self.key = secrets.token_bytes(32)
        cfg = dict(cfg, key=self.key.hex())
        kwargs = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        if privileged():
            # The worker starts as root.  -s: no user site-packages, whose .pth files Python would run at
            # start-up; -E: no PYTHON* variable (PYTHONPATH, PYTHONSTARTUP, ...); and an environment of the
            # parent's making (worker_environment).  Not -I, which would also leave the script's folder off
            # sys.path, where grader.py finds graderUtil; that folder is the root-only grading copy.
            argv = [sys.executable, "-s", "-E", "-B", "-u", "-X", "utf8", str(GRADER_SCRIPT), "--worker"]
            env = worker_environment(cfg.get("threads", 1))
        else:  # off root (a student's machine) the worker runs with the student's own rights and environment
            argv = [sys.executable, str(GRADER_SCRIPT), "--worker"]
            env = dict(env or os.environ, PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=str(SRC), env=env, **kwargs)
        out_fd, err_fd = os.dup(self.proc.stdout.fileno()), os.dup(self.proc.stderr.fileno())
        self.proc.stdout.close()
        self.proc.stderr.close()
        self.messages = queue.Queue()
        self.budget = MESSAGES_PER_WORKER + MESSAGES_PER_TEST * len(cfg.get("tests", []))
        self.err_tail = b""
        self.killed = False
        self.exited_at = None
        for target, fd in ((self._read_out, out_fd), (self._read_err, err_fd)):
            threading.Thread(target=target, args=(fd,), daemon=True).start()
        try:
            self.proc.stdin.write(json.dumps(cfg).encode("utf-8"))
            self.proc.stdin.close()
        except OSError:
            pass  # the child died at once; next() sees it exit

    @staticmethod
    def _chunks(fd):
        try:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except InterruptedError:
                    continue
                if not chunk:
                    return
                yield chunk
        except OSError:
            return
        finally:
            os.close(fd)

    def _read_out(self, fd):
        """Queue the signed messages, at most self.budget of them (then _FLOOD, and the rest is read and
        dropped); _EOF when the pipe closes.  Nothing the worker writes stops this thread."""
        buf, queued = b"", 0
        try:
            for chunk in self._chunks(fd):
                if queued > self.budget:
                    continue
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    msg = self._verify(line)
                    if msg is None:
                        continue
                    queued += 1
                    self.messages.put(msg if queued <= self.budget else _FLOOD)
                    if queued > self.budget:
                        break
                if len(buf) > MESSAGE_LINE_BYTES:
                    buf = b""  # no message is that long
        finally:
            self.messages.put(_EOF)

    def _verify(self, line):
        """The message (a dict) of a line the worker signed; None for anything else (e.g. a line student code
        wrote).  The signature says only that the line came from the worker's process, not that it is honest:
        _drive checks every field."""
        if len(line) > MESSAGE_LINE_BYTES:
            return None
        try:
            outer = json.loads(line)
            text, mac = outer["m"], outer["h"]
            if not isinstance(text, str) or not isinstance(mac, str):
                return None
            want = hmac.new(self.key, text.encode("utf-8"), hashlib.sha256).hexdigest()
            if hmac.compare_digest(mac, want):
                msg = json.loads(text)
                return msg if isinstance(msg, dict) else None
        except Exception:  # noqa: BLE001 - whatever the line holds (deep nesting raises RecursionError)
            pass
        return None

    def _read_err(self, fd):
        for chunk in self._chunks(fd):
            self.err_tail = (self.err_tail + chunk)[-4000:]

    def exited(self):
        """Whether the child has exited (without reaping it)."""
        if self.proc.returncode is not None:
            return True
        if hasattr(os, "waitid"):
            try:
                return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:
                return True
        return self.proc.poll() is not None

    def next(self, deadline):
        """The next message; _EOF when the child has gone (its output read), None when the deadline passes."""
        while True:
            now = time.monotonic()
            if now >= deadline:
                return None
            try:
                return self.messages.get(timeout=min(0.25, deadline - now))
            except queue.Empty:
                pass
            if self.exited():
                if self.exited_at is None:
                    self.exited_at = time.monotonic()
                elif time.monotonic() - self.exited_at > EXIT_GRACE:
                    return _EOF  # the pipes may still be open in a process it started: do not wait for EOF

    def stderr_tail(self, chars=600):
        text = self.err_tail.decode("utf-8", errors="replace").strip()
        return text[-chars:]

    def kill(self):
        """Kill the child's session (the child and what it started, unless that left the session: as root the
        Sandbox kills those).  Nothing reaped the child before this, so its process group id is still its."""
        if self.killed:
            return
        self.killed = True
        try:
            if os.name == "posix":
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


LIVE = set()
LIVE_LOCK = threading.Lock()


class Runner:
    """Runs groups of tests on workers; a test with a judge is decided afterwards by a judge worker."""

    def __init__(self, specs, base_cfg, timeout_scale, on_result, judge_cfg=None, sandbox=None):
        self.specs = specs
        self.base_cfg = base_cfg
        self.judge_cfg = judge_cfg or {}
        self.sandbox = sandbox
        self.timeout_scale = timeout_scale
        self.on_result = on_result
        self.hanging = set()
        self.lock = threading.Lock()
        self.stopped = False  # set on Ctrl-C: start no more workers
        self.judge_dir = Path(tempfile.mkdtemp(prefix="grader-judge-"))  # root-only where the grader is root

    def limit(self, tid):
        return self.specs[tid].timeout * self.timeout_scale

    def close(self):
        shutil.rmtree(self.judge_dir, ignore_errors=True)

    def _start(self, cfg):
        worker = Worker(cfg)
        with LIVE_LOCK:
            LIVE.add(worker)
            if self.stopped:  # main is cleaning up: this one must not outlive it
                worker.kill()
        return worker

    def _end(self, worker):
        worker.kill()
        with LIVE_LOCK:
            LIVE.discard(worker)

    def limits(self, ids):
        """The resource limits of a student's worker that runs the tests `ids` (see WORKER_ADDRESS_SPACE)."""
        threads = max(1, int(self.base_cfg.get("threads", 1)))
        cpu = STARTUP_CPU + threads * sum(self.limit(t) for t in ids)
        return {"memory": WORKER_ADDRESS_SPACE + threads * THREAD_ADDRESS_SPACE, "processes": WORKER_PROCESSES,
                "file": WORKER_FILE_BYTES, "cpu": int(cpu) + 1}

    def run_group(self, ids):
        provisional = {}  # tests with a judge that passed in the student's worker
        remaining = list(ids)
        while remaining and not self.stopped:
            with self.lock:
                cfg = dict(self.base_cfg, tests=remaining, hanging=sorted(self.hanging))
            cfg["preimport"] = any(self.specs[t].uses_torch for t in remaining)
            mine = list(remaining)
            if self.sandbox:
                tmp = self.sandbox.private_dir()
                cfg.update(self.sandbox.worker_settings(tmp), limits=self.limits(remaining))
            else:
                tmp = Path(tempfile.mkdtemp(prefix="grader-reports-"))
            cfg["report_dir"] = str(tmp)
            worker = self._start(cfg)
            try:
                remaining = self._drive(worker, remaining, provisional)
            finally:
                self._end(worker)
                for tid in mine:
                    if tid in provisional:
                        problem = take_report(tmp, tid, self.judge_dir, self.sandbox.uid if self.sandbox else None)
                        if problem:  # the judge never sees it
                            first = provisional.pop(tid)
                            self._fail(tid, problem, first["seconds"])
                if not self.sandbox:
                    shutil.rmtree(tmp, ignore_errors=True)
        if provisional and not self.stopped:
            self._judge(provisional)

    def _judge(self, provisional):
        judged = {}
        remaining = list(provisional)
        while remaining and not self.stopped:
            cfg = dict(self.judge_cfg, tests=remaining, judge=True, report_dir=str(self.judge_dir))
            worker = self._start(cfg)
            try:
                remaining = self._drive(worker, remaining, None, judged)
            finally:
                self._end(worker)
        for tid, verdict in judged.items():
            first = provisional[tid]
            # the verdict is the judge's; what the student's code printed comes from the student's worker
            self.on_result(dict(verdict, output=first["output"],
                                seconds=round(first["seconds"] + verdict["seconds"], 3)))

    def _fail(self, tid, message, seconds=0.0, judged=None):
        result = {"id": tid, "status": "failed", "message": message, "output": "", "seconds": seconds}
        if judged is not None:
            judged[tid] = result
        else:
            self.on_result(result)

    def _drive(self, worker, remaining, provisional, judged=None):
        """Follow one worker through its tests.  A student's worker's passed result of a test with a judge goes
        to `provisional`; a judge worker's results (judged is a dict) go to `judged`.  Returns the tests still
        to run (in a fresh worker).

        Every message is checked (check_message): a worker is a process that ran student code, which can send
        any message it likes (it holds the key).  Each test may start once; its time limit runs from its start
        to a deadline that no later message moves; the results recorded are built here from checked fields.
        A message out of order or malformed breaks the protocol: the worker is killed, the test it ran fails
        (with a test it had finished and announces again), or, between tests, all its remaining tests."""
        remaining = list(remaining)
        announced = set()  # the tests this worker started: each at most once
        current, importing, started_at, ready, progress = None, None, 0.0, False, 0
        deadline = time.monotonic() + STARTUP_TIMEOUT * max(1.0, self.timeout_scale)

        def broke(why, also=None):
            worker.kill()
            message = f"the test's process broke the grader's protocol ({why}); its tests fail"
            if also is not None and also not in remaining:  # a finished test announced again: it loses its result
                if provisional is not None:
                    provisional.pop(also, None)
                self._fail(also, message, judged=judged)
            if current is not None:
                self._fail(current, message, round(time.monotonic() - started_at, 3), judged)
                remaining.remove(current)
                return remaining
            for tid in remaining:
                self._fail(tid, message, judged=judged)
            return []

        while True:
            msg = worker.next(deadline)
            now = time.monotonic()
            if msg is None:  # time is up
                if current is not None:
                    limit = self.limit(current)
                    if importing:
                        with self.lock:
                            self.hanging.add(importing)
                        what = f" while importing submission/{importing}.py"
                    else:
                        what = ""
                    self._fail(current, f"timed out after {limit:g} s{what} (an endless loop, or far too slow?)",
                               round(limit, 3), judged)
                    remaining.remove(current)
                    return remaining
                reason = "did not start in time" if not ready else "stopped responding between tests"
                for tid in remaining:
                    self._fail(tid, f"the grader's worker process {reason}. {worker.stderr_tail()}".strip(),
                               judged=judged)
                return []
            if msg is _EOF:
                worker.kill()
                code = worker.proc.returncode
                tail = worker.stderr_tail()
                if current is not None:
                    self._fail(current, f"the test process died (exit code {code}) while running this test"
                                        + (f": {tail}" if tail else ""), round(now - started_at, 3), judged)
                    remaining.remove(current)
                    return remaining
                if progress and remaining:
                    return remaining
                for tid in remaining:
                    self._fail(tid, f"the grader's worker process exited (code {code}) before running this test"
                                    + (f": {tail}" if tail else ""), judged=judged)
                return []
            if msg is _FLOOD:
                return broke("it sent more messages than its tests need")
            why = check_message(msg, self.specs)
            if why:
                return broke(why)
            ev = msg["ev"]
            if ev == "ready":
                if ready:
                    return broke("it said it was ready twice")
                ready = True
                deadline = now + IDLE_TIMEOUT
            elif not ready:
                return broke(f"it sent {ev!r} before it was ready")
            elif ev == "start":
                tid = msg["id"]
                if tid in announced:
                    return broke(f"it started {tid} a second time", also=tid)
                if current is not None:
                    return broke(f"it started {tid} while {current} was running")
                if tid not in remaining:
                    return broke(f"it started {tid}, which it was not given")
                announced.add(tid)
                current, importing, started_at = tid, None, now
                deadline = now + self.limit(tid)  # absolute: only the test's result ends it
            elif ev in ("import", "imported"):
                if current is None:
                    return broke(f"it sent {ev!r} outside a test")
                importing = msg["module"] if ev == "import" else None
            elif ev == "result":
                tid = msg["id"]
                if tid != current:
                    return broke(f"it sent a result for {tid}, which was not running")
                result = {"id": tid, "status": msg["status"], "message": msg["message"], "output": msg["output"],
                          "seconds": round(now - started_at, 3)}  # the parent's clock, not the worker's word
                remaining.remove(tid)
                progress += 1
                if judged is not None:
                    judged[tid] = result
                elif self.specs[tid].judge is not None and result["status"] == "passed":
                    provisional[tid] = result
                else:
                    self.on_result(result)
                current, importing = None, None
                deadline = now + IDLE_TIMEOUT
            elif ev == "done":
                if current is not None:
                    return broke(f"it said it was done while {current} was running")
                worker.kill()
                for tid in remaining:
                    self._fail(tid, "the worker finished without running this test", judged=judged)
                return []


# What each message of the protocol holds: its fields and their types.  A string field has a length bound.
_STR = str
MESSAGE_FIELDS = {
    "ready": {},
    "start": {"id": _STR},
    "import": {"module": _STR},
    "imported": {},
    "result": {"id": _STR, "status": _STR, "message": _STR, "output": _STR, "seconds": float},
    "done": {},
}
FIELD_CHARS = {"id": 100, "module": 100, "status": 10, "message": MESSAGE_CHARS + 100,
               "output": 2 * OUTPUT_CHARS + 200}


def check_message(msg, specs):
    """Why msg (a dict a worker signed) is not a well-formed message of the protocol, or None.  Exactly the
    fields of its kind (MESSAGE_FIELDS), each of its type, strings of bounded length, test ids that exist, a
    result's status passed or failed and its seconds a finite number >= 0."""
    import math

    if not isinstance(msg, dict):
        return "a message that is not a JSON object"
    ev = msg.get("ev")
    if not isinstance(ev, str) or ev not in MESSAGE_FIELDS:
        return "a message of no known kind"
    fields = MESSAGE_FIELDS[ev]
    if set(msg) != {"ev", *fields}:
        return f"a {ev!r} message with other fields than {', '.join(sorted(fields)) or 'none'}"
    for name, kind in fields.items():
        value = msg[name]
        if kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                return f"a {ev!r} message whose {name} is not a number of seconds"
        elif not isinstance(value, kind) or len(value) > FIELD_CHARS[name]:
            return f"a {ev!r} message whose {name} is not a string of at most {FIELD_CHARS[name]} characters"
    if "id" in fields and msg["id"] not in specs:
        return f"a {ev!r} message for a test that does not exist"
    if ev == "import" and not msg["module"].isidentifier():
        return "an 'import' message for no module"
    if ev == "result" and msg["status"] not in ("passed", "failed"):
        return "a result whose status is neither passed nor failed"
    return None


def kill_live_workers():
    with LIVE_LOCK:
        workers = list(LIVE)
    for worker in workers:
        worker.kill()


# ----------------------------------------------------------------------------------------------------------
# Configuration: points, thresholds, where things are.


def load_points(path=POINTS_FILE):
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    if not isinstance(table.get("tests"), dict) or not isinstance(table.get("thresholds"), dict):
        raise ValueError(f"{path} must have a 'tests' and a 'thresholds' section")
    if table.setdefault("hidden_visibility", "visible") not in VISIBILITIES:
        raise ValueError(f"{path}: hidden_visibility must be one of {', '.join(VISIBILITIES)}")
    return table


def normalized_sha256(path):
    """SHA-256 of a text file with Windows line endings turned into '\\n' (so a checkout's line endings
    do not change which data set it is recognised as)."""
    data = Path(path).read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha256(data).hexdigest()


def select_thresholds(thresholds, data_dir):
    """(row name, row, recognised) for the data set in data_dir: the row whose `<DATASET_FILE>_sha256` list
    holds the SHA-256 of that file (birth_dev.tsv: `birth_dev_sha256`), else the default row."""
    rows = thresholds["rows"]
    default = thresholds.get("default", "course")
    path = Path(data_dir) / (DATASET_FILE or "")
    if DATASET_FILE and path.is_file():
        digest, key = normalized_sha256(path), Path(DATASET_FILE).stem + "_sha256"
        for name, row in rows.items():
            if digest in row.get(key, []):
                return name, row, True
    return default, rows[default], False


def find_solution(explicit):
    """The folder of the reference `solution` package, or None."""
    if explicit:
        path = Path(explicit).resolve()
        if not any((path / f"{m}.py").is_file() for m in STUDENT_DEPS):
            raise ValueError(f"--solution-dir {path} does not hold a solution package (none of the student's "
                             f"modules: {', '.join(f'{m}.py' for m in STUDENT_DEPS)})")
        return path
    import importlib.util

    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    try:
        spec = importlib.util.find_spec("solution")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if STUDENT_DEPS and all((Path(location) / f"{m}.py").is_file() for m in STUDENT_DEPS):
            return Path(location).resolve()
    return None


def count_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if line.strip())


def read_prediction_lines(path):
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def matches(tid, selector):
    part = tid.split("-")[0]
    return tid == selector or part == selector or part.rstrip("abcdefghijklmnopqrstuvwxyz") == selector


# ----------------------------------------------------------------------------------------------------------
# Reporting.


# Who sees a hidden test's result (points.json's "hidden_visibility", or --hidden-visibility): Gradescope's
# visibility values.  "visible" is the course's grader's behaviour (it marks no test after_published); any other
# value keeps every hidden test's result, and the hidden total, out of everything a student sees before then:
# the summary, the top-level output of results.json, and the grader's printed lines (Gradescope's stdout).
VISIBILITIES = {"visible": "now", "after_due_date": "after the due date",
                "after_published": "when grades are published", "hidden": "to the course staff only"}


def points_of(spec):
    return 0 if spec.info else spec.points


def concealed(spec, visibility):
    return spec.hidden and visibility != "visible"


def format_summary(specs, results, header, visibility="visible"):
    lines = list(header)
    lines.append("")
    width = max(len(s.id) for s in specs) if specs else 10
    # Practice checks (0 points, not info: beyond the handout's graded items) go under a heading of their own
    # after the graded tests, and only when the student's file they check was handed in (a file that is not
    # there fails the import with "<folder>/<name>.py is missing", Context._import): a student must not read
    # "part g failed" from a check the handout does not grade.
    practice = [s for s in specs if not s.info and not points_of(s)]
    shown = [s for s in practice if not (results[s.id]["message"] or "").endswith(".py is missing")]
    for spec in [s for s in specs if s not in practice] + shown:
        if shown and spec is shown[0]:
            lines += ["", "Practice checks (0 points, beyond the handout's graded items):"]
        r = results[spec.id]
        pts = points_of(spec)
        status = r["status"]
        if concealed(spec, visibility):
            lines.append(f"{spec.id:<{width}}  {f'-/{pts}':>7}  {'-':>6}  {'HIDDEN':<7}  {spec.description}")
            lines.append(f"{'':<{width}}  {'':>7}  {'':>6}  {'':<7}  -> its result is shown "
                         f"{VISIBILITIES[visibility]}")
            continue
        if status == "pending":
            earned = f"-/{pts}"
            secs = "-"
        else:
            earned = f"{r['score']:g}/{pts}"
            secs = f"{r['seconds']:.1f}s"
        tag = {"passed": "PASS", "failed": "FAIL", "pending": "PENDING", "info": "INFO"}[status]
        extra = " [extra credit]" if spec.extra_credit and pts else ""
        lines.append(f"{spec.id:<{width}}  {earned:>7}  {secs:>6}  {tag:<7}  {spec.description}{extra}")
        if r["message"] and status != "passed":
            for i, text in enumerate(r["message"].splitlines()[:6]):
                lines.append(f"{'':<{width}}  {'':>7}  {'':>6}  {'':<7}  {'-> ' if i == 0 else '   '}{text}")
    lines.append("")

    def total(kind):
        chosen = [s for s in specs if s.kind == kind and not s.extra_credit]
        earned = sum(results[s.id]["score"] for s in chosen if results[s.id]["status"] != "pending")
        maximum = sum(points_of(s) for s in chosen)
        pending = sum(points_of(s) for s in chosen if results[s.id]["status"] == "pending")
        graded = [s for s in chosen if results[s.id]["status"] in ("passed", "failed") and points_of(s)]
        passed = sum(1 for s in graded if results[s.id]["status"] == "passed")
        return chosen, earned, maximum, pending, passed, len(graded)

    hide = visibility != "visible"
    for kind in ("basic", "hidden"):
        chosen, earned, maximum, pending, passed, graded = total(kind)
        if not chosen:
            continue
        if kind == "hidden" and hide:
            lines.append(f"Hidden tests: {len(chosen)} tests worth {maximum} points, their results shown "
                         f"{VISIBILITIES[visibility]}")
            continue
        line = f"Total {kind}: {earned:g}/{maximum} points ({passed} of {graded} graded tests passed"
        if pending:
            n_pending = sum(1 for s in chosen if results[s.id]["status"] == "pending")
            line += f"; {n_pending} tests worth {pending} points pending: {PENDING_MESSAGE}"
        lines.append(line + ")")
    core = [s for s in specs if not s.extra_credit]
    if core and any(s.kind == "basic" for s in core) and any(s.kind == "hidden" for s in core) and not hide:
        earned = sum(results[s.id]["score"] for s in core if results[s.id]["status"] != "pending")
        lines.append(f"Total: {earned:g}/{sum(points_of(s) for s in core)} points")
    extra = [s for s in specs if s.extra_credit]
    if extra:
        earned = sum(results[s.id]["score"] for s in extra if results[s.id]["status"] != "pending")
        lines.append(f"Extra credit: {earned:g}/{sum(s.points for s in extra)} points")
    return "\n".join(lines)


def results_json(specs, results, output, seconds, visibility="visible"):
    """Gradescope's results.json.  Every test carries its status explicitly in extra_data.status (passed,
    failed, info or pending) and, where Gradescope has a word for it, in status (passed or failed)."""
    tests = []
    for spec in specs:
        r = results[spec.id]
        out = r["message"] or ("passed" if r["status"] == "passed" else "")
        if r.get("output") and r["status"] == "failed":
            out += f"\n\nOutput of your code:\n{r['output']}"
        entry = {"name": f"{spec.id}: {spec.description}", "number": spec.id, "score": r["score"],
                 "max_score": points_of(spec), "output": out,
                 "visibility": visibility if spec.hidden else "visible",
                 "extra_data": {"status": r["status"]}}
        if r["status"] in ("passed", "failed"):
            entry["status"] = r["status"]
        elif r["status"] == "info":
            entry["status"] = "passed"  # it ran; it has no points to lose
        if spec.extra_credit and points_of(spec):
            entry["tags"] = ["extra credit"]
        elif not spec.info and not points_of(spec):
            entry["tags"] = ["practice"]
        tests.append(entry)
    data = {"execution_time": int(round(seconds)), "output": output, "visibility": "visible",
            "stdout_visibility": "visible" if visibility == "visible" else "hidden", "tests": tests}
    if visibility == "visible":
        data["score"] = sum(t["score"] for t in tests)
    # else no top-level score: Gradescope adds up the tests' scores itself, and nothing of ours that a
    # student sees states the total of the hidden tests
    return data


# ----------------------------------------------------------------------------------------------------------
# Entry point.


def build_parser():
    p = argparse.ArgumentParser(description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tests", nargs="*", help="test ids (1e-0-basic), question parts (1e) or questions (1)")
    p.add_argument("--json", metavar="PATH", help="write Gradescope's results.json to PATH (with --list: the tests "
                                                 "as JSON, '-' for standard output)")
    p.add_argument("--data-dir", default=os.environ.get("GRADER_DATA_DIR"),
                   help="the data folder (default src/data; env GRADER_DATA_DIR)")
    p.add_argument("--submission-dir", default=os.environ.get("GRADER_SUBMISSION_DIR"),
                   help="the student's package folder (default src/submission)")
    p.add_argument("--predictions-dir", help="where the *.predictions files are (default: the submission folder)")
    p.add_argument("--solution-dir", default=os.environ.get("GRADER_SOLUTION_DIR"),
                   help="the reference solution package folder (default: an importable package `solution`)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes run in parallel (default: 2)")
    p.add_argument("--timeout-scale", type=float, default=float(os.environ.get("GRADER_TIMEOUT_SCALE", "1")),
                   help="multiply every time limit (for slow machines; env GRADER_TIMEOUT_SCALE)")
    p.add_argument("--hidden-visibility", choices=list(VISIBILITIES),
                   help="who sees the hidden tests' results, in Gradescope's words (default: points.json's "
                        "hidden_visibility; 'visible', the course's behaviour, if it has none)")
    p.add_argument("--list", action="store_true", help="list the tests and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="show the output of your code for failed tests")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def privileged():
    """True where the grader runs as root on a POSIX system (Gradescope): student code then runs unprivileged."""
    return os.name == "posix" and os.geteuid() == 0


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main(argv=None):
    """grader.py's command line.  As root, the sandbox (the worker user's copies, folders and processes) is
    cleaned up whatever happens, an error of the grader's included."""
    opened = []  # the Sandbox, once there is one
    try:
        return _main(argv, opened)
    finally:
        for sandbox in opened:  # a second close (after main's own) finds nothing left to do
            sandbox.close()


def _main(argv, opened):
    args = build_parser().parse_args(argv)
    if args.worker:
        return worker_main()
    started = time.monotonic()
    try:
        table = load_points()
    except (OSError, ValueError) as e:
        print(f"error: cannot read the points table {POINTS_FILE}: {e}", file=sys.stderr)
        return 2
    visibility = args.hidden_visibility or table["hidden_visibility"]
    specs = {}
    for tid, spec in REGISTRY.items():
        if tid not in table["tests"]:
            print(f"error: test {tid} has no points in {POINTS_FILE}", file=sys.stderr)
            return 2
        if spec.judge is None:  # a verdict reached beside student code could be the student's code's
            print(f"error: test {tid} has no judge (grader_judge): every verdict comes from a judge",
                  file=sys.stderr)
            return 2
        spec.points = int(table["tests"][tid])
        specs[tid] = spec
    order = sorted(specs, key=lambda t: (t.split("-")[0], t.rsplit("-", 1)[-1] != "basic",
                                         int(t.split("-")[1]) if t.split("-")[1].isdigit() else 0, t))
    if args.tests:
        unknown = [s for s in args.tests if not any(matches(t, s) for t in order)]
        if unknown:
            print(f"error: no test matches {', '.join(unknown)}; python grader.py --list shows them", file=sys.stderr)
            return 2
        order = [t for t in order if any(matches(t, s) for s in args.tests)]
    if args.list and args.json:  # for tools (grade_class): the selected tests as data, never parsed from text
        listed = [{"id": tid, "part": specs[tid].part, "kind": specs[tid].kind, "points": points_of(specs[tid]),
                   "timeout": specs[tid].timeout, "extra_credit": specs[tid].extra_credit, "info": specs[tid].info,
                   "description": specs[tid].description} for tid in order]
        text = json.dumps(listed, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
        return 0
    if args.list:
        for tid in order:
            s = specs[tid]
            pts = "info" if s.info else f"{s.points} pt" + ("" if s.points == 1 else "s")
            ec = ", extra credit" if s.extra_credit and s.points else ""
            ec = ", practice" if not s.info and not s.points else ec
            print(f"{tid:<14} {pts:>7}  {s.timeout:>5g} s  {s.description}{ec}")
        return 0

    submission_dir = Path(args.submission_dir).resolve() if args.submission_dir else SRC / "submission"
    predictions_dir = Path(args.predictions_dir).resolve() if args.predictions_dir else submission_dir
    data_dir = Path(args.data_dir).resolve() if args.data_dir else SRC / "data"
    try:
        solution_dir = find_solution(args.solution_dir)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    have_answers = bool(HELD_OUT) and all((data_dir / name).is_file() for name in HELD_OUT)
    row_name, row, recognised = select_thresholds(table["thresholds"], data_dir)
    jobs = args.jobs or max(1, min(2, usable_cpus()))

    header = [f"Grading {submission_dir}", f"data: {data_dir}" + ("" if data_dir.is_dir() else " (missing)")]
    if any(specs[t].hidden for t in order):
        header.append("reference solution: " + (str(solution_dir) if solution_dir else
                                                  "not available - the hidden tests that compare with it are pending"))
        header.append("held-out answers: " + ("present" if have_answers else
                                             "not available - the hidden prediction tests are pending"))
        if have_answers:
            how = f"recognised by its {DATASET_FILE}" if recognised else "data set not recognised, default row"
            calibrated = "" if row.get("calibrated", True) else ", uncalibrated"
            header.append(f"accuracy thresholds: '{row_name}' ({how}{calibrated})")
    sandbox = None
    if privileged():
        try:
            sandbox = Sandbox(submission_dir, predictions_dir, data_dir, held_out=HELD_OUT)
            opened.append(sandbox)
        except (ValueError, OSError) as e:
            print(f"error: running as root, the grader runs student code as an unprivileged user: {e}",
                  file=sys.stderr)
            return 2
        header.append(f"student code runs as {sandbox.user}, without access to the held-out answers, the "
                      "reference solution and the results")
        secrets_ = [("the held-out answers", data_dir / name) for name in HELD_OUT if (data_dir / name).is_file()]
        secrets_ += [("the reference solution", solution_dir),
                     ("the results folder", Path(args.json).resolve().parent if args.json else None)]
        for what, path in secrets_:
            if path is not None and readable_by(path, sandbox.uid, sandbox.gid):
                header.append(f"warning: {sandbox.user} can read {what} ({path}): make it readable by root only")
        sandbox.private = [str(path) for _, path in secrets_ if path is not None] + [str(data_dir)]
    print("\n".join(header), flush=True)

    results = {}
    print_lock = threading.Lock()

    def on_result(r):
        spec = specs[r["id"]]
        r = dict(r)
        if spec.info and r["status"] == "passed":
            r["status"] = "info"
        r["score"] = points_of(spec) if r["status"] == "passed" else 0
        with print_lock:
            results[r["id"]] = r
            if concealed(spec, visibility):  # Gradescope's stdout: nothing of a hidden result
                print(f"  {r['id']:<14} graded", flush=True)
            else:
                print(f"  {r['id']:<14} {r['status']:<7} ({r.get('seconds', 0):.1f} s)", flush=True)

    to_run = []
    for tid in order:
        spec = specs[tid]
        missing = [n for n in spec.needs if (n == "solution" and not solution_dir) or (n == "answers" and not have_answers)]
        if missing:
            note = ""
            pending_note = getattr(spec.fn, "pending_note", None)  # a local check of the inputs, never a verdict
            if pending_note:
                try:
                    # as root, on the sandbox's copy: a link in the submission is never followed
                    note = pending_note(sandbox.predictions_dir if sandbox else predictions_dir, data_dir)
                except OSError:
                    note = ""
            results[tid] = {"id": tid, "status": "pending", "message": PENDING_MESSAGE + note, "output": "",
                            "seconds": 0.0, "score": 0}
        else:
            to_run.append(tid)

    groups = {}
    for tid in to_run:
        # one worker per group (isolation): by default a question part
        groups.setdefault(specs[tid].group, []).append(tid)
    # student's workers: the submission and the data without the held-out answers, no reference solution
    # (copies in the sandbox as root); judges: the reference, the answers, and the submission's files
    seen = sandbox or argparse.Namespace(submission_dir=submission_dir, predictions_dir=predictions_dir,
                                         data_dir=data_dir)
    common = {"thresholds": row, "threshold_row": row_name, "threads": max(1, usable_cpus() // jobs)}
    base_cfg = dict(common, submission_dir=str(seen.submission_dir), predictions_dir=str(seen.predictions_dir),
                    data_dir=str(seen.data_dir), solution_dir=None)
    judge_cfg = dict(common, submission_dir=str(seen.submission_dir), predictions_dir=str(seen.predictions_dir),
                     data_dir=str(data_dir), solution_dir=str(solution_dir) if solution_dir else None)
    runner = Runner(specs, base_cfg, args.timeout_scale, on_result, judge_cfg, sandbox)
    # the longest groups first, so that the parallel workers finish together
    ordered_groups = sorted(groups.values(), key=lambda ids: -sum(specs[t].timeout for t in ids))
    pool = ThreadPoolExecutor(max_workers=jobs)
    finished = gone = False
    try:
        for future in [pool.submit(runner.run_group, ids) for ids in ordered_groups]:
            try:
                future.result()
            except Exception:  # noqa: BLE001 - a bug of the grader's: that group's tests fail, the rest count
                print(f"error: the grader failed running a group of tests (a bug of the grader, not of the "
                      f"submission):\n{traceback.format_exc()}", file=sys.stderr)
        finished = True
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    finally:  # whatever happened: no worker, and nothing a worker started, outlives this
        if not finished:
            runner.stopped = True
        pool.shutdown(wait=finished, cancel_futures=not finished)
        kill_live_workers()
        runner.close()
        gone = sandbox.close() if sandbox else True
    if not finished:
        return 130
    if not gone:
        print(f"warning: some processes of {sandbox.user} could not be killed", file=sys.stderr)
    for tid in to_run:  # cannot happen, but a test without a result must not break the summary
        if tid not in results:
            results[tid] = {"id": tid, "status": "failed", "message": "no result", "output": "", "seconds": 0.0,
                            "score": 0}

    chosen = [specs[t] for t in order]
    summary = format_summary(chosen, results, [], visibility)
    if args.verbose:
        for spec in chosen:
            r = results[spec.id]
            if r["status"] == "failed" and r.get("output") and not concealed(spec, visibility):
                summary += f"\n\nOutput of your code in {spec.id}:\n{r['output']}"
    elapsed = time.monotonic() - started
    summary += f"\n({elapsed:.1f} s)"
    print(summary, flush=True)
    if args.json:
        data = results_json(chosen, results, "\n".join(header) + "\n" + summary, elapsed, visibility)
        try:  # a new name, then renamed over the old file: an interrupted run never leaves half a file
            out = Path(args.json)
            tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
            tmp.replace(out)
        except OSError as e:
            print(f"error: could not write {args.json}: {e}", file=sys.stderr)
    return 0
