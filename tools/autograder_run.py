"""Gradescope entry point (copied into the autograder bundle; `run_autograder` calls it).

Layout (Gradescope's, or $AUTOGRADER_ROOT for a local rehearsal):
  source/      this bundle: starter/ (a clean student starter), solution/ (the reference package),
               answers/birth_test.tsv (held-out answers), requirements.txt
  submission/  what the student uploaded: Gradescope unpacks an uploaded zip here.  The zip from
               ./run.sh collect_submission is flat, so the files sit at the top level; files uploaded
               one by one, or a zip of the folder src/submission/, are found as well (src/kit/upload.py says
               which copy is graded where there are two; results.json's output names them)
  results/     results.json is written here
Only the deliverables (the starter's src/submission/*.py names, the six prediction files and the five
parameter files) are taken from the submission and laid over a fresh copy of the starter, so a student
cannot replace the grader.  Gradescope runs this as root: everything in the root folder but submission/
and the grader's Python (setup.sh's venv/) is made readable by root only (answers, reference, results,
submission_metadata.json), the grading copy lies in a root-only temporary folder, and the grader runs the
student's code as an unprivileged user id of its own (docs/security.md).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import srcpath  # beside this file in the bundle: puts the grading copy's src/ on sys.path


def write_failure(results, message):
    """results.json with no test and a score of 0, saying in `message` (one sentence) what happened; written
    under a new name, then renamed over whatever was there.  By hand, not with kit/fileio.py's atomic_path: this
    must work where the grading copy, and with it the kit, was never made."""
    try:
        results.mkdir(parents=True, exist_ok=True)
        tmp = results / ".results.json.tmp"
        tmp.write_text(json.dumps({"score": 0, "output": message, "tests": []}, indent=2), encoding="utf-8")
        tmp.replace(results / "results.json")
    except OSError as e:
        print(f"error: could not write results.json: {e}", file=sys.stderr)


def close_to_others(root, keep):
    """Make everything directly in root but `keep` root's alone: source/ (the answers, the reference),
    results/, Gradescope's submission_metadata.json (earlier submissions' results, hidden ones included) and
    whatever else Gradescope puts there (its run_autograder: the owner's bits, execute included, are kept).
    root itself stays enterable, so that `keep` (the student's own upload) keeps its modes; links are left
    alone (chmod would change what they point to)."""
    import stat

    for entry in os.scandir(root):
        if entry.name in keep or entry.is_symlink():
            continue
        try:
            os.chmod(entry.path, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode) & 0o700)
        except FileNotFoundError:
            pass  # gone meanwhile
    os.chmod(root, 0o711)  # enterable, not listable


def interpreter_folders(root):
    """The folders directly in root that hold the Python running the grader: setup.sh's venv/ (and python/,
    where setup.sh had uv install one).  They stay open: anyone may read installed packages, and the student's
    code needs them after the privilege drop, for an import made late or a child process that runs
    sys.executable.  source/ and results/ are never among them."""
    root = os.path.realpath(root)
    names = set()
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        rel = os.path.relpath(os.path.realpath(prefix), root)
        if rel != os.curdir and not rel.startswith(os.pardir):
            names.add(Path(rel).parts[0])
    return tuple(sorted(names - {"source", "results"}))


def main():
    """Grade /autograder/submission, and end with a results.json that says what happened whatever does: the
    grader's, or, where there is none (the upload cannot be graded, the grader crashed, a step here failed),
    one sentence with a score of 0.  The grading folder is removed in every case."""
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    results = root / "results"
    made = []  # the grading folder, once there is one
    try:
        grade(root, results, made)
    except Exception as e:  # noqa: BLE001 - whatever failed, the student gets a results.json that says so
        upload_error = getattr(sys.modules.get("kit.upload"), "UploadError", ())
        if isinstance(e, upload_error):  # the upload's own problem, said in one sentence by src/kit/upload.py
            write_failure(results, f"Your upload could not be graded: {e}.")
        else:
            traceback.print_exc()
            write_failure(results, f"The autograder failed before it could grade ({type(e).__name__}: "
                                   f"{str(e)[:300]!r}); please tell the course staff.")
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)  # the starter and the deliverables, flat: no deep tree
    return 0


def grade(root, results, made):
    source, submission = root / "source", root / "submission"
    results.mkdir(parents=True, exist_ok=True)
    if os.name == "posix" and os.geteuid() == 0:
        close_to_others(root, keep=("submission",) + interpreter_folders(root))
    work = Path(tempfile.mkdtemp(prefix="grading-"))
    made.append(work)
    shutil.copytree(source / "starter", work, dirs_exist_ok=True)
    os.chmod(work, 0o700)  # root's alone (copytree gave it the starter's mode): the grader's workers get copies
    package = work / "src" / "submission"
    srcpath.use(work / "src")
    from kit import upload  # the starter's: the one rule for which file of an upload is graded (grade_class too)
    from kit.fileio import write_text_atomic

    names = upload.deliverable_names(p.name for p in package.glob("*.py"))
    choice = upload.copy_deliverables(submission, names, package)  # UploadError: main says why, in one sentence
    shutil.copy2(source / "answers" / "birth_test.tsv", work / "src" / "data" / "birth_test.tsv")
    graded = [f"Files graded: {', '.join(sorted(choice.chosen)) or 'none'}"] + choice.notes
    print("\n".join(graded))
    out = results / "results.json"
    cmd = [sys.executable, str(work / "src" / "grader.py"), "--json", str(out),
           "--solution-dir", str(source / "solution")]
    proc = subprocess.run(cmd, cwd=work / "src")
    try:  # the grader's results, or its own sentence where it failed (it writes one: grading/cli.py)
        data = json.loads(out.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("output", ""), str):
            data = None
    except (OSError, ValueError):
        data = None
    if data is None:
        write_failure(results, f"The grader stopped unexpectedly (exit status {proc.returncode}); please tell "
                               "the course staff.")
        return
    # the student sees which of their files were graded, and why where the upload had two copies
    data["output"] = "\n".join(graded) + "\n\n" + data.get("output", "")
    write_text_atomic(out, json.dumps(data, indent=2))


if __name__ == "__main__":
    if sys.argv[1:]:  # Gradescope's run_autograder passes none: --help (or anything) must not start a grading
        help_asked = sys.argv[1:] in (["-h"], ["--help"])
        print(__doc__.split("\n\n")[0] + "\n\nusage: python autograder_run.py  (no arguments: it grades "
              "ROOT/submission, ROOT being $AUTOGRADER_ROOT or /autograder; as root, it closes ROOT to others)",
              file=sys.stdout if help_asked else sys.stderr)
        sys.exit(0 if help_asked else 2)
    sys.exit(main())
