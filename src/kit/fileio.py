"""The drivers' two ways of touching files: writing one so that it appears whole or not at all, and reading
the birthplace TSVs.

An interrupted run (Ctrl-C, a full disk, a killed job on a rented GPU) must never leave half a predictions
file, loss log or plot over a good one: each is written beside its target and swapped in with os.replace,
which replaces the old file in one step.  (The student's trainer.py keeps its own `save_atomic` for the params
files: the student's seven files import nothing of the kit's.)
"""

import contextlib
import os
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path in path's folder; when the block ends without an error, the file written there
    replaces `path` at once, otherwise it is removed and `path` is left as it was.  The temporary name keeps
    path's extension, so writers that pick a format by it (matplotlib's savefig) write the same format."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path, text):
    """Write text (UTF-8, "\\n" line ends on every system) to path through atomic_path."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


def read_tsv(path):
    """The rows of a birthplace TSV (question<TAB>place, or the question alone where answers are held out) as
    lists of fields, line ends stripped, blank lines skipped: the rule of the course's utils.evaluate_places."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\r\n").split("\t") for line in f if line.strip()]
