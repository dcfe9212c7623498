#!/usr/bin/env python3
"""Autograder for the pretraining assignment: parts 1c-1g (and the written part's extra credit, if present).

  python grader.py                        # every test; run from src/ (python src/grader.py works too)
  python grader.py 1e                     # one question part;  python grader.py 1e-0-basic: one test
  python grader.py --json results.json    # also write Gradescope's results.json
  python grader.py --list                 # the tests with their points and time limits

Basic tests check your code against the handout's specification. Hidden tests compare your code with the
instructor's reference solution (an importable package named `solution`) and grade your prediction files
against held-out answers (birth_test.tsv in the data folder). Where those are absent, as on your machine, a
hidden test is reported as "hidden - graded after submission": it counts neither as passed nor as failed.

Each test runs in a separate process with a time limit: code that fails to import, raises, loops forever or
prints megabytes fails only the tests that touch it, and the grader always reaches the summary (exit status 0).
Points are in points.json, next to this file, together with the accuracy thresholds of the prediction tests.
"""

import argparse
import hashlib
import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
import traceback
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SRC = Path(__file__).resolve().parent
POINTS_FILE = SRC / "points.json"
WRITTEN_FILE = SRC / "grader_written.py"

PENDING_MESSAGE = "hidden - graded after submission"
STARTUP_TIMEOUT = 120.0  # seconds for a worker process to import torch and report ready
IDLE_TIMEOUT = 60.0  # seconds between two tests of one worker (the harness's own work)
MESSAGE_CHARS = 1500  # longest failure message kept
OUTPUT_CHARS = 1000  # head and tail of a test's captured output kept

# Student modules and the student modules each one imports (importing them first, one by one, tells which
# file is broken or hangs).
STUDENT_DEPS = {
    "attention": [],
    "dataset": [],
    "model": ["attention"],
    "trainer": [],
    "utils": [],
    "helper": ["dataset", "attention", "model", "trainer", "utils"],
}

# Prediction files: the question file they answer, the gold file, and the run.sh target that writes them.
PREDICTIONS = {
    "vanilla.nopretrain.dev.predictions": ("dev", "vanilla_eval_dev_without_pretrain"),
    "vanilla.nopretrain.test.predictions": ("test", "vanilla_eval_test_without_pretrain"),
    "vanilla.pretrain.dev.predictions": ("dev", "vanilla_eval_dev_with_pretrain"),
    "vanilla.pretrain.test.predictions": ("test", "vanilla_eval_test_with_pretrain"),
    "perceiver.pretrain.dev.predictions": ("dev", "perceiver_eval_dev_with_pretrain"),
    "perceiver.pretrain.test.predictions": ("test", "perceiver_eval_test_with_pretrain"),
}
QUESTION_FILES = {"dev": "birth_dev.tsv", "test": "birth_test_inputs.tsv"}
GOLD_FILES = {"dev": "birth_dev.tsv", "test": "birth_test.tsv"}
ANSWERS_FILE = "birth_test.tsv"  # held out: present only where submissions are graded

PAD = "\u25A1"
MASK = "\u2047"


# ----------------------------------------------------------------------------------------------------------
# The test registry.  A test function gets a Context and passes by returning; it fails by raising (Fail or
# AssertionError carry the message).  A string it returns is shown as an informational message.


class Spec:
    def __init__(self, tid, description, fn, timeout, needs=(), info=False, points=None, extra_credit=False,
                 written=False, uses_torch=True):
        self.id = tid
        self.description = description
        self.fn = fn
        self.timeout = float(timeout)
        self.needs = tuple(needs)  # "solution" and/or "answers": pending where absent
        self.info = info  # 0 points, reports a number
        self.points = points
        self.extra_credit = extra_credit
        self.written = written
        self.uses_torch = uses_torch  # the worker imports torch before its first test
        self.part = tid.split("-")[0]
        self.kind = tid.rsplit("-", 1)[-1]

    @property
    def hidden(self):
        return self.kind == "hidden"


REGISTRY = {}


def grader_test(tid, description, timeout=30, needs=(), info=False, uses_torch=True):
    def register(fn):
        REGISTRY[tid] = Spec(tid, description, fn, timeout, needs, info, uses_torch=uses_torch)
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


def load_package(name, directory):
    """Import the folder `directory` as the top-level package `name` (whatever the folder is called)."""
    import importlib.machinery
    import importlib.util

    directory = Path(directory)
    init = directory / "__init__.py"
    if init.is_file():
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
    """What a test function may use: the student's and the reference's modules, the data, a temp folder."""

    def __init__(self, cfg, send):
        self.cfg = cfg
        self.send = send
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
            return load_package(package, directory)
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
        self._import("submission", self.submission_dir, None, "submission")
        for dep in STUDENT_DEPS.get(name, []) + [name]:
            module = self._import("submission", self.submission_dir, dep, "submission")
        return module

    def solution(self, name):
        """The reference solution's module solution.<name>."""
        import importlib

        if self.solution_dir is None:
            raise Fail("no reference solution configured")
        try:
            if "solution" not in sys.modules:
                load_package("solution", self.solution_dir)
            return importlib.import_module(f"solution.{name}")
        except BaseException as e:  # noqa: BLE001
            raise Fail(f"the reference solution could not be imported (a problem of the grading set-up, not of "
                       f"the submission): {describe(e)}") from None

    # -- data ----------------------------------------------------------------------------------------------
    def data_path(self, name):
        path = self.data_dir / name
        if not path.is_file():
            raise Fail(f"data file {path} is missing: generate the data (see src/data/) or point the grader at "
                       "a data folder with --data-dir")
        return path

    def read_data(self, name):
        return self.data_path(name).read_text(encoding="utf-8")

    def corpus(self, block_size):
        """The student's CharCorruptionDataset over the data folder's wiki.txt (cached per block size)."""
        key = ("corpus", block_size)
        if key not in self.cache:
            text = self.read_data("wiki.txt")
            dataset = self.student("dataset")
            self.cache[key] = call(f"CharCorruptionDataset(<wiki.txt>, {block_size})", self.submission_dir,
                                   dataset.CharCorruptionDataset, text, block_size)
        return self.cache[key]


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


def load_written_tests():
    """The written part's tests (grader_written.TESTS) as Specs; [] when there are none."""
    if not WRITTEN_FILE.is_file():
        return []
    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    import grader_written  # noqa: E402  (instructor code shipped next to this file)

    specs = []
    for entry in grader_written.TESTS:
        fn = entry["fn"]

        def run(ctx, fn=fn):
            module = ctx.student("attention_exploration")
            fn(module)

        specs.append(Spec(entry["id"], entry.get("description", ""), run, entry.get("timeout", 30),
                          points=entry.get("points", 0), extra_credit=bool(entry.get("extra_credit", False)),
                          written=True))
    return specs


def worker_main():
    """Child process: read the configuration from stdin, run the tests, report on the original stdout."""
    cfg = json.loads(sys.stdin.read() or "{}")
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
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
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    if cfg.get("preimport", True):
        try:
            import numpy  # noqa: F401
            import torch

            torch.set_num_threads(max(1, int(cfg.get("threads", 1))))
        except ImportError:
            pass  # the tests that need torch fail with the reason
    specs = dict(REGISTRY)
    if any(tid not in specs for tid in cfg["tests"]):
        try:
            specs.update({s.id: s for s in load_written_tests()})
        except BaseException as e:  # noqa: BLE001
            sys.__stderr__.write(f"grader_written.py failed to import: {describe(e)}\n")
    ctx = Context(cfg, send)
    send({"ev": "ready"})
    for tid in cfg["tests"]:
        spec = specs.get(tid)
        send({"ev": "start", "id": tid})
        capture.reset()
        started = time.perf_counter()
        status, message = "passed", ""
        import tempfile

        tmp = tempfile.TemporaryDirectory(prefix="grader-")
        ctx.tmp = Path(tmp.name)
        try:
            if spec is None:
                raise Fail(f"unknown test {tid}")
            seed_everything(zlib.crc32(tid.encode()))
            returned = spec.fn(ctx)
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


def describe_written_main():
    """Child process for --describe-written: print the written tests' metadata as one JSON line."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr = Capture()
    meta = [{"id": s.id, "description": s.description, "timeout": s.timeout, "points": s.points,
             "extra_credit": s.extra_credit} for s in load_written_tests()]
    proto.write(json.dumps(meta) + "\n")
    proto.close()
    return 0


# ----------------------------------------------------------------------------------------------------------
# Parent side: schedule the tests on worker processes, enforce the time limits, add up the points.

_EOF = object()


class Worker:
    """One child process running a list of tests; killed (with whatever it started) on a timeout."""

    def __init__(self, cfg):
        kwargs = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=str(SRC), env=env, **kwargs)
        self.messages = queue.Queue()
        self.err_tail = b""
        self.killed = False
        self.readers = [threading.Thread(target=self._read_out, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True)]
        for t in self.readers:
            t.start()
        try:
            self.proc.stdin.write(json.dumps(cfg).encode("utf-8"))
            self.proc.stdin.close()
        except OSError:
            pass  # the child died at once; the reader reports EOF

    def _read_out(self):
        try:
            for line in iter(lambda: self.proc.stdout.readline(1 << 20), b""):
                try:
                    self.messages.put(json.loads(line))
                except ValueError:
                    continue
        except (OSError, ValueError):
            pass
        self.messages.put(_EOF)

    def _read_err(self):
        try:
            for chunk in iter(lambda: self.proc.stderr.read1(1 << 16), b""):
                self.err_tail = (self.err_tail + chunk)[-4000:]
        except (OSError, ValueError):
            pass

    def next(self, deadline):
        """The next message, _EOF when the child has gone, None when the deadline passes first."""
        try:
            return self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None

    def stderr_tail(self, chars=600):
        text = self.err_tail.decode("utf-8", errors="replace").strip()
        return text[-chars:]

    def kill(self):
        """Kill the child and everything it started.  Nothing reaps the child before this (no poll()), so
        on POSIX its pid, and with it its process group, cannot have been reused yet."""
        if self.killed:
            return
        self.killed = True
        try:
            if os.name == "posix":
                import signal

                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for t in self.readers:
            t.join(timeout=2)
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


LIVE = set()
LIVE_LOCK = threading.Lock()


class Runner:
    def __init__(self, specs, base_cfg, timeout_scale, on_result):
        self.specs = specs
        self.base_cfg = base_cfg
        self.timeout_scale = timeout_scale
        self.on_result = on_result
        self.hanging = set()
        self.lock = threading.Lock()
        self.stopped = False  # set on Ctrl-C: start no more workers

    def limit(self, tid):
        return self.specs[tid].timeout * self.timeout_scale

    def run_group(self, ids):
        remaining = list(ids)
        while remaining and not self.stopped:
            with self.lock:
                cfg = dict(self.base_cfg, tests=remaining, hanging=sorted(self.hanging))
            cfg["preimport"] = any(self.specs[t].uses_torch for t in remaining)
            worker = Worker(cfg)
            with LIVE_LOCK:
                LIVE.add(worker)
            try:
                remaining = self._drive(worker, remaining)
            finally:
                worker.kill()
                with LIVE_LOCK:
                    LIVE.discard(worker)

    def _fail(self, tid, message, seconds=0.0):
        self.on_result({"id": tid, "status": "failed", "message": message, "output": "", "seconds": seconds})

    def _drive(self, worker, remaining):
        remaining = list(remaining)
        current, importing, started_at, ready, progress = None, None, 0.0, False, 0
        deadline = time.monotonic() + STARTUP_TIMEOUT * max(1.0, self.timeout_scale)
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
                               round(limit, 3))
                    remaining.remove(current)
                    return remaining
                reason = "did not start in time" if not ready else "stopped responding between tests"
                for tid in remaining:
                    self._fail(tid, f"the grader's worker process {reason}. {worker.stderr_tail()}".strip())
                return []
            if msg is _EOF:
                worker.kill()
                code = worker.proc.returncode
                tail = worker.stderr_tail()
                if current is not None:
                    self._fail(current, f"the test process died (exit code {code}) while running this test"
                                        + (f": {tail}" if tail else ""), round(now - started_at, 3))
                    remaining.remove(current)
                    return remaining
                if progress and remaining:
                    return remaining
                for tid in remaining:
                    self._fail(tid, f"the grader's worker process exited (code {code}) before running this test"
                                    + (f": {tail}" if tail else ""))
                return []
            ev = msg.get("ev")
            if ev == "ready":
                ready = True
                deadline = now + IDLE_TIMEOUT
            elif ev == "start":
                current, importing, started_at = msg.get("id"), None, now
                if current not in remaining:
                    current = None
                    continue
                deadline = now + self.limit(current)
            elif ev == "import":
                importing = msg.get("module")
            elif ev == "imported":
                importing = None
            elif ev == "result":
                tid = msg.get("id")
                if tid in remaining:
                    remaining.remove(tid)
                    progress += 1
                    self.on_result(msg)
                current, importing = None, None
                deadline = now + IDLE_TIMEOUT
            elif ev == "done":
                for tid in remaining:
                    self._fail(tid, "the worker finished without running this test")
                return []


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
    return table


def normalized_sha256(path):
    """SHA-256 of a text file with Windows line endings turned into '\\n' (so a checkout's line endings
    do not change which data set it is recognised as)."""
    data = Path(path).read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha256(data).hexdigest()


def select_thresholds(thresholds, data_dir):
    """(row name, row, recognised) for the data set in data_dir: the row listing the SHA-256 of its
    birth_dev.tsv, else the default row."""
    rows = thresholds["rows"]
    default = thresholds.get("default", "course")
    dev = Path(data_dir) / "birth_dev.tsv"
    if dev.is_file():
        digest = normalized_sha256(dev)
        for name, row in rows.items():
            if digest in row.get("birth_dev_sha256", []):
                return name, row, True
    return default, rows[default], False


def find_solution(explicit):
    """The folder of the reference `solution` package, or None."""
    if explicit:
        path = Path(explicit).resolve()
        if not (path / "model.py").is_file():
            raise ValueError(f"--solution-dir {path} does not hold a solution package (no model.py)")
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
        if all((Path(location) / f"{m}.py").is_file() for m in ("model", "helper", "dataset")):
            return Path(location).resolve()
    return None


def count_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if line.strip())


def pending_note(fname, predictions_dir, data_dir):
    """A local format check for a pending prediction test (never an expected value)."""
    split, target = PREDICTIONS[fname]
    path = Path(predictions_dir) / fname
    if not path.is_file():
        return f" (note: {fname} is not in {predictions_dir} yet; ./run.sh {target} writes it)"
    qfile = Path(data_dir) / QUESTION_FILES[split]
    if qfile.is_file():
        n, lines = count_lines(qfile), len(read_prediction_lines(path))
        if n != lines:
            return f" (note: {fname} has {lines} lines but {qfile.name} has {n} questions)"
    return ""


def read_prediction_lines(path):
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def discover_written(timeout):
    """The written part's tests, described by a child process (grader_written.py is imported there)."""
    if not WRITTEN_FILE.is_file():
        return []
    try:
        r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--describe-written"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, cwd=str(SRC))
        lines = r.stdout.decode("utf-8", errors="replace").strip().splitlines()
        if r.returncode != 0 or not lines:
            raise RuntimeError(r.stderr.decode("utf-8", errors="replace").strip()[-300:])
        meta = json.loads(lines[-1])
    except Exception as e:  # noqa: BLE001
        print(f"note: grader_written.py could not be loaded, its tests are skipped ({e})")
        return []
    specs = []
    for m in meta:
        specs.append(Spec(m["id"], m["description"], None, m["timeout"], points=m["points"],
                          extra_credit=m["extra_credit"], written=True))
    return specs


def matches(tid, selector):
    part = tid.split("-")[0]
    return tid == selector or part == selector or part.rstrip("abcdefghijklmnopqrstuvwxyz") == selector


# ----------------------------------------------------------------------------------------------------------
# Reporting.


def points_of(spec):
    return 0 if spec.info else spec.points


def format_summary(specs, results, header):
    lines = list(header)
    lines.append("")
    width = max(len(s.id) for s in specs) if specs else 10
    for spec in specs:
        r = results[spec.id]
        pts = points_of(spec)
        status = r["status"]
        if status == "pending":
            earned = f"-/{pts}"
            secs = "-"
        else:
            earned = f"{r['score']:g}/{pts}"
            secs = f"{r['seconds']:.1f}s"
        tag = {"passed": "PASS", "failed": "FAIL", "pending": "PENDING", "info": "INFO"}[status]
        extra = " [extra credit]" if spec.extra_credit else ""
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

    for kind in ("basic", "hidden"):
        chosen, earned, maximum, pending, passed, graded = total(kind)
        if not chosen:
            continue
        line = f"Total {kind}: {earned:g}/{maximum} points ({passed} of {graded} graded tests passed"
        if pending:
            n_pending = sum(1 for s in chosen if results[s.id]["status"] == "pending")
            line += f"; {n_pending} tests worth {pending} points pending: {PENDING_MESSAGE}"
        lines.append(line + ")")
    extra = [s for s in specs if s.extra_credit]
    if extra:
        earned = sum(results[s.id]["score"] for s in extra if results[s.id]["status"] != "pending")
        lines.append(f"Extra credit: {earned:g}/{sum(s.points for s in extra)} points")
    return "\n".join(lines)


def results_json(specs, results, output, seconds):
    tests = []
    for spec in specs:
        r = results[spec.id]
        out = r["message"] or ("passed" if r["status"] == "passed" else "")
        if r.get("output") and r["status"] == "failed":
            out += f"\n\nOutput of your code:\n{r['output']}"
        entry = {"name": f"{spec.id}: {spec.description}", "number": spec.id, "score": r["score"],
                 "max_score": points_of(spec), "output": out,
                 "visibility": "after_published" if spec.hidden else "visible"}
        if r["status"] in ("passed", "failed"):
            entry["status"] = r["status"]
        if spec.extra_credit:
            entry["tags"] = ["extra credit"]
        tests.append(entry)
    return {"score": sum(t["score"] for t in tests), "execution_time": int(round(seconds)), "output": output,
            "visibility": "visible", "stdout_visibility": "visible", "tests": tests}


# ----------------------------------------------------------------------------------------------------------
# Entry point.


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tests", nargs="*", help="test ids (1e-0-basic), question parts (1e) or questions (1)")
    p.add_argument("--json", metavar="PATH", help="write Gradescope's results.json to PATH")
    p.add_argument("--data-dir", default=os.environ.get("GRADER_DATA_DIR"),
                   help="folder with wiki.txt and the birthplace TSVs (default src/data; env GRADER_DATA_DIR)")
    p.add_argument("--submission-dir", default=os.environ.get("GRADER_SUBMISSION_DIR"),
                   help="the student's package folder (default src/submission)")
    p.add_argument("--predictions-dir", help="where the *.predictions files are (default: the submission folder)")
    p.add_argument("--solution-dir", default=os.environ.get("GRADER_SOLUTION_DIR"),
                   help="the reference solution package folder (default: an importable package `solution`)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes run in parallel (default: 2)")
    p.add_argument("--timeout-scale", type=float, default=float(os.environ.get("GRADER_TIMEOUT_SCALE", "1")),
                   help="multiply every time limit (for slow machines; env GRADER_TIMEOUT_SCALE)")
    p.add_argument("--list", action="store_true", help="list the tests and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="show the output of your code for failed tests")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--describe-written", action="store_true", help=argparse.SUPPRESS)
    return p


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.worker:
        return worker_main()
    if args.describe_written:
        return describe_written_main()
    started = time.monotonic()
    try:
        table = load_points()
    except (OSError, ValueError) as e:
        print(f"error: cannot read the points table {POINTS_FILE}: {e}", file=sys.stderr)
        return 2
    specs = {}
    for tid, spec in REGISTRY.items():
        if tid not in table["tests"]:
            print(f"error: test {tid} has no points in {POINTS_FILE}", file=sys.stderr)
            return 2
        spec.points = int(table["tests"][tid])
        specs[tid] = spec
    for spec in discover_written(timeout=30 * args.timeout_scale):
        if spec.id in specs:
            print(f"note: grader_written.py test {spec.id} duplicates a test id; skipped")
            continue
        specs[spec.id] = spec
    order = sorted(specs, key=lambda t: (t.split("-")[0], t.rsplit("-", 1)[-1] != "basic",
                                         int(t.split("-")[1]) if t.split("-")[1].isdigit() else 0, t))
    if args.tests:
        unknown = [s for s in args.tests if not any(matches(t, s) for t in order)]
        if unknown:
            print(f"error: no test matches {', '.join(unknown)}; python grader.py --list shows them", file=sys.stderr)
            return 2
        order = [t for t in order if any(matches(t, s) for s in args.tests)]
    if args.list:
        for tid in order:
            s = specs[tid]
            pts = "info" if s.info else f"{s.points} pt" + ("" if s.points == 1 else "s")
            ec = ", extra credit" if s.extra_credit else ""
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
    answers = data_dir / ANSWERS_FILE
    have_answers = answers.is_file()
    row_name, row, recognised = select_thresholds(table["thresholds"], data_dir)
    jobs = args.jobs or max(1, min(2, usable_cpus()))

    header = [f"Grading {submission_dir}", f"data: {data_dir}" + ("" if data_dir.is_dir() else " (missing)")]
    if any(specs[t].hidden for t in order):
        header.append("reference solution: " + (str(solution_dir) if solution_dir else
                                                  "not available - the hidden tests that compare with it are pending"))
        header.append("held-out answers: " + ("present" if have_answers else
                                             "not available - the hidden prediction tests are pending"))
        if have_answers:
            how = "recognised by its birth_dev.tsv" if recognised else "data set not recognised, default row"
            calibrated = "" if row.get("calibrated", True) else ", uncalibrated"
            header.append(f"accuracy thresholds: '{row_name}' ({how}{calibrated})")
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
            print(f"  {r['id']:<14} {r['status']:<7} ({r.get('seconds', 0):.1f} s)", flush=True)

    to_run = []
    for tid in order:
        spec = specs[tid]
        missing = [n for n in spec.needs if (n == "solution" and not solution_dir) or (n == "answers" and not have_answers)]
        if missing:
            note = ""
            fname = getattr(spec.fn, "predictions_file", None)
            if fname:
                try:
                    note = pending_note(fname, predictions_dir, data_dir)
                except OSError:
                    note = ""
            results[tid] = {"id": tid, "status": "pending", "message": PENDING_MESSAGE + note, "output": "",
                            "seconds": 0.0, "score": 0}
        else:
            to_run.append(tid)

    groups = {}
    for tid in to_run:
        groups.setdefault(specs[tid].part, []).append(tid)
    base_cfg = {"submission_dir": str(submission_dir), "solution_dir": str(solution_dir) if solution_dir else None,
                "data_dir": str(data_dir), "predictions_dir": str(predictions_dir),
                "thresholds": row, "threshold_row": row_name,
                "threads": max(1, usable_cpus() // jobs)}
    runner = Runner(specs, base_cfg, args.timeout_scale, on_result)
    # the longest groups first, so that the parallel workers finish together
    weight = {"1e": 0, "1g": 1, "1c": 2, "1f": 3}
    ordered_groups = sorted(groups.values(), key=lambda ids: weight.get(specs[ids[0]].part, 5))
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for future in [pool.submit(runner.run_group, ids) for ids in ordered_groups]:
            future.result()
    except KeyboardInterrupt:
        runner.stopped = True
        pool.shutdown(wait=False, cancel_futures=True)
        kill_live_workers()
        print("interrupted", file=sys.stderr)
        return 130
    pool.shutdown()
    for tid in to_run:  # cannot happen, but a test without a result must not break the summary
        if tid not in results:
            results[tid] = {"id": tid, "status": "failed", "message": "no result", "output": "", "seconds": 0.0,
                            "score": 0}

    chosen = [specs[t] for t in order]
    summary = format_summary(chosen, results, [])
    if args.verbose:
        for spec in chosen:
            r = results[spec.id]
            if r["status"] == "failed" and r.get("output"):
                summary += f"\n\nOutput of your code in {spec.id}:\n{r['output']}"
    elapsed = time.monotonic() - started
    summary += f"\n({elapsed:.1f} s)"
    print(summary, flush=True)
    if args.json:
        data = results_json(chosen, results, "\n".join(header) + "\n" + summary, elapsed)
        try:
            Path(args.json).write_text(json.dumps(data, indent=2), encoding="utf-8")
        except OSError as e:
            print(f"error: could not write {args.json}: {e}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------------------------------------
# The tests.  They run in worker processes; torch is imported inside them (the parent never imports it).

CONFIG_NAMES = ["max_epochs", "batch_size", "learning_rate", "lr_decay", "warmup_tokens", "final_tokens",
                "num_workers"]


def _same(got, want):
    """Equal as the handout means it: True is True (or 1); numbers are equal up to float rounding."""
    import math
    import numbers

    if isinstance(want, bool):
        return isinstance(got, (bool, numbers.Integral)) and got == want
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        return False
    return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=0.0)


def _check_result_pair(result, fn_name):
    if result is None:
        raise Fail(f"{fn_name} returned None: implement it in helper.py and return (tconf, trainer_obj)")
    if not isinstance(result, tuple) or len(result) != 2:
        raise Fail(f"{fn_name} must return the pair (tconf, trainer_obj), not {type(result).__name__}")
    tconf, trainer_obj = result
    if tconf is None or trainer_obj is None:
        raise Fail(f"{fn_name} returned ({'None' if tconf is None else 'tconf'}, "
                   f"{'None' if trainer_obj is None else 'trainer_obj'}): its part in helper.py is missing")
    return tconf, trainer_obj


def _check_tconf(ctx, tconf, expected, fn_name):
    trainer = ctx.student("trainer")
    if not isinstance(tconf, trainer.TrainerConfig):
        raise Fail(f"{fn_name}: tconf is a {type(tconf).__name__}, not a trainer.TrainerConfig")
    wrong = []
    for name in CONFIG_NAMES:
        got = getattr(tconf, name, None)
        if not _same(got, expected[name]):
            wrong.append(f"{name}={got!r} (the handout asks for {expected[name]!r})")
    if wrong:
        raise Fail(f"{fn_name}: TrainerConfig " + "; ".join(wrong))


def _check_trainer(ctx, trainer_obj, tconf, model, dataset_check, fn_name):
    trainer = ctx.student("trainer")
    if not isinstance(trainer_obj, trainer.Trainer):
        raise Fail(f"{fn_name}: trainer_obj is a {type(trainer_obj).__name__}, not a trainer.Trainer")
    if trainer_obj.config is not tconf:
        raise Fail(f"{fn_name}: the Trainer must be built with the returned tconf")
    if trainer_obj.model is not model:
        raise Fail(f"{fn_name}: the Trainer must train the model that was passed in")
    if trainer_obj.test_dataset is not None:
        raise Fail(f"{fn_name}: the Trainer's test dataset must be None")
    dataset_check(trainer_obj.train_dataset)


def _tiny_gpt(ctx, vocab_size, block_size, seed, perceiver=False, bottleneck_dim=16, n_layer=2):
    import torch

    model = ctx.student("model")
    kwargs = dict(n_layer=n_layer, n_head=2, n_embd=32)
    cfg = model.GPTConfig(vocab_size, block_size, **kwargs)
    if perceiver:
        cfg.perceiver, cfg.bottleneck_dim = True, bottleneck_dim
        _require_blocks(ctx, cfg)
    torch.manual_seed(seed)
    return call("GPT(config)", ctx.submission_dir, model.GPT, cfg)


def _require_blocks(ctx, cfg):
    """A perceiver needs the student's DownProjectBlock and UpProjectBlock; say so if they are missing."""
    import torch

    model = ctx.student("model")
    down = call("DownProjectBlock(config)", ctx.submission_dir, model.DownProjectBlock, cfg)
    if not isinstance(getattr(down, "C", None), torch.nn.Parameter):
        raise Fail("DownProjectBlock.__init__ does not create the basis self.C (part g): the perceiver cannot be built")
    up = call("UpProjectBlock(config)", ctx.submission_dir, model.UpProjectBlock, cfg)
    if not list(up.parameters()):
        raise Fail("UpProjectBlock.__init__ creates no layers (part g): the perceiver cannot be built")


def _finetune_case(ctx, pretrained, perceiver=False, fn_name="finetune"):
    import torch

    block = 128
    ds = ctx.corpus(block)
    train_path = ctx.data_path("birth_places_train.tsv")
    n_train = count_lines(train_path)
    helper = ctx.student("helper")
    dataset = ctx.student("dataset")
    n_layer = 3 if perceiver else 2
    model = _tiny_gpt(ctx, ds.vocab_size, block, seed=2, perceiver=perceiver, n_layer=n_layer)
    params = None
    if pretrained:
        source = _tiny_gpt(ctx, ds.vocab_size, block, seed=1, perceiver=perceiver, n_layer=n_layer)
        params = ctx.tmp / "pretrained.params"
        torch.save(source.state_dict(), params)
        params = str(params)
    lr = 3e-4  # not the default 6e-4: learning_rate must be the finetune_lr argument
    result = call(fn_name, ctx.submission_dir, helper.finetune, params, str(train_path), ds, block, model, lr)
    tconf, trainer_obj = _check_result_pair(result, fn_name)
    expected = dict(max_epochs=10 if pretrained else 75, batch_size=256, learning_rate=lr, lr_decay=True,
                    warmup_tokens=512 * 20, final_tokens=200 * len(ds) * block, num_workers=4)
    _check_tconf(ctx, tconf, expected, fn_name + (" with pretrained parameters" if pretrained else
                                                   " without pretrained parameters"))

    def check_dataset(d):
        if not isinstance(d, dataset.NameDataset):
            raise Fail(f"{fn_name}: the Trainer's training data must be a NameDataset, not {type(d).__name__}")
        if len(d) != n_train:
            raise Fail(f"{fn_name}: the NameDataset has {len(d)} examples but {train_path.name} has {n_train} lines")

    _check_trainer(ctx, trainer_obj, tconf, model, check_dataset, fn_name)
    if pretrained:
        saved = torch.load(params, weights_only=True)
        state = model.state_dict()
        for name, value in saved.items():
            if name not in state or not torch.equal(state[name].detach().cpu(), value):
                raise Fail(f"{fn_name}: the pretrained parameters from reading_params_path were not loaded into "
                           f"the model (utils.load_params(model, reading_params_path)); {name} differs")


@grader_test("1c-0-basic", "initialize_vanilla_model returns a vanilla GPT built from mconf", timeout=30)
def test_1c_0(ctx):
    import torch

    helper, model = ctx.student("helper"), ctx.student("model")
    cfg = model.GPTConfig(40, 32, n_layer=3, n_head=2, n_embd=16)
    net = call("initialize_vanilla_model", ctx.submission_dir, helper.initialize_vanilla_model, cfg)
    if net is None:
        raise Fail("initialize_vanilla_model returned None: part (c) in helper.py must return GPT(mconf)")
    if not isinstance(net, model.GPT):
        raise Fail(f"initialize_vanilla_model returned a {type(net).__name__}, not a model.GPT")
    if getattr(net, "perceiver", False) or getattr(cfg, "perceiver", False):
        raise Fail("initialize_vanilla_model built a perceiver; the vanilla variant is GPT(mconf) as given")
    if len(net.blocks) != 3 or net.get_block_size() != 32:
        raise Fail("initialize_vanilla_model did not build the model that mconf describes")
    logits, _ = call("the vanilla GPT's forward", ctx.submission_dir, net, torch.randint(0, 40, (2, 10)))
    assert tuple(logits.shape) == (2, 10, 40), f"the model's logits have shape {tuple(logits.shape)}"


@grader_test("1c-1-basic", "finetune without pretrained parameters: the TrainerConfig and Trainer of the handout",
             timeout=30)
def test_1c_1(ctx):
    _finetune_case(ctx, pretrained=False)


@grader_test("1c-2-basic", "train runs the trainer, then saves the trained parameters", timeout=30)
def test_1c_2(ctx):
    import torch
    from torch.utils.data import TensorDataset

    helper, trainer = ctx.student("helper"), ctx.student("trainer")
    net = _tiny_gpt(ctx, 20, 16, seed=3)
    before = {k: v.detach().clone() for k, v in net.state_dict().items()}
    x = torch.randint(2, 20, (32, 15))
    data = TensorDataset(x, torch.roll(x, -1, dims=1))
    tconf = trainer.TrainerConfig(max_epochs=2, batch_size=8, learning_rate=1e-3, num_workers=0, device="cpu",
                                  show_progress=False)
    trainer_obj = trainer.Trainer(net, data, None, tconf)
    path = ctx.tmp / "trained.params"
    call("train", ctx.submission_dir, helper.train, net, str(path), trainer_obj)
    if not path.is_file():
        raise Fail("train did not write the parameters file: it must call trainer_obj.train() and then "
                   "save_state_dict(model, writing_params_path)")
    saved = torch.load(path, weights_only=True)
    state = net.state_dict()
    if set(saved) != set(state) or any(not torch.equal(saved[k], state[k].detach().cpu()) for k in state):
        raise Fail("train saved something other than the model's state dict (use save_state_dict(model, path))")
    if all(torch.equal(before[k], state[k].detach().cpu()) for k in state):
        raise Fail("train saved the parameters without training: call trainer_obj.train() first")


@grader_test("1c-0-hidden", "the vanilla model equals the reference (parameters and outputs)", timeout=30,
             needs=("solution",))
def test_1c_0_hidden(ctx):
    import torch

    helper, model = ctx.student("helper"), ctx.student("model")
    ref_helper, ref_model = ctx.solution("helper"), ctx.solution("model")
    kw = dict(n_layer=4, n_head=8, n_embd=256)
    torch.manual_seed(0)
    ref = ref_helper.initialize_vanilla_model(ref_model.GPTConfig(256, 128, **kw)).eval()
    net = call("initialize_vanilla_model", ctx.submission_dir, helper.initialize_vanilla_model,
               model.GPTConfig(256, 128, **kw))
    if net is None:
        raise Fail("initialize_vanilla_model returned None: part (c) in helper.py must return GPT(mconf)")
    _copy_state(net, ref, "the vanilla model")
    net.eval()
    idx = torch.randint(0, 256, (2, 100))
    with torch.no_grad():
        want, _ = ref(idx)
        got, _ = call("the vanilla GPT's forward", ctx.submission_dir, net, idx)
    _assert_close(got, want, "the vanilla model's logits")


def _copy_state(net, ref, what):
    shapes = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    ref_shapes = {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    if shapes != ref_shapes:
        missing = sorted(set(ref_shapes) - set(shapes))[:3]
        extra = sorted(set(shapes) - set(ref_shapes))[:3]
        differ = sorted(k for k in set(shapes) & set(ref_shapes) if shapes[k] != ref_shapes[k])[:3]
        raise Fail(f"{what} does not have the reference's parameters" + (f"; missing {missing}" if missing else "")
                   + (f"; unexpected {extra}" if extra else "") + (f"; other shapes: {differ}" if differ else ""))
    net.load_state_dict(ref.state_dict())


def _assert_close(got, want, what, atol=1e-5):
    import torch

    if not torch.is_tensor(got):
        raise Fail(f"{what}: expected a tensor, got {type(got).__name__}")
    if tuple(got.shape) != tuple(want.shape):
        raise Fail(f"{what} have shape {tuple(got.shape)}, not the reference's shape")
    diff = (got.detach().float().cpu() - want.detach().float().cpu()).abs().max().item()
    if not diff <= atol:
        raise Fail(f"{what} differ from the reference's (largest difference {diff:.3g}) after copying the "
                   "reference's weights")


# -- part (d) and the prediction files --------------------------------------------------------------------


def _predictions_test(fname):
    def run(ctx):
        split, target = PREDICTIONS[fname]
        gold_path = ctx.data_path(GOLD_FILES[split])
        gold = [line.split("\t") for line in read_prediction_lines(gold_path) if line.strip()]
        if any(len(fields) < 2 for fields in gold):
            raise Fail(f"{gold_path} has no answer column (a problem of the grading set-up)")
        if split == "test":
            questions = ctx.data_path(QUESTION_FILES[split])
            if count_lines(questions) != len(gold):
                raise Fail(f"{gold_path.name} and {questions.name} disagree (a problem of the grading set-up)")
        answers = [fields[1].strip() for fields in gold]
        path = ctx.predictions_dir / fname
        if not path.is_file():
            raise Fail(f"{fname} is missing from {ctx.predictions_dir}: ./run.sh {target} writes it")
        predictions = [p.strip() for p in read_prediction_lines(path)]
        if len(predictions) != len(answers):
            raise Fail(f"{fname} has {len(predictions)} lines but there are {len(answers)} questions: one "
                       "predicted place per line, in the order of the questions")
        correct = sum(1 for p, a in zip(predictions, answers) if p == a)
        total = len(answers)
        rule = ctx.thresholds.get(fname, {})
        min_correct = int(rule.get("min_correct", 0))
        min_accuracy = float(rule.get("min_accuracy", 0.0))
        score = f"{correct}/{total} correct ({100.0 * correct / total:.2f}%)"
        needs = []
        if min_correct:
            needs.append(f"at least {min_correct} correct")
        if min_accuracy:
            needs.append(f"at least {100 * min_accuracy:g}%")
        if correct < min_correct or correct < min_accuracy * total - 1e-9:
            raise Fail(f"{fname}: {score}; needs {' and '.join(needs)} (thresholds '{ctx.threshold_row}')")
        return f"{fname}: {score}"

    run.predictions_file = fname
    return run


def _register_predictions(tid, fname, description):
    grader_test(tid, description, timeout=30, needs=("answers",), uses_torch=False)(_predictions_test(fname))


@grader_test("1d-0-basic", "London baseline: accuracy on dev of always answering the most common training place",
             timeout=30, info=True, uses_torch=False)
def test_1d_london(ctx):
    from collections import Counter

    try:
        train = [line.split("\t") for line in read_prediction_lines(ctx.data_path("birth_places_train.tsv"))]
        dev = [line.split("\t") for line in read_prediction_lines(ctx.data_path("birth_dev.tsv"))]
    except Fail as e:
        return f"not computed: {e}"
    places = [f[1].strip() for f in train if len(f) > 1]
    gold = [f[1].strip() for f in dev if len(f) > 1]
    if not places or not gold:
        return "not computed: the training or dev file has no places"
    place = Counter(places).most_common(1)[0][0]  # ties: the place seen first
    correct = sum(1 for g in gold if g == place)
    return (f"always answering '{place}' (the most common training birthplace) gets {correct}/{len(gold)} = "
            f"{100.0 * correct / len(gold):.2f}% on dev")


_register_predictions("1d-0-hidden", "vanilla.nopretrain.dev.predictions",
                      "vanilla.nopretrain.dev.predictions: one line per question, enough correct")
_register_predictions("1d-1-hidden", "vanilla.nopretrain.test.predictions",
                      "vanilla.nopretrain.test.predictions: one line per question, enough correct")


# -- part (e): CharCorruptionDataset -----------------------------------------------------------------------
#
# False failures.  Every sampling test seeds Python's `random` (and NumPy and torch) with a fixed seed first,
# so a given implementation always gets the same verdict.  The thresholds also hold without the seed, for
# any implementation that follows the handout, with probability of a false failure below 1e-6:
# - truncation coverage: a long line's truncated length is uniform on 4..L (L = int(block_size*7/8)); every
#   value shows up in N draws except with probability <= (L-3) * (1 - 1/(L-3))**N: N=4000, L=112 gives
#   1e-14; N=2000, L=42 gives 1e-21.
# - masked-length mean: each ratio masked/truncated lies in [0, 1], so by Hoeffding's inequality the mean of
#   N=4000 draws is more than t away from its expectation with probability <= 2*exp(-2*N*t*t).  Plausible
#   implementations (uniform 1..n/2, 0..n/2, n/8..3n/8, Gaussian around n/4, ...) have expectations in
#   [0.23, 0.27] (block size 128), so the window [0.15, 0.35] leaves t >= 0.08: probability 2*exp(-51).
# - "varies": a line of 40 characters with block size 128 is kept whole with probability 73/109, so ~2680
#   of 4000 draws see the same truncated length n=40 (fewer than 1000 with probability < 1e-100 by
#   Chernoff).  If no single masked length (or start) has probability above 98% at n=40 -- what "random,
#   and it varies" means -- all of 1000 draws agree with probability <= 0.98**1000 = 2e-9.


def _text(seed, lengths, alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ .,'-0123456789"):
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(n)) for n in lengths]


def _dataset(ctx, lines, block_size):
    dataset = ctx.student("dataset")
    return call(f"CharCorruptionDataset(text, {block_size})", ctx.submission_dir, dataset.CharCorruptionDataset,
                "\n".join(lines) + "\n", block_size)


def _example(ctx, ds, idx):
    """ds[idx] as two lists of ids, after checking it is a pair of LongTensors of length block_size - 1."""
    import torch

    item = call(f"CharCorruptionDataset.__getitem__({idx})", ctx.submission_dir, ds.__getitem__, idx)
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise Fail(f"CharCorruptionDataset.__getitem__ must return a pair (x, y), not {type(item).__name__}")
    x, y = item
    if x is None or y is None:
        raise Fail("CharCorruptionDataset.__getitem__ returned None for x or y: its part (e) code is missing")
    n = ds.block_size - 1
    for name, t in (("x", x), ("y", y)):
        if not torch.is_tensor(t):
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} is a {type(t).__name__}, not a torch tensor")
        if t.dtype != torch.long:
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} has dtype {t.dtype}, not torch.long")
        if t.dim() != 1 or t.numel() != n:
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} has shape {tuple(t.shape)}; block_size is "
                       f"{ds.block_size}, so it must have shape ({n},)")
        if int(t.min()) < 0 or int(t.max()) >= ds.vocab_size:
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} holds ids outside the vocabulary")
    return x.tolist(), y.tolist()


def _decode(ds, ids):
    return "".join(ds.itos[i] for i in ids)


def _parts(ctx, ds, idx, line):
    """(prefix, masked, suffix) of example idx, checked to be 'prefix⁇suffix⁇masked' + PADs from x."""
    x, _ = _example(ctx, ds, idx)
    s = _decode(ds, x)
    body = s.rstrip(PAD)
    if body.count(MASK) != 2:
        raise Fail("CharCorruptionDataset.__getitem__: x must read prefix + MASK_CHAR + suffix + MASK_CHAR + "
                   f"masked_content, then PAD_CHARs; it has {body.count(MASK)} MASK_CHARs before the padding, "
                   f"e.g. {s[:70]!r}")
    prefix, suffix, masked = body.split(MASK)
    original = prefix + masked + suffix
    if PAD in original or not line.startswith(original):
        raise Fail("CharCorruptionDataset.__getitem__: prefix + masked_content + suffix must be the beginning of "
                   f"the line (its truncation); for {line[:40]!r}... x reads {s[:70]!r}")
    return prefix, masked, suffix


def _samples(ctx, ds, lines, n):
    out = []
    for k in range(n):
        idx = k % len(lines)
        out.append((idx, *_parts(ctx, ds, idx, lines[idx])))
    return out


@grader_test("1e-0-basic", "vocabulary (PAD 0, MASK 1, then sorted characters); __getitem__ returns two "
             "LongTensors of length block_size-1", timeout=20)
def test_1e_0(ctx):
    dataset = ctx.student("dataset")
    lines = _text(1, [30, 70, 12, 200])
    ds = _dataset(ctx, lines, 64)
    if getattr(dataset, "PAD_CHAR", None) != PAD or getattr(dataset, "MASK_CHAR", None) != MASK:
        raise Fail("PAD_CHAR must be '\\u25A1' and MASK_CHAR '\\u2047'")
    if ds.stoi.get(PAD) != 0 or ds.stoi.get(MASK) != 1:
        raise Fail("the vocabulary must give PAD_CHAR id 0 and MASK_CHAR id 1")
    chars = sorted(set("\n".join(lines)))
    if [ds.itos[i] for i in range(2, ds.vocab_size)] != chars or ds.vocab_size != len(chars) + 2:
        raise Fail("the vocabulary must list the corpus's distinct characters, sorted, from id 2 on")
    for idx in range(len(lines)):
        _example(ctx, ds, idx)


@grader_test("1e-1-basic", "truncation: length drawn from 4..int(block_size*7/8), covering the whole range",
             timeout=20)
def test_1e_1(ctx):
    import random

    line = _text(2, [600])
    for block, draws in ((128, 4000), (48, 2000)):
        ds = _dataset(ctx, line, block)
        top = int(block * 7 / 8)
        random.seed(11)
        seen = set()
        for _ in range(draws):
            x, _ = _example(ctx, ds, 0)
            seen.add(sum(1 for c in _decode(ds, x) if c not in (PAD, MASK)))
        if min(seen) < 4 or max(seen) > top:
            raise Fail(f"with block_size {block} the truncated length (prefix + masked + suffix) ranged over "
                       f"{min(seen)}..{max(seen)}; it must be drawn from 4..{top} (int(block_size * 7/8))")
        missing = sorted(set(range(4, top + 1)) - seen)
        if missing:
            raise Fail(f"with block_size {block}, {draws} examples of a long line never had a truncated length of "
                       f"{missing[:8]}{'...' if len(missing) > 8 else ''}: draw it uniformly from 4..{top}")


@grader_test("1e-2-basic", "rearrangement prefix+MASK+suffix+MASK+masked rebuilds the line's start; the "
             "masked span's start varies", timeout=20)
def test_1e_2(ctx):
    import random

    lines = _text(3, [5, 9, 17, 40, 64, 90, 111, 113, 150, 300, 500])
    ds = _dataset(ctx, lines, 128)
    random.seed(12)
    _samples(ctx, ds, lines, 1100)
    # where the masked span starts must vary (line of 40 characters: mostly kept whole, see above)
    ds = _dataset(ctx, _text(4, [40]), 128)
    random.seed(13)
    starts = {len(p) for _, p, m, s in _samples(ctx, ds, _text(4, [40]), 4000) if len(p + m + s) == 40}
    if len(starts) < 2:
        raise Fail("CharCorruptionDataset.__getitem__: the masked span always starts at the same place; its start "
                   "must be random")


@grader_test("1e-3-basic", "padding: PAD_CHARs only at the end, up to block_size", timeout=20)
def test_1e_3(ctx):
    import random

    lines = _text(5, [6, 20, 50, 100, 120, 400])
    for block in (128, 32):
        ds = _dataset(ctx, lines, block)
        random.seed(14)
        for k in range(600):
            x, y = _example(ctx, ds, k % len(lines))
            s = _decode(ds, x + y[-1:])
            body = s.rstrip(PAD)
            if PAD in body:
                raise Fail(f"CharCorruptionDataset.__getitem__: PAD_CHAR may only appear at the end; got {s[:70]!r}")
            if not body or len(body) > int(block * 7 / 8) + 2:
                raise Fail("CharCorruptionDataset.__getitem__: the text before the padding must be the truncated "
                           f"line plus two MASK_CHARs; got {len(body)} characters with block_size {block}")


@grader_test("1e-4-basic", "x and y: y[i] is the character that follows x[i]", timeout=20)
def test_1e_4(ctx):
    import random

    lines = _text(6, [10, 60, 130, 400])
    ds = _dataset(ctx, lines, 128)
    random.seed(15)
    for k in range(400):
        x, y = _example(ctx, ds, k % len(lines))
        if x[1:] != y[:-1]:
            raise Fail("CharCorruptionDataset.__getitem__: y must be x shifted by one (x = s[:-1], y = s[1:]); "
                       f"got x={_decode(ds, x[:30])!r}..., y={_decode(ds, y[:30])!r}...")
        if y[-1] != ds.stoi[PAD]:
            raise Fail("CharCorruptionDataset.__getitem__: the last target must be the padded string's last "
                       "character (a PAD_CHAR)")


@grader_test("1e-5-basic", "masked span: about 1/4 of the truncated length on average, and its length varies",
             timeout=20)
def test_1e_5(ctx):
    import random

    line = _text(7, [600])
    ds = _dataset(ctx, line, 128)
    random.seed(16)
    ratios = [len(m) / len(p + m + s) for _, p, m, s in _samples(ctx, ds, line, 4000)]
    mean = sum(ratios) / len(ratios)
    if not 0.15 <= mean <= 0.35:
        raise Fail(f"CharCorruptionDataset.__getitem__: the masked content is {mean:.3f} of the truncated length "
                   "on average over 4000 examples; the handout asks for about 1/4")
    line = _text(8, [40])
    ds = _dataset(ctx, line, 128)
    random.seed(17)
    lengths = {len(m) for _, p, m, s in _samples(ctx, ds, line, 4000) if len(p + m + s) == 40}
    if len(lengths) < 2:
        raise Fail("CharCorruptionDataset.__getitem__: for a given truncated length the masked content always has "
                   f"the same length ({lengths.pop() if lengths else '?'}); it must be random")


@grader_test("1e-6-basic", "examples are random, and reproducible with random.seed (Python's random module)",
             timeout=20)
def test_1e_6(ctx):
    import random

    lines = _text(9, [80, 200, 300])
    ds = _dataset(ctx, lines, 128)

    def draw(seed):
        random.seed(seed)
        return [_example(ctx, ds, k % 3) for k in range(30)]

    first = draw(5)
    if draw(5) != first:
        raise Fail("CharCorruptionDataset.__getitem__: the same random.seed gave different examples; draw the "
                   "random numbers with Python's random module (utils.set_seed seeds it)")
    if draw(6) == first:
        raise Fail("CharCorruptionDataset.__getitem__: different seeds gave identical examples; they must be random")


# -- part (f): pretraining --------------------------------------------------------------------------------


@grader_test("1f-0-basic", "pretrain: the TrainerConfig and Trainer of the handout", timeout=30)
def test_1f_0(ctx):
    block = 96  # not the course's 128: final_tokens must use the block_size argument
    ds = ctx.corpus(block)
    helper = ctx.student("helper")
    model = _tiny_gpt(ctx, ds.vocab_size, block, seed=4)
    lr = 4e-3  # not the default 6e-3: learning_rate must be the pretrain_lr argument
    result = call("pretrain", ctx.submission_dir, helper.pretrain, ds, block, model, lr)
    tconf, trainer_obj = _check_result_pair(result, "pretrain")
    expected = dict(max_epochs=650, batch_size=128, learning_rate=lr, lr_decay=True, warmup_tokens=512 * 20,
                    final_tokens=200 * len(ds) * block, num_workers=4)
    _check_tconf(ctx, tconf, expected, "pretrain")

    def check_dataset(d):
        if d is not ds:
            raise Fail("pretrain: the Trainer must train on pretrain_dataset itself")

    _check_trainer(ctx, trainer_obj, tconf, model, check_dataset, "pretrain")


@grader_test("1f-1-basic", "finetune with pretrained parameters: loads them; the TrainerConfig (10 epochs)",
             timeout=30)
def test_1f_1(ctx):
    _finetune_case(ctx, pretrained=True)


_register_predictions("1f-0-hidden", "vanilla.pretrain.dev.predictions",
                      "vanilla.pretrain.dev.predictions: accuracy threshold")
_register_predictions("1f-1-hidden", "vanilla.pretrain.test.predictions",
                      "vanilla.pretrain.test.predictions: accuracy threshold")


# -- part (g): the perceiver ------------------------------------------------------------------------------


def _perceiver_config(ctx, package="student", m=8, n_embd=32, block=64, n_head=4):
    mod = ctx.student("model") if package == "student" else ctx.solution("model")
    cfg = mod.GPTConfig(30, block, n_layer=3, n_head=n_head, n_embd=n_embd, embd_pdrop=0.0, resid_pdrop=0.0,
                        attn_pdrop=0.0)
    cfg.perceiver, cfg.bottleneck_dim = True, m
    return cfg


def _require_tensor(value, what, shape):
    import torch

    if value is None:
        raise Fail(f"{what} returned None: its part (g) code is missing")
    if not torch.is_tensor(value):
        raise Fail(f"{what} returned a {type(value).__name__}, not a tensor")
    if tuple(value.shape) != tuple(shape):
        raise Fail(f"{what} returned shape {tuple(value.shape)}; expected {tuple(shape)}")
    return value


@grader_test("1g-0-basic", "DownProjectBlock: (B, T, C) -> (B, m, C); the basis C is the query", timeout=30)
def test_1g_0(ctx):
    import torch

    model = ctx.student("model")
    cfg = _perceiver_config(ctx)
    torch.manual_seed(0)
    block = call("DownProjectBlock(config)", ctx.submission_dir, model.DownProjectBlock, cfg).eval()
    outputs = {}
    with torch.no_grad():
        for b, t in ((3, 20), (1, 64), (2, 5)):
            x = torch.randn(b, t, 32)
            out = call("DownProjectBlock.forward", ctx.submission_dir, block, x)
            outputs[(b, t)] = (x, _require_tensor(out, f"DownProjectBlock.forward on ({b}, {t}, 32)", (b, 8, 32)))
        x, out = outputs[(3, 20)]
        alone = call("DownProjectBlock.forward", ctx.submission_dir, block, x[1:2])
        if not torch.allclose(alone, out[1:2], atol=1e-5):
            raise Fail("DownProjectBlock: a sequence's bottleneck depends on the other sequences of the batch")
        basis = getattr(block, "C", None)
        if not isinstance(basis, torch.nn.Parameter):
            raise Fail("DownProjectBlock has no nn.Parameter self.C (the learnable basis)")
        basis.add_(torch.randn_like(basis))
        moved = call("DownProjectBlock.forward", ctx.submission_dir, block, x)
        if torch.allclose(moved, out, atol=1e-4):
            raise Fail("DownProjectBlock ignores its basis self.C: changing C does not change the output")


@grader_test("1g-1-basic", "UpProjectBlock: (B, m, C) and (B, T, C) -> (B, T, C); queries from the input x",
             timeout=30)
def test_1g_1(ctx):
    import torch

    model = ctx.student("model")
    cfg = _perceiver_config(ctx)
    torch.manual_seed(0)
    block = call("UpProjectBlock(config)", ctx.submission_dir, model.UpProjectBlock, cfg).eval()
    with torch.no_grad():
        for b, t in ((3, 20), (1, 64), (2, 5)):
            y, x = torch.randn(b, 8, 32), torch.randn(b, t, 32)
            out = call("UpProjectBlock.forward", ctx.submission_dir, block, y, x)
            _require_tensor(out, f"UpProjectBlock.forward on y ({b}, 8, 32), x ({b}, {t}, 32)", (b, t, 32))
        y, x = torch.randn(2, 8, 32), torch.randn(2, 20, 32)
        out = block(y, x)
        x2 = x.clone()
        x2[:, 7] += 1.0
        changed = (block(y, x2) - out).abs().amax(dim=-1)
        if not (changed[:, 7] > 1e-4).all() or (changed[:, [i for i in range(20) if i != 7]] > 1e-5).any():
            raise Fail("UpProjectBlock: output position t must depend on the input x at position t only (x is the "
                       "query and the residual; the bottleneck y gives keys and values)")
        if torch.allclose(block(torch.randn(2, 8, 32), x), out, atol=1e-4):
            raise Fail("UpProjectBlock ignores the bottleneck y")


@grader_test("1g-2-basic", "the basis C: nn.Parameter of shape (1, m, n_embd), Xavier-uniform initialised",
             timeout=30)
def test_1g_2(ctx):
    import math

    import torch

    model = ctx.student("model")
    for m, n_embd in ((8, 32), (24, 64)):
        cfg = _perceiver_config(ctx, m=m, n_embd=n_embd)
        torch.manual_seed(m)
        block = call("DownProjectBlock(config)", ctx.submission_dir, model.DownProjectBlock, cfg)
        basis = getattr(block, "C", None)
        if not isinstance(basis, torch.nn.Parameter):
            raise Fail("DownProjectBlock.__init__ must create self.C as an nn.Parameter")
        if tuple(basis.shape) != (1, m, n_embd):
            raise Fail(f"DownProjectBlock.C has shape {tuple(basis.shape)}; expected (1, bottleneck_dim, n_embd) = "
                       f"(1, {m}, {n_embd})")
        # xavier_uniform_ on (1, m, C): U(-b, b), b = sqrt(6 / (m*C + C)); on an (m, C) tensor before
        # reshaping: b = sqrt(6 / (m + C)).  Either is accepted.  A uniform sample of m*C >= 256 values has
        # max |C| <= 0.8 b with probability 0.8**256 < 1e-24.
        low = math.sqrt(6.0 / (m * n_embd + n_embd))
        high = math.sqrt(6.0 / (m + n_embd))
        top = basis.detach().abs().max().item()
        if not (0.8 * low <= top <= high + 1e-6):
            raise Fail(f"DownProjectBlock.C ranges over +-{top:.3g}; initialise it with nn.init.xavier_uniform_ "
                       f"(for shape (1, {m}, {n_embd}) that is U(-{low:.3g}, {low:.3g}))")


@grader_test("1g-3-basic", "the perceiver GPT from initialize_perceiver_model is causal", timeout=30)
def test_1g_3(ctx):
    import torch

    helper, model = ctx.student("helper"), ctx.student("model")
    cfg = model.GPTConfig(30, 64, n_layer=3, n_head=2, n_embd=32, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0)
    net = call("initialize_perceiver_model", ctx.submission_dir, helper.initialize_perceiver_model, cfg, 8)
    if net is None:
        raise Fail("initialize_perceiver_model returned None: its part (g) code in helper.py is missing")
    if not isinstance(net, model.GPT) or not getattr(net, "perceiver", False):
        raise Fail("initialize_perceiver_model must return GPT(mconf) with mconf.perceiver = True")
    if cfg.perceiver is not True or cfg.bottleneck_dim != 8:
        raise Fail("initialize_perceiver_model must set mconf.perceiver = True and mconf.bottleneck_dim")
    default_cfg = model.GPTConfig(30, 64, n_layer=3, n_head=2, n_embd=32)
    call("initialize_perceiver_model", ctx.submission_dir, helper.initialize_perceiver_model, default_cfg)
    if default_cfg.bottleneck_dim != 32:
        raise Fail("initialize_perceiver_model's default bottleneck_dim must be 32")
    net.eval()
    with torch.no_grad():
        e = torch.randn(2, 20, 32)
        down = call("DownProjectBlock.forward", ctx.submission_dir, net.down_block, e)
        _require_tensor(down, "DownProjectBlock.forward", (2, 8, 32))
        _require_tensor(call("UpProjectBlock.forward", ctx.submission_dir, net.up_block, down, e),
                        "UpProjectBlock.forward", (2, 20, 32))
        torch.manual_seed(1)
        idx = torch.randint(0, 30, (2, 64))
        base, _ = call("the perceiver GPT's forward", ctx.submission_dir, net, idx)
        _require_tensor(base, "the perceiver GPT's forward", (2, 64, 30))
        for t in (3, 8, 20, 63):
            changed = idx.clone()
            changed[:, t:] = (idx[:, t:] + torch.randint(1, 30, (2, 64 - t))) % 30
            out, _ = net(changed)
            if not torch.allclose(out[:, :t], base[:, :t], atol=1e-5):
                raise Fail(f"the perceiver is not causal: changing the tokens from position {t} on changed the "
                           f"logits before position {t}")
            if torch.allclose(out[:, t:], base[:, t:], atol=1e-4):
                raise Fail(f"the perceiver ignores its input: changing the tokens from position {t} on changed no "
                           "logits")
        short, _ = net(idx[:, :5])  # shorter than the bottleneck
        if not torch.allclose(short, base[:, :5], atol=1e-5):
            raise Fail("the perceiver gives different logits for a 5-token prefix than for the same tokens in a "
                       "full block")


@grader_test("1g-4-basic", "finetune a perceiver with pretrained parameters: loads them; the TrainerConfig",
             timeout=30)
def test_1g_4(ctx):
    _finetune_case(ctx, pretrained=True, perceiver=True)


def _copy_by_names(student_block, ref_block, names, cls):
    import torch

    for name in names:
        ref = getattr(ref_block, name)
        if not hasattr(student_block, name):
            raise Fail(f"{cls} has no attribute '{name}': the handout's docstring asks __init__ to create "
                       f"self.{name}, and the grader copies the reference's weights by these names "
                       f"({', '.join(names)})")
        mine = getattr(student_block, name)
        if isinstance(ref, torch.nn.Parameter):
            if not torch.is_tensor(mine) or tuple(mine.shape) != tuple(ref.shape):
                raise Fail(f"{cls}.{name} must be a tensor of shape {tuple(ref.shape)}")
            with torch.no_grad():
                mine.copy_(ref)
        else:
            if not isinstance(mine, torch.nn.Module):
                raise Fail(f"{cls}.{name} must be a {type(ref).__name__}")
            try:
                mine.load_state_dict(ref.state_dict())
            except RuntimeError as e:
                first = str(e).strip().splitlines()[-1].strip()
                raise Fail(f"{cls}.{name} does not match the handout's layer ({type(ref).__name__}): {first}") from None
    extra = [n for n, _ in student_block.named_parameters() if n.split(".")[0] not in names]
    if extra:
        raise Fail(f"{cls} has parameters the handout does not ask for: {extra[:4]}")


@grader_test("1g-0-hidden", "DownProjectBlock computes what the reference computes (same weights)", timeout=30,
             needs=("solution",))
def test_1g_0_hidden(ctx):
    import torch

    model, ref_model = ctx.student("model"), ctx.solution("model")
    torch.manual_seed(0)
    ref = ref_model.DownProjectBlock(_perceiver_config(ctx, "solution")).eval()
    mine = call("DownProjectBlock(config)", ctx.submission_dir, model.DownProjectBlock, _perceiver_config(ctx)).eval()
    _copy_by_names(mine, ref, ["C", "ln1", "attn", "ln2", "mlp"], "DownProjectBlock")
    with torch.no_grad():
        for b, t in ((3, 20), (2, 5), (1, 64)):
            x = torch.randn(b, t, 32)
            got = call("DownProjectBlock.forward", ctx.submission_dir, mine, x)
            _assert_close(_require_tensor(got, "DownProjectBlock.forward", (b, 8, 32)), ref(x),
                          f"DownProjectBlock's outputs for input ({b}, {t}, 32)")


@grader_test("1g-1-hidden", "UpProjectBlock computes what the reference computes (same weights)", timeout=30,
             needs=("solution",))
def test_1g_1_hidden(ctx):
    import torch

    model, ref_model = ctx.student("model"), ctx.solution("model")
    torch.manual_seed(0)
    ref = ref_model.UpProjectBlock(_perceiver_config(ctx, "solution")).eval()
    mine = call("UpProjectBlock(config)", ctx.submission_dir, model.UpProjectBlock, _perceiver_config(ctx)).eval()
    _copy_by_names(mine, ref, ["ln1", "attn", "ln2", "mlp"], "UpProjectBlock")
    with torch.no_grad():
        for b, t in ((3, 20), (2, 5), (1, 64)):
            y, x = torch.randn(b, 8, 32), torch.randn(b, t, 32)
            got = call("UpProjectBlock.forward", ctx.submission_dir, mine, y, x)
            _assert_close(_require_tensor(got, "UpProjectBlock.forward", (b, t, 32)), ref(y, x),
                          f"UpProjectBlock's outputs for y ({b}, 8, 32), x ({b}, {t}, 32)")


_register_predictions("1g-2-hidden", "perceiver.pretrain.dev.predictions",
                      "perceiver.pretrain.dev.predictions: accuracy threshold")
_register_predictions("1g-3-hidden", "perceiver.pretrain.test.predictions",
                      "perceiver.pretrain.test.predictions: accuracy threshold")


if __name__ == "__main__":
    sys.exit(main())
