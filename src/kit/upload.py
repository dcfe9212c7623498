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

Root reads uploads (Gradescope's entry, grade_class), so no upload may take root's memory, time or disk, or
make a step raise: a folder is walked iteratively on open folders (no depth makes it recurse, no path grows too
long, no link is followed, FIFOs are never opened), files are copied and hashed a piece at a time, and an
upload past the limits below is refused with one sentence (UploadError), which costs that upload its grade and
nothing else.  A name from the upload appears in a note only escaped (shown): not UTF-8, a newline, a control
character cannot break a line of a report or the text that prints it.

Nothing here imports student code or torch: root processes call it.
"""

import hashlib
import os
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from kit.fileio import FOLDER_FLAGS, atomic_path, walk_folders

# Limits of one upload.  The handout's 18 deliverables are 7 Python files, 6 prediction files of a few KB and 5
# params files of about 13 MiB each (the course's model: 3.3 million float32 parameters), in 20 entries.
MAX_ENTRIES = 100_000  # files and folders looked at (a zip's members): a whole project with its .git fits
MAX_DEPTH = 32  # folders below the top of a folder upload that are searched (deeper ones are not, with a note)
MAX_FILE_BYTES = 256 << 20  # a deliverable: 20 times a params file, with room for one saved in float64
MAX_TOTAL_BYTES = 1 << 30  # all that is read of one upload: the deliverables, and the copies compared with them
MAX_RATIO = 100  # how many times a zip member past RATIO_FROM may inflate: params ~1.1, text files ~5
RATIO_FROM = 1 << 20
MAX_DIRECTORY_BYTES = 64 << 20  # a zip's central directory (its list of members), which zipfile reads whole
PIECE = 1 << 20  # bytes read at a time

FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class UploadError(ValueError):
    """An upload that cannot be graded, with the reason in one sentence (for the student and the class report)."""


def shown(name, limit=200):
    """A name from an upload as one line of text: what is not printable (a newline, a byte that is not UTF-8,
    which Python keeps as a surrogate) is escaped, and a long name is cut."""
    text = "".join(c if c.isprintable() and not 0xD800 <= ord(c) < 0xE000  # a byte kept as a surrogate: \xff
                   else f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) < 0xDD00 else ascii(c)[1:-1] for c in name)
    return text if len(text) <= limit else text[:limit] + "..."


def _mib(n):
    return f"{n / (1 << 20):.0f} MiB"


class Choice(NamedTuple):
    """The deliverables found in one upload: {name: relative path (posix) of the copy graded}, and the notes: one
    per deliverable that had another copy with other content, and what the reading left out (Upload.notes)."""

    chosen: dict
    notes: list
    base: str  # the folder holding the most deliverables ('' for the top level), or None if none was found


def _skipped(parts):
    return any(p == "__MACOSX" or p.startswith(".") for p in parts[:-1])


def choose(paths, names, digest, size=None):
    """The rule above, over `paths` (relative posix paths of the upload's regular files); `names` are the
    deliverables; digest(path) returns a value that is equal for equal contents, and size(path), when given,
    the size (files of other sizes differ: nothing is read to know it)."""
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
            why = (f"it lies in {shown(base) + '/' if base else 'the top level'}, the folder with the most "
                   f"deliverables ({counts[base]})")
        else:
            pick = min(rels, key=lambda r: (r.count("/"), r))
            why = "it is the shallowest copy"
        chosen[name] = pick
        others = [r for r in rels if r != pick and ((size and size(r) != size(pick)) or digest(r) != digest(pick))]
        if others:
            listed = ", ".join(shown(r) for r in others[:5]) + (f" and {len(others) - 5} more" if others[5:] else "")
            notes.append(f"{name}: graded {shown(pick)}, because {why}; not graded: {listed} (other content)")
    return Choice(chosen, notes, base)


class Upload:
    """A zip or a folder, read without ever following a symbolic link and within the limits above: .paths lists
    its regular files (relative, posix), .notes what was left out; read(), digest() and copy() give a file's
    bytes, a digest of them, a copy of them.  UploadError, one sentence, for anything that cannot be read."""

    def __init__(self, path):
        self.path = Path(path)
        self.notes = []
        self._zip = None
        self._top = None  # a folder upload, open
        self._sizes = {}
        self.stamps = {}  # what tells a file's version: (size, modification time), or a zip member's (size, CRC)
        self._digests = {}
        self._read = 0  # bytes read so far, at most MAX_TOTAL_BYTES
        try:
            st = os.lstat(self.path)
        except OSError as e:
            raise UploadError(f"the upload {shown(self.path.name)} cannot be read ({e.strerror})") from None
        if stat.S_ISLNK(st.st_mode):
            raise UploadError(f"the upload {shown(self.path.name)} is a symbolic link, which is never followed; "
                              "upload the files themselves")
        if stat.S_ISDIR(st.st_mode):
            self.paths = self._walk()
        elif stat.S_ISREG(st.st_mode):
            self.paths = self._open_zip()
        else:
            raise UploadError(f"the upload {shown(self.path.name)} is neither a zip file nor a folder")

    # -- a folder --------------------------------------------------------------------------------------------

    def _walk(self):
        """The regular files of a folder upload, walked on open folders (a stack of at most MAX_DEPTH), never
        through a link; dot-folders and __MACOSX/ are not entered (rule 1 skips what they hold)."""
        try:
            self._top = os.open(self.path, FOLDER_FLAGS)
        except OSError as e:
            raise UploadError(f"the upload {shown(self.path.name)} cannot be read ({e.strerror})") from None
        found, seen, too_deep = [], 0, False

        def visit(fd, rel, level):  # note the folder's files, and list the folders below it
            nonlocal seen, too_deep
            below = []
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        seen += 1
                        if seen > MAX_ENTRIES:
                            raise UploadError(f"the upload holds more than {MAX_ENTRIES:,} files and folders; "
                                              "upload only the deliverables, as ./run.sh collect_submission zips "
                                              "them")
                        path = f"{rel}/{entry.name}" if rel else entry.name
                        try:
                            st = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if stat.S_ISREG(st.st_mode):
                            found.append(path)
                            self._sizes[path] = st.st_size
                            self.stamps[path] = (st.st_size, st.st_mtime_ns)
                        elif stat.S_ISDIR(st.st_mode) and not _skipped([entry.name, ""]):
                            if level > MAX_DEPTH:
                                too_deep = True
                            else:
                                below.append(entry.name)
            except OSError:
                pass  # a folder that cannot be listed holds nothing graded
            return below

        walk_folders(self._top, "", visit, lambda rel, name: f"{rel}/{name}" if rel else name)
        if too_deep:
            self.notes.append(f"folders nested more than {MAX_DEPTH} deep in the upload were not searched")
        return sorted(found)

    def _open_file(self, rel):
        """A folder upload's file, opened component by component from the top, never through a link."""
        parts = rel.split("/")
        fd = os.dup(self._top)
        try:
            for part in parts[:-1]:
                below = os.open(part, FOLDER_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = below
            return os.open(parts[-1], FILE_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)

    # -- a zip -----------------------------------------------------------------------------------------------

    def _open_zip(self):
        name = shown(self.path.name)
        try:
            with open(self.path, "rb") as f:
                # the end record, before zipfile reads the central directory whole (private, but in 3.8-3.13)
                end = zipfile._EndRecData(f) if hasattr(zipfile, "_EndRecData") else None
            if end is not None and end[zipfile._ECD_ENTRIES_TOTAL] > MAX_ENTRIES:
                raise UploadError(f"the upload {name} holds more than {MAX_ENTRIES:,} files; upload only the "
                                  "deliverables, as ./run.sh collect_submission zips them")
            if end is not None and end[zipfile._ECD_SIZE] > MAX_DIRECTORY_BYTES:
                raise UploadError(f"the upload {name} has a list of files larger than "
                                  f"{_mib(MAX_DIRECTORY_BYTES)}; upload only the deliverables")
            self._zip = zipfile.ZipFile(self.path)
        except UploadError:
            raise
        except Exception as e:  # noqa: BLE001 - BadZipFile, and whatever else a damaged zip makes zipfile raise
            raise UploadError(f"the upload {name} is not a zip file that can be read ({type(e).__name__}: "
                              f"{shown(str(e))})") from None
        infos = self._zip.infolist()
        if len(infos) > MAX_ENTRIES:
            raise UploadError(f"the upload {name} holds more than {MAX_ENTRIES:,} files; upload only the "
                              "deliverables, as ./run.sh collect_submission zips them")
        self._members = {}
        for info in infos:
            rel = info.filename.replace("\\", "/").lstrip("/")
            mode = info.external_attr >> 16
            if not rel or info.is_dir() or stat.S_ISLNK(mode) or ".." in PurePosixPath(rel).parts:
                continue
            self._members.setdefault(rel, info)  # a name twice: the first
            self._sizes.setdefault(rel, info.file_size)
            self.stamps.setdefault(rel, (info.file_size, info.CRC))
        return sorted(self._members)

    def _check_member(self, rel):
        """Refuse a zip member before inflating it: larger than a deliverable may be, inflating like a zip bomb,
        encrypted, or compressed in a way zipfile cannot read."""
        info = self._members[rel]
        if info.file_size > MAX_FILE_BYTES:
            raise UploadError(f"{shown(rel)} in the upload is {_mib(info.file_size)}, more than the "
                              f"{_mib(MAX_FILE_BYTES)} a deliverable may be")
        if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(1, info.compress_size):
            raise UploadError(f"{shown(rel)} in the upload inflates {info.file_size // max(1, info.compress_size):,} "
                              f"times (more than {MAX_RATIO}); zip it again as ./run.sh collect_submission does")
        if info.flag_bits & 0x1:
            raise UploadError(f"{shown(rel)} in the upload is encrypted; zip it again without a password")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
                                      zipfile.ZIP_LZMA):
            raise UploadError(f"{shown(rel)} in the upload uses a compression method the grader cannot read "
                              f"({info.compress_type}); zip it again as ./run.sh collect_submission does")

    # -- reading ---------------------------------------------------------------------------------------------

    def size(self, rel):
        return self._sizes[rel]

    def pieces(self, rel, limit=MAX_FILE_BYTES):
        """The bytes of file rel, a piece at a time, at most `limit` of them (UploadError past it, or past all
        an upload may be read for)."""
        try:
            if self._zip is not None:
                self._check_member(rel)
                stream = self._zip.open(self._members[rel])
            else:
                fd = self._open_file(rel)
                st = os.fstat(fd)
                problem = ("is not a regular file" if not stat.S_ISREG(st.st_mode) else
                           f"is {_mib(st.st_size)}, more than the {_mib(limit)} a deliverable may be"
                           if st.st_size > limit else None)  # refused before a byte of it is read
                if problem:
                    os.close(fd)
                    raise UploadError(f"{shown(rel)} in the upload {problem}")
                stream = os.fdopen(fd, "rb")
            with stream:
                got = 0
                while True:
                    piece = stream.read(PIECE)
                    if not piece:
                        return
                    got += len(piece)
                    self._read += len(piece)
                    if got > limit:
                        raise UploadError(f"{shown(rel)} in the upload is larger than the {_mib(limit)} a "
                                          "deliverable may be")
                    if self._read > MAX_TOTAL_BYTES:
                        raise UploadError(f"the upload's deliverables and their copies are more than "
                                          f"{_mib(MAX_TOTAL_BYTES)} to read; upload only the deliverables")
                    yield piece
        except UploadError:
            raise
        except Exception as e:  # noqa: BLE001 - a damaged member (BadZipFile, zlib.error, EOFError, ...)
            raise UploadError(f"{shown(rel)} in the upload cannot be read ({type(e).__name__}: "
                              f"{shown(str(e))})") from None

    def read(self, rel, limit=MAX_FILE_BYTES):
        return b"".join(self.pieces(rel, limit))

    def digest(self, rel):
        if rel not in self._digests:
            h = hashlib.sha256()
            for piece in self.pieces(rel):
                h.update(piece)
            self._digests[rel] = h.hexdigest()
        return self._digests[rel]

    def copy(self, rel, dest):
        """Copy file rel to the path dest (written beside it, then renamed: dest is whole or absent)."""
        with atomic_path(dest) as tmp, open(tmp, "wb") as out:
            for piece in self.pieces(rel):
                out.write(piece)

    def choose(self, names):
        choice = choose(self.paths, names, self.digest, self.size)
        return choice._replace(notes=self.notes + choice.notes)

    def close(self):
        if self._zip is not None:
            self._zip.close()
        if self._top is not None:
            os.close(self._top)
            self._top = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def deliverable_names(code_files):
    """Every file name a grader takes from an upload: the submission package's .py files (`code_files`, the
    starter's or the reference's list), the prediction and the params files."""
    from kit.course import PARAMS_FILES, PREDICTION_FILES

    return sorted(set(code_files) | set(PREDICTION_FILES) | set(PARAMS_FILES))


def copy_deliverables(upload_path, names, dest):
    """Copy the graded copy of each deliverable of the upload (zip or folder) into the folder dest, under its
    bare name (a path inside the upload never decides where a file lands).  Returns the Choice; UploadError,
    one sentence, for an upload that cannot be graded."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with Upload(upload_path) as upload:
        choice = upload.choose(names)
        for name, rel in choice.chosen.items():
            upload.copy(rel, dest / name)
    return choice
