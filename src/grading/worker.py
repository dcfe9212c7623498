"""Inside a worker process: its environment and resource limits, the drop of root's privileges before any
student code runs, and worker_main, the loop that runs the tests (or their judges) and signs every message."""

import hashlib
import hmac
import json
import os
import signal
import sys
import tempfile
import time
import zlib
from pathlib import Path

from grading import cgroups
from grading.cleanup import leave_session_keyring
from grading.context import Capture, Context, describe, seed_everything, where
from grading.protocol import MESSAGE_CHARS, REASONS
from grading.registry import GRADER_SCRIPT, REGISTRY, SRC, Fail, Mismatch, MissingFile, grading_paths, settings
from grading.users import passwd_name, permitted, readable_by


# Resource limits of a worker that runs student code, set in drop_privileges with the hard limit equal to the
# soft one, so that nothing it runs can raise them again; what it starts inherits them.
# Address space: grading the reference on the course's data (every test, the hidden ones with course-size
# models, the prediction files' checks with course-size params included) peaked at 0.81 GiB of virtual memory
# (VmPeak) in a worker computing on one thread and 0.93 GiB on two, most of it torch's own mappings: each
# thread adds its stack and a malloc arena.  The limit is WORKER_ADDRESS_SPACE plus THREAD_ADDRESS_SPACE per
# thread the worker computes on (4.25 GiB for one): about five times the measured peak, and a submission that
# allocates more gets a MemoryError (its test fails) instead of the machine's memory.
WORKER_ADDRESS_SPACE = 4 << 30
THREAD_ADDRESS_SPACE = 256 << 20
# Processes and threads: RLIMIT_NPROC counts every process and every thread of the worker user together (the
# workers of a run at a time, what earlier ones left).  Grading the reference, one worker computing on two
# threads had 5 threads (a worker has torch's pool plus a few of Python's), and the user never more than 5:
# about cores + 6 for two workers on any machine.  128 leaves room for that up to 120 cores and a DataLoader's
# processes besides; 300 threads, or a fork bomb, do not fit: the fork or the thread start fails inside the
# student's code.
WORKER_PROCESSES = 128
# Largest file a worker may write (an honest one writes its reports, at most REPORT_BYTES, and parameter files
# of small models): a larger write fails with EFBIG (Python raises OSError) instead of filling the disk.
WORKER_FILE_BYTES = 64 << 20
# CPU seconds of a worker process: its tests' time limits times its threads, plus STARTUP_CPU for importing
# torch (a worker that no fork server forked).  The time limits already stop the worker; this bounds the
# processes it leaves behind (each has the same budget of its own), which would otherwise compete with the
# grading for the CPU until its end.
STARTUP_CPU = 60


def worker_environment(threads):
    """The whole environment of a worker started as root: nothing of the parent's.  No HOME
    and no TMPDIR (drop_privileges sets them once the worker is unprivileged: before, a folder the worker user
    can write must not be where root's Python looks), a PATH of system folders only, UTF-8, and the thread
    counts the parent chose."""
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
           "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = str(max(1, int(threads)))
    return env


def exposed_by(folder, uid, gid):
    """The folder that a descriptor open on `folder` lets uid read from: walking up with '..' stops at the first
    folder above it that uid cannot search, so everything below that one's child on the way.  None if no
    folder above blocks the way."""
    path = Path(os.path.realpath(folder))
    below = path
    for parent in path.parents:
        try:
            if not permitted(os.stat(parent), uid, gid, 1):
                return str(below)
        except OSError:
            return str(below)
        below = parent
    return None


def reachable_imports(uid, gid, private=()):
    """Before a worker drops its privileges: the folders of the Python installation on sys.path that uid cannot
    reach (a Python installed under /root, say) are opened here, and sys.path and the imported packages'
    __path__ name them through /proc/self/fd, which a process may always follow for its own descriptors, so
    that student code can import what the grader's Python has.  A descriptor also opens the folders above it
    (exposed_by), so one is opened only if what it exposes and the `private` paths (the answers, the
    reference, the results, the grader's folder) do not overlap.  Returns the descriptors to keep."""
    import site

    install = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    try:
        install += site.getsitepackages() + [site.getusersitepackages()]
    except Exception:  # noqa: BLE001 - a virtualenv's old site module
        pass
    install = {os.path.realpath(p) for p in install}
    private = [os.path.realpath(p) for p in private]

    def inside(path, folder):
        return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)

    opened = {}
    for entry in sys.path:
        real = os.path.realpath(entry or ".")
        if (real in opened or not os.path.isdir(real) or readable_by(real, uid, gid)
                or not any(inside(real, folder) for folder in install)):
            continue
        exposed = exposed_by(real, uid, gid)
        if exposed is None or any(inside(p, exposed) or inside(exposed, p) for p in private):
            continue
        opened[real] = os.open(real, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))

    def through_fd(path):
        real = os.path.realpath(path)
        for folder, fd in opened.items():
            if inside(real, folder):
                return f"/proc/self/fd/{fd}" + real[len(folder):]
        return path

    sys.path[:] = [through_fd(entry) if entry else entry for entry in sys.path]
    for module in list(sys.modules.values()):
        path = getattr(module, "__path__", None)
        if isinstance(path, list):
            path[:] = [through_fd(p) for p in path]
    sys.path_importer_cache.clear()
    return sorted(opened.values())


def set_limit(which, value):
    """Set resource limit `which` (a resource.RLIMIT_*) to value, soft and hard, or to the hard limit already in
    place if that is lower: a process may lower its hard limits, never raise them."""
    import resource

    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def join_grading(cfg):
    """Still root: move this process into the grading's cgroup (cfg["cgroup"], where the grader could make one:
    cgroups.py) and into a session keyring of its own (cleanup.leave_session_keyring).  A worker that cannot
    join the cgroup stops: no student code may run outside the bounds the grader's header promised."""
    try:
        cgroups.join(cfg.get("cgroup") or [])
    except OSError as e:
        raise SystemExit(f"the worker could not join its grading's cgroup ({e.strerror})") from None
    leave_session_keyring()


def drop_privileges(cfg, keep_fd):
    """In a worker, before any student code: become cfg's unprivileged user for good (real, effective and saved
    ids, no supplementary groups), in the grading's cgroup with a session keyring of its own (join_grading), with
    only stdin, stdout, stderr, the protocol descriptor and those of reachable_imports open, under the resource
    limits of cfg["limits"] (and no POSIX message queue: RLIMIT_MSGQUEUE 0), in the private folder the parent
    made for this worker, which becomes the user's only here, and which HOME and TMPDIR name only from here on."""
    import importlib

    join_grading(cfg)

    # The grader's own modules (checks/written.py, grading/runner.py, ...): from here on, the grader's folder is
    # out of reach.  The script itself runs as __main__.
    for name in grading_paths(settings.grading_files):
        module = Path(name).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
        if name.endswith(".py") and module != GRADER_SCRIPT.stem and module not in sys.modules:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - its tests fail with the reason
                pass
    keep = sorted({keep_fd, *reachable_imports(cfg["uid"], cfg["gid"], cfg.get("private", []) + [str(SRC)])})
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
    tmp = cfg["tmp_dir"]
    # the worker user's name, for USER and LOGNAME: getpass.getuser() reads them first, and libraries ask it (torch
    # 2.11 names its compile cache folder after the user when the first optimizer is made); a free user id
    # (users.WORKER_UIDS) has no passwd entry, where getpass.getuser() would raise, and is named after its number
    name = passwd_name(cfg["uid"]) or f"worker{cfg['uid']}"
    # The parent made the folder root's alone (Sandbox.private_dir): until this line no process of the worker
    # user could put anything in it, so nothing it holds was read while this process was root (a .pth file in
    # HOME's site-packages, say, which a Python started with user site on runs at start-up).  It is handed over
    # after every privileged step: the next lines only change ids and limits, and read nothing.
    folder = os.open(tmp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    os.fchown(folder, cfg["uid"], cfg["gid"])
    os.setgroups([])
    os.setgid(cfg["gid"])
    os.setuid(cfg["uid"])
    if os.getuid() == 0 or os.geteuid() == 0 or os.getegid() == 0:
        raise SystemExit("the worker could not drop its privileges")
    import resource

    limits = cfg.get("limits") or {}
    # after setuid: RLIMIT_NPROC counts the processes of the real user id, which is now the worker user's
    for which, key in ((resource.RLIMIT_AS, "memory"), (resource.RLIMIT_NPROC, "processes"),
                       (resource.RLIMIT_FSIZE, "file"), (resource.RLIMIT_CPU, "cpu")):
        if limits.get(key):
            set_limit(which, int(limits[key]))
    if hasattr(resource, "RLIMIT_MSGQUEUE"):  # a queue outlives its processes, in no folder: none at all
        set_limit(resource.RLIMIT_MSGQUEUE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past RLIMIT_FSIZE fails (OSError), not kills
    os.fchdir(folder)
    os.close(folder)
    os.environ.update(HOME=tmp, TMPDIR=tmp, USER=name, LOGNAME=name)
    tempfile.tempdir = tmp


def limit_judge(cfg):
    """A judge keeps the grader's user (root on Gradescope), never more memory than cfg["limits"] gives: it
    loads what a student's process reported, whatever that turns out to need.  It runs in the grading's cgroup
    (join_grading): its cores and memory are the grading's."""
    import resource

    join_grading(cfg)

    memory = (cfg.get("limits") or {}).get("memory")
    if memory:
        set_limit(resource.RLIMIT_AS, int(memory))


def run_test(spec, tid, ctx):
    """Test tid beside the student's code, or its judge when ctx is a judge's: (status, message, vouches, missing,
    reason, seconds), whatever the code raised (missing: it failed only because its student file was not handed in;
    reason: a judge's Fail.reason, or None).
    Each run is seeded from the test's id, so a test draws the same numbers whichever process runs it."""
    started = time.perf_counter()
    status, message, vouches, missing, reason = "passed", "", False, False, None
    # The test's own folder goes in the process's report folder, which the grader removes whatever happens to this
    # process (a judge killed at its time limit never reaches tmp.cleanup; in the system's temporary folder its
    # folder, root's, would stay).
    tmp = tempfile.TemporaryDirectory(prefix="grader-", dir=ctx.report_dir)
    ctx.tmp, ctx.current = Path(tmp.name), tid
    try:
        if spec is None or (ctx.judging and spec.check is None):
            raise Fail(f"unknown test {tid}")
        seed_everything(zlib.crc32(tid.encode()))
        returned = spec.check(ctx, ctx.load_report(tid)) if ctx.judging else spec.fn(ctx)
        if isinstance(returned, str):
            message = returned
    except Fail as e:
        status, message, vouches = "failed", str(e), ctx.judging and isinstance(e, Mismatch)
        missing = isinstance(e, MissingFile)
        reason = e.reason if ctx.judging else None  # what a student's code raises states nothing
    except AssertionError as e:
        status, message = "failed", (str(e) or "a check failed") + where(e, ctx.submission_dir)
    except SystemExit as e:
        status, message = "failed", f"the code called sys.exit({e.code!r}){where(e, ctx.submission_dir)}"
    except MemoryError as e:
        status, message = "failed", f"ran out of memory{where(e, ctx.submission_dir)}"
    except BaseException as e:  # noqa: BLE001 - a test never takes the worker down
        status, message = "failed", describe(e, ctx.submission_dir)
    seconds = time.perf_counter() - started
    try:
        tmp.cleanup()
    except Exception:  # noqa: BLE001
        pass
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + " [...]"
    return status, message, vouches, missing, reason, seconds


def worker_main():
    """Child process: read the configuration from stdin, run the tests (or, with cfg["judge"], their judges),
    report each step on a private descriptor, every message signed with the key the parent sent."""
    cfg = json.loads(sys.stdin.read() or "{}")
    key = bytes.fromhex(cfg.pop("key", ""))
    proto_fd = os.dup(1)
    proto = os.fdopen(proto_fd, "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)  # output written below Python's level goes to the parent's (bounded) stderr reader
    sys.stdin = open(os.devnull, encoding="utf-8")
    capture = Capture()
    sys.stdout = sys.stderr = capture
    try:
        import faulthandler

        faulthandler.enable(file=sys.__stderr__)
    except Exception:  # noqa: BLE001
        pass

    def send(obj):
        # The signature keeps lines that student code writes to this descriptor from counting as messages.
        # It cannot stop code that reads the key from this process's memory; such code can only claim that the
        # student's side passed, and every verdict is a judge's (docs/security.md).
        text = json.dumps(obj)
        mac = hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()
        proto.write(json.dumps({"m": text, "h": mac}) + "\n")
        proto.flush()

    if cfg.get("preimport", True):
        try:
            import numpy  # noqa: F401
            import torch

            torch.set_num_threads(max(1, int(cfg.get("threads", 1))))
        except ImportError:
            pass  # the tests that need torch fail with the reason
    specs = dict(REGISTRY)
    judging = bool(cfg.get("judge"))
    if cfg.get("uid") is not None:
        drop_privileges(cfg, proto_fd)
    elif judging:
        limit_judge(cfg)
    ctx = Context(cfg, send)
    send({"ev": "ready"})
    for tid in cfg["tests"]:
        send({"ev": "start", "id": tid})
        capture.reset()
        status, message, vouches, missing, reason, seconds = run_test(specs.get(tid), tid, ctx)
        result = {"ev": "result", "id": tid, "status": status, "message": message, "output": capture.excerpt(),
                  "seconds": round(seconds, 3)}
        result.update({k: True for k, v in (("vouches", vouches), ("missing", missing)) if v})
        if reason in REASONS:
            result["reason"] = reason
        send(result)
    send({"ev": "done"})
    proto.close()
    return 0
