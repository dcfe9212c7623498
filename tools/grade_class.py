#!/usr/bin/env python3
"""Grade a whole class: every submission in a folder, one CSV row each, and a list of possible copying.

  python tools/grade_class.py SUBMISSIONS_DIR --out grades.csv
  python tools/grade_class.py SUBMISSIONS_DIR --out grades.csv --regrade     # grade everything again
  python tools/grade_class.py SUBMISSIONS_DIR --out grades.csv --tests 1d 1e # only some tests (quick look)

A submission is a zip (the one `./run.sh collect_submission` makes; its files may sit at the top level, under
src/submission/ or under one folder) or a folder. Each one is graded exactly like a single student run: its
deliverables (the submission package's .py files, the six prediction files and the params files) are laid
into a fresh temporary copy of this repository's grader, and `python grader.py --json results.json` runs
there in a subprocess, with the grader's own per-test worker processes and time limits. Several submissions
are graded at a time (--jobs, default: the usable cores, fewer where the memory would not hold that many
gradings' limits; each grader is pinned to its share of them).

Outputs, beside --out (grades.csv):
  grades.csv          one row per submission: the coding points and the extra credit, each with its maximum,
                      their total, per-test points, accuracy of each prediction file
                      against the answers in the data folder, and the problems found (broken zip, missing
                      files, code that does not import, a grader that did not finish)
  grades.pairs.csv    pairs of submissions whose prediction files share more wrong answers than independent
                      runs do (right answers and blank lines are no evidence; what independent runs share is
                      each file's median with the class's other files), one row per file, with each file's
                      distinct answers: possible copying, for a person to look at (also printed)
  grades.similar.csv  pairs of submissions whose code, beyond what the starter gives everyone, is similar
                      (tools/code_similarity.py: copydetect's fingerprints, blind to names, comments, layout
                      and the order of functions): the pair's score, each file's, the most similar file
  grades.similar/     per flagged pair, its matching code side by side (HTML)
  grades.params.csv   pairs of submissions' params files within lineage.DRIFT_CEILING of each other's size
                      (tools/params_similarity.py: each file against every file of its variant of every other
                      submission; a copy, even finetuned a little further, stays that near its source), but
                      none of a deliverable most of the class holds that near another's (one computation)
  grades.behaviour.csv
                      pairs of submissions' params files that compute alike (their next-character
                      distributions on corpus lines and questions), far beyond the class's own pairs of that
                      deliverable: a copy disguised so that its weights look like another run's computes what
                      its source computes; the report says where the class computed alike and cannot tell
  grades.png          histograms of the totals, each part's points and the accuracies
  report.html         one page: the run's facts, a sortable roster, statistics per part and per test, the
                      histograms, the groups that flagged pairs join, the flagged pairs (linked to their
                      side-by-side pages) and the submissions that were not graded, with the reason; open it in
                      a browser
  grades.cache/       one result per submission; a re-run grades only new or changed submissions
                      (--regrade grades all of them again)
Every output is its owner's alone (files 0600, folders 0700), whatever the umask: they hold students' grades
and code.

The reference solution for the hidden tests is this repository's src/submission (or --solution-dir); the
held-out answers come from the data folder (--data-dir, default src/data).

Run as root, each grader runs the student's code as an unprivileged user, exactly as on Gradescope (see
docs/security.md): every grader picks and holds a user id of its own, so that killing what one submission
left behind never touches another, nor a grader someone else runs on the machine.  The reference and the
data are copied into a folder only root can read; a warning names the originals if that user could read them.
"""

import argparse
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

import srcpath
from srcpath import SRC

srcpath.use(SRC)
from kit.course import PARAMS_FILES, PREDICTION_FILES  # noqa: E402  (the one list of deliverables)
import graderUtil  # noqa: E402  (the grader's harness: who may read what, as root)
from kit import upload  # noqa: E402  (which files of an upload are graded: the same rule as on Gradescope)
from kit import datafolder  # noqa: E402  (which data set: checked, and its thresholds row, as the release does)
from grader import GOLD_FILES, GRADING_FILES  # noqa: E402  (the answer files; what a grading copy holds)
# what the outputs are made of (tools/class_report.py): this script grades, that module reports
from class_report import (load_answers, private_path, submission_code, submission_predictions,  # noqa: E402
                          write_report)
from grading.worker import THREAD_ADDRESS_SPACE, WORKER_ADDRESS_SPACE  # noqa: E402  (a grading's memory limits)
import params_similarity  # noqa: E402  (which submissions' params files descend one from another)

PIN = ("import os, sys; os.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(',')}); "
       "os.execv(sys.argv[2], sys.argv[2:])")  # run the rest of the command line on the given cores
CACHE_VERSION = 2  # 2: results with an explicit status per test


class UserError(Exception):
    """A mistake in how the tool was called: one sentence, exit status 2."""


# ----------------------------------------------------------------------------------------------------------
# Reading submissions.


OPTIONAL_CODE = ["attention_exploration.py"]  # the written part's code: extra credit, not required


def code_files():
    """The submission package's Python files (the reference's list)."""
    return sorted(p.name for p in (SRC / "submission").glob("*.py"))


def student_code_files():
    """The seven files of the submission package every student hands in (the written part's code is optional):
    the files that are required, and that the code comparison reads."""
    return [n for n in code_files() if n not in OPTIONAL_CODE]


def deliverable_names():
    return upload.deliverable_names(code_files())


def find_submissions(folder):
    """(name, path) of every zip and sub-folder of folder, sorted by name; other files are ignored.  A symbolic
    link is listed too (as a zip where its name ends in .zip), never followed: its row says why it is not
    graded (upload.Upload refuses it)."""
    subs = []
    for path in sorted(Path(folder).iterdir()):
        if path.name.startswith(".") or path.name == "__MACOSX":
            continue
        if path.suffix.lower() == ".zip" and (path.is_symlink() or path.is_file()):
            subs.append((path.stem, path))
        elif path.is_symlink() or path.is_dir():
            subs.append((path.name, path))
    return subs


def fingerprint(path):
    """Changes when the submission changes: the name, size and modification time of the zip, or of each file of
    a folder as upload.Upload lists it (the same walk, with its limits).  Never raises: an upload that cannot
    be read is fingerprinted by the reason and its own entry's time."""
    h = hashlib.sha256()
    try:
        st = os.lstat(path)
        h.update(f"{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        if stat.S_ISDIR(st.st_mode):
            with upload.Upload(path) as up:
                for rel, stamp in sorted(up.stamps.items()):
                    h.update(f"{rel}\0{stamp}\n".encode("utf-8", "surrogateescape"))
    except (OSError, ValueError) as e:  # upload.UploadError is a ValueError
        h.update(f"unreadable: {e}".encode("utf-8", "backslashreplace"))
    return h.hexdigest()


def unpack(path, dest):
    """Copy the submission's deliverables from a zip or a folder into the folder dest, chosen as every grading
    path chooses them (src/kit/upload.py).  Returns (names copied, problems); a note says which copy was graded
    where the upload holds two different ones.  An upload that cannot be graded (broken, past upload.py's
    limits, a link) raises upload.UploadError, whose message is one sentence."""
    choice = upload.copy_deliverables(path, deliverable_names(), dest)
    if not choice.chosen:
        return [], ["no deliverables found (no submission .py, .predictions or .params files)"]
    return sorted(choice.chosen), list(choice.notes)


# ----------------------------------------------------------------------------------------------------------
# Grading one submission.


IMPORT_PROBLEM = re.compile(r"(submission/\w+\.py has a syntax error[^\n]*"
                            r"|importing submission/\w+\.py (?:raised|did not finish)[^\n]*)")


def import_problems(results):
    """The distinct import failures the grader reported (a missing file is listed separately)."""
    seen = []
    for t in results.get("tests", []):
        for m in IMPORT_PROBLEM.findall(t.get("output", "")):
            if m not in seen:
                seen.append(m)
    return seen


def grade_one(name, path, cfg, cpus):
    """Grade one submission in a fresh temporary folder.  Returns its cache record, whatever happens: what the
    submission causes, and a failure of grade_class's own, is a problem of that row alone (the run goes on).
    As root, the grader picks a worker user id of its own (grading/users.py)."""
    record = {"version": CACHE_VERSION, "name": name, "source": str(path), "fingerprint": fingerprint(path),
              "graded": False, "results": None, "problems": [], "files": [], "seconds": 0.0}
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="grade_class_")
    try:
        return _grade_in(tmp, name, path, cfg, cpus, record, started)
    except Exception as e:  # noqa: BLE001 - a bug of grade_class's: this row says so, the others are graded
        record["graded"], record["results"] = False, None
        record["problems"].append(f"grade_class failed on this submission, a bug of grade_class's "
                                  f"({type(e).__name__}: {upload.shown(str(e))}); not graded")
        return record
    finally:
        for line in graderUtil.remove_folder(tmp):
            record["problems"].append(f"the grading folder could not be removed: {line}")


def _grade_in(tmp, name, path, cfg, cpus, record, started):
    """grade_one's work, in the root-only folder tmp."""
    src = Path(tmp) / "src"
    # the grader's files of this repository (grader.GRADING_FILES), never the instructor's submission: a file
    # the student left out must be missing, not the reference's
    src.mkdir()
    for name in cfg["grader_files"]:  # names relative to src/ (grading/runner.py, ...)
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SRC / name, src / name)
    sub = src / "submission"
    try:
        copied, problems = unpack(path, sub)
    except upload.UploadError as e:
        record["problems"].append(f"cannot read the submission: {e}; not graded")
        return record
    record["files"] = copied
    record["problems"] += problems
    missing = [n for n in cfg["required"] if n not in copied]
    record["missing"] = missing  # the roster's few words (class_report.missing_words); the problems list them all
    if missing:
        record["problems"].append("missing: " + ", ".join(missing))
    if not any(n.endswith(".py") for n in copied):
        record["problems"].append("no Python files: not graded")
        return record
    # --verbose: the TA's view, whose header names the worker user id (stop reclaims it)
    cmd = [sys.executable, str(src / "grader.py"), "--json", str(Path(tmp) / "results.json"), "--verbose",
           "--data-dir", str(cfg["data_dir"]), "--solution-dir", str(cfg["solution_dir"]),
           "--timeout-scale", str(cfg["timeout_scale"])] + list(cfg["tests"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADER_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if cpus and hasattr(os, "sched_setaffinity"):
        # its share of the cores, so that parallel graders do not compete (set by a tiny launcher that
        # then becomes the grader: the grader and its workers see only these cores from the start)
        cmd = [sys.executable, "-c", PIN, ",".join(map(str, sorted(cpus)))] + cmd
    # a session of its own: on a timeout the grader and every worker it started are killed together
    proc = subprocess.Popen(cmd, cwd=str(src), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=cfg["outer_timeout"])
    except subprocess.TimeoutExpired:
        stdout, stderr = stop(proc)
        record["problems"].append(f"the grader did not finish within {cfg['outer_timeout']:.0f} s; not graded")
        record["seconds"] = time.monotonic() - started
        return record
    record["seconds"] = time.monotonic() - started
    out = Path(tmp) / "results.json"
    if proc.returncode != 0 or not out.is_file():
        said = stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:] or ["no output"]
        try:  # the grader's own sentence, where it could write one
            said = json.loads(out.read_text(encoding="utf-8"))["output"].splitlines()[-1:] or said
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        record["problems"].append(f"the grader failed (exit status {proc.returncode}: {upload.shown(said[0], 300)}); "
                                  "not graded")
        return record
    record["results"] = json.loads(out.read_text(encoding="utf-8"))
    record["graded"] = True
    record["problems"] += import_problems(record["results"])
    return record


STOP_GRACE = 60  # seconds a grader has, once interrupted, to kill its workers and remove what they left


def stop(proc):
    """End a grader that ran past the outer time limit: interrupted first (SIGINT: its clean-up runs, as on
    Ctrl-C), killed with its process group after STOP_GRACE.  A grader killed that way leaves what its workers
    left: the worker user id it named in its header is then held here, its processes killed and its leftovers
    removed (graderUtil.reclaim; an id another grader holds by then is that grader's, and is left alone).
    Returns the grader's (stdout, stderr)."""
    try:
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        # the header's line, the first of its kind (a test's message, printed later, cannot come before it);
        # and reclaim acts only on an id no grader holds, whatever the line names
        found = re.search(rb"^student code runs as uid (\d+),", stdout or b"", re.M)
        if found:
            for line in graderUtil.reclaim(int(found.group(1))):
                print(f"warning: after a grader was killed: {line}", file=sys.stderr)
        return stdout, stderr


# ----------------------------------------------------------------------------------------------------------
# Entry point.


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("submissions", help="folder of submissions (zips and/or folders)")
    p.add_argument("--out", default="grades.csv", help="the CSV to write (default grades.csv)")
    p.add_argument("--data-dir", help="folder with wiki.txt and the birthplace TSVs, including the held-out "
                                      "birth_test.tsv (default src/data)")
    p.add_argument("--solution-dir", help="the reference solution package folder (default src/submission)")
    p.add_argument("--jobs", type=int, default=None,
                   help="submissions graded at a time (default: the usable cores, and no more than the memory "
                        f"holds: each grading's workers may take {WORKER_ADDRESS_SPACE / (1 << 30):g} GiB, plus "
                        f"{THREAD_ADDRESS_SPACE >> 20} MiB per core)")
    p.add_argument("--timeout-scale", type=float, default=1.0, help="multiply every time limit of the grader")
    p.add_argument("--tests", nargs="+", default=[], help="grade only these test ids or parts (e.g. 1d 1e-0-basic)")
    p.add_argument("--regrade", action="store_true", help="grade every submission again, ignoring the cache")
    p.add_argument("--compare-reference", action="store_true",
                   help=f"compare each submission's code with the reference solution's too, named {REFERENCE!r}")
    p.add_argument("--starter", action="append", default=[], metavar="DIR",
                   help="another starter's folder of the seven files (the one past submissions were made from): its "
                        "code never counts in the comparison, as this starter's does not (may be given more than once)")
    p.add_argument("--compare-past", action="append", default=[], metavar="DIR",
                   help="a folder of past terms' submissions (zips and/or folders) to compare each submission's code "
                        f"with too, named {PAST!r} + their names; never graded (may be given more than once)")
    return p


REFERENCE = "(reference solution)"  # the code comparison's names of what is not this class's
PAST = "(past) "


def past_label(folder):
    """What the labels of a --compare-past folder's submissions begin with: PAST and the folder's own name (a
    resolved path's: "." and "subs/" name it too)."""
    return f"{PAST}{Path(folder).resolve().name}/"


def other_starters(folders):
    """{label: text} of the seven files of each other starter's folder (--starter), whose code never counts, or a
    UserError where a folder holds none of them."""
    out = {}
    for folder in map(Path, folders):
        found = {name: folder / name for name in student_code_files() if (folder / name).is_file()}
        if not found:
            raise UserError(f"--starter {folder} holds none of the seven student files; give the folder that holds "
                            "that starter's dataset.py, model.py, ...")
        out.update({f"{name} ({folder})": path.read_text(encoding="utf-8", errors="replace")
                    for name, path in found.items()})
    return out


def compared_with(args, others):
    """What the class's code was compared with besides itself, in a few words."""
    said = ["the reference solution"] if REFERENCE in others else []
    for folder in map(Path, args.compare_past):
        count = sum(1 for label in others if label.startswith(past_label(folder)))
        said.append(f"{count} past submissions in {folder}")
    return "; ".join(said) or "nothing beyond the class (--compare-reference, --compare-past DIR)"


def comparison_code(args, solution_dir, names):
    """{label: {file: text}} of the code each submission is compared with besides the class's (--compare-reference,
    --compare-past), or a UserError.  names: the class's submissions, whose names the labels must not take."""
    seven = student_code_files()
    others = {}
    if args.compare_reference:
        others[REFERENCE] = {f: (solution_dir / f).read_text(encoding="utf-8") for f in seven
                             if (solution_dir / f).is_file()}
    labelled = {}
    for folder in map(Path, args.compare_past):
        if not folder.is_dir():
            raise UserError(f"--compare-past {folder} is not a folder; give the folder that holds past submissions")
        if past_label(folder) in labelled:  # their submissions' labels would be the same: one would hide the other
            raise UserError(f"--compare-past {labelled[past_label(folder)]} and {folder} have the same name, which "
                            "labels their submissions; give folders of different names (the term's, e.g. 2025-spring)")
        labelled[past_label(folder)] = folder
    for label, folder in labelled.items():
        for name, path in find_submissions(folder):
            code = submission_code(path, deliverable_names(), seven)
            if code:
                others[f"{label}{name}"] = code
    taken = sorted(set(others) & set(names))
    if taken:
        raise UserError(f"a submission is named {taken[0]!r}, as grade_class names what it compares the class with; "
                        "rename it")
    return others


def usable_cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))


def physical_memory():
    """Bytes of memory of this machine, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def default_jobs(cores, memory):
    """Submissions graded at a time without --jobs: one per usable core, and only as many as the memory holds.
    Each grading's workers may take WORKER_ADDRESS_SPACE plus THREAD_ADDRESS_SPACE per core it computes on (the
    grader's own limits, grading/worker.py): jobs gradings on `cores` cores may take jobs * WORKER_ADDRESS_SPACE
    + cores * THREAD_ADDRESS_SPACE together (64 cores and 16 GiB: 1 at a time, not 64)."""
    if memory is None:
        return cores
    fits = (memory - cores * THREAD_ADDRESS_SPACE) // WORKER_ADDRESS_SPACE
    return max(1, min(cores, fits))


def list_tests(grader_dir, tests):
    """(ids, sum of time limits) of the selected tests, from `grader.py --list --json`."""
    r = subprocess.run([sys.executable, str(grader_dir / "grader.py"), "--list", "--json", "-", *tests],
                       capture_output=True, text=True, cwd=str(grader_dir))
    if r.returncode != 0:
        raise UserError((r.stderr.strip().splitlines() or ["grader.py --list failed"])[-1])
    listed = json.loads(r.stdout)
    return [t["id"] for t in listed], sum(t["timeout"] for t in listed)


def kit_version():
    """The kit's commit that graded (git describe of this checkout; "-dirty" with changes not committed), or why
    there is none."""
    try:
        r = subprocess.run(["git", "-C", str(SRC.parent), "describe", "--always", "--dirty"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (git is not installed)"
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "unknown (not a git checkout)"


def main(argv=None):
    for stream in (sys.stdout, sys.stderr):  # a name from a submission never stops a print (surrogates)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def run(args):
    folder = Path(args.submissions)
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder; give the folder that holds the submissions (zips or folders)")
    out = Path(args.out).resolve()
    if not out.parent.is_dir():
        raise UserError(f"the folder of --out, {out.parent}, does not exist; create it or choose another path")
    try:  # the one rule for a data folder (kit/datafolder.py): the release and the experiment check it the same way
        data = datafolder.data_set(args.data_dir or SRC / "data", need_answers=True)
    except datafolder.DataError as e:
        raise UserError(str(e)) from None
    data_dir = data.folder
    solution_dir = Path(args.solution_dir).resolve() if args.solution_dir else SRC / "submission"
    if not (solution_dir / "model.py").is_file():
        raise UserError(f"--solution-dir {solution_dir} holds no model.py; give the reference solution's folder")
    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    subs = find_submissions(folder)
    if not subs:
        raise UserError(f"{folder} holds no submissions (zip files or folders)")
    names = [n for n, _ in subs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"two submissions share the name {dupes[0]} (a zip and a folder?); rename one")

    try:  # the code comparison's library and its boilerplate (the starter's code), before hours of grading
        import code_similarity
    except ImportError:
        raise UserError("the code comparison needs copydetect: pip install -r tools/requirements.txt") from None
    from release import ReleaseError

    try:
        boilerplate = code_similarity.boilerplate_code(solution_dir, student_code_files())
    except ReleaseError as e:
        raise UserError(f"--solution-dir: {e}; the starter's code, which the code comparison leaves out, "
                        "cannot be made from it") from None
    boilerplate.update(other_starters(args.starter))
    others = comparison_code(args, solution_dir, names)

    cpus = usable_cpus()
    jobs = args.jobs or default_jobs(len(cpus), physical_memory())
    cache = out.with_name(out.stem + ".cache")
    cache.mkdir(mode=0o700, exist_ok=True)
    os.chmod(cache, 0o700)  # its records hold the grades: its owner's alone, as the other outputs

    root = graderUtil.privileged()
    if root:
        stranger = graderUtil.WORKER_UIDS.start  # the mode bits as they apply to a user who owns nothing here
        for what, where in (("the held-out answers", data_dir / GOLD_FILES["test"]),
                            ("the reference solution", solution_dir)):
            if where.exists() and graderUtil.readable_by(where, stranger, stranger):
                print(f"warning: {what} at {where} can be read by any user, the graders' unprivileged one "
                      "included (make the folder readable by its owner only)")
    with tempfile.TemporaryDirectory(prefix="grade_class_ref_") as work:  # mode 0700: root's alone
        # the reference solution as the package the grader's hidden tests import, without trained files
        solution = Path(work) / "solution"
        shutil.copytree(solution_dir, solution,
                        ignore=shutil.ignore_patterns("__pycache__", "*.params", "*.predictions", "*.tmp*"))
        grading_data = data_dir
        if root:  # the answers where only root can read them (the grader's workers get a copy without them)
            grading_data = Path(work) / "data"
            shutil.copytree(data_dir, grading_data, symlinks=True)
        test_ids, limits = list_tests(SRC, args.tests)
        cfg = {"grader_files": graderUtil.grading_paths(GRADING_FILES), "data_dir": grading_data,
               "solution_dir": solution, "timeout_scale": args.timeout_scale, "tests": args.tests,
               # the grader enforces each test's limit; this only guards against a grader that never ends
               "outer_timeout": (limits + 20 * len(test_ids)) * args.timeout_scale + 180,
               "required": student_code_files() + PREDICTION_FILES + PARAMS_FILES}
        settings = json.dumps({"tests": args.tests, "data": str(data_dir), "solution": str(solution_dir),
                               "scale": args.timeout_scale})

        records, todo = {}, []
        for name, path in subs:
            cached = cache / f"{name}.json"
            if cached.is_file() and not args.regrade:
                try:
                    rec = json.loads(cached.read_text(encoding="utf-8"))
                    if (rec.get("version") == CACHE_VERSION and rec.get("fingerprint") == fingerprint(path)
                            and rec.get("settings") == settings):
                        records[name] = rec
                        continue
                except (OSError, ValueError):
                    pass
            todo.append((name, path))
        print(f"data: {data_dir}; accuracy thresholds: {data.describe()}")
        print(f"{len(subs)} submissions in {folder}: {len(records)} already graded (in {cache.name}/), "
              f"{len(todo)} to grade, {min(jobs, max(1, len(todo)))} at a time")

        # slots of cores: slot k gets every jobs-th usable core (one core each when jobs == cores)
        slots = queue.Queue()
        for k in range(jobs):
            slots.put(set(cpus[k::jobs]) or {cpus[k % len(cpus)]})

        def task(name, path):
            share = slots.get()
            try:
                rec = grade_one(name, path, cfg, share)
            finally:
                slots.put(share)
            rec["settings"] = settings
            with private_path(cache / f"{name}.json") as tmp:  # the grades: its owner's alone, as every output
                Path(tmp).write_text(json.dumps(rec, indent=1), encoding="utf-8")
            return name, rec

        if todo:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(task, n, p) for n, p in todo]
                for fut in tqdm(as_completed(futures), total=len(futures), desc="grading", unit="submission"):
                    name, rec = fut.result()
                    records[name] = rec

    answers = load_answers(data_dir)
    left_out = {name: [] for name, _ in subs}  # files too large to compare: warned about and on the roster
    preds = {name: submission_predictions(path, deliverable_names(), left_out[name]) for name, path in subs}
    seven = student_code_files()
    code = {name: submission_code(path, deliverable_names(), seven, left_out[name]) for name, path in subs}
    facts = [("data", f"{data_dir}; accuracy thresholds: {data.describe()}"),
             ("graded", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
             ("kit", kit_version()),
             ("tests", f"{len(test_ids)}: " + (" ".join(args.tests) if args.tests else "all of grader.py's")),
             ("code also compared with", compared_with(args, others))]
    # the class's params files, each against every other submission's (a process of its own: untrusted bytes)
    print(f"comparing the params files of {len(subs)} submissions")
    params = params_similarity.compare_class(subs, len(subs) * len(PARAMS_FILES), data_dir)
    write_report(out, [(n, records[n]) for n in names], test_ids, preds, answers, code=code,
                 boilerplate=boilerplate, code_files=seven, facts=facts, others=others, params=params,
                 left_out=left_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
