"""src/ on sys.path for the scripts of tools/bench/ (bench.py, bench_course_loop.py), imported first.

Python puts only the running script's folder (tools/bench/) first on sys.path, so tools/srcpath.py, the one module
that edits it, is loaded here by its path (and registered under its name, as the other tools import it)."""

import importlib.util
import sys
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("srcpath", Path(__file__).resolve().parents[1] / "srcpath.py")
srcpath = sys.modules["srcpath"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(srcpath)
srcpath.use()
ROOT, SRC = srcpath.ROOT, srcpath.SRC
