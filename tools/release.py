"""Instructor release tooling: generate the student starter from this (the instructor's) repository.

  python tools/release.py student OUT_DIR       # the student starter, solution regions emptied
  python tools/release.py autograder OUT.zip    # a Gradescope autograder bundle

The starter is made of the files git tracks, less those matched by tools/release_exclude.txt.  In every
Python file, the code between `### START CODE HERE ###` and `### END CODE HERE ###` is removed: the
markers stay, full-line comments inside a region stay (they are hints), and a `pass` keeps the file
importable (the surrounding code returns None for an empty region).  Markers that do not pair up stop the
release with file:line.  Nothing is written unless the whole release succeeds.
"""

import argparse
import fnmatch
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXCLUDE_FILE = ROOT / "tools" / "release_exclude.txt"
STUDENT_README = ROOT / "tools" / "STUDENT_README.md"
START, END = "### START CODE HERE ###", "### END CODE HERE ###"


class ReleaseError(Exception):
    pass


def exclude_patterns(path=EXCLUDE_FILE):
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def is_excluded(rel, patterns):
    for pattern in patterns:
        if pattern.endswith("/"):
            if rel.startswith(pattern):
                return True
        elif fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(rel).name, pattern):
            return True
    return False


def tracked_files(root=ROOT):
    """Paths (relative, posix) of the files git tracks: untracked outputs are never released."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ReleaseError(f"cannot list the repository's files with git ({e}); run from a git checkout") from None
    return [p for p in out.stdout.decode("utf-8").split("\0") if p and (root / p).is_file()]


def regions(text, name):
    """Yield (start_line, end_line) of every solution region (1-based, marker lines included)."""
    start = None
    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("#") and ("START CODE HERE" in s or "END CODE HERE" in s):
            if s == START:
                if start is not None:
                    raise ReleaseError(f"{name}:{i}: START marker inside the region opened at line {start}")
                start = i
            elif s == END:
                if start is None:
                    raise ReleaseError(f"{name}:{i}: END marker without a START")
                yield start, i
                start = None
            else:
                raise ReleaseError(f"{name}:{i}: malformed marker {s!r}; use exactly {START!r} or {END!r}")
    if start is not None:
        raise ReleaseError(f"{name}:{start}: START marker is never closed")


def strip_regions(text, name):
    """The text with every solution region emptied (markers, full-line comments and a `pass` kept)."""
    lines = text.splitlines(keepends=True)
    drop = set()
    placeholders = {}
    for start, end in regions(text, name):
        marker = lines[start - 1]
        indent = marker[: len(marker) - len(marker.lstrip())]
        for i in range(start + 1, end):  # 1-based lines strictly inside the region
            if not lines[i - 1].strip().startswith("#"):
                drop.add(i)
        placeholders[end] = f"{indent}pass\n"
    out = []
    for i, line in enumerate(lines, 1):
        if i in placeholders:
            out.append(placeholders[i])
        if i not in drop:
            out.append(line)
    result = "".join(out)
    try:
        compile(result, name, "exec")
    except SyntaxError as e:
        raise ReleaseError(f"{name}:{e.lineno}: the emptied file does not compile ({e.msg})") from None
    return result


def solution_lines(text, name):
    """The code lines inside the solution regions of a file (stripped, comments excluded)."""
    lines = text.splitlines()
    found = []
    for start, end in regions(text, name):
        found += [l.strip() for l in lines[start:end - 1] if l.strip() and not l.strip().startswith("#")]
    return found


def build_student(out_dir, root=ROOT):
    """Write the student starter into out_dir (which must not exist or be empty); returns the file list."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ReleaseError(f"{out_dir} is not empty; choose a new folder")
    patterns = exclude_patterns(root / "tools" / "release_exclude.txt")
    files = [f for f in tracked_files(root) if not is_excluded(f, patterns)]
    staging = Path(tempfile.mkdtemp(prefix="starter-", dir=out_dir.parent if out_dir.parent.exists() else None))
    try:
        for rel in files:
            src, dst = root / rel, staging / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if rel.endswith(".py"):
                dst.write_text(strip_regions(src.read_text(encoding="utf-8"), rel), encoding="utf-8")
            else:
                shutil.copy2(src, dst)
        shutil.copy2(root / "tools" / "STUDENT_README.md", staging / "README.md")
        files.append("README.md")
        if out_dir.exists():
            out_dir.rmdir()
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(files)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("student", help="write the student starter into OUT_DIR")
    s.add_argument("out_dir")
    args = p.parse_args(argv)
    try:
        if args.command == "student":
            files = build_student(args.out_dir)
            print(f"wrote the student starter ({len(files)} files) to {args.out_dir}")
    except ReleaseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
