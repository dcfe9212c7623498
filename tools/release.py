"""Instructor release tooling: generate the student starter from this (the instructor's) repository.

  python tools/release.py student OUT_DIR       # the student starter, solution regions emptied
  python tools/release.py autograder OUT.zip    # a Gradescope autograder bundle
  python tools/release.py student OUT_DIR --data-dir DIR     # either one on another data set (the course's files)
  python tools/release.py check --data-dir DIR    # the data folder checked, and its thresholds row; writes nothing

The starter is made of the files git tracks, less those matched by tools/release_exclude.txt; its README.md
is tools/STUDENT_README.md with the sections it names in include lines copied in (the lead of the demo's results,
from docs/benchmarks.md, without its dated measurements); its src/points.json has every bar but not the rows'
"evidence", the instructor's notes on the runs and attacks behind each bar.  In every Python file, the code
between `### START CODE HERE ###` and `### END CODE HERE ###` is removed (every spelling students meet is
recognised: the handout's `### START_CODE_HERE ###`, the course files' `### START CODE HERE`, with or without the
underscores and the trailing ###): the markers stay, full-line comments inside a region stay (they are hints), and
a `pass` keeps the file importable (the surrounding code returns None for an empty region).  Markers that do not
pair up stop the release with file:line.  Nothing is written unless the whole release succeeds.

The data set is the folder --data-dir (default src/data, the built-in world): the starter's src/data/ holds its
four public files (kit/course.DATA_FILES) and the demo's world, src/data/demo/; the bundle grades with its held-out
answers.  A folder that lacks a file or whose files are not of the course's shape is refused, in one sentence that
names the file and the line (src/kit/datafolder.py, which also names the thresholds row that grades it).
"""

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import srcpath

ROOT = Path(__file__).resolve().parents[1]
EXCLUDE_FILE = ROOT / "tools" / "release_exclude.txt"
STUDENT_README = ROOT / "tools" / "STUDENT_README.md"
START, END = "### START CODE HERE ###", "### END CODE HERE ###"
# The handout writes START_CODE_HERE, the course's files START CODE HERE without the closing ###: all of
# them mark a region.  Any other comment that starts like a marker (wrong number of #, stray words) is a
# typo that would leave a solution in the starter, so it stops the release.
MARKER = re.compile(r"### (START|END)[ _]CODE[ _]HERE( ###)?")


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
        if re.match(r"#+\s*(START|END)[ _]CODE[ _]HERE", s, re.IGNORECASE):  # a marker, maybe misspelt
            marker = MARKER.fullmatch(s)
            kind = marker.group(1) if marker else None
            if kind == "START":
                if start is not None:
                    raise ReleaseError(f"{name}:{i}: START marker inside the region opened at line {start}")
                start = i
            elif kind == "END":
                if start is None:
                    raise ReleaseError(f"{name}:{i}: END marker without a START")
                yield start, i
                start = None
            else:
                raise ReleaseError(f"{name}:{i}: malformed marker {s!r}; use exactly {START!r} or {END!r}")
    if start is not None:
        raise ReleaseError(f"{name}:{start}: START marker is never closed")


def strip_regions(text, name, placeholder=True):
    """The text with every solution region emptied (markers, full-line comments and a `pass` kept).  Without the
    placeholder, no `pass` either: a region as a student leaves it who deletes the `pass` and writes nothing (it
    may not compile, and is not checked)."""
    lines = text.splitlines(keepends=True)
    drop = set()
    placeholders = {}
    for start, end in regions(text, name):
        marker = lines[start - 1]
        indent = marker[: len(marker) - len(marker.lstrip())]
        for i in range(start + 1, end):  # 1-based lines strictly inside the region
            if not lines[i - 1].strip().startswith("#"):
                drop.add(i)
        placeholders[end] = f"{indent}pass\n" if placeholder else ""
    out = []
    for i, line in enumerate(lines, 1):
        if i in placeholders:
            out.append(placeholders[i])
        if i not in drop:
            out.append(line)
    result = "".join(out)
    if not placeholder:
        return result
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


# A line of tools/STUDENT_README.md that stands for a section of one of the instructor's Markdown files (the demo's
# results, docs/benchmarks.md), copied in by the release: the student's README shows it, and that file stays its
# one home.
INCLUDE = re.compile(r"^<!-- include (?P<file>[\w./-]+\.md): (?P<heading>.+?) -->$", re.MULTILINE)


def readme_section(readme, heading, name="README.md"):
    """The lead of the section of a Markdown text headed `## heading`: its text up to the next heading of any
    level.  Its dated sub-sections (### 2026-11-26: ...) are the instructor's measurement log, not the students'."""
    lines = readme.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip() == f"## {heading}"]
    if len(starts) != 1:
        raise ReleaseError(f"{name} has {len(starts)} sections headed '## {heading}'; "
                           "tools/STUDENT_README.md includes exactly one")
    end, fenced = len(lines), False
    for i in range(starts[0] + 1, len(lines)):
        fenced ^= lines[i].startswith("```")  # a "# comment" inside a code block is no heading
        if not fenced and re.match(r"#{1,6} ", lines[i]):
            end = i
            break
    return "".join(lines[starts[0] : end]).rstrip("\n")


def student_readme(root=ROOT):
    """tools/STUDENT_README.md with every include line replaced by that section of the file it names."""
    text = (root / "tools" / "STUDENT_README.md").read_text(encoding="utf-8")

    def section(m):
        source = root / m.group("file")
        if not source.is_file():
            raise ReleaseError(f"tools/STUDENT_README.md includes a section of {m.group('file')}, which is missing")
        return readme_section(source.read_text(encoding="utf-8"), m.group("heading"), m.group("file"))

    return INCLUDE.sub(section, text)


def data_set(data_dir=None, need_answers=False, root=ROOT):
    """The data set a release is built on (default src/data), checked, with its thresholds row: kit.datafolder's
    rule, which class grading and the experiment share.  A folder it refuses is a ReleaseError, its sentence
    unchanged."""
    srcpath.use(root / "src")
    from kit import datafolder

    try:
        return datafolder.data_set(data_dir or root / "src" / "data", need_answers=need_answers)
    except datafolder.DataError as e:
        raise ReleaseError(str(e)) from None


POINTS = "src/points.json"


def points_without_evidence(text):
    """The points table as the starter ships it: every bar, without the rows' "evidence", the instructor's notes
    on where each bar comes from (the runs measured, the attacks each bar stops and by how much): the grader never
    reads them, and a student has no use for a list of what was tried against the grader."""
    table = json.loads(text)
    for row in table["thresholds"]["rows"].values():
        row.pop("evidence", None)
    return json.dumps(table, indent=2, ensure_ascii=False) + "\n"


def build_student(out_dir, root=ROOT, data_dir=None):
    """Write the student starter into out_dir (which must not exist or be empty), on the data set in data_dir
    (default src/data); returns the file list."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ReleaseError(f"{out_dir} is not empty; choose a new folder")
    data = data_set(data_dir, root=root).folder
    from kit import course

    patterns = exclude_patterns(root / "tools" / "release_exclude.txt")
    judges = {f"src/{name}" for name in judge_only_files(root)}  # the hidden tests' own: the bundle adds them
    # src/data/'s own files are the data set's four (src/data/demo/, the demo's world, ships as it is)
    files = [f for f in tracked_files(root) if not is_excluded(f, patterns) and Path(f).parent != Path("src/data")
             and f not in judges]
    public = [f"src/data/{name}" for name in course.DATA_FILES.values()]
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".starter-", dir=out_dir.parent))  # same disk: rename is atomic
    try:
        for rel in files:
            src, dst = root / rel, staging / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if rel.endswith(".py"):
                dst.write_text(strip_regions(src.read_text(encoding="utf-8"), rel), encoding="utf-8")
            elif rel == POINTS:
                dst.write_text(points_without_evidence(src.read_text(encoding="utf-8")), encoding="utf-8")
            else:
                shutil.copy2(src, dst)
        for rel in public:
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(data / Path(rel).name, staging / rel)
        (staging / "README.md").write_text(student_readme(root), encoding="utf-8")
        files += public + ["README.md"]
        if out_dir.exists():
            out_dir.rmdir()
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(files)


# Gradescope's two entry points, real files of the repository (shellcheck-clean, tests/tools/test_release.py): setup.sh
# builds the image's Python (a venv with the CPU torch), run_autograder grades one submission with it.
ENTRY_POINTS = ("setup.sh", "run_autograder")


def ask_grader(root, expression):
    """The JSON value of `expression` over that checkout's grader, asked in a process of its own (importing it here
    would mix its modules with any other checkout's)."""
    ask = f"import json, grader, graderUtil; print(json.dumps({expression}))"
    out = subprocess.run([sys.executable, "-c", ask], cwd=root / "src", capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def judge_only_files(root=ROOT):
    """The files in src/ that only the hidden tests' judges read (grader.JUDGE_ONLY_FILES): never in the student
    starter, added to the bundle's grading copy."""
    return ask_grader(root, "grader.JUDGE_ONLY_FILES")


def grading_files(root=ROOT):
    """What the bundle's grading copy needs in src/: the grader's one list (grader.GRADING_FILES) and the module
    autograder_run.py takes the submitted files with.  Asked of that checkout's own grader, in a process of its
    own (importing it here would mix its modules with any other checkout's)."""
    return ask_grader(root, "graderUtil.grading_paths(grader.GRADING_FILES)") + ["kit/upload.py"]


def build_autograder(out_zip, root=ROOT, data_dir=None):
    """Write the Gradescope bundle on the data set in data_dir (default src/data): setup.sh, run_autograder,
    autograder_run.py, requirements.txt, starter/ (the student release and the hidden tests' judges), solution/
    (the reference package), answers/birth_test.tsv (the data set's held-out answers).  The zip is its owner's
    alone (0600)."""
    out_zip = Path(out_zip)
    answers = data_set(data_dir, need_answers=True, root=root).answers
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "bundle"
        build_student(bundle / "starter", root, data_dir)
        for name in judge_only_files(root):  # the grading copy holds the hidden tests' judges, the starter not
            shutil.copy2(root / "src" / name, bundle / "starter" / "src" / name)
        missing = [n for n in grading_files(root) if not (bundle / "starter" / "src" / n).is_file()]
        if missing:
            raise ReleaseError(f"the starter lacks {', '.join(missing)}, which grading needs: take it out of "
                               "tools/release_exclude.txt")
        solution = bundle / "solution"
        solution.mkdir()
        for path in sorted((root / "src" / "submission").glob("*.py")):
            shutil.copy2(path, solution / path.name)
        (bundle / "answers").mkdir()
        shutil.copy2(answers, bundle / "answers" / "birth_test.tsv")
        shutil.copy2(root / "requirements.txt", bundle / "requirements.txt")
        shutil.copy2(root / "tools" / "autograder_run.py", bundle / "autograder_run.py")
        shutil.copy2(root / "tools" / "srcpath.py", bundle / "srcpath.py")  # autograder_run.py imports it
        for name in ENTRY_POINTS:
            shutil.copy2(root / "tools" / "gradescope" / name, bundle / name)
        tmp_zip = Path(tmp) / "autograder.zip"
        with zipfile.ZipFile(tmp_zip, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(bundle.rglob("*")):
                if path.is_file():
                    info = zipfile.ZipInfo.from_file(path, path.relative_to(bundle).as_posix())
                    if path.name in (*ENTRY_POINTS, "run.sh"):
                        info.external_attr = 0o100755 << 16  # executable, as Gradescope expects
                    zf.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
        # the held-out answers and the solution: readable by their owner alone, whatever the umask (a copy that
        # moves to another disk keeps the mode)
        os.chmod(tmp_zip, 0o600)
        out_zip.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(tmp_zip), out_zip)
    return out_zip


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("student", help="write the student starter into OUT_DIR")
    s.add_argument("out_dir")
    a = sub.add_parser("autograder", help="write the Gradescope autograder bundle OUT.zip")
    a.add_argument("out_zip")
    a.add_argument("--force", action="store_true", help="replace OUT.zip if it exists")
    c = sub.add_parser("check", help="check the data folder a bundle would be built on, and name its thresholds "
                                     "row; writes nothing")
    for command in (s, a, c):
        command.add_argument("--data-dir", help="the data set's folder: its wiki.txt, birth_places_train.tsv, "
                             "birth_dev.tsv, birth_test_inputs.tsv and, for the bundle, birth_test.tsv, the "
                             "held-out answers (default src/data, the built-in world)")
    args = p.parse_args(argv)
    try:
        if args.command == "student":
            files = build_student(args.out_dir, data_dir=args.data_dir)
            print(f"wrote the student starter ({len(files)} files) to {args.out_dir}")
        elif args.command == "autograder":
            if Path(args.out_zip).exists() and not args.force:
                raise ReleaseError(f"{args.out_zip} exists; name a new file, or pass --force to replace it")
            build_autograder(args.out_zip, data_dir=args.data_dir)
            print(f"wrote the Gradescope autograder bundle to {args.out_zip}")
        data = data_set(args.data_dir, need_answers=args.command != "student")
        print(f"data: {data.folder}; accuracy thresholds: {data.describe()}")
    except ReleaseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
