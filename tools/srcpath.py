"""The one place that puts a checkout's src/ (and, for the rehearsal, tests/) on sys.path.

The tools run as scripts from tools/, so Python puts tools/ on sys.path and finds this module; the modules they
use from src/ (course, upload, graderUtil, the student's package) are not packages of tools/, and src/ is where
they live for a student's run as well.  The Gradescope bundle ships this file beside autograder_run.py, which
uses it on the grading copy of the starter.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TESTS = ROOT / "tests"


def use(*folders):
    """Put each folder (default: this checkout's src/) first on sys.path, once."""
    for folder in reversed([str(f) for f in folders] or [str(SRC)]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
