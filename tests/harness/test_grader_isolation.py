"""Grading a submission cannot cheat (issue #22): the rehearsed Gradescope bundle, run as root as Gradescope
runs it, against attacks planted at the top of the student's files.

The student's code runs as an unprivileged user (a free uid here, so that nothing else on the machine is
touched): it cannot read the held-out answers, the reference solution or the results; what it prints or writes
to any descriptor is not a verdict; what it leaves running is killed before the summary, so results.json stays
the grader's; a process holding the worker's pipes open does not stall the grading.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, SRC, free_uid
from gradings import rehearse

import graderUtil
from grading import users


root_only = pytest.mark.skipif(not graderUtil.privileged(),
                               reason="the grader drops privileges only when it runs as root (Gradescope, CI)")

POINTS = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["tests"]


@pytest.fixture
def spy(monkeypatch):
    """A folder every user may write, with a root-owned file every user may append to (the planted code's
    lasting trace: the grader removes whatever files the worker user made), and the worker uid."""
    uid = free_uid(61500)
    monkeypatch.setenv("GRADER_WORKER_USER", str(uid))
    folder = Path(tempfile.mkdtemp(prefix="spy-", dir="/tmp"))
    os.chmod(folder, 0o777)
    (folder / "heartbeat").touch()
    os.chmod(folder / "heartbeat", 0o666)
    yield folder, uid
    users.kill_user_processes(uid, uid)
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def open_root():
    """Gradescope's /autograder as the worker user finds it: a folder it may enter, with Gradescope's
    submission_metadata.json (earlier submissions' results, hidden ones included) readable by every user.  The
    bundle's entry must close everything there but submission/ to it."""
    import shutil

    root = Path(tempfile.mkdtemp(prefix="autograder-", dir="/tmp"))
    os.chmod(root, 0o755)
    (root / "submission_metadata.json").write_text('{"previous_submissions": [{"results": "hidden ones"}]}')
    os.chmod(root / "submission_metadata.json", 0o644)
    yield root
    shutil.rmtree(root, ignore_errors=True)


# -- the planted attacks (each a few lines at the top of a student file) ------------------------------------

# what a spy reports of one path: READ, or the error it got
TRY_READ = '''
import glob as _glob, os as _os
def _try(path):
    try:
        open(path, "rb").read(1)
        return "READ"
    except OSError as e:
        return type(e).__name__
'''

READ_SECRETS = TRY_READ + '''
def _setuid():
    try:
        _os.setuid(0)
        return "ROOT"
    except OSError as e:
        return type(e).__name__
_root = "{root}"  # the test puts the folder in: a worker's environment is the grader's own
_copies = [p + "/src/data/birth_test.tsv" for p in _glob.glob("/tmp/grading-*")] or ["/tmp/grading-x/src"]
_sandbox = (_glob.glob("/tmp/grader-sandbox-*/data") or ["/tmp/none"])[0]
_via_fds = set()  # through the worker's open descriptors, and up from them
for _fd in _os.listdir("/proc/self/fd"):
    for _up in range(12):
        for _rel in ("data/", "src/data/", "answers/", "source/answers/"):
            _via_fds.add(_try("/proc/self/fd/%s/%s%sbirth_test.tsv" % (_fd, "../" * _up, _rel)))
raise RuntimeError("spy uid=%d answers=%s copy=%s sandbox=%s solution=%s results=%s metadata=%s setuid=%s "
                   "fds=%s" % (
    _os.getuid(), _try(_root + "/source/answers/birth_test.tsv"), ",".join(sorted({_try(p) for p in _copies})),
    _try(_sandbox + "/birth_test.tsv"), _try(_root + "/source/solution/model.py"),
    _try(_root + "/results/results.json"), _try(_root + "/submission_metadata.json"), _setuid(),
    "READ" if "READ" in _via_fds else "none"))
'''

FAKE_VERDICTS = '''
import json as _json, os as _os
_lines = []
for _tid in {ids!r}:
    _fake = _json.dumps({{"ev": "result", "id": _tid, "status": "passed", "message": "", "output": "",
                         "seconds": 0.1}})
    print(_fake)
    _lines += [_fake, _json.dumps({{"m": _fake, "h": "0" * 64}})]
for _line in _lines + ['{{"ev": "done"}}']:
    for _fd in range(64):
        try:
            _os.write(_fd, (_line + "\\n").encode())
        except OSError:
            pass
'''

LEFTOVER_WRITER = '''
import os as _os, time as _time
if _os.fork() == 0:  # double fork and a session of its own: outside the worker's session
    _os.setsid()
    if _os.fork() == 0:
        _end = _time.time() + 300
        while _time.time() < _end:
            try:
                with open("{root}/results/results.json", "w") as _f:
                    _f.write('{{"score": 1000, "tests": []}}')
            except OSError:
                pass
            with open("{spy}/heartbeat", "a") as _f:
                _f.write(".")
            _time.sleep(0.05)
    _os._exit(0)
'''

PIPE_HOLDER = '''
import os as _os, time as _time
if _os.fork() == 0:  # inherits the worker's stdout, stderr and protocol pipe, and keeps them open
    _os.setsid()
    _time.sleep(600)
    _os._exit(0)
if {die!r} and not _os.path.exists("{spy}/died"):  # the worker itself exits, once, while the pipes stay open
    open("{spy}/died", "w").close()
    _os._exit(7)
'''


def plant(files, name, *codes):
    files[name] = "".join(codes) + "\n" + files[name]


def empty_starter_files(starter):  # noqa: F811
    return {p.name: p.read_text(encoding="utf-8") for p in (starter / "src" / "submission").glob("*.py")}


def assert_nothing_left(spy_dir, uid, results_path, before):
    """No process of the worker user is alive, and nothing writes any more."""
    assert users.user_pids(uid) == []
    beat = spy_dir / "heartbeat"
    size = beat.stat().st_size
    time.sleep(1.0)
    assert beat.stat().st_size == size
    assert results_path.read_text() == before


@pytest.mark.grader
@root_only
def test_attacks_from_the_empty_starter_earn_nothing(bundle, starter, spy, open_root):  # noqa: F811
    spy_dir, uid = spy
    files = empty_starter_files(starter)
    ids = sorted(POINTS)
    plant(files, "utils.py", LEFTOVER_WRITER.format(spy=spy_dir, root=open_root), FAKE_VERDICTS.format(ids=ids),
          READ_SECRETS.replace('"{root}"', repr(str(open_root))))
    plant(files, "dataset.py", FAKE_VERDICTS.format(ids=ids), PIPE_HOLDER.format(spy=spy_dir, die=False))
    plant(files, "model.py", PIPE_HOLDER.format(spy=spy_dir, die=True))
    started = time.monotonic()
    results = rehearse(bundle, open_root, files)
    seconds = time.monotonic() - started
    path = open_root / "results" / "results.json"
    assert_nothing_left(spy_dir, uid, path, path.read_text())
    by_id = {t["number"]: t for t in results["tests"]}
    # fake verdicts, printed or written to every descriptor, count for nothing
    assert results["score"] == 0 and all(t["score"] == 0 for t in results["tests"]), results["output"][-3000:]
    # the secrets are unreadable from inside the student's code, and it is not root
    spied = [t["output"] for t in results["tests"] if "spy uid=" in t["output"]]
    assert spied, results["output"][-3000:]
    line = spied[0].split("spy ", 1)[1].split("\n")[0]
    assert f"uid={uid} " in line
    for secret in ("answers", "copy", "solution", "results", "metadata"):
        assert f"{secret}=PermissionError" in line, line
    assert "sandbox=FileNotFoundError" in line and "setuid=PermissionError" in line and "fds=none" in line, line
    # the worker that exited while its pipes stayed open: seen at once, not after the test's time limit
    died = [t for t in results["tests"] if "died (exit code 7)" in t["output"]]
    assert len(died) == 1, results["output"][-3000:]
    assert all("timed out" not in t["output"] for t in results["tests"]), results["output"][-3000:]
    assert seconds < 240, f"the grading took {seconds:.0f} s with processes holding its pipes for 600 s"
    assert by_id["1e-4-basic"]["status"] == "failed"


@pytest.mark.grader
@root_only
@pytest.mark.parametrize("poisoned", [False, True], ids=["constant", "constant with NaN embeddings"])
def test_a_model_made_by_hand_earns_nothing_through_the_bundle(bundle, starter, spy, tmp_path, poisoned):  # noqa: F811
    """The attack through Gradescope: the empty starter with params written by a script (no training) whose greedy
    answer to every question is "Paris", a frequent place, and the prediction files they produce.  Before the
    check that the params learned their task it earned 10 of 74 on the built-in data (1d's "at least 1 correct"
    and the perceiver's 2.4 % / 2 %: Paris is 3.6 % of dev and 2.7 % of test); now nothing.  Poisoned, the same
    params hold NaN embeddings for the characters that only the check of learning reads (training names, the
    corpus's punctuation): every statistic of that check came out NaN, which `gain < bar` passed, and they earned
    the 10 points again; now they are refused as params that hold NaN.  The bundle's data is cut to its first 60
    questions and 64 corpus lines (course_params.cut_bundle: the judges' time), its answers its own: Paris is 4 of
    the 60 dev answers and 2 of the 60 test answers, past 1d's and the perceiver's accuracy bars, as on the whole
    files."""
    import io

    import torch

    from kit import course
    import course_params

    place = "Paris"

    def prepare(source):  # the params and predictions made for the cut data, as the attacker makes them
        recognise = course_params.cut_bundle(source, keep=60, lines=64)
        recognise()  # the answers stay the data set's own: the cut data is final
        data = source / "starter" / "src" / "data"
        stoi = course_params.vocab(data)
        made = {}
        for variant, names in course_params.PARAMS.items():
            buffer = io.BytesIO()
            net = (course_params.poisoned_net(variant, stoi, place, data) if poisoned
                   else course_params.constant_answer_net(variant, stoi, place))
            torch.save(net.state_dict(), buffer)
            made.update({name: buffer.getvalue() for name in names})
        for fname in course.PREDICTION_FILES:
            n = len(course_params.questions(data, "dev" if ".dev." in fname else "test"))
            made[fname] = f"{place}\n" * n
        return made

    results = rehearse(bundle, tmp_path, empty_starter_files(starter), prepare=prepare)
    assert results["score"] == 0, [(t["number"], t["output"][:200]) for t in results["tests"] if t["score"]]
    for t in results["tests"]:
        if t["number"] in ("1d-0-hidden", "1d-1-hidden", "1g-1-hidden", "1g-2-hidden"):
            assert "earns no accuracy points" in t["output"], t
            assert ("holds NaN or inf" if poisoned else "it has not learned them") in t["output"], t


@pytest.mark.grader
@root_only
def test_reference_keeps_every_point_and_a_leftover_cannot_rewrite_the_results(bundle, spy, tmp_path):  # noqa: F811
    """The reference, with params and predictions that agree, earns every point through the bundle as root, a
    grader.py uploaded beside its files ignored (off root, tests/tools/test_release.py's full marks make these
    assertions), while a process its utils.py leaves behind tries to rewrite the results."""
    import course_params

    spy_dir, uid = spy
    files = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "src" / "submission").glob("*.py")}
    files["grader.py"] = "print('a submitted grader must be ignored')\n"
    plant(files, "utils.py", LEFTOVER_WRITER.format(spy=spy_dir, root=tmp_path))
    # params and predictions that agree, and answers that are theirs (tests/course_params.py)
    results = rehearse(bundle, tmp_path, files, prepare=course_params.fit_bundle)
    path = tmp_path / "results" / "results.json"
    before = path.read_text()
    assert (spy_dir / "heartbeat").stat().st_size  # the leftover ran
    assert_nothing_left(spy_dir, uid, path, before)
    for t in results["tests"]:
        assert t["score"] == t["max_score"], t
    assert len([t for t in results["tests"] if t["number"].endswith("-hidden")]) >= 9
    core = sum(t["max_score"] for t in results["tests"] if "extra credit" not in t.get("tags", []))
    extra = sum(t["max_score"] for t in results["tests"] if "extra credit" in t.get("tags", []))
    assert (core, extra) == (64, 10) and results["score"] == 74
    # the bundle leaves nothing secret readable by that user: the grader's header has no warning; the sandbox's
    # details are the TA's --verbose view, not the student's screen
    assert "student code runs as uid" not in results["output"] and "warning" not in results["output"]


@pytest.mark.grader
@root_only
def test_a_perceiver_never_pretrained_earns_no_prediction_point_through_the_bundle(bundle, tmp_path):  # noqa: F811
    """The attack that the check of the pretraining closes: finetuned params that know their training questions and
    the corpus as plain text and give their prediction files (the reference's, made to fit), but beside them a
    perceiver.pretrain.params that never learned the pretraining's task (here the finetuned perceiver itself, made
    by hand).  Through the bundle, as root, the perceiver's two prediction tests earn nothing; every other test
    its points."""
    import course_params

    def prepare(source):
        made = course_params.fit_bundle(source)
        return dict(made, **{"perceiver.pretrain.params": made["perceiver.finetune.params"]})

    files = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "src" / "submission").glob("*.py")}
    results = rehearse(bundle, tmp_path, files, prepare=prepare)
    lost = {t["number"]: t["output"] for t in results["tests"] if t["score"] < t["max_score"]}
    assert sorted(lost) == ["1g-1-hidden", "1g-2-hidden"], {k: v[:300] for k, v in lost.items()}
    for output in lost.values():
        assert "earns no accuracy points" in output and "it has not been pretrained" in output, output
    assert results["score"] == 74 - 4


@pytest.mark.grader
@root_only
def test_pretrain_files_fitted_to_one_layout_earn_no_prediction_point_in_the_bundle(bundle, tmp_path):  # noqa: F811
    """Issue 90's construction through Gradescope, as root: the reference's code, params and prediction files made
    to fit, but each pretrain file the agreeing model trained on the lines the judge reads in the one layout it
    once read (course_params.fitted_to_one_layout: past every pretraining bar as that judge measured).  The judge
    draws the layouts from the grading's secret: the four prediction tests of the models finetuned from them earn
    nothing, each saying the pretraining was not done; every other test its points."""
    import io

    import torch

    import course_params

    def prepare(source):
        made = course_params.fit_bundle(source)
        data, answers = source / "starter" / "src" / "data", source / "answers" / "birth_test.tsv"
        stoi = course_params.vocab(data)
        for variant, name in course_params.PRETRAINED.items():
            buffer = io.BytesIO()
            torch.save(course_params.fitted_to_one_layout(variant, stoi, data, answers).state_dict(), buffer)
            made[name] = buffer.getvalue()
        return made

    files = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "src" / "submission").glob("*.py")}
    results = rehearse(bundle, tmp_path, files, prepare=prepare)
    lost = {t["number"]: t["output"] for t in results["tests"] if t["score"] < t["max_score"]}
    assert sorted(lost) == ["1f-1-hidden", "1f-2-hidden", "1g-1-hidden", "1g-2-hidden"], {
        k: v[:300] for k, v in lost.items()}
    for output in lost.values():
        assert "earns no accuracy points" in output and "predicts span-corrupted lines" in output, output
    assert results["score"] == 74 - 17


PATCH_THE_GRADER = '''
import sys as _sys
_main = _sys.modules["__main__"]
for _spec in _main.REGISTRY.values():  # every test "passes" in this process
    _spec.fn = lambda ctx: None
'''


@pytest.mark.grader
@root_only
def test_patching_the_grader_in_memory_wins_nothing(bundle, starter, spy, tmp_path):  # noqa: F811
    """Code that patches the grader in its own process (every test "passes" there) wins nothing: every verdict
    is a judge's, in a process that never imports student code, and the judges find no data to pass."""
    files = empty_starter_files(starter)
    plant(files, "utils.py", PATCH_THE_GRADER)
    plant(files, "dataset.py", PATCH_THE_GRADER)
    results = rehearse(bundle, tmp_path, files)
    assert len(results["tests"]) >= 30 and all(t["score"] == 0 for t in results["tests"]), \
        [(t["number"], t["output"][:100]) for t in results["tests"] if t["score"]]


@pytest.mark.grader
@root_only
def test_student_code_that_asks_who_runs_it_gets_an_answer(tmp_path, data):
    """The worker user is a free user id, with no passwd entry: getpass.getuser() answers from USER and LOGNAME,
    which the grader sets, where it would raise.  Libraries ask it: torch 2.11 when the first optimizer is made
    (its compile cache folder), so that the reference lost 1c-2 there (KeyError: 'getpwuid(): uid not found')."""
    from gradings import copy_src, run_grader

    who = "import getpass as _getpass\nimport os as _os\n_WHO = (_getpass.getuser(), _os.getuid())\n"
    src = copy_src(tmp_path / "asks", append={"trainer.py": who})
    run = run_grader(src, "1c-2-basic", data=data, extra=["--verbose"])
    assert run.tests["1c-2-basic"]["score"] == 1, run.tests["1c-2-basic"]
    assert "student code runs as uid" in run.proc.stdout


GRADE_CLASS_SPY = TRY_READ + '''
_copies = _glob.glob("/tmp/grade_class_ref_*") or ["/tmp/grade_class_ref_x"]
_mine = _os.path.dirname(_os.getcwd())  # the worker runs in its private folder inside its own sandbox
_others = [d + "/submission/model.py" for d in _glob.glob("/tmp/grader-sandbox-*") if d != _mine]
raise RuntimeError("spy uid=%d answers=%s solution=%s other_sandboxes=%s" % (
    _os.getuid(), ",".join(sorted({_try(p + "/data/birth_test.tsv") for p in _copies})),
    ",".join(sorted({_try(p + "/solution/model.py") for p in _copies})),
    ",".join(sorted({_try(p) for p in _others})) or "none"))
'''


@pytest.mark.grader
@root_only
def test_grade_class_grades_each_submission_as_a_user_of_its_own(tmp_path):
    """tools/grade_class.py as root: the student's code runs unprivileged, as on Gradescope, and cannot read the
    answers or the reference that grade_class copied for the graders, nor a submission graded beside it."""
    import csv
    import subprocess
    import sys

    from gradings import make_data

    data = make_data(tmp_path / "data")
    subs = tmp_path / "submissions"
    for name in ("ann", "ben"):
        folder = subs / name
        folder.mkdir(parents=True)
        for p in (SRC / "submission").glob("*.py"):
            (folder / p.name).write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
        utils = folder / "utils.py"
        utils.write_text(GRADE_CLASS_SPY + utils.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "grades.csv"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "grade_class.py"), str(subs), "--out", str(out),
                           "--data-dir", str(data), "--jobs", "2", "--tests", "1c-3-basic"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(out, newline="", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    uids, others = set(), set()
    for name in ("ann", "ben"):
        problems = rows[name]["problems"]
        assert "spy uid=" in problems, problems
        spied = problems.split("spy ", 1)[1]
        uids.add(spied.split()[0])
        assert "answers=PermissionError" in spied and "solution=PermissionError" in spied, spied
        others.add(spied.split("other_sandboxes=")[1].split()[0])
    assert len(uids) == 2 and "uid=0" not in uids  # one unprivileged user per submission graded at a time
    # graded at the same time, each saw the other's copies and could not read them
    assert "PermissionError" in others and not any("READ" in o for o in others), others


SLOW_DATASET = '''
import time as _time
_given_init = CharCorruptionDataset.__init__


def _slow_init(self, *args, **kwargs):
    _time.sleep(6)  # still running when the other grader, started later, has finished
    _given_init(self, *args, **kwargs)


CharCorruptionDataset.__init__ = _slow_init
'''


@pytest.mark.grader
@root_only
def test_two_graders_at_once_as_root_each_kill_only_what_they_started(tmp_path, monkeypatch):
    """An instructor grading a class while a TA re-grades one student: each grader runs the student's code as a
    user id of its own, so the one that finishes first, which kills every process of its user, leaves the
    other's workers alone.  Both reports are complete, and the same as each grader's alone (every point)."""
    import re
    import subprocess
    import sys

    from gradings import copy_src, make_data

    monkeypatch.delenv("GRADER_WORKER_USER", raising=False)  # the grader's own choice, as on Gradescope
    data = make_data(tmp_path / "data")
    slow = copy_src(tmp_path / "slow", append={"dataset.py": SLOW_DATASET})
    quick = copy_src(tmp_path / "quick")
    tests = ["1e-4-basic", "1e-6-basic"]

    def start(src):
        return subprocess.Popen([sys.executable, str(src / "grader.py"), *tests, "--data-dir", str(data), "--json",
                                 str(src / "results.json"), "--verbose"], cwd=src, stdout=subprocess.PIPE, text=True)

    first = start(slow)
    time.sleep(2)  # the slow one's worker is asleep in the student's code when the quick one ends
    second = start(quick)
    outs = [p.communicate(timeout=300)[0] for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0]
    users = [re.search(r"student code runs as uid (\d+)", out).group(1) for out in outs]
    assert users[0] != users[1], users
    for src, out in zip((slow, quick), outs):
        results = json.loads((src / "results.json").read_text(encoding="utf-8"))
        assert [(t["number"], t["score"]) for t in results["tests"]] == [(t, POINTS[t]) for t in tests], out
    # the slow grader really overlapped the quick one: its first test took the sleep (the summary's seconds column)
    seconds = [float(s) for s in re.findall(r"^1e-\d-basic\s+\S+\s+(\d+\.\d)s", outs[0], re.M)]
    assert any(6 <= s < 9 for s in seconds), outs[0]


@root_only
def test_a_students_process_cannot_hold_the_worker_user_ids_of_other_graders(monkeypatch):
    """A review's attack: a process of the worker user bound the abstract socket of every worker uid (the claims
    were such sockets then), and no grader started meanwhile could claim an id.  Claims are locks in a folder
    only root may use now: an unprivileged process can neither make nor lock a file there, and the names it binds
    block nothing."""
    import socket

    monkeypatch.delenv("GRADER_WORKER_USER", raising=False)
    squatter_uid = free_uid(61600)
    folder = users.claims_folder()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the squatter: no exec (root's Python may lie where the user cannot reach it)
        try:
            os.close(read_end)
            os.setgid(squatter_uid)
            os.setuid(squatter_uid)
            held = []
            for uid in users.WORKER_UIDS:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.bind(f"\0cs224n-pretraining-grader-worker-uid-{uid}")
                held.append(sock)
            try:
                open(folder / f"{users.WORKER_UIDS.start}.lock", "a").close()
                os.write(write_end, b"opened")
            except OSError:
                os.write(write_end, b"refused")
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        assert os.read(read_end, 100) == b"refused"
        uid, _, _, claim = users.claim_worker_user()
        try:
            assert uid in users.WORKER_UIDS
        finally:
            claim.release()
    finally:
        os.close(read_end)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        users.kill_user_processes(squatter_uid, squatter_uid)


def test_the_bundle_closes_all_of_gradescopes_folder_but_the_upload(tmp_path):
    """autograder_run.close_to_others: the owner keeps its bits (run_autograder stays executable), nobody else
    keeps any, the upload keeps its modes, and the folder itself can be entered but not listed."""
    import autograder_run

    for folder in ("source", "results", "submission"):
        (tmp_path / folder).mkdir(mode=0o755)
    for name, mode in (("submission_metadata.json", 0o644), ("run_autograder", 0o755),
                       ("submission/model.py", 0o644)):
        (tmp_path / name).write_text("x")
        os.chmod(tmp_path / name, mode)
    autograder_run.close_to_others(tmp_path, keep=("submission",))

    def mode(name):
        return os.stat(tmp_path / name).st_mode & 0o777

    assert (mode("source"), mode("results"), mode("submission_metadata.json"), mode("run_autograder")) == (
        0o700, 0o700, 0o600, 0o700)
    assert (mode("submission"), mode("submission/model.py"), mode(".")) == (0o755, 0o644, 0o711)


def test_the_bundle_leaves_the_graders_python_open(tmp_path, monkeypatch):
    """The venv that setup.sh made in Gradescope's folder stays readable and runnable after the folder is closed:
    student code imports from it late and may start sys.executable (a rehearsal found a submission's child
    process refused with "Permission denied: '/autograder/venv/bin/python'").  Nothing else opens with it."""
    import autograder_run

    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(sys, "exec_prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path / "python" / "cpython-3.11"))
    monkeypatch.setattr(sys, "base_exec_prefix", "/usr")
    assert autograder_run.interpreter_folders(tmp_path) == ("python", "venv")
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "source" / "env"))  # never opens the bundle
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))  # nor the whole folder
    assert autograder_run.interpreter_folders(tmp_path) == ("venv",)


# -- issue 39: Gradescope's entry writes results.json whatever happens ----------------------------------------

STAND_IN_GRADER = '''
import json, sys
from pathlib import Path
out = Path(sys.argv[sys.argv.index("--json") + 1])
{body}
'''


def stand_in_bundle(root, grader_body):
    """Gradescope's folder as autograder_run.py finds it, with a stand-in bundle: the starter's upload rule and
    course facts, and a grader.py that runs `grader_body` (with `out`, the path of results.json)."""
    import shutil

    starter = root / "source" / "starter" / "src"
    (starter / "submission").mkdir(parents=True)
    (starter / "data").mkdir()
    (starter / "kit").mkdir()
    for name in ("kit/__init__.py", "kit/upload.py", "kit/course.py", "kit/fileio.py"):
        shutil.copy(SRC / name, starter / name)
    for path in (SRC / "submission").glob("*.py"):
        (starter / "submission" / path.name).write_text("")
    (starter / "grader.py").write_text(STAND_IN_GRADER.format(body=grader_body))
    (root / "source" / "answers").mkdir(parents=True)
    (root / "source" / "answers" / "birth_test.tsv").write_text("Where?\tParis\n")
    (root / "source" / "solution").mkdir()
    (root / "submission").mkdir()
    return root


GRADED = 'out.write_text(json.dumps({"score": 1, "output": "graded", "tests": []}))'


@pytest.mark.parametrize("case", ["deep upload", "odd names", "too large", "grader crashes",
                                  "grader writes garbage", "no starter"])
def test_the_gradescope_entry_writes_results_json_whatever_happens(tmp_path, monkeypatch, deep_tree, case):
    """autograder_run.py ends with a results.json that says what happened, and leaves no grading folder, when the
    upload holds a tree 1,500 deep (RecursionError: no results.json) or a copy of a file under a name that is not
    UTF-8 and holds a newline (printing it raised), or a params file past upload.py's limits (a sparse 10 GiB: the
    student reads why), when the grader crashes or writes something that is not JSON, and when its own steps fail
    (the bundle has no starter)."""
    import autograder_run

    body = {"grader crashes": "raise SystemExit(3)", "grader writes garbage": 'out.write_text("{not json")'}
    root = stand_in_bundle(tmp_path / "autograder", body.get(case, GRADED))
    (root / "submission" / "model.py").write_text("x = 1\n")
    if case == "deep upload":
        deep_tree(root / "submission" / "tree")
    if case == "odd names":
        odd = os.path.join(os.fsencode(root / "submission"), b"\xff\nold")
        os.mkdir(odd)
        with open(os.path.join(odd, b"model.py"), "wb") as f:
            f.write(b"x = 0\n")
    if case == "too large":
        with open(root / "submission" / "vanilla.model.params", "wb") as f:
            f.truncate(10 << 30)
    if case == "no starter":
        import shutil

        shutil.rmtree(root / "source" / "starter")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("AUTOGRADER_ROOT", str(root))
    assert autograder_run.main() == 0
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    if case in ("deep upload", "odd names"):
        assert results["score"] == 1 and "Files graded: model.py" in results["output"], results
    elif case == "too large":
        assert results["score"] == 0 and results["output"] == (
            "Your upload could not be graded: vanilla.model.params in the upload is 10240 MiB, more than the 256 MiB "
            "a deliverable may be."), results
    else:
        assert results["score"] == 0 and "please tell the course staff" in results["output"], results
    if case == "odd names":
        assert "\\xff\\nold/model.py" in results["output"], results["output"]
    assert list(temp.iterdir()) == []


# -- issue 39: a grading's cgroup ------------------------------------------------------------------------------

GROUP_CHILD = {
    # touches 200 MiB, more than the group's 64 MiB
    "memory": """
b = bytearray(200 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
print("survived")
""",
    # forks 40 children that leave the session (and its output) and sleep: more than the group's 16 processes
    "processes": """
import os, time
n = 0
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.setsid()
        os.dup2(os.open(os.devnull, os.O_RDWR), 1)
        os.dup2(1, 2)
        time.sleep(60)
        os._exit(0)
    n += 1
print(n)
""",
}


@root_only
def test_a_gradings_cgroup_bounds_its_memory_and_processes_and_kills_all_it_holds():
    """grading/cgroups.py where the kernel lets the grader make a cgroup: a process inside that touches more memory
    than the grading's bound is killed by the kernel (its test fails; the machine keeps its memory); forks past
    the bound on processes fail; and the children that left their session are still inside, on the kill list,
    and killed with the group, whose folders are then gone."""
    import subprocess

    from grading import cgroups

    group = cgroups.WorkerGroup(free_uid(61990), cpus={min(os.sched_getaffinity(0))}, memory=64 << 20,
                                processes=16)
    folders = [folder for _, folder in group.folders]
    try:
        if not {"memory", "pids"} <= set(group.bounds):
            pytest.skip(f"no memory or pids controller for the grader here ({group.describe()})")

        def run(code):
            return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                                  preexec_fn=lambda: cgroups.join(group.join_files()))

        r = run(GROUP_CHILD["memory"])
        assert r.returncode == -9 and "survived" not in r.stdout, (r.returncode, r.stdout, r.stderr[-500:])
        r = run(GROUP_CHILD["processes"])
        assert 0 < int(r.stdout) < 16, (r.stdout, r.stderr[-500:])
        assert len(group.members()) == int(r.stdout)  # the children left their session, not the group
    finally:
        left = group.close()
    assert left == [] and not [f for f in folders if os.path.exists(f)] and group.members() == set()


@root_only
def test_a_v2_cgroup_that_bounds_nothing_is_still_a_kill_list(monkeypatch):
    """cgroup v2 where the grader's own cgroup cannot hand controllers down (it holds processes: the usual case
    outside the root cgroup): the group bounds nothing, but its members are listed and cgroup.kill ends them,
    double forks and new sessions included."""
    import subprocess

    from grading import cgroups

    v2 = [h for h in cgroups.hierarchies() if h[0] == 2]
    if not v2:
        pytest.skip("no cgroup v2 hierarchy here")
    monkeypatch.setattr(cgroups, "hierarchies", lambda: [(2, v2[0][1], ())])
    group = cgroups.WorkerGroup(free_uid(61980))
    try:
        assert group.usable and group.bounds == {} and "a kill list only" in group.describe()
        r = subprocess.run([sys.executable, "-c", GROUP_CHILD["processes"].replace("range(40)", "range(3)")],
                           capture_output=True, text=True, timeout=60,
                           preexec_fn=lambda: cgroups.join(group.join_files()))
        assert r.stdout.strip() == "3" and len(group.members()) == 3
    finally:
        assert group.close() == []
    assert group.members() == set()


@pytest.mark.parametrize("argv, code", [(["--help"], 0), (["-h"], 0), (["submission"], 2)])
def test_the_gradescope_entry_with_arguments_only_says_how_to_run_it(tmp_path, argv, code):
    """run_autograder runs autograder_run.py without arguments; with any (an instructor's --help) it prints its usage
    and grades nothing: as root it made /autograder/results and wrote a failed grading there."""
    env = {**os.environ, "AUTOGRADER_ROOT": str(tmp_path / "autograder")}
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "autograder_run.py"), *argv], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == code, r.stderr
    assert "usage: python autograder_run.py" in (r.stdout if code == 0 else r.stderr)
    assert not (tmp_path / "autograder").exists()
