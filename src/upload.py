"""What a student uploaded: the deliverables found in a zip or a folder, and which copy of each is graded.

One rule for every grading path (the Gradescope bundle's entry, the instructor's class grading, and
collect_submission.py's check of the zip it writes), so that one upload is graded the same way everywhere:

1. A candidate is a regular file whose name is a deliverable, anywhere in the upload, except under
   `__MACOSX/` or a folder whose name starts with a dot.  Symbolic links are never followed (copied as root,
   a link would bring whatever it points to into the grading copy).
2. The *base* is the folder that holds the most deliverables (ties: the shallower, then the first by name).
   That accepts the flat zip `./run.sh collect_submission` makes, a zip of src/submission/, one enclosing
   folder, and files uploaded one by one.
3. Each deliverable is taken from the base where it is there, else from its shallowest copy (ties: the first
   by path), so that a stray older copy (`old/model.py`) never replaces the one beside the other files.
4. Where an upload holds another copy with other content, a note says which file was graded and why.

Nothing here imports student code or torch: root processes call it.
"""

import hashlib
import os
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import NamedTuple


class Choice(NamedTuple):
    """The deliverables found in one upload: {name: relative path (posix) of the copy graded}, and one note
    per deliverable that had another copy with other content."""

    chosen: dict
    notes: list
    base: str  # the folder holding the most deliverables ('' for the top level), or None if none was found


def _skipped(parts):
    return any(p == "__MACOSX" or p.startswith(".") for p in parts[:-1])


def choose(paths, names, digest):
    """The rule above, over `paths` (relative posix paths of the upload's regular files); `names` are the
    deliverables; digest(path) returns a value that is equal for equal contents."""
    names = set(names)
    candidates = {}
    for rel in sorted(paths):
        parts = PurePosixPath(rel).parts
        if parts and parts[-1] in names and not _skipped(parts):
            candidates.setdefault(parts[-1], []).append(rel)
    counts = {}
    for rels in candidates.values():
        for rel in rels:
            folder = str(PurePosixPath(rel).parent)
            folder = "" if folder == "." else folder
            counts[folder] = counts.get(folder, 0) + 1
    if not counts:
        return Choice({}, [], None)
    base = min(counts, key=lambda f: (-counts[f], f.count("/") + bool(f), f))
    chosen, notes = {}, []
    for name in sorted(candidates):
        rels = candidates[name]
        in_base = f"{base}/{name}" if base else name
        if in_base in rels:
            pick = in_base
            why = (f"it lies in {base + '/' if base else 'the top level'}, the folder with the most deliverables "
                   f"({counts[base]})")
        else:
            pick = min(rels, key=lambda r: (r.count("/"), r))
            why = "it is the shallowest copy"
        chosen[name] = pick
        others = [r for r in rels if r != pick and digest(r) != digest(pick)]
        if others:
            notes.append(f"{name}: graded {pick}, because {why}; not graded: {', '.join(others)} "
                         f"(other content)")
    return Choice(chosen, notes, base)


class Upload:
    """A zip or a folder, read without ever following a symbolic link: .paths lists its regular files
    (relative, posix), .read(path) gives a file's bytes."""

    def __init__(self, path):
        self.path = Path(path)
        self._zip = None
        if self.path.is_dir():
            self.paths = self._walk()
        else:
            self._zip = zipfile.ZipFile(self.path)  # BadZipFile for anything else
            self._members = {}
            for info in self._zip.infolist():
                rel = info.filename.replace("\\", "/").lstrip("/")
                mode = info.external_attr >> 16
                if info.is_dir() or stat.S_ISLNK(mode) or ".." in PurePosixPath(rel).parts:
                    continue
                self._members.setdefault(rel, info)
            self.paths = sorted(self._members)
        self._digests = {}

    def _walk(self):
        found = []
        for folder, dirs, files in os.walk(self.path, followlinks=False):
            # os.walk lists a link to a folder among dirs but never enters it (followlinks=False)
            for name in files:
                full = os.path.join(folder, name)
                if stat.S_ISREG(os.lstat(full).st_mode):
                    found.append(Path(full).relative_to(self.path).as_posix())
        return sorted(found)

    def read(self, rel):
        if self._zip is not None:
            return self._zip.read(self._members[rel])
        fd = os.open(self.path / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{rel} is not a regular file")
            with os.fdopen(fd, "rb") as f:
                fd = None
                return f.read()
        finally:
            if fd is not None:
                os.close(fd)

    def digest(self, rel):
        if rel not in self._digests:
            self._digests[rel] = hashlib.sha256(self.read(rel)).hexdigest()
        return self._digests[rel]

    def choose(self, names):
        return choose(self.paths, names, self.digest)

    def close(self):
        if self._zip is not None:
            self._zip.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def deliverable_names(code_files):
    """Every file name a grader takes from an upload: the submission package's .py files (`code_files`, the
    starter's or the reference's list), the prediction and the params files."""
    from course import PARAMS_FILES, PREDICTION_FILES

    return sorted(set(code_files) | set(PREDICTION_FILES) | set(PARAMS_FILES))


def copy_deliverables(upload_path, names, dest):
    """Copy the graded copy of each deliverable of the upload (zip or folder) into the folder dest, under its
    bare name (a path inside the upload never decides where a file lands).  Returns the Choice."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with Upload(upload_path) as upload:
        choice = upload.choose(names)
        for name, rel in choice.chosen.items():
            tmp = dest / f".{name}.part"
            tmp.write_bytes(upload.read(rel))
            tmp.replace(dest / name)
    return choice
