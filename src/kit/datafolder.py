"""A data folder checked against the course's shape, and the thresholds row that grades it: the one answer to
"which data set is this" that the instructor's tools share (tools/release.py, grade_class.py and experiment.py,
each with its --data-dir).

The folder holds the four files of course.DATA_FILES and, where submissions are graded, the held-out answers (the
grader's ANSWERS_FILE).  Each is checked as the course reads it: the training, dev and answer files a question, one
tab and an answer per line; the test inputs a question alone per line; every character of the questions, and of
the training answers (finetuning reads them too), in the corpus, whose characters are the model's whole
vocabulary; the corpus free of the dataset's two reserved characters; the answers' questions the test inputs', line
for line.  Anything else is a DataError: one sentence that names the file and the line.  The thresholds row is the
grader's choice (graderUtil.select_thresholds), named as the grading header names it.

The grader imports nothing of this: its copy never checks the data it grades with, it only picks the row.
"""

from pathlib import Path
from typing import NamedTuple

from kit import course


class DataError(ValueError):
    """A data folder that is not of the course's shape: one sentence that names the file and the line."""


class DataSet(NamedTuple):
    """A data folder that data_set checked, and the thresholds row that grades it."""

    folder: Path
    row_name: str
    row: dict
    recognised: bool
    answers: Path | None  # the held-out answers, where the folder holds them

    def describe(self):
        """The row as the grading header names it: "'course' (recognised by its birth_dev.tsv)"."""
        import graderUtil

        return graderUtil.describe_row(self.row_name, self.row, self.recognised)


def lines(path):
    """The lines of a data file as the grader reads them (fileio.split_lines: split at "\\n" alone, "\\r"
    dropped); a file that is not UTF-8 is a DataError at the line of its first bad byte."""
    from kit.fileio import split_lines

    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        number = data[: e.start].count(b"\n") + 1
        raise DataError(f"{path}:{number}: not UTF-8 text; save the file as UTF-8") from None
    return split_lines(text)


def questions(path, with_answers):
    """[(line number, question, answer or None)] of a question file; a DataError at its first line of another shape:
    'question<TAB>answer' where with_answers, else the question alone (a tab there would hand out the answers)."""
    rows = []
    for number, line in enumerate(lines(path), 1):
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


def check_corpus(corpus):
    """The corpus's characters (the model's vocabulary, less the two reserved ones); a DataError where it holds one
    of the reserved characters, which the dataset refuses."""
    for number, line in enumerate(lines(corpus), 1):
        reserved = [ch for ch in (course.PAD_CHAR, course.MASK_CHAR) if ch in line]
        if reserved:
            raise DataError(f"{corpus}:{number}: the corpus holds {reserved[0]!r}, which the dataset reserves for "
                            "padding and masking; remove it")
    return set(corpus.read_text(encoding="utf-8"))


def check_answers(answers, answered, asked):
    """A DataError unless the held-out answers' questions (answered) are the test inputs' (asked), line for line."""
    inputs = course.DATA_FILES["test"]
    for (number, question, _), (_, other, _) in zip(answered, asked):
        if question != other:
            raise DataError(f"{answers}:{number}: the question {question[:60]!r} is not line {number} of {inputs} "
                            f"({other[:60]!r}); the answers follow the test inputs, line for line")
    if len(answered) != len(asked):
        raise DataError(f"{answers}:{min(len(answered), len(asked)) + 1}: it answers {len(answered)} questions, "
                        f"{inputs} asks {len(asked)}; the answers follow the test inputs, line for line")


def data_set(data_dir, need_answers=False, thresholds=None):
    """The data folder at data_dir, checked (the module's docstring), and the thresholds row that grades it, as a
    DataSet; need_answers: the held-out answers must be there (a bundle, a class's grading).  thresholds:
    points.json's section (default: the grader's table)."""
    import grader  # the grader's configuration: the held-out answers' name, the file that identifies a data set
    import graderUtil

    folder = Path(data_dir).resolve()
    public = list(course.DATA_FILES.values())
    if not folder.is_dir():
        raise DataError(f"{folder} is not a folder; give the folder that holds {', '.join(public)}")
    needed = public + ([grader.ANSWERS_FILE] if need_answers else [])
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise DataError(f"{folder} lacks {' and '.join(missing)}; a data folder holds {', '.join(public)}"
                        + (f" and the held-out answers, {grader.ANSWERS_FILE}" if need_answers else ""))
    vocabulary = check_corpus(folder / course.DATA_FILES["corpus"])
    answers = folder / grader.ANSWERS_FILE if (folder / grader.ANSWERS_FILE).is_file() else None
    files = {course.DATA_FILES["train"]: True, course.DATA_FILES["dev"]: True, course.DATA_FILES["test"]: False}
    if answers is not None:
        files[answers.name] = True
    rows = {}
    for name, with_answers in files.items():
        rows[name] = questions(folder / name, with_answers)
        for number, question, answer in rows[name]:
            text = question + (answer if name == course.DATA_FILES["train"] else "")
            unknown = next((ch for ch in text if ch not in vocabulary), None)
            if unknown is not None:
                raise DataError(f"{folder / name}:{number}: the character {unknown!r} is not in "
                                f"{course.DATA_FILES['corpus']}, whose characters are the model's whole vocabulary; "
                                "use the corpus of these questions")
    if answers is not None:
        check_answers(answers, rows[answers.name], rows[course.DATA_FILES["test"]])
    if thresholds is None:
        thresholds = graderUtil.load_points()["thresholds"]
    return DataSet(folder, *graderUtil.select_thresholds(thresholds, folder), answers)
