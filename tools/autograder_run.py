"""Gradescope entry point (copied into the autograder bundle; `run_autograder` calls it).

Layout (Gradescope's, or $AUTOGRADER_ROOT for a local rehearsal):
  source/      this bundle: starter/ (a clean student starter), solution/ (the reference package),
               answers/birth_test.tsv (held-out answers), requirements.txt
  submission/  what the student uploaded: Gradescope unpacks an uploaded zip here.  The zip from
               ./run.sh collect_submission is flat, so the files sit at the top level; files uploaded
               one by one, or a zip of the folder src/submission/, are found as well (at any depth)
  results/     results.json is written here
Only the deliverables (the starter's src/submission/*.py names, the six prediction files and the five
parameter files) are taken from the submission and laid over a fresh copy of the starter, so a student
cannot replace the grader.  Gradescope runs this as root: source/ (answers, reference) and results/ are made
readable by root only, the grading copy lies in a root-only temporary folder, and the grader runs the
student's code as the user `grader` that setup.sh creates (or `nobody`), see graderUtil.py.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def find_submitted(submission, name):
    """The submitted file called `name`, preferring the shallowest (a zip may add a folder level).  A symbolic
    link is never taken: copied as root, it would bring whatever it points to into the grading copy."""

    def plain(path):
        step = submission
        for part in path.relative_to(submission).parts:
            step = step / part
            if step.is_symlink():
                return False
        return path.is_file()

    matches = sorted((p for p in submission.rglob(name) if plain(p)), key=lambda p: len(p.parts))
    return matches[0] if matches else None


def write_failure(results, message):
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.json").write_text(json.dumps({"score": 0, "output": message, "tests": []}, indent=2))


def main():
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    source, submission, results = root / "source", root / "submission", root / "results"
    results.mkdir(parents=True, exist_ok=True)
    if os.name == "posix" and os.geteuid() == 0:
        for private in (source, results):  # the answers, the reference, the results: root's alone
            os.chmod(private, 0o700)
    work = Path(tempfile.mkdtemp(prefix="grading-"))
    shutil.copytree(source / "starter", work, dirs_exist_ok=True)
    os.chmod(work, 0o700)  # root's alone (copytree gave it the starter's mode): the grader's workers get copies
    package = work / "src" / "submission"
    sys.path.insert(0, str(work / "src"))
    from course import PARAMS_FILES, PREDICTION_FILES  # the one list of deliverables

    allowed = sorted(p.name for p in package.glob("*.py")) + PREDICTION_FILES + PARAMS_FILES
    taken = []
    for name in allowed:
        found = find_submitted(submission, name)
        if found is not None:
            shutil.copy2(found, package / name)
            taken.append(name)
    shutil.copy2(source / "answers" / "birth_test.tsv", work / "src" / "data" / "birth_test.tsv")
    print(f"submitted deliverables used: {', '.join(taken) or 'none'}")
    results.mkdir(parents=True, exist_ok=True)
    out = results / "results.json"
    cmd = [sys.executable, str(work / "src" / "grader.py"), "--json", str(out),
           "--solution-dir", str(source / "solution")]
    proc = subprocess.run(cmd, cwd=work / "src")
    if proc.returncode != 0 or not out.is_file():
        write_failure(results, f"The grader stopped unexpectedly (exit status {proc.returncode}); "
                               "please tell the course staff.")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
