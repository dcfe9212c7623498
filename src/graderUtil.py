"""The grader's machinery (the course calls this module graderUtil.py): grader.py holds the tests.

What lives here: the test registry (`grader_test`, `Spec`, `Fail`), the worker processes that run each test
in isolation with a time limit and capture its output, the `Context` a test uses to reach the student's
code, the reference solution and the data, the points table and accuracy thresholds, the summary, Gradescope's
results.json, and the command line.  Nothing here knows what the assignment asks: grader.py registers its tests
and calls configure() with the few facts the harness needs (which student modules import which, the held-out
files, the file that identifies a data set).

Run the grader through grader.py (`python grader.py --help`): the worker processes run grader.py too, so
that they know its tests.
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
GRADER_SCRIPT = SRC / "grader.py"  # the workers run it: it registers the tests, then calls main()

DESCRIPTION = __doc__  # the --help text: grader.py gives its own docstring through configure()
PENDING_MESSAGE = "hidden - graded after submission"
STARTUP_TIMEOUT = 120.0  # seconds for a worker process to import torch and report ready
IDLE_TIMEOUT = 60.0  # seconds between two tests of one worker (the harness's own work)
MESSAGE_CHARS = 1500  # longest failure message kept
OUTPUT_CHARS = 1000  # head and tail of a test's captured output kept

# What grader.py tells the harness (configure): the student modules each student module imports (importing
# them first, one by one, tells which file is broken or hangs), the held-out files whose presence makes the
# tests that need "answers" run, and the data file whose SHA-256 picks the row of accuracy thresholds.
STUDENT_DEPS = {}
HELD_OUT = ()
DATASET_FILE = None


def configure(description=None, student_deps=None, held_out=None, dataset_file=None):
    global DESCRIPTION, STUDENT_DEPS, HELD_OUT, DATASET_FILE
    if description is not None:
        DESCRIPTION = description
    if student_deps is not None:
        STUDENT_DEPS = dict(student_deps)
    if held_out is not None:
        HELD_OUT = tuple(held_out)
    if dataset_file is not None:
        DATASET_FILE = dataset_file


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
        self.proc = subprocess.Popen([sys.executable, str(GRADER_SCRIPT), "--worker"],
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
        extra = " [extra credit]" if spec.extra_credit and pts else ""
        extra = " [practice, 0 points]" if not spec.info and not pts else extra
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
    core = [s for s in specs if not s.extra_credit]
    if core and any(s.kind == "basic" for s in core) and any(s.kind == "hidden" for s in core):
        earned = sum(results[s.id]["score"] for s in core if results[s.id]["status"] != "pending")
        lines.append(f"Total: {earned:g}/{sum(points_of(s) for s in core)} points")
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
        if spec.extra_credit and points_of(spec):
            entry["tags"] = ["extra credit"]
        elif not spec.info and not points_of(spec):
            entry["tags"] = ["practice"]
        tests.append(entry)
    return {"score": sum(t["score"] for t in tests), "execution_time": int(round(seconds)), "output": output,
            "visibility": "visible", "stdout_visibility": "visible", "tests": tests}


# ----------------------------------------------------------------------------------------------------------
# Entry point.


def build_parser():
    p = argparse.ArgumentParser(description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tests", nargs="*", help="test ids (1e-0-basic), question parts (1e) or questions (1)")
    p.add_argument("--json", metavar="PATH", help="write Gradescope's results.json to PATH")
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
    p.add_argument("--list", action="store_true", help="list the tests and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="show the output of your code for failed tests")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
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
            pending_note = getattr(spec.fn, "pending_note", None)  # a local check of the inputs, never a verdict
            if pending_note:
                try:
                    note = pending_note(predictions_dir, data_dir)
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
    base_cfg = {"submission_dir": str(submission_dir), "solution_dir": str(solution_dir) if solution_dir else None,
                "data_dir": str(data_dir), "predictions_dir": str(predictions_dir),
                "thresholds": row, "threshold_row": row_name,
                "threads": max(1, usable_cpus() // jobs)}
    runner = Runner(specs, base_cfg, args.timeout_scale, on_result)
    # the longest groups first, so that the parallel workers finish together
    ordered_groups = sorted(groups.values(), key=lambda ids: -sum(specs[t].timeout for t in ids))
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
