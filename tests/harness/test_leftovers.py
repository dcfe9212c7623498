"""What a run leaves in the temporary folder: nothing.  A grading whose judges are killed at their time limit
(docs/security.md: "No sandbox, judge or grading folder of root's is left"), and the suite's own course-size params
(tests/course_params.py, about 40 MB a process).  Each run under test gets a temporary folder of its own, so that
what other test workers make at the same time in the shared one never counts."""

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, free_uid
from gradings import copy_src, make_solution, run_grader, write_predictions

import graderUtil



@pytest.fixture
def private_tmp():
    """A fresh temporary folder that every user may enter, as /tmp (a sandbox made under it must be reachable by
    the worker user): removed afterwards, whatever the test found in it."""
    folder = Path(tempfile.mkdtemp(prefix="leftovers-"))
    os.chmod(folder, 0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def interpreter_entries():
    """The names in /tmp that hold this Python (its executable, its prefix, its base installation): a virtual
    environment made under /tmp, as CI systems and many users make one.  Empty for a Python installed elsewhere."""
    names = set()
    for path in (sys.executable, sys.prefix, sys.base_prefix, os.path.realpath(sys.executable)):
        relative = Path(os.path.abspath(path)).parts[1:]
        if len(relative) > 1 and relative[0] == "tmp":
            names.add(relative[1])
    return sorted(names)


def own_tmp(folder):
    """A command prefix that runs the rest of a command line with `folder` as its /tmp, in a mount namespace of its
    own: every process of the grading, the judges too (which take no TMPDIR from the grader), writes its temporary
    folders there and nowhere another run could.  What of this Python lives in /tmp stays where it was: each such
    entry is bound into `folder` first (an empty folder of the same name there, which the namespace's end leaves
    empty).  None where no such namespace can be made (not root, say)."""
    keep = ""
    for name in map(shlex.quote, interpreter_entries()):
        keep += f' && mkdir -p "$0"/{name} && mount --bind /tmp/{name} "$0"/{name}'
    launcher = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                f'true{keep} && mount --rbind "$0" /tmp && exec "$@"', str(folder)]
    try:
        ok = subprocess.run([*launcher, "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return launcher if ok else None


def test_a_grading_whose_judges_are_killed_leaves_nothing_in_the_temporary_folder(data, private_tmp, monkeypatch):
    """The prediction tests' judges load course-size params and decode every question: at a two-hundredth of
    their time limit they are killed in the middle of a test.  The run's /tmp holds nothing afterwards (a killed
    judge's test folder was left there, root's and empty)."""
    launcher = own_tmp(private_tmp)
    if launcher is None:
        pytest.skip("needs a mount namespace of its own (root, unshare) to give the grading a /tmp of its own")
    if graderUtil.privileged():
        monkeypatch.setenv("GRADER_WORKER_USER", str(free_uid(61800)))
    monkeypatch.delenv("TMPDIR", raising=False)  # every process's temporary folder is the run's /tmp
    work = Path(tempfile.mkdtemp(prefix="leftovers-", dir="/var/tmp"))  # outside /tmp, which the grading sees not
    try:
        shutil.copytree(data, work / "data")
        src = copy_src(work / "copy")
        write_predictions(src / "submission", work / "data", "correct")
        r = run_grader(src, "1d-0-hidden", "1d-1-hidden", data=work / "data",
                       solution=make_solution(work / "reference"), extra=["--timeout-scale", "0.005"],
                       launcher=launcher)
        assert all("timed out" in r.tests[t]["output"] for t in ("1d-0-hidden", "1d-1-hidden")), r.tests
        assert sorted(os.listdir(private_tmp)) == interpreter_entries()  # the Python's own mount points, empty
        assert all(not any((private_tmp / name).iterdir()) for name in interpreter_entries())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_suites_course_size_params_are_removed_when_the_process_ends(tmp_path, private_tmp):
    """tests/course_params.py writes the agreeing pair's params (~13 MB each) and predictions into a folder of the
    temporary folder, once per process: a process that made them leaves none behind."""
    code = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
            "import course_params, gradings\n"
            "folder, _ = course_params.agreeing_files(gradings.make_data(sys.argv[3]))\n"
            "assert (folder / 'vanilla.model.params').stat().st_size > 10 << 20, folder\n"
            "print(folder)\n")
    env = dict(os.environ, TMPDIR=str(private_tmp))
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "src"), str(ROOT / "tests"), str(tmp_path / "d")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert Path(proc.stdout.strip()).parent == private_tmp  # it made them where this test looks
    assert sorted(os.listdir(private_tmp)) == []
