"""grader.py's command line: pick the tests, set up the sandbox as root, run them, print the summary and write
results.json; with --worker, be a worker process (--fork-server: the process that forks them)."""

import argparse
import json
import os
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grading import forkserver
from grading import users  # users.privileged(), looked up when called: one patch of it reaches every caller
from grading.points import describe_row, find_solution, load_points, select_thresholds
from grading.registry import POINTS_FILE, REGISTRY, SRC, settings
from grading.report import (PENDING_MESSAGE, VISIBILITIES, concealed, first_screen, format_summary, points_of,
                            results_json)
from grading.runner import Runner, kill_live_workers
from grading.sandbox import Sandbox
from grading.vouching import vouch
from grading.worker import THREAD_ADDRESS_SPACE, WORKER_ADDRESS_SPACE, WORKER_PROCESSES, worker_main
from kit.fileio import write_text_atomic

JUDGE_THREADS = 64  # a judge's threads (torch's pools: about the cores + 6), counted in the cgroup's bound


def build_parser():
    p = argparse.ArgumentParser(description=settings.description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tests", nargs="*", help="test ids (1e-0-basic), question parts (1e) or questions (1)")
    p.add_argument("--json", metavar="PATH", help="write Gradescope's results.json to PATH (with --list: the tests "
                                                 "as JSON, '-' for standard output)")
    p.add_argument("--data-dir", default=os.environ.get("GRADER_DATA_DIR"),
                   help="the data folder (default src/data; env GRADER_DATA_DIR)")
    p.add_argument("--submission-dir", default=os.environ.get("GRADER_SUBMISSION_DIR"),
                   help="the student's package folder (default src/submission)")
    p.add_argument("--predictions-dir", help="where the *.predictions files are (default: the submission folder)")
    p.add_argument("--solution-dir", default=os.environ.get("GRADER_SOLUTION_DIR"),
                   help="the reference solution package folder (default: an importable package `solution`)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes run in parallel (default: 2)")
    p.add_argument("--timeout-scale", type=float, default=float(os.environ.get("GRADER_TIMEOUT_SCALE", "1")),
                   help="multiply every time limit (for slow machines; env GRADER_TIMEOUT_SCALE)")
    p.add_argument("--hidden-visibility", choices=list(VISIBILITIES),
                   help="who sees the hidden tests' results, in Gradescope's words (default: points.json's "
                        "hidden_visibility; 'visible', the course's behaviour, if it has none)")
    p.add_argument("--list", action="store_true", help="list the tests and exit")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the output of your code for failed tests and, as root, the sandbox's details (the "
                        "worker user id, its cgroup's bounds): the TA's view")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--fork-server", type=int, metavar="FD", help=argparse.SUPPRESS)
    return p


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def matches(tid, selector):
    part = tid.split("-")[0]
    return tid == selector or part == selector or part.rstrip("abcdefghijklmnopqrstuvwxyz") == selector


def in_order(tids, selectors=()):
    """The tests the selectors choose (all without any), in the grader's order: by question part, a part's basic
    tests before its hidden ones, then by number."""
    order = sorted(tids, key=lambda t: (t.split("-")[0], t.rsplit("-", 1)[-1] != "basic",
                                        int(t.split("-")[1]) if t.split("-")[1].isdigit() else 0, t))
    return [t for t in order if not selectors or any(matches(t, s) for s in selectors)]


def main(argv=None):
    """grader.py's command line.  As root, the sandbox (the worker user's copies, folders and processes) is
    cleaned up whatever happens, an error of the grader's included; and whatever happens, --json's file says
    what did (a failure of the grader's own, in one sentence, with a score of 0)."""
    opened = []  # the Sandbox, once there is one
    try:
        return _main(argv, opened)
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - a bug of the grader's, or an interruption
        interrupted = isinstance(e, KeyboardInterrupt)
        if not interrupted:
            print(f"error: the grader failed (a bug of the grader's, not of the submission):\n"
                  f"{traceback.format_exc()}", file=sys.stderr)
        json_path = _json_argument(argv)
        if json_path:
            what = ("The grading was interrupted before it finished" if interrupted else
                    f"The grader failed before it finished, a bug of the grader's, not of the submission "
                    f"({type(e).__name__}: {str(e)[:300]})")
            write_results(json_path, {"score": 0, "output": f"{what}; please tell the course staff.",
                                      "tests": []})
        return 130 if interrupted else 1
    finally:
        for sandbox in opened:  # closed already, unless _main failed: then it is closed here
            for line in sandbox.close():
                print(f"warning: after the grading: {line}", file=sys.stderr)


def _json_argument(argv):
    """--json's path from the command line, without argparse (which may be what failed); None without one."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for k, arg in enumerate(argv):
        if arg == "--json" and k + 1 < len(argv) and argv[k + 1] != "-":
            return argv[k + 1]
        if arg.startswith("--json=") and arg != "--json=-":
            return arg.split("=", 1)[1]
    return None


def write_results(path, data):
    """Write results.json atomically (kit/fileio.py): an interrupted run never leaves half a file.  An error
    writing it is said on stderr."""
    try:
        write_text_atomic(path, json.dumps(data, indent=2))
    except OSError as e:
        print(f"error: could not write {path}: {e}", file=sys.stderr)


class UsageError(Exception):
    """A mistake in the command line or the grader's inputs: one sentence on stderr, exit status 2."""


def _main(argv, opened):
    """The phases of a grading: parse, plan (which tests, with which points), list them or set up (the inputs,
    and as root the sandbox), run, report."""
    args = build_parser().parse_args(argv)
    if args.worker:
        return worker_main()
    if args.fork_server is not None:
        return forkserver.serve(args.fork_server)
    started = time.monotonic()
    try:
        table, specs, order = plan(args)
        if args.list:
            list_tests(specs, order, args.json)
            return 0
        setup = set_up(args, table, specs, order, opened)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n".join(shown_header(args, setup)), flush=True)
    results = run(args, specs, order, setup)
    report(args, specs, order, setup, results, time.monotonic() - started)
    return 0


def shown_header(args, setup):
    """The header's lines as this run shows them: the sandbox's details (setup.details) only under --verbose."""
    return setup.header + (setup.details if args.verbose else [])


def plan(args):
    """(points table, {id: Spec with its points}, the selected ids in the grader's order)."""
    try:
        table = load_points()
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the points table {POINTS_FILE}: {e}") from None
    specs = {}
    for tid, spec in REGISTRY.items():
        if tid not in table["tests"]:
            raise UsageError(f"test {tid} has no points in {POINTS_FILE}")
        spec.points = int(table["tests"][tid])
        specs[tid] = spec
    unknown = [s for s in args.tests if not in_order(specs, [s])]
    if unknown:
        raise UsageError(f"no test matches {', '.join(unknown)}; python grader.py --list shows them")
    return table, specs, in_order(specs, args.tests)


def list_tests(specs, order, json_path):
    """--list: the selected tests as text, or with --json as data for tools (grade_class), never parsed from
    text ('-': standard output)."""
    if json_path:
        listed = [{"id": tid, "part": specs[tid].part, "kind": specs[tid].kind, "points": points_of(specs[tid]),
                   "timeout": specs[tid].timeout, "extra_credit": specs[tid].extra_credit, "info": specs[tid].info,
                   "description": specs[tid].description, "vouched_by": list(specs[tid].vouched_by),
                   "course_id": specs[tid].course_id}
                  for tid in order]
        text = json.dumps(listed, indent=1)
        if json_path == "-":
            print(text)
        else:
            write_text_atomic(json_path, text + "\n")
        return
    for tid in order:
        s = specs[tid]
        pts = "info" if s.info else f"{s.points} pt" + ("" if s.points == 1 else "s")
        ec = ", extra credit" if s.extra_credit and s.points else ""
        ec = ", practice" if not s.info and not s.points else ec
        # the course grader's tests have its ids; a part of one names it
        course = "the course's" if s.course_id == tid else f"part of {s.course_id}" if s.course_id else ""
        print(f"{tid:<12} {course:<18} {pts:>7}  {s.timeout:>5g} s  {s.description}{ec}")


def set_up(args, table, specs, order, opened):
    """The grading's inputs (the folders, the reference, the held-out answers, the row of thresholds), the
    header that says what they are, and as root the sandbox (appended to `opened`, which main closes)."""
    submission_dir = Path(args.submission_dir).resolve() if args.submission_dir else SRC / "submission"
    predictions_dir = Path(args.predictions_dir).resolve() if args.predictions_dir else submission_dir
    data_dir = Path(args.data_dir).resolve() if args.data_dir else SRC / "data"
    try:
        solution_dir = find_solution(args.solution_dir)
    except ValueError as e:
        raise UsageError(e) from None
    have_answers = bool(settings.held_out) and all((data_dir / name).is_file() for name in settings.held_out)
    row_name, row, recognised = select_thresholds(table["thresholds"], data_dir)
    jobs = args.jobs or max(1, min(2, usable_cpus()))

    header = [f"Grading {submission_dir}", f"data: {data_dir}" + ("" if data_dir.is_dir() else " (missing)")]
    if any(specs[t].hidden for t in order):
        header.append("reference solution: " + (str(solution_dir) if solution_dir else
                                                  "not available - the hidden tests that compare with it are pending"))
        header.append("held-out answers: " + ("present" if have_answers else
                                             "not available - the hidden prediction tests are pending"))
        if have_answers:
            header.append(f"accuracy thresholds: {describe_row(row_name, row, recognised)}")
        own = None if args.submission_dir else submission_dir  # the checkout's own src/submission
        header += first_screen(specs, order, solution_dir, have_answers, own)
    setup = argparse.Namespace(submission_dir=submission_dir, predictions_dir=predictions_dir, data_dir=data_dir,
                               solution_dir=solution_dir, have_answers=have_answers, row_name=row_name, row=row,
                               jobs=jobs, header=header, details=[], sandbox=None,
                               visibility=args.hidden_visibility or table["hidden_visibility"])
    if users.privileged():
        setup.sandbox = open_sandbox(args, setup)
        opened.append(setup.sandbox)
    return setup


def open_sandbox(args, setup):
    """As root: the worker user's copies and folders, and the grading's cgroup (cgroups.py): the cores this grader
    was given; the memory of --jobs workers (or judges) at a time and of what they leave running; the worker
    user's processes and the judges' threads.  Warns in the header where the worker user could read a secret."""
    jobs, data_dir = setup.jobs, setup.data_dir
    memory = jobs * (WORKER_ADDRESS_SPACE + max(1, usable_cpus() // jobs) * THREAD_ADDRESS_SPACE)
    limits = {"memory": memory, "processes": WORKER_PROCESSES + JUDGE_THREADS * jobs}
    try:
        sandbox = Sandbox(setup.submission_dir, setup.predictions_dir, data_dir,
                          public=[n for n in settings.public_data if n not in settings.held_out], limits=limits)
    except (ValueError, OSError) as e:
        raise UsageError(f"running as root, the grader runs student code as an unprivileged user: {e}") from None
    header = setup.header
    # the sandbox's details mean nothing to a student: the TA's --verbose shows them (grade_class reads the user id)
    setup.details += [f"student code runs as {sandbox.user}, without access to the held-out answers, the "
                      "reference solution and the results", sandbox.group.describe()]
    secrets_ = [("the held-out answers", data_dir / name) for name in settings.held_out
                if (data_dir / name).is_file()]
    secrets_ += [("the reference solution", setup.solution_dir),
                 ("the results folder", Path(args.json).resolve().parent if args.json else None)]
    for what, path in secrets_:
        if path is not None and users.readable_by(path, sandbox.uid, sandbox.gid):
            header.append(f"warning: {sandbox.user} can read {what} ({path}): make it readable by root only")
    sandbox.private = [str(path) for _, path in secrets_ if path is not None] + [str(data_dir)]
    return sandbox


def run(args, specs, order, setup):
    """Every selected test's result: pending where its reference or answers are absent, else run in the
    workers and decided by the judges, each printed as it comes."""
    sandbox, visibility = setup.sandbox, setup.visibility
    results = {}
    print_lock = threading.Lock()
    # on a terminal, one line that each result rewrites ("[12/38] 1e-3-basic passed"), erased before the ordered
    # summary; elsewhere (a log, Gradescope's, a notebook's cell) a line per result on stderr, which a log of a
    # stopped grading keeps, and stdout shows the header, then the summary: the reasons, by part
    progress = {"done": 0, "total": 0, "live": sys.stdout.isatty()}

    def on_result(r):
        spec = specs[r["id"]]
        r = dict(r)
        if spec.info and r["status"] == "passed":
            r["status"] = "info"
        r["score"] = points_of(spec) if r["status"] == "passed" else 0
        with print_lock:
            results[r["id"]] = r
            if concealed(spec, visibility):  # Gradescope's stdout: nothing of a hidden result
                line = f"{r['id']:<14} graded"
            else:
                line = f"{r['id']:<14} {r['status']:<7} ({r.get('seconds', 0):.1f} s)"
            progress["done"] += 1
            if progress["live"]:
                print(f"\r\033[K  [{progress['done']}/{progress['total']}] {line}", end="", flush=True)
            else:  # a log's line, on stderr: what stdout shows first is the header, then the summary's reasons
                print(f"  {line}", file=sys.stderr, flush=True)

    to_run = []
    for tid in order:
        spec = specs[tid]
        missing = [n for n in spec.needs
                   if (n == "solution" and not setup.solution_dir) or (n == "answers" and not setup.have_answers)]
        if missing:
            note = ""
            pending_note = getattr(spec.fn, "pending_note", None)  # a local check of the inputs, never a verdict
            if pending_note:
                try:
                    # as root, on the sandbox's copy: a link in the submission is never followed
                    note = pending_note(sandbox.predictions_dir if sandbox else setup.predictions_dir,
                                        setup.data_dir, shown=setup.predictions_dir, row=setup.row)
                except OSError:
                    note = ""
            results[tid] = {"id": tid, "status": "pending", "message": PENDING_MESSAGE + note, "output": "",
                            "seconds": 0.0, "score": 0}
        else:
            to_run.append(tid)

    groups = {}
    for tid in to_run:
        # one worker per group (isolation): by default a question part
        groups.setdefault(specs[tid].group, []).append(tid)
    # student's workers: the submission and the data without the held-out answers, no reference solution
    # (copies in the sandbox as root); judges: the reference, the answers, and the submission's files
    seen = sandbox or setup
    jobs = setup.jobs
    common = {"thresholds": setup.row, "threshold_row": setup.row_name, "threads": max(1, usable_cpus() // jobs),
              "shown_predictions_dir": str(setup.predictions_dir)}
    base_cfg = dict(common, submission_dir=str(seen.submission_dir), predictions_dir=str(seen.predictions_dir),
                    data_dir=str(seen.data_dir), solution_dir=None)
    judge_cfg = dict(common, submission_dir=str(seen.submission_dir), predictions_dir=str(seen.predictions_dir),
                     data_dir=str(setup.data_dir),
                     solution_dir=str(setup.solution_dir) if setup.solution_dir else None,
                     cgroup=sandbox.group.join_files() if sandbox else [])
    progress["total"] = len(to_run)
    runner = Runner(specs, base_cfg, args.timeout_scale, on_result, judge_cfg, sandbox)
    # the longest groups first, so that the parallel workers finish together
    ordered_groups = sorted(groups.values(), key=lambda ids: -sum(specs[t].timeout for t in ids))
    pool = ThreadPoolExecutor(max_workers=jobs)
    finished = False
    try:
        for future in [pool.submit(runner.run_group, ids) for ids in ordered_groups]:
            try:
                future.result()
            except Exception:  # noqa: BLE001 - a bug of the grader's: that group's tests fail, the rest count
                print(f"error: the grader failed running a group of tests (a bug of the grader, not of the "
                      f"submission):\n{traceback.format_exc()}", file=sys.stderr)
        try:
            runner.judge_pending(jobs)
        except Exception:  # noqa: BLE001 - a bug of the grader's: the tests it was judging fail, the rest count
            print(f"error: the grader failed judging the tests (a bug of the grader, not of the submission):\n"
                  f"{traceback.format_exc()}", file=sys.stderr)
        finished = True
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    finally:  # whatever happened: no worker, and nothing a worker started, outlives this
        if progress["live"] and progress["done"]:
            print("\r\033[K", end="", flush=True)  # the progress line gives way to what follows
        if not finished:
            runner.stopped = True
        pool.shutdown(wait=finished, cancel_futures=not finished)
        kill_live_workers()
        runner.close()
        if sandbox:  # what it could not remove, main says (and the user id is marked: users.mark_left)
            sandbox.close()
    if not finished:
        raise KeyboardInterrupt  # main writes --json's file: the grading was interrupted
    for tid in to_run:  # a group whose run failed (a bug of the grader's, said above) left its tests no result
        if tid not in results:
            results[tid] = {"id": tid, "status": "failed", "message": "no result", "output": "", "seconds": 0.0,
                            "score": 0}
    return results


def report(args, specs, order, setup, results, elapsed):
    """Which basic tests count (vouching), the summary on stdout and, with --json, Gradescope's results.json."""
    visibility = setup.visibility
    chosen = [specs[t] for t in order]
    vouch(chosen, results)
    summary = format_summary(chosen, results, [], visibility)
    if args.verbose:
        for spec in chosen:
            r = results[spec.id]
            if r["status"] == "failed" and r.get("output") and not concealed(spec, visibility, r):
                summary += f"\n\nOutput of your code in {spec.id}:\n{r['output']}"
    summary += f"\n({elapsed:.1f} s)"
    print(summary, flush=True)
    if args.json:
        output = "\n".join(shown_header(args, setup)) + "\n" + summary
        write_results(args.json, results_json(chosen, results, output, elapsed, visibility))
