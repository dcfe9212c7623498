"""Issue 28: a submission's code, and the processes it leaves, cannot become root, stall a test past its time
limit, crash the grader or blow up its judge with what the worker sends, or take the machine's memory,
processes, disk or the files of later gradings.

The attacks run as root through grader.py on a copy of src/ with a few tests selected (the same code as the
Gradescope bundle, which tests/harness/test_grader_isolation.py attacks whole), each planted in the reference's
helper.py around the function one test calls.  The protocol's parent side is also fed garbage directly.
"""

import json
import os
import random
import shutil
import tempfile
import types
from pathlib import Path

import pytest

from conftest import free_uid, make_deep_tree
from gradings import copy_src, make_data, make_solution, run_grader

import graderUtil
from grading import process, protocol, registry, users
from grading.cleanup import SHARED_FOLDERS, remove_user_files
from grading.context import Context
from grading.registry import Spec
from grading.runner import Runner
from grading.worker import WORKER_PROCESSES


root_only = pytest.mark.skipif(not graderUtil.privileged(),
                               reason="the grader drops privileges only when it runs as root (Gradescope, CI)")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("data"))


@pytest.fixture
def worker_uid(monkeypatch):
    """The worker user id of the grader this test runs; whatever it left is killed afterwards in any case."""
    uid = free_uid(61700)
    monkeypatch.setenv("GRADER_WORKER_USER", str(uid))
    yield uid
    users.kill_user_processes(uid, uid)
    remove_user_files(uid, uid, SHARED_FOLDERS)


@pytest.fixture
def spy():
    """A folder every user may enter, with a root-owned file every user may append to: the planted code's way to
    leave a trace that the grader's clean-up (which removes the worker user's files) keeps."""
    folder = Path(tempfile.mkdtemp(prefix="spy-", dir="/tmp"))
    os.chmod(folder, 0o755)
    (folder / "planted").touch()
    os.chmod(folder / "planted", 0o666)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def group_of(path):
    try:
        return os.lstat(path).st_gid
    except OSError:  # another grader's sandbox, gone meanwhile
        return None


def owned_files(uid, tops=("/tmp", "/var/tmp", "/dev/shm")):
    """The files and folders of uid under `tops`, as root, at any depth (GNU find walks by descriptors: no path
    grows too long, nothing is followed); a folder of uid's is named, not what it holds."""
    import subprocess

    found = []
    for top in tops:
        if os.path.isdir(top):
            out = subprocess.run(["find", top, "-xdev", "-uid", str(uid), "-print0", "-prune"],
                                 capture_output=True).stdout
            found += [os.fsdecode(p) for p in out.split(b"\0") if p]
    return found


def in_child(fn, uid=None):
    """fn() in a forked child (as uid, when given): what it returns, as text (its repr), or the error it raised."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            out = repr(fn())
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = f"error {type(e).__name__}: {e}"
        os.write(write_end, out.encode("utf-8", "backslashreplace")[:1 << 16])
        os._exit(0)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8")


def message_queues(uid):
    """The POSIX message queues of uid, listed where /dev/mqueue may not be mounted: in a child with a mount
    namespace of its own, which mounts the queues' file system over a folder only root may use."""
    import ctypes

    folder = tempfile.mkdtemp(prefix="mqueue-")

    def listing():
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
            return "unshare failed"
        libc.mount(b"none", b"/", None, 0x4000 | (1 << 18), None)  # MS_REC | MS_PRIVATE: nothing leaks out
        if libc.mount(b"mqueue", folder.encode(), b"mqueue", 0, None) != 0:
            return "mount failed"
        return sorted(name for name in os.listdir(folder) if os.lstat(os.path.join(folder, name)).st_uid == uid)

    try:
        return in_child(listing)
    finally:
        os.rmdir(folder)


def user_keys(uid):
    """What uid's processes see of the kernel's keys that uid owns (/proc/keys, read as uid), but the user's own
    keyrings when they are empty: a key left there is a note for the next grading with that user id."""
    import time

    def read():
        deadline = time.monotonic() + 1.0  # the kernel collects keys that nothing links any more soon, not at once
        while True:
            with open("/proc/keys", encoding="utf-8") as f:
                rows = [line.split(None, 8) for line in f]
            standard = (f"_uid.{uid}:", f"_uid_ses.{uid}:", f"_persistent.{uid}:")
            found = [" ".join(r[7:]).strip() for r in rows
                     if len(r) > 8 and r[5] == str(uid) and not (r[7] == "keyring" and r[8].startswith(standard)
                                                                  and r[8].endswith("empty\n"))]
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    text = in_child(read, uid)
    return [] if text == "[]" else [text]


def leftovers(uid):
    """What the worker user still has after the grading: processes, files and folders in the shared folders
    (every one of them walked, as root, at any depth), System V IPC objects, POSIX message queues, keys."""
    found = [f"process {pid}" for pid in users.user_pids(uid)]
    found += owned_files(uid)
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                header = f.readline().split()
                for line in f:
                    if int(dict(zip(header, line.split()))["uid"]) == uid:
                        found.append(f"{kind} {line.split()[1]}")
        except OSError:
            pass
    queues = message_queues(uid)
    if queues not in ("[]", "'unshare failed'", "'mount failed'"):
        found.append(f"message queues {queues}")
    found += [f"keys {k}" for k in user_keys(uid)]
    return found


# -- the planted code: _ATTACKS maps a test id to what the student's code does when that test calls a helper
# function, found in worker_main's frame as an attacker finds it (the test that runs, and the worker's send)

HOOKS = '''
import os as _os, sys as _sys, time as _time


def _worker():
    f = _sys._getframe()
    while f is not None and f.f_code.co_name != "worker_main":
        f = f.f_back
    return (f.f_locals.get("tid"), f.f_locals.get("send")) if f is not None else (None, None)


def _hooked(fn):
    def wrapper(*args, **kwargs):
        tid, send = _worker()
        if tid in _ATTACKS:
            _ATTACKS[tid](send)
        return fn(*args, **kwargs)
    return wrapper


for _name in ("initialize_vanilla_model", "finetune", "pretrain", "train"):
    globals()[_name] = _hooked(globals()[_name])
'''


def planted(attacks):
    """helper.py's appended code: the attack functions, _ATTACKS, then the hooks."""
    return attacks + "\n" + HOOKS


# -- 1. a .pth file planted for the next worker -----------------------------------------------------------

PTH_PLANTER = '''
def _plant_pth(send):
    """Leave a process that waits for each new worker folder of the sandbox and puts a .pth file into its
    user site-packages: a Python with user site on runs it at start-up, before any privilege drop."""
    pid = _os.fork()
    if pid:
        _os.waitpid(pid, 0)
        return
    _os.setsid()
    if _os.fork() == 0:
        here = _os.getcwd()
        sandbox, done = _os.path.dirname(here), set([_os.path.basename(here)])
        site = ".local/lib/python%d.%d/site-packages" % _sys.version_info[:2]
        end = _time.time() + 120
        while _time.time() < end:
            for name in _os.listdir(sandbox):
                if name.startswith("worker-") and name not in done:
                    try:
                        _os.makedirs(_os.path.join(sandbox, name, site), exist_ok=True)
                        with open(_os.path.join(sandbox, name, site, "evil.pth"), "w") as f:
                            f.write(PTH_LINE)
                    except OSError:
                        continue
                    done.add(name)
                    with open("{spy}/planted", "a") as f:
                        f.write(name + "\\n")
            _time.sleep(0.002)
    _os._exit(0)


PTH_LINE = 'import os; open("{marker}/written-by-uid-%d" % os.getuid(), "w").close()\\n'
_ATTACKS = {{"1c-3-basic": _plant_pth}}
'''


@pytest.mark.grader
@root_only
def test_a_pth_file_planted_for_the_next_worker_never_runs_as_root(tmp_path, data, worker_uid, spy):
    """A process left by one test plants a .pth file into each later worker's HOME (its user site-packages) as
    soon as the folder appears.  The workers start with user site off (-s), and the folder is the worker
    user's only once the worker is unprivileged: the .pth never writes into a folder only root may write, and
    nothing of the planter survives the grading."""
    marker = Path(tempfile.mkdtemp(prefix="root-only-", dir="/tmp"))  # mode 700, root's: only root writes here
    try:
        src = copy_src(tmp_path / "copy", append={"helper.py": planted(PTH_PLANTER.format(spy=spy, marker=marker))})
        # one worker at a time: 1c first (the longest group), then three more workers the planter can reach
        r = run_grader(src, "1c-3-basic", "1d-2-basic", "1e-4-basic", "3a-0-basic", data=data, extra=["--jobs", "1"])
        assert (spy / "planted").read_text(), "the planter never reached a worker folder"
        assert list(marker.iterdir()) == [], "a planted .pth file ran as root"
        assert leftovers(worker_uid) == []
        assert r.status("1e-4-basic") == r.status("3a-0-basic") == "passed"
    finally:
        shutil.rmtree(marker, ignore_errors=True)


# -- 2. the protocol: a stall, a malformed result, a decompression bomb ------------------------------------

PROTOCOL_ATTACKS = '''
def _stall(send):
    """Announce the running test again and again, as if it had just started: an old parent reset its deadline."""
    for _ in range(14):
        send({{"ev": "start", "id": "1c-3-basic"}})
        _time.sleep(1)


def _bad_seconds(send):
    """A result whose seconds is a string (an old parent crashed on it), and a process left running."""
    if _os.fork() == 0:
        _os.setsid()
        _time.sleep(600)
        _os._exit(0)
    send({{"ev": "result", "id": "1f-0-basic", "status": "passed", "message": "", "output": "", "seconds": "soon"}})


def _bomb(send):
    """The test's report becomes a zip of 5 MB whose one DEFLATE member inflates to 1.1 GB."""
    import shutil, torch
    torch.save = lambda obj, path, *a, **k: shutil.copyfile("{bomb}", path)


_ATTACKS = {{"1c-3-basic": _stall, "1f-0-basic": _bad_seconds, "1c-0-hidden": _bomb}}
'''


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """A report of 5 MB that unpacks to 1.1 GB (a torch.save archive would hold its members as they are)."""
    import zipfile

    folder = Path(tempfile.mkdtemp(prefix="bomb-", dir="/tmp"))
    os.chmod(folder, 0o755)
    path = folder / "bomb.report"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("archive/data.pkl", "w", force_zip64=True) as member:
            zeros = bytes(1 << 20)
            for _ in range(1100):
                member.write(zeros)
    os.chmod(path, 0o644)
    assert path.stat().st_size < protocol.REPORT_BYTES  # small enough to be taken from the worker
    yield path
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.grader
@root_only
def test_what_a_worker_sends_is_checked_and_cannot_stall_crash_or_blow_up_the_grader(tmp_path, data, worker_uid,
                                                                                       bomb):
    """Three things the student's process sends, each in a test of its own (the others keep their marks):
    a `start` every second for its running test (the test fails at once: its deadline, set when it started,
    is not moved); a result whose seconds is a string (the test fails; the grader does not crash, its report
    is complete, nothing the test left runs on); a report that inflates to 1.1 GB (refused before any
    torch.load, with the reason)."""
    src = copy_src(tmp_path / "copy", append={"helper.py": planted(PROTOCOL_ATTACKS.format(bomb=bomb))})
    tests = ["1c-3-basic", "1c-0-hidden", "1e-4-basic", "1f-0-basic", "1f-3-basic"]
    # time limits 0.3 times the tests': 9 s for 1c-3-basic, whose stall would take 14 s
    r = run_grader(src, *tests, data=data, solution=make_solution(tmp_path / "reference"),
                   extra=["--timeout-scale", "0.3"])
    assert sorted(r.tests) == sorted(tests)
    stalled = r.tests["1c-3-basic"]
    assert r.status("1c-3-basic") == "failed" and "started 1c-3-basic a second time" in stalled["output"], stalled
    assert "broke the grader's protocol" in r.tests["1f-0-basic"]["output"], r.tests["1f-0-basic"]
    assert r.status("1f-0-basic") == "failed"
    bombed = r.tests["1c-0-hidden"]
    assert r.status("1c-0-hidden") == "failed" and "unpacks to 1100 MiB" in bombed["output"], bombed
    assert r.status("1e-4-basic") == r.status("1f-3-basic") == "passed", r.stdout[-3000:]
    assert r.seconds < 60, r.stdout[-2000:]
    assert leftovers(worker_uid) == []
    assert not [p for p in Path(tempfile.gettempdir()).glob("grader-sandbox-*") if group_of(p) == worker_uid]


# -- 3. resources: memory, processes, threads, output, files ------------------------------------------------

RESOURCE_ATTACKS = '''
def _memory(send):
    import mmap
    try:
        mmap.mmap(-1, 8 << 30)  # address space only: nothing is touched, so an unbounded worker gets it
        got = "MAPPED"
    except (OSError, MemoryError) as e:
        got = type(e).__name__
    raise RuntimeError("spy memory=" + got)


def _forks(send):
    import signal
    n = 0
    for _ in range(300):
        try:
            pid = _os.fork()
        except OSError:
            break
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            _os.setsid()
            _time.sleep(600)
            _os._exit(0)
        n += 1
    raise RuntimeError("spy forks=%d" % n)


def _threads(send):
    import threading
    n = 0
    for _ in range(300):
        try:
            threading.Thread(target=_time.sleep, args=(600,), daemon=True).start()
        except RuntimeError:
            break
        n += 1
    raise RuntimeError("spy threads=%d" % n)


def _litter(send):
    import ctypes
    print("x" * 50_000_000)
    _os.write(2, b"y" * 50_000_000)
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            _os.makedirs(folder + "/litter-folder/inside", exist_ok=True)
            open(folder + "/litter-folder/inside/file", "w").close()
            open(folder + "/litter-file-%d" % _os.getuid(), "w").close()
        except OSError:
            pass
    try:
        with open("/tmp/litter-big-%d" % _os.getuid(), "wb") as f:
            for _ in range(100):
                f.write(bytes(1 << 20))
        big = "WRITTEN"
    except OSError as e:
        big = type(e).__name__
    shm = ctypes.CDLL(None).shmget(0, 1 << 20, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
    raise RuntimeError("spy big=%s shm=%s" % (big, "made" if shm >= 0 else "refused"))


_ATTACKS = {"1c-3-basic": _memory, "1c-1-basic": _forks, "1f-0-basic": _threads, "1c-2-basic": _litter}
'''


@pytest.mark.grader
@root_only
def test_memory_processes_threads_output_and_files_are_bounded_and_removed(tmp_path, data, worker_uid):
    """Tests whose student code maps 8 GiB, forks 300 children that ignore SIGTERM, starts 300 threads, prints
    50 MB to stdout and to the descriptor, writes a 100 MB file and litters /tmp, /var/tmp, /dev/shm and System
    V shared memory: each is bounded (the worker's resource limits), the grading finishes, the other tests keep
    their marks, and nothing of the worker user is left afterwards."""
    src = copy_src(tmp_path / "copy", append={"helper.py": planted(RESOURCE_ATTACKS)})
    tests = ["1c-3-basic", "1c-1-basic", "1c-2-basic", "1e-4-basic", "1f-0-basic", "1f-3-basic"]
    r = run_grader(src, *tests, data=data)
    assert sorted(r.tests) == sorted(tests)

    def spied(tid):
        assert r.status(tid) == "failed", r.tests[tid]
        return r.tests[tid]["output"].split("spy ", 1)[1].split()[0:2]

    assert spied("1c-3-basic")[0] in ("memory=MemoryError", "memory=OSError"), r.tests["1c-3-basic"]
    forks = int(spied("1c-1-basic")[0].split("=")[1])
    threads = int(spied("1f-0-basic")[0].split("=")[1])
    assert forks < WORKER_PROCESSES and threads < WORKER_PROCESSES, (forks, threads)
    assert spied("1c-2-basic") == ["big=OSError", "shm=made"], r.tests["1c-2-basic"]
    assert r.status("1e-4-basic") == r.status("1f-3-basic") == "passed", r.stdout[-3000:]
    assert len(r.stdout) < 200_000 and len(json.dumps(r.json)) < 200_000
    assert leftovers(worker_uid) == []


# -- 4. an error of the grader's own -----------------------------------------------------------------------

LEFTOVER = '''
def _leave(send):
    if _os.fork() == 0:
        _os.setsid()
        _time.sleep(600)
        _os._exit(0)


_ATTACKS = {"1c-3-basic": _leave}
'''


@pytest.mark.grader
@root_only
def test_an_error_in_the_grader_itself_still_kills_and_removes_what_the_workers_left(tmp_path, data, worker_uid,
                                                                                     monkeypatch, capsys):
    """A bug of the parent's (here: checking a result raises) ends that group's tests with "no result", the
    grader reaches its summary, and the finally blocks kill the process the student's code left and remove
    the sandbox."""
    import grader

    src = copy_src(tmp_path / "copy", append={"helper.py": planted(LEFTOVER)})
    checked = protocol.check_message

    def buggy(msg, specs):
        if msg.get("ev") == "result":
            raise RuntimeError("a bug of the grader's")
        return checked(msg, specs)

    monkeypatch.setattr(protocol, "check_message", buggy)  # where the runner asks it
    assert grader.main(["1c-3-basic", "--submission-dir", str(src / "submission"), "--data-dir", str(data)]) == 0
    out, err = capsys.readouterr()
    assert "a bug of the grader" in err and "no result" in out, (out[-2000:], err[-2000:])
    assert leftovers(worker_uid) == []


# -- 5. issue 39: what a worker leaves for the clean-up, the keys and queues it leaves for the next grading,
# the cores it takes from its neighbours, a failure of the grader's own

DEEP_LITTER = """
def _deep(send):
    '''What a recursive clean-up cannot walk, in /tmp and in the worker's own folder: a tree 1,500 folders deep,
    names that are not UTF-8 or hold a newline, a FIFO and a socket, a folder nobody may enter with a file in it,
    and a hard link to a file of root's (only the link is the user's: the file must stay).'''
    import socket
    for top in ("/tmp", _os.getcwd()):
        base = "%s/deep-%d" % (top, _os.getuid())
        _os.mkdir(base)
        for name in (b"\\xff\\xfe not utf-8", b"new\\nline"):
            open(_os.path.join(_os.fsencode(base), name), "w").close()
        _os.mkfifo(base + "/fifo")
        socket.socket(socket.AF_UNIX).bind(base + "/socket")
        _os.mkdir(base + "/locked")
        open(base + "/locked/inside", "w").close()
        _os.chmod(base + "/locked", 0)
        _os.link("{spy}/planted", base + "/link")
        fd = _os.open(base, _os.O_RDONLY)
        for _ in range(1500):
            _os.mkdir("d", dir_fd=fd)
            below = _os.open("d", _os.O_RDONLY, dir_fd=fd)
            _os.close(fd)
            fd = below
        _os.close(_os.open("leaf", _os.O_CREAT | _os.O_WRONLY, 0o600, dir_fd=fd))
        _os.close(fd)


_ATTACKS = {{"1c-3-basic": _deep}}
"""


@pytest.mark.grader
@root_only
def test_trees_too_deep_for_a_recursive_walk_and_odd_files_are_removed(tmp_path, data, worker_uid, spy):
    """The worker leaves, in /tmp and in its own folder, a tree 1,500 folders deep (a recursive walk raised
    RecursionError as root: no results.json, the sandbox and its copies left behind), names that are not UTF-8
    or hold a newline, a FIFO, a socket, a folder nobody may enter and a hard link to a file of root's.  The
    grading ends with every result, nothing of the user is left, root's file keeps its one name, and the next
    grading with the same user id starts clean."""
    (spy / "planted").write_text("root's\n")
    src = copy_src(tmp_path / "copy", append={"helper.py": planted(DEEP_LITTER.format(spy=spy))})
    r = run_grader(src, "1c-3-basic", "1e-4-basic", data=data)
    assert r.status("1e-4-basic") == "passed", r.stdout[-3000:]
    assert leftovers(worker_uid) == []
    assert (spy / "planted").stat().st_nlink == 1 and (spy / "planted").read_text() == "root's\n"
    assert not [p for p in Path(tempfile.gettempdir()).glob("grader-sandbox-*") if group_of(p) == worker_uid]
    from grading import sandbox as sandbox_module  # the next grading's sandbox takes the same id, clean

    box = sandbox_module.Sandbox(src / "submission", src / "submission", data, public=())
    assert box.uid == worker_uid and box.close() == []


KEYS_AND_QUEUES = """
import ctypes as _ctypes, platform as _platform


def _syscall(number, *args):
    libc = _ctypes.CDLL(None, use_errno=True)
    result = libc.syscall(number, *[_ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return result if result >= 0 else -_ctypes.get_errno()


def _notes(send):
    '''Notes for the next grading with this user id: a POSIX message queue, and keys in the user's keyring, its
    session keyring and its persistent keyring; and the key that the grader's session keyring holds.'''
    add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[_platform.machine()]
    got = {}
    for ring, label in ((-4, "user"), (-5, "session")):
        got[label] = _syscall(add_key, b"user", b"note", b"from an earlier grading", 23, ring) > 0
    persistent = _syscall(keyctl, 22, -1, -4)  # KEYCTL_GET_PERSISTENT: this user's, linked into its keyring
    got["persistent"] = persistent > 0 and _syscall(add_key, b"user", b"note", b"x", 1, persistent) > 0
    secret = _syscall(keyctl, 10, -3, b"user", b"grader-secret", 0)  # KEYCTL_SEARCH the session keyring
    buf = _ctypes.create_string_buffer(64)
    got["secret"] = secret > 0 and _syscall(keyctl, 11, secret, buf, 64) > 0  # KEYCTL_READ
    libc = _ctypes.CDLL(None, use_errno=True)
    got["queue"] = libc.mq_open(b"/note-%d" % _os.getuid(), _os.O_CREAT | _os.O_RDWR, 0o600, None) >= 0
    raise RuntimeError("spy " + " ".join("%s=%s" % kv for kv in sorted(got.items())))


_ATTACKS = {"1c-3-basic": _notes}
"""

# runs the rest of its command line in a new session keyring that holds a key of root's, as a grader started
# from a login (pam_keyinit) runs in one
IN_A_SESSION_KEYRING = (
    "import ctypes, os, platform, sys; libc = ctypes.CDLL(None, use_errno=True); "
    "add_key, keyctl = {'x86_64': (248, 250), 'aarch64': (217, 219)}[platform.machine()]; "
    "libc.syscall(keyctl, ctypes.c_long(1), b'grader-session'); "  # KEYCTL_JOIN_SESSION_KEYRING
    "libc.syscall(add_key, b'user', b'grader-secret', b'root only', ctypes.c_long(9), ctypes.c_long(-3)); "
    "os.execv(sys.argv[1], sys.argv[1:])")


@root_only
def test_the_worker_gets_the_public_data_files_by_name_and_nothing_else(tmp_path, worker_uid):
    """The instructor's data folder holds the answers and what an editor or a file manager leaves beside them (a
    backup birth_test.tsv~, a "birth_test (copy).tsv", notes, a folder of older files): the sandbox's copy, which
    student code reads, holds the four public files grader.py names, and nothing else."""
    import grader  # noqa: F401  (registers the data files it reads)
    from grading import sandbox as sandbox_module

    public = registry.settings.public_data
    assert sorted(public) == ["birth_dev.tsv", "birth_places_train.tsv", "birth_test_inputs.tsv", "wiki.txt"]
    assert not set(public) & set(registry.settings.held_out)
    data = tmp_path / "data"
    (data / "older").mkdir(parents=True)
    for name in [*public, "birth_test.tsv", "birth_test.tsv~", "birth_test (copy).tsv", ".birth_test.tsv.swp",
                 "notes.txt", "older/birth_test.tsv"]:
        (data / name).write_text("Where was Ada Najjar born?\tParis\n")
    (tmp_path / "sub").mkdir()
    box = sandbox_module.Sandbox(tmp_path / "sub", tmp_path / "sub", data, public=public)
    try:
        assert sorted(os.listdir(box.data_dir)) == sorted(public)
    finally:
        assert box.close() == []


@pytest.mark.grader
@root_only
def test_no_message_queue_or_key_outlives_the_grading_and_roots_keys_stay_roots(tmp_path, data, worker_uid):
    """The student's code leaves a POSIX message queue (where /dev/mqueue is not mounted it is in no folder) and
    keys in its user's keyrings, which outlive every process (a later grading with the same user id read them),
    and reads the key that the session keyring of a grader started from a login holds (it did: a worker kept that
    keyring).  The queue is refused (the worker may not make any), the keys are gone when the grading ends, and
    root's key is out of reach."""
    import sys

    src = copy_src(tmp_path / "copy", append={"helper.py": planted(KEYS_AND_QUEUES)})
    r = run_grader(src, "1c-3-basic", data=data, launcher=[sys.executable, "-c", IN_A_SESSION_KEYRING])
    spied = r.tests["1c-3-basic"]["output"].split("spy ", 1)[1].split()
    assert "secret=False" in spied and "queue=False" in spied, spied
    assert leftovers(worker_uid) == []


def make_queue(uid):
    """A POSIX message queue of uid's (made as uid, in a child)."""
    import ctypes

    def make():
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.mq_open(b"/left-%d" % uid, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0

    assert in_child(make, uid) == "True"


def lock_user_keyring(uid, seconds=5):
    """As uid: a key in its user keyring, which then gives nobody (the user, root) the right to change it, for
    `seconds` (then the kernel retires it)."""
    import ctypes
    import platform

    add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]

    def lock():
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall(add_key, b"user", b"note", b"locked in", ctypes.c_long(9), ctypes.c_long(-4))
        libc.syscall(keyctl, ctypes.c_long(15), ctypes.c_long(-4), ctypes.c_long(seconds))  # SET_TIMEOUT
        # SETPERM: view, read and search for its possessor and its user; no write (KEYCTL_CLEAR needs it)
        return libc.syscall(keyctl, ctypes.c_long(5), ctypes.c_long(-4), ctypes.c_long(0x0b0b0000))

    return in_child(lock, uid)


@root_only
def test_a_user_id_whose_leftovers_cannot_be_removed_is_not_used_again(tmp_path, monkeypatch):
    """A POSIX message queue the worker user left is removed when the sandbox closes.  A user keyring that its user
    locked (a key in it, and no right for anyone, root included, to clear it) cannot be emptied: that user id is
    marked in the claims folder, and no later grading takes it (the next free one is used instead; named, it is
    refused with the reason) until the instructor removes the mark."""
    from grading import sandbox as sandbox_module

    from grading import cleanup

    (tmp_path / "sub").mkdir()
    (tmp_path / "data").mkdir()
    uid = free_uid(61800)
    monkeypatch.setenv("GRADER_WORKER_USER", str(uid))
    make_queue(uid)
    box = sandbox_module.Sandbox(tmp_path / "sub", tmp_path / "sub", tmp_path / "data", public=())
    box.close()
    assert message_queues(uid) in ("[]", "'unshare failed'")

    # a locked keyring stays locked for the kernel's key collection delay (5 minutes): the ids of a test that
    # ran just before are not clean yet
    clean = (u for u in users.unused_uids(range(61900, 61990), 90) if not cleanup.remove_user_keys(u, u))
    first, second = next(clean), next(clean)
    monkeypatch.delenv("GRADER_WORKER_USER")
    monkeypatch.setattr(users, "WORKER_UIDS", [first, second])
    assert lock_user_keyring(first) == "0"
    marks = users.claims_folder() / f"{first}.left"
    try:
        box = sandbox_module.Sandbox(tmp_path / "sub", tmp_path / "sub", tmp_path / "data", public=())
        box.close()
        assert box.uid == second and marks.is_file()
        with pytest.raises(ValueError, match="could not be removed"):
            users.claim_worker_user(str(first))
    finally:
        marks.unlink(missing_ok=True)


WIDEN = """
def _widen(send):
    '''Take every core of the machine (the grader was pinned to one) and say where this process may run now.'''
    try:
        _os.sched_setaffinity(0, range(_os.cpu_count()))
    except OSError:
        pass
    cpus = ",".join(map(str, sorted(_os.sched_getaffinity(0))))
    groups = open("/proc/self/cgroup").read().replace("\\n", ";").replace(" ", "")
    raise RuntimeError("spy cpus=%s groups=%s" % (cpus, groups))


_ATTACKS = {"1c-3-basic": _widen}
"""

PIN_TO = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); os.execv(sys.argv[2], sys.argv[2:])"


def cpuset_usable():
    """Whether this machine has a cpuset controller the grader could use (cgroup v1, or v2 offering it)."""
    if os.path.isfile("/sys/fs/cgroup/cpuset/cpuset.cpus"):
        return True
    controllers = Path("/sys/fs/cgroup/cgroup.controllers")
    return controllers.is_file() and "cpuset" in controllers.read_text().split()


@pytest.mark.grader
@root_only
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: nothing to widen to")
def test_a_grading_cannot_take_cores_beyond_its_own(tmp_path, data, worker_uid):
    """grade_class pins each grader to its share of the cores with an affinity mask, which any process may widen:
    a submission's spinners then ran on the neighbours' cores (a grading beside them went from 6 s to 100 s).
    Where the kernel has a cpuset controller the grader puts its workers in a cgroup of the grading's own,
    limited to the cores the grader was given: a process that widens its mask still runs only there."""
    import sys

    if not cpuset_usable():
        pytest.skip("no cpuset controller here: the grader says so in its header and pins as before")
    src = copy_src(tmp_path / "copy", append={"helper.py": planted(WIDEN)})
    r = run_grader(src, "1c-3-basic", data=data, launcher=[sys.executable, "-c", PIN_TO, "0"], extra=["--verbose"])
    spied = r.tests["1c-3-basic"]["output"].split("spy ", 1)[1].split()
    assert spied[0] == "cpus=0" and "cs224n-grader-" in spied[1], spied
    assert "in a cgroup of its own" in r.stdout.split("\n  ")[0], r.stdout[:2000]
    assert leftovers(worker_uid) == []


@pytest.mark.grader
@root_only
def test_where_no_cgroup_can_be_made_the_grading_runs_as_before_and_says_so(tmp_path, data, worker_uid,
                                                                            monkeypatch, capsys):
    """Where no cgroup hierarchy can be written (Gradescope's Docker mounts /sys/fs/cgroup read-only), the
    grading runs as it did before (resource limits per process, the user's process count), and its header says
    that the grading as a whole is not bounded."""
    import grader
    from grading import cgroups

    monkeypatch.setattr(cgroups, "hierarchies", lambda: [])
    src = copy_src(tmp_path / "copy")
    assert grader.main(["1e-4-basic", "--submission-dir", str(src / "submission"), "--data-dir", str(data),
                        "--verbose"]) == 0  # the sandbox's details: the TA's view
    said = capsys.readouterr()
    out = said.out
    assert "no cgroup could be made here" in out and "1e-4-basic     passed" in said.err, out[-2000:]
    assert leftovers(worker_uid) == []


@root_only
def test_the_clean_up_removes_any_depth_with_a_few_descriptors_and_stops_at_its_bound(tmp_path, monkeypatch):
    """cleanup.remove_folder on a tree 1,500 folders deep whose top already holds the names that deep folders are
    renamed to (a file, a folder with something in it), beside a folder of 5,000 files: everything goes, with
    never more than HELD folders open at once; with a budget smaller than the tree, the clean-up stops and says
    what is left instead of walking on."""
    import time

    from grading import cleanup

    top = tmp_path / "left"
    make_deep_tree(top / "chain", 1500)
    (top / ".removing-1").write_text("in the way")
    (top / ".removing-2").mkdir()
    (top / ".removing-2" / "x").write_text("in the way too")
    (top / "many").mkdir()
    for k in range(5_000):
        (top / "many" / str(k)).touch()
    opened, given = [0], cleanup.open_folder

    def counted(name, dir_fd=None):
        fd = given(name, dir_fd)
        opened[0] = max(opened[0], len(os.listdir("/proc/self/fd")))
        return fd

    monkeypatch.setattr(cleanup, "open_folder", counted)
    before = len(os.listdir("/proc/self/fd"))
    started = time.monotonic()
    assert cleanup.remove_folder(top / "many", cleanup.Budget(1000)) == [
        f"{top / 'many'}: more than 1,000 entries; the clean-up stopped there"]
    assert cleanup.remove_folder(top) == [] and not top.exists()
    assert opened[0] - before <= cleanup.HELD + 4, opened[0] - before
    assert time.monotonic() - started < 30


@root_only
def test_folders_the_worker_made_unsearchable_are_removed_by_a_root_that_cannot_override_modes(tmp_path):
    """In some containers root has no right to override file modes (no CAP_DAC_OVERRIDE): a worker's folders of
    mode 000, one inside another, with files in them, stopped the clean-up there.  It makes such a folder root's,
    mode 0700, through a descriptor pinning the folder itself, and removes it."""
    import shutil
    import subprocess
    import sys

    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    uid = free_uid(61990)
    top = tmp_path / "shared"
    (top / "a" / "b" / "c").mkdir(parents=True)
    for name in ("a/b/f", "a/b/c/g"):
        (top / name).touch()
    for path in [top / "a", *(top / "a").rglob("*")]:
        os.chown(path, uid, uid)
    for name in ("a/b/c", "a/b", "a"):
        os.chmod(top / name, 0)
    code = f"from grading import cleanup; print(cleanup.remove_user_files({uid}, {uid}, [{str(top)!r}]))"
    r = subprocess.run(["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps",
                        "-dac_override,-dac_read_search", sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=Path(graderUtil.__file__).parent)  # -c: the working folder is first on sys.path
    assert r.stdout.strip() == "[]" and list(top.iterdir()) == [], (r.stdout, r.stderr[-2000:])


@root_only
def test_the_clean_up_does_not_walk_into_a_file_system_mounted_below_a_shared_folder(tmp_path):
    """A chroot left in /var/tmp by another job (a rehearsal's, with its /proc mounted) is not the worker's: the
    clean-up walked into that /proc, reported the folders of the worker user's processes in it as its leftovers
    (and once stopped there with EINVAL), so the user id was never used again.  It now stays on the shared
    folder's own file system, as `find -xdev`, and still removes the worker's note beside the chroot."""
    import subprocess
    import sys

    if shutil.which("unshare") is None or shutil.which("setpriv") is None:
        pytest.skip("unshare and setpriv (util-linux) are needed")
    uid = free_uid(61990)
    top = tmp_path / "shared"
    (top / "chroot" / "proc").mkdir(parents=True)
    (top / "open").mkdir()
    os.chmod(top / "open", 0o1777)
    note = top / "open" / "note"
    note.write_text("for the next grading")
    os.chown(note, uid, uid)
    sleeper = subprocess.Popen(["sleep", "60"], user=uid, group=uid, extra_groups=[], start_new_session=True)
    code = f"from grading import cleanup; print(cleanup.remove_user_files({uid}, {uid}, [{str(top)!r}]))"
    try:
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            'mount -t proc proc "$0" && exec "$@"', str(top / "chroot" / "proc"), sys.executable,
                            "-c", code], capture_output=True, text=True, cwd=Path(graderUtil.__file__).parent)
    finally:
        sleeper.kill()
        sleeper.wait()
    if "mount" in r.stderr and r.returncode:
        pytest.skip(f"no mount namespace of its own here: {r.stderr.strip()[-200:]}")
    assert r.stdout.strip() == "[]" and not note.exists(), (r.stdout, r.stderr[-2000:])


def test_a_folder_that_cannot_be_listed_is_reported_and_the_clean_up_goes_on(tmp_path, monkeypatch):
    """A listing that fails half-way (EINVAL from a pseudo file system, say) stopped the whole walk with an
    OSError, leaving the rest of the shared folder unwalked: now that folder is reported, and the walk goes on
    to the next one."""
    import errno

    from grading import cleanup

    top = tmp_path / "shared"
    for name in ("a", "b", "c"):
        (top / name).mkdir(parents=True)
        (top / name).chmod(0o777)  # folders any user may search: the walk goes into each
    inode = {name: (top / name).stat().st_ino for name in ("a", "b", "c")}
    listed = []
    real = os.scandir

    def scandir(fd):
        st = os.fstat(fd)
        listed.append(st.st_ino)
        if st.st_ino == inode["b"]:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), fd)
        return real(fd)

    monkeypatch.setattr(cleanup.os, "scandir", scandir)
    left = remove_user_files(free_uid(61990), 61990, [str(top)])
    assert left == [f"{top}/b (its entries could not be listed: {os.strerror(errno.EINVAL)})"], left
    assert inode["a"] in listed and inode["c"] in listed, "the walk stopped at the folder it could not list"


@root_only
def test_reclaim_removes_what_a_grader_killed_before_its_clean_up_left(monkeypatch):
    """grade_class kills a grader that does not end once interrupted; what its workers left (a process, a file in
    /tmp, the sandbox with the submission's copies, open to the worker group) is then reclaimed: the id held,
    its processes killed, its leftovers and the stale sandbox removed, the id let go."""
    import subprocess

    from grading import sandbox as sandbox_module

    uid = free_uid(61990)
    monkeypatch.setattr(sandbox_module, "WORKER_UIDS", [uid])
    left = Path(tempfile.gettempdir()) / f"left-by-{uid}"
    left.write_text("a note")
    os.chown(left, uid, uid)
    stale = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
    (stale / "submission").mkdir()
    (stale / "submission" / "model.py").write_text("an earlier submission's code")
    os.chown(stale, 0, uid)
    os.chmod(stale, 0o750)
    sleeper = subprocess.Popen(["sleep", "60"], user=uid, group=uid, extra_groups=[], start_new_session=True)
    try:
        assert sandbox_module.reclaim(uid) == []
        assert sleeper.wait(timeout=10) == -9 and not left.exists() and not stale.exists()
    finally:
        sleeper.kill()
        left.unlink(missing_ok=True)
        graderUtil.remove_folder(stale)


@pytest.mark.grader
@root_only
def test_a_failure_of_the_graders_own_still_writes_results_json_and_leaves_no_folder(tmp_path, data, worker_uid,
                                                                                     monkeypatch):
    """A bug of the grader's as root before any test runs (here: copying the data into the sandbox raises) ends
    the grading with a results.json that says so in one sentence, and removes the sandbox it had begun (it used to
    raise out of main, with no results.json, leaving the sandbox folder)."""
    import grader
    from grading import sandbox as sandbox_module

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    def buggy(src, dst, names):
        raise RuntimeError("a bug of the grader's")

    monkeypatch.setattr(sandbox_module, "copy_named", buggy)
    out = tmp_path / "results.json"
    src = copy_src(tmp_path / "copy")
    code = grader.main(["1e-4-basic", "--submission-dir", str(src / "submission"), "--data-dir", str(data),
                        "--json", str(out)])
    results = json.loads(out.read_text(encoding="utf-8"))
    assert code != 0 and results["score"] == 0 and "a bug of the grader" in results["output"], results
    assert list(temp.iterdir()) == []


# -- 6. the parent side, fed garbage -----------------------------------------------------------------------


class ScriptedWorker:
    """Stands in for a Worker: next() hands out the given messages, then the end of the pipe."""

    def __init__(self, messages):
        self.messages = list(messages)
        self.killed = False
        self.proc = types.SimpleNamespace(returncode=-9)

    def next(self, deadline):
        return self.messages.pop(0) if self.messages else process.EOF

    def kill(self):
        self.killed = True

    def stderr_tail(self, chars=600):
        return ""


IDS = ["9a-0-basic", "9a-1-basic", "9a-0-hidden"]


def make_runner():
    specs = {tid: Spec(tid, "a test", lambda ctx: None, timeout=5) for tid in IDS}
    specs["9a-0-hidden"].check = lambda ctx, report: None
    results = []
    runner = Runner(specs, {}, 1.0, results.append)
    return runner, results


def drive(messages, judged=None):
    runner, results = make_runner()
    provisional = {}
    try:
        left = runner._drive(ScriptedWorker(messages), list(IDS), provisional, judged)
    finally:
        runner.close()
    return left, results, provisional


def well_formed(result):
    return (set(result) == {"id", "status", "message", "output", "seconds"} and result["id"] in IDS
            and result["status"] in ("passed", "failed") and isinstance(result["message"], str)
            and isinstance(result["output"], str) and isinstance(result["seconds"], float))


def ok(tid):
    return {"ev": "result", "id": tid, "status": "passed", "message": "", "output": "", "seconds": 0.1}


def test_a_second_start_fails_the_test_and_a_finished_test_announced_again_loses_its_result():
    left, results, _ = drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-basic"},
                              {"ev": "start", "id": "9a-0-basic"}])
    assert [(r["id"], r["status"]) for r in results] == [("9a-0-basic", "failed")]
    assert "started 9a-0-basic a second time" in results[0]["message"] and left == ["9a-1-basic", "9a-0-hidden"]
    left, results, _ = drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-basic"}, ok("9a-0-basic"),
                              {"ev": "start", "id": "9a-0-basic"}])
    # between tests: the finished test loses its result, and the worker's other tests fail with it
    assert [(r["id"], r["status"]) for r in results] == [("9a-0-basic", "passed"), ("9a-0-basic", "failed"),
                                                          ("9a-1-basic", "failed"), ("9a-0-hidden", "failed")]
    # a test with a judge passed in the student's worker: announced again, it never reaches the judge
    left, results, provisional = drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-hidden"}, ok("9a-0-hidden"),
                                        {"ev": "start", "id": "9a-0-hidden"}])
    assert provisional == {} and [(r["id"], r["status"]) for r in results] == [("9a-0-hidden", "failed"),
                                                                                 ("9a-0-basic", "failed"),
                                                                                 ("9a-1-basic", "failed")]


@pytest.mark.parametrize("bad", [
    dict(ok("9a-0-basic"), seconds="soon"), dict(ok("9a-0-basic"), seconds=float("nan")),
    dict(ok("9a-0-basic"), seconds=True), dict(ok("9a-0-basic"), status="PASSED"),
    dict(ok("9a-0-basic"), message=["x"]), dict(ok("9a-0-basic"), output="x" * 100_000),
    dict(ok("9a-0-basic"), score=100), dict(ok("9a-0-basic"), vouches=1), dict(ok("9a-0-basic"), vouches="yes"),
    dict(ok("9a-0-basic"), reason="predictions-not-from-params"),  # a reason of a test that passed
    dict(ok("9a-0-basic"), status="failed", reason="copied"), dict(ok("9a-0-basic"), status="failed", reason=1),
    ok("9a-1-basic"), ok("9z-0-basic"), {"ev": "done"}, {"ev": "ready"},
    {"ev": "import", "module": {"a": 1}}, {"ev": 3}, {"ev": "start", "id": "9a-1-basic"}])
def test_a_malformed_or_out_of_order_message_fails_the_running_test(bad):
    left, results, _ = drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-basic"}, bad])
    assert [(r["id"], r["status"]) for r in results] == [("9a-0-basic", "failed")], results
    assert "broke the grader's protocol" in results[0]["message"] and all(map(well_formed, results))


def test_only_a_judge_can_say_that_a_failed_comparison_still_vouches():
    """A failed comparison on a genuine block vouches for the basic tests that count with it (registry.Mismatch),
    but only a judge's result says so: from a student's worker, the word is dropped."""
    vouching = dict(ok("9a-0-hidden"), status="failed", vouches=True)
    left, results, provisional = drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-hidden"}, vouching])
    assert results == [] or all("vouches" not in r for r in results)
    assert all("vouches" not in r for r in [*results, *provisional.values()]) and left == ["9a-0-basic", "9a-1-basic"]
    judged = {}
    drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-hidden"}, vouching], judged)
    assert judged["9a-0-hidden"]["vouches"] is True and judged["9a-0-hidden"]["status"] == "failed"
    judged = {}
    drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-hidden"}, dict(vouching, vouches=False)], judged)
    assert "vouches" not in judged["9a-0-hidden"]


def test_the_parent_survives_any_message_a_worker_sends():
    """1500 random message sequences, signed as the worker signs them: _drive never raises, and every
    test it settles has one well-formed result."""
    rng = random.Random(28)

    def value(depth=0):
        kinds = [lambda: None, lambda: True, lambda: rng.randint(-2**70, 2**70),
                 lambda: rng.choice([0.5, -1.0, float("inf"), float("nan")]),
                 lambda: rng.choice(IDS + ["", "x" * 5000, "9a-0-basic\x00", "passed", "failed", "\ud800"]),
                 lambda: rng.choice(["ready", "start", "import", "imported", "result", "done", "?"]),
                 lambda: [value(depth + 1) for _ in range(rng.randrange(3))],
                 lambda: {rng.choice(["ev", "id", "status", "message", "output", "seconds", "module"]):
                          value(depth + 1) for _ in range(rng.randrange(7))},
                 lambda: dict(ok(rng.choice(IDS)),
                              **{rng.choice(["seconds", "status", "id", "output"]): value(depth + 1)})]
        return rng.choice(kinds[:6] if depth >= 3 else kinds)()

    def message():
        msg = value()
        if rng.random() < 0.7:
            msg = dict(msg) if isinstance(msg, dict) else {}
            msg.setdefault("ev", rng.choice(["start", "result", "import", "imported", "done", "ready"]))
            if msg["ev"] in ("start", "result"):
                msg.setdefault("id", rng.choice(IDS))
        return msg

    for _ in range(1500):
        messages = [{"ev": "ready"}] + [message() for _ in range(rng.randrange(1, 8))]
        judged = {} if rng.random() < 0.3 else None
        left, results, provisional = drive(messages, judged)
        settled = list(judged.values()) if judged is not None else results + list(provisional.values())
        assert all(map(well_formed, settled)), settled
        assert set(left) <= set(IDS)

    worker = process.Worker.__new__(process.Worker)
    worker.key = b"k" * 32
    for _ in range(1500):  # whatever a line holds, _verify returns a message or None
        line = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
        line = rng.choice([line, b"[" * 100_000, b'{"m": 1, "h": "x"}', b'{"m": "\\ud800", "h": "\xff"}',
                           b'{"m": "{}", "h": "' + "é".encode() * 64 + b'"}', json.dumps([1, 2]).encode()])
        assert worker._verify(line) is None or isinstance(worker._verify(line), dict)


def test_reports_that_unpack_to_too_much_are_refused_before_loading(tmp_path):
    import io
    import zipfile

    import torch

    honest = io.BytesIO()
    torch.save({"logits": torch.zeros(100, 256), "shapes": [[1, 2]]}, honest)
    assert protocol.report_problem(honest.getvalue()) is None
    deflated = io.BytesIO()
    with zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", bytes(65 << 20))
    assert "unpacks to 65 MiB" in protocol.report_problem(deflated.getvalue())
    small = io.BytesIO()
    with zipfile.ZipFile(small, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", bytes(1 << 20))
    assert "compressed" in protocol.report_problem(small.getvalue())
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as archive:
        for k in range(protocol.REPORT_MEMBERS + 1):
            archive.writestr(f"m{k}", b"")
    assert "parts" in protocol.report_problem(many.getvalue())
    assert "not a file that torch.save writes" in protocol.report_problem(b"\x80\x02}q\x00.")
    # the judge's side checks too, before torch.load
    (tmp_path / "9a-0-hidden.report").write_bytes(deflated.getvalue())
    ctx = Context({"report_dir": str(tmp_path), "submission_dir": ".", "data_dir": ".",
                              "predictions_dir": ".", "judge": True}, None)
    with pytest.raises(graderUtil.Fail, match="unpacks to 65 MiB"):
        ctx.load_report("9a-0-hidden")
    (tmp_path / "9a-0-hidden.report").write_bytes(honest.getvalue())
    assert ctx.load_report("9a-0-hidden")["shapes"] == [[1, 2]]


def test_a_report_of_shared_references_is_refused_before_a_judge_walks_it(tmp_path):
    """A list holding the same list twice, forty levels deep: 1.6 KB saved, 2**40 values for any code that walks
    it (a judge formatting it in a message took 1.1 GB).  load_report refuses it; an honest report loads."""
    import torch

    nested = [1.0]
    for _ in range(40):
        nested = [nested, nested]
    torch.save({"is_gpt": False, "type": nested}, tmp_path / "1c-3-basic.report")
    assert (tmp_path / "1c-3-basic.report").stat().st_size < 4096
    ctx = Context({"report_dir": str(tmp_path), "submission_dir": ".", "data_dir": ".",
                              "predictions_dir": ".", "judge": True}, None)
    with pytest.raises(graderUtil.Fail, match="holds more than 1,000,000 values"):
        ctx.load_report("1c-3-basic")
    wide = {"examples": [[list(range(128)), list(range(128))] for _ in range(1000)]}  # 259,003 values
    assert protocol.loaded_report_problem(wide) is None
    assert protocol.loaded_report_problem([wide] * 4) is not None  # shared, each use counts


def test_a_judge_runs_under_the_memory_limit_of_a_students_worker(monkeypatch):
    """Judges run as the grader (root on Gradescope) on what a student's process sent; the Runner gives each the
    address space of a student's worker, and the judge sets it before it loads anything."""
    import subprocess
    import sys

    from grading import runner

    started = []
    monkeypatch.setattr(runner.Runner, "_start", lambda self, cfg: started.append(cfg) or object())
    monkeypatch.setattr(runner.Runner, "_drive", lambda self, worker, remaining, provisional, judged: [])
    monkeypatch.setattr(runner.Runner, "_end", lambda self, worker: None)
    r = runner.Runner({}, {"threads": 2}, 1.0, lambda result: None, {"threads": 2})
    try:
        r._judge({"1c-3-basic": {"seconds": 1.0, "output": ""}})
    finally:
        r.close()
    assert started[0]["judge"] is True
    assert started[0]["limits"]["memory"] == r.memory() == runner.WORKER_ADDRESS_SPACE + 2 * runner.THREAD_ADDRESS_SPACE
    code = ("import resource; from grading.worker import limit_judge; limit_judge({'limits': {'memory': 3 << 30}}); "
            "print(resource.getrlimit(resource.RLIMIT_AS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(graderUtil.__file__).parent).stdout
    assert out.split() == [f"({3 << 30},", f"{3 << 30})"]


def test_the_judges_of_all_groups_run_in_as_many_processes_as_the_groups_had(monkeypatch):
    """Once every group has run, the tests that passed beside the student's code go to --jobs judge processes
    (where there is no fork server each imports torch: one per group cost more CPU than most judges), a group's
    tests to one judge (they share its cache: a dev and a test file's params are measured once), the groups
    longest first, each to the judge with the least so far."""
    from grading import runner

    timeouts = {"9a-0-basic": 20, "9a-1-basic": 60, "9b-0-basic": 30, "9b-1-basic": 60, "9c-0-basic": 10}
    specs = {tid: Spec(tid, "a test", lambda ctx: None, timeout=t) for tid, t in timeouts.items()}
    shares = []
    monkeypatch.setattr(runner.Runner, "_judge", lambda self, share: shares.append(sorted(share)))
    r = runner.Runner(specs, {}, 1.0, lambda result: None)
    try:
        r.pending = {tid: {"seconds": 0.0, "output": ""} for tid in timeouts}
        r.judge_pending(2)
        # groups by the sum of their time limits: 9b 90, 9a 80, 9c 10 (to 9a's judge, which has less)
        assert sorted(shares) == [["9a-0-basic", "9a-1-basic", "9c-0-basic"], ["9b-0-basic", "9b-1-basic"]]
        shares.clear()
        r.judge_pending(8)  # never more processes than groups
        assert sorted(shares) == [["9a-0-basic", "9a-1-basic"], ["9b-0-basic", "9b-1-basic"], ["9c-0-basic"]]
        shares.clear()
        r.stopped = True  # interrupted: nothing more starts
        r.judge_pending(2)
        assert shares == []
    finally:
        r.close()


def test_only_a_judge_can_say_what_kind_of_failure_a_result_is():
    """A judge's failed result may name its kind (protocol.REASONS: a prediction file its params do not give), which
    results.json carries for the class report's roster; from a student's worker, the word is dropped."""
    unmatched = dict(ok("9a-0-hidden"), status="failed", reason="predictions-not-from-params")
    left, results, provisional = drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-hidden"}, unmatched])
    assert all("reason" not in r for r in [*results, *provisional.values()]), results
    judged = {}
    drive([{"ev": "ready"}, {"ev": "start", "id": "9a-0-hidden"}, unmatched], judged)
    assert judged["9a-0-hidden"]["reason"] == "predictions-not-from-params"
