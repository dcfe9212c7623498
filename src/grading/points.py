"""The instructor's inputs to a grading run: the points table, the row of accuracy thresholds for the data set,
and the reference solution's folder."""

import hashlib
import json
import sys
from pathlib import Path

from grading.registry import POINTS_FILE, SRC, settings
from grading.report import VISIBILITIES


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


def identity_key():
    """The key of a thresholds row's list of the data sets it recognises: `<dataset_file>_sha256`, the SHA-256s of
    that file (birth_dev.tsv: `birth_dev_sha256`)."""
    return Path(settings.dataset_file or "").stem + "_sha256"


def recognising_row(thresholds, digest):
    """The name of the row whose identity_key() list holds digest, or None."""
    return next((name for name, row in thresholds["rows"].items() if digest in row.get(identity_key(), [])), None)


def with_bars(rows, name):
    """The row `name` with its bars.  A row that says "bars_of": OTHER grades by OTHER's bars (every prediction
    file's rule and the "learned" section) under its own name, identity, description and calibration, so that a
    data set not yet calibrated shares another's bars without a copy of them; a bar of its own still wins."""
    row = rows[name]
    if "bars_of" not in row:
        return row
    base = rows[row["bars_of"]]
    bars = {key: value for key, value in base.items() if key.endswith(".predictions") or key == "learned"}
    return {**bars, **{key: value for key, value in row.items() if key != "bars_of"}}


def select_thresholds(thresholds, data_dir):
    """(row name, row, recognised) for the data set in data_dir: the row that recognises the SHA-256 of its
    dataset_file (recognising_row), else the default row; with its bars (with_bars)."""
    rows = thresholds["rows"]
    path = Path(data_dir) / (settings.dataset_file or "")
    if settings.dataset_file and path.is_file():
        name = recognising_row(thresholds, normalized_sha256(path))
        if name is not None:
            return name, with_bars(rows, name), True
    default = thresholds.get("default", "course")
    return default, with_bars(rows, default), False


def describe_row(row_name, row, recognised):
    """How a grading names its thresholds row: "'course' (recognised by its birth_dev.tsv)", or "'course' (data set
    not recognised, default row, uncalibrated)"."""
    how = f"recognised by its {settings.dataset_file}" if recognised else "data set not recognised, default row"
    return f"'{row_name}' ({how}{'' if row.get('calibrated', True) else ', uncalibrated'})"


def find_solution(explicit):
    """The folder of the reference `solution` package, or None."""
    if explicit:
        path = Path(explicit).resolve()
        if not any((path / f"{m}.py").is_file() for m in settings.student_deps):
            raise ValueError(f"--solution-dir {path} does not hold a solution package (none of the student's "
                             f"modules: {', '.join(f'{m}.py' for m in settings.student_deps)})")
        return path
    from importlib.machinery import PathFinder

    try:  # the package beside grader.py first, then wherever Python would import it from
        spec = PathFinder.find_spec("solution", [str(SRC)] + sys.path)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if settings.student_deps and all((Path(location) / f"{m}.py").is_file() for m in settings.student_deps):
            return Path(location).resolve()
    return None
