"""The kit's ways of touching files: writing one so that it appears whole or not at all, reading the birthplace
TSVs and prediction files, and walking a folder tree that someone else made (an upload, a grading's leftovers)
so that no tree can make the walk fail.

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


# A folder is opened never through a link (O_NOFOLLOW), only if it is one (O_DIRECTORY: a FIFO fails at once
# instead of waiting for a writer), and not into a child process (O_CLOEXEC).
FOLDER_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
                | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))


def walk_folders(top, where, visit, go_down):
    """Visit the folders of a tree, starting with the open folder `top` (a descriptor; the caller keeps its own).
    No recursion and no path longer than one name: the walk holds a stack of open folders, one per level, each
    with the names of its folders still to visit, so no depth or name can make it fail.  visit(fd, where, depth)
    handles the entries of one open folder (depth 1: top) and returns the names of the folders below it to visit;
    go_down(where, name) says what `where` is for the folder `name` once it is open (a path to show, a copy's
    folder).  A folder that cannot be opened (gone, or no longer a folder) is passed over; every descriptor the
    walk opens is closed, whatever visit or go_down raises."""
    stack = [(os.dup(top), where, None)]
    try:
        while stack:
            fd, where, todo = stack[-1]
            if todo is None:  # first visit
                todo = list(visit(fd, where, len(stack)))
                stack[-1] = (fd, where, todo)
            if not todo:
                stack.pop()
                os.close(fd)
                continue
            name = todo.pop()
            try:
                below = os.open(name, FOLDER_FLAGS, dir_fd=fd)
            except OSError:
                continue
            try:
                stack.append((below, go_down(where, name), None))
            except BaseException:
                os.close(below)
                raise
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def split_lines(text):
    """The lines of a question, answer or prediction file, one per question: split at "\n" only (str.splitlines
    would also split at a form feed or a Unicode line separator inside an answer), "\r" line ends dropped, no line
    after a final "\n", and a blank line kept (an empty answer)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def read_lines(path):
    """split_lines of a file read as UTF-8 text: "\r\n" and a lone "\r" end a line too, as in every Python text
    file (the course's evaluate_places reads them so), and a byte that is not UTF-8 becomes U+FFFD (a student's
    file never makes the reading fail)."""
    return split_lines(Path(path).read_text(encoding="utf-8", errors="replace"))


def read_tsv(path):
    """The rows of a birthplace TSV (question<TAB>place, or the question alone where answers are held out) as
    lists of fields: its lines (read_lines) split at tabs, blank lines skipped, as the course's
    utils.evaluate_places reads them.  Every reader of these files uses it: run.py, the baseline, the grader, the
    instructor's tools."""
    return [line.split("\t") for line in read_lines(path) if line.strip()]
