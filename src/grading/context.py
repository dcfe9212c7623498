"""What a test runs with inside a worker: the Context that reaches the student's code (or the reference's), the
data and the judge's report; the capture of its output; and the helpers that name the line of student code
that broke (describe, call)."""

import io
import os
import sys
import traceback
from pathlib import Path

from grading.protocol import OUTPUT_CHARS, REPORT_BYTES, loaded_report_problem, report_problem
from grading.registry import Fail, MissingFile, StudentImportError, settings


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
    place = where(exc, directory)
    return f"{type(exc).__name__}: {first}{place}" if first else f"{type(exc).__name__}{place}"


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
        # the folder a message names: the student's own, where predictions_dir is the sandbox's copy of it
        self.shown_predictions_dir = Path(cfg.get("shown_predictions_dir") or cfg["predictions_dir"])
        self.thresholds = cfg.get("thresholds") or {}
        self.threshold_row = cfg.get("threshold_row", "?")
        self.hanging = set(cfg.get("hanging", []))
        self.failed = {}  # student module: the StudentImportError its import raised
        self.cache = {}
        self.tmp = None

    # -- the student's code --------------------------------------------------------------------------------
    def _import(self, package, directory, module, label):
        import importlib

        full = f"{package}.{module}" if module else package
        if full in sys.modules:
            return sys.modules[full]
        key = module or "__init__"
        if key in self.failed:  # each later use fails alike
            raise type(self.failed[key])(*self.failed[key].args)
        if key in self.hanging:
            raise StudentImportError(f"importing {label}/{key}.py did not finish within the time limit of an "
                                     "earlier test (an endless loop at import time?)")
        if module and not (directory / f"{module}.py").is_file():
            self.failed[key] = MissingFile(f"{label}/{module}.py is missing")
            raise self.failed[key]
        self.send({"ev": "import", "module": key})
        try:
            if module:
                return importlib.import_module(full)
            return load_package(package, directory, run_init=False)  # each module is imported on its own
        except SyntaxError as e:
            file = Path(e.filename).name if e.filename else f"{key}.py"
            self.failed[key] = StudentImportError(f"{label}/{file} has a syntax error at line {e.lineno}: {e.msg}")
        except BaseException as e:  # noqa: BLE001 - anything raised while importing student code
            self.failed[key] = StudentImportError(f"importing {label}/{key}.py raised {describe(e, directory)}")
        finally:
            self.send({"ev": "imported"})
        raise self.failed[key]

    def student(self, name):
        """The student's module submission.<name> (imported on first use; a broken file is a clear Fail)."""
        if self.judging:
            raise RuntimeError("a judge never imports student code (a bug of the grader)")
        self._import("submission", self.submission_dir, None, "submission")
        for dep in settings.student_deps.get(name, []) + [name]:
            module = self._import("submission", self.submission_dir, dep, "submission")
        return module

    def solution(self, name):
        """The reference solution's module solution.<name>."""
        import importlib

        if self.solution_dir is None:
            raise Fail("no reference solution here: only a judge (a test's check) compares with it")
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
            report = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001 - whatever the student's worker wrote
            raise Fail(f"what the test reported could not be read ({type(e).__name__})") from None
        problem = loaded_report_problem(report)
        if problem:
            raise Fail(problem)
        return report

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
