"""The instructor's inputs to a grading run: the points table, the row of accuracy thresholds for the data set,
the reference solution's folder, and the prediction files read as the tests read them."""

import hashlib
import json
import sys
from pathlib import Path
from typing import NamedTuple

from grading.registry import POINTS_FILE, SRC, settings
from grading.report import VISIBILITIES
from kit import course


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


def select_thresholds(thresholds, data_dir):
    """(row name, row, recognised) for the data set in data_dir: the row that recognises the SHA-256 of its
    dataset_file (recognising_row), else the default row."""
    rows = thresholds["rows"]
    path = Path(data_dir) / (settings.dataset_file or "")
    if settings.dataset_file and path.is_file():
        name = recognising_row(thresholds, normalized_sha256(path))
        if name is not None:
            return name, rows[name], True
    default = thresholds.get("default", "course")
    return default, rows[default], False


def describe_row(row_name, row, recognised):
    """How a grading names its thresholds row: "'course' (recognised by its birth_dev.tsv)", or "'course' (data set
    not recognised, default row, uncalibrated)"."""
    how = f"recognised by its {settings.dataset_file}" if recognised else "data set not recognised, default row"
    return f"'{row_name}' ({how}{'' if row.get('calibrated', True) else ', uncalibrated'})"


class DataError(ValueError):
    """A data folder that is not of the course's shape: one sentence that names the file and the line."""


class DataSet(NamedTuple):
    """A data folder that data_set checked, and the thresholds row that grades it."""

    folder: Path
    row_name: str
    row: dict
    recognised: bool
    answers: Path | None  # the held-out answers (the grader's held_out file), where the folder holds them

    def describe(self):
        return describe_row(self.row_name, self.row, self.recognised)


def _lines(path):
    """The lines of a data file as the course reads them (prediction_lines), refusing text that is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        number = data[: e.start].count(b"\n") + 1
        raise DataError(f"{path}:{number}: not UTF-8 text; save the file as UTF-8") from None
    return prediction_lines(text)


def _questions(path, with_answers):
    """[(line number, question, answer or None)] of a question file; DataError at the first line of another shape:
    'question<TAB>answer' where with_answers, else the question alone (a tab there would hand the answers out)."""
    rows = []
    for number, line in enumerate(_lines(path), 1):
        fields = line.split("\t")
        if with_answers and (len(fields) != 2 or not fields[0].strip() or not fields[1].strip()):
            raise DataError(f"{path}:{number}: {line[:60]!r} is not a question, a tab and an answer; every line of "
                            f"{Path(path).name} is 'question<TAB>answer'")
        if not with_answers and (len(fields) != 1 or not line.strip()):
            raise DataError(f"{path}:{number}: {line[:60]!r} is not a question alone; every line of "
                            f"{Path(path).name} is one question, without its answer (that one is held out)")
        rows.append((number, fields[0], fields[1] if with_answers else None))
    if not rows:
        raise DataError(f"{path}:1: the file is empty; it holds a question on every line")
    return rows


def data_set(data_dir, thresholds=None, need_answers=False):
    """Check a data folder and say which thresholds row grades it: the one rule of the grader's tools (the release,
    class grading, the experiment) for "which data set is this".

    The folder holds the course's four files (kit.course.DATA_FILES) and, for grading, the held-out answers (the
    grader's held_out file, birth_test.tsv; required when need_answers).  Each is of the course's shape: the
    training, dev and answer files a question, a tab and an answer per line; the test inputs a question per
    line; every character of those questions, and of the training answers (finetuning reads them too), in the
    corpus wiki.txt, whose characters are the model's whole vocabulary; the corpus free of the dataset's two
    reserved characters; the answers' questions the test inputs', in order.  Anything else is a DataError, one
    sentence naming the file and the line.  thresholds: points.json's section (default: the grader's table)."""
    folder = Path(data_dir).resolve()
    if not folder.is_dir():
        raise DataError(f"{folder} is not a folder; give the folder that holds {', '.join(course.DATA_FILES.values())}")
    held_out = [folder / name for name in settings.held_out]
    needed = [folder / name for name in course.DATA_FILES.values()] + (held_out if need_answers else [])
    missing = [path.name for path in needed if not path.is_file()]
    if missing:
        raise DataError(f"{folder} lacks {' and '.join(missing)}; a data folder holds "
                        f"{', '.join(course.DATA_FILES.values())}" + (f" and the held-out answers, "
                        f"{', '.join(settings.held_out)}" if need_answers else ""))
    corpus = folder / course.DATA_FILES["corpus"]
    for number, line in enumerate(_lines(corpus), 1):
        reserved = [ch for ch in (course.PAD_CHAR, course.MASK_CHAR) if ch in line]
        if reserved:
            raise DataError(f"{corpus}:{number}: the corpus holds {reserved[0]!r}, which the dataset reserves for "
                            "padding and masking; remove it")
    vocabulary = set(corpus.read_text(encoding="utf-8"))
    files = {course.DATA_FILES[split]: True for split in ("train", "dev")}
    files[course.DATA_FILES["test"]] = False
    answers = next((path for path in held_out if path.is_file()), None)
    if answers is not None:
        files[answers.name] = True
    rows = {}
    for name, with_answers in files.items():
        path = folder / name
        rows[name] = _questions(path, with_answers)
        for number, question, answer in rows[name]:
            text = question + (answer if name == course.DATA_FILES["train"] else "")
            unknown = next((ch for ch in text if ch not in vocabulary), None)
            if unknown is not None:
                raise DataError(f"{path}:{number}: the character {unknown!r} is not in {corpus.name}, whose "
                                "characters are the model's whole vocabulary; use the corpus of these questions")
    if answers is not None:
        inputs = rows[course.DATA_FILES["test"]]
        for (number, question, _), (_, asked, _) in zip(rows[answers.name], inputs):
            if question != asked:
                raise DataError(f"{answers}:{number}: the question {question[:60]!r} is not line {number} of "
                                f"{course.DATA_FILES['test']} ({asked[:60]!r}); the answers follow the test inputs, "
                                "line for line")
        if len(rows[answers.name]) != len(inputs):
            n = min(len(rows[answers.name]), len(inputs)) + 1
            raise DataError(f"{answers}:{n}: it answers {len(rows[answers.name])} questions, "
                            f"{course.DATA_FILES['test']} asks {len(inputs)}; the answers follow the test inputs, "
                            "line for line")
    if thresholds is None:
        thresholds = load_points()["thresholds"]
    return DataSet(folder, *select_thresholds(thresholds, folder), answers)


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


def count_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if line.strip())


def prediction_lines(text):
    """The lines of a prediction or answer file as the grader counts them, one per question: split at "\n"
    only (str.splitlines would also split at a form feed or a Unicode line separator inside an answer), "\r"
    line ends dropped, no line after a final "\n", and a blank line kept (an empty answer)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def read_prediction_lines(path):
    return prediction_lines(Path(path).read_text(encoding="utf-8", errors="replace"))


def read_tsv_rows(path):
    """The rows of a question/answer file (birth_dev.tsv, the held-out answers, ...) as the grader reads them: its
    lines (read_prediction_lines) split at tabs, blank lines skipped, as the course's utils.evaluate_places does."""
    return [line.split("\t") for line in read_prediction_lines(path) if line.strip()]
