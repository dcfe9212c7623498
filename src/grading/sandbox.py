"""A grading run's sandbox as root: the Sandbox (the worker user's copies of the submission and the data, its
private folders) and the clean-up that removes every file and IPC object the user made.  The isolation model
as a whole: grading/__init__.py."""

import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from grading.users import claim_worker_user, is_named_user, kill_user_processes, permitted, user_pids


class Sandbox:
    """The unprivileged side of one grading run as root: the user, and a root-owned folder that only the user's
    group may enter, with the copies the workers read (submission, predictions, data without the held-out
    files) and their private temp folders."""

    def __init__(self, submission_dir, predictions_dir, data_dir, held_out, user=None):
        self.uid, self.gid, self.user, self.claim = claim_worker_user(user)
        self.spare = set(user_pids(self.uid))  # not ours (a named user's daemons): close() leaves them alone
        # an id that names no user is this run's own (claim_worker_user): every file it owns was made by our
        # workers, and close() removes them; a named user's files (nobody's, say) may be older than the grading
        self.own_id = not is_named_user(self.uid)
        self.base = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
        os.chown(self.base, 0, self.gid)  # the workers' group may enter, other users not (grade_class grades
        os.chmod(self.base, 0o750)  # several submissions at a time, each as a user of its own)
        self.submission_dir = copy_plain(submission_dir, self.base / "submission")
        self.predictions_dir = (self.submission_dir if Path(predictions_dir) == Path(submission_dir)
                                else copy_plain(predictions_dir, self.base / "predictions"))
        self.data_dir = copy_plain(data_dir, self.base / "data", skip=set(held_out))
        self.private = []  # what the workers' Python must not expose (reachable_imports): set by main
        self.count = 0
        self.lock = threading.Lock()

    def private_dir(self):
        """A new folder for one worker (its HOME, TMPDIR and working folder), root's alone until the worker,
        done with everything it does as root, hands it to the worker user (drop_privileges): a process of that
        user left by an earlier worker cannot plant anything in it that the next worker would read as root."""
        with self.lock:
            self.count += 1
            path = self.base / f"worker-{self.count}"
        path.mkdir(mode=0o700)
        os.chmod(path, 0o700)  # whatever the umask
        return path

    def worker_settings(self, tmp):
        return {"uid": self.uid, "gid": self.gid, "tmp_dir": str(tmp), "private": self.private}

    def close(self):
        """Kill everything the workers left behind, remove every file and IPC object the user made (in
        SHARED_FOLDERS and the sandbox; for an id of the run's own), and the folder, then let the user id go.
        Safe to call twice."""
        gone = kill_user_processes(self.uid, self.gid, self.spare)
        if self.own_id:
            remove_user_files(self.uid, self.gid, SHARED_FOLDERS + (str(self.base),))
            remove_user_ipc(self.uid)
        shutil.rmtree(self.base, ignore_errors=True)
        if gone:  # else its processes live on: no later grader may take the id (the claim ends with us)
            self.claim.release()
        return gone

def copy_plain(src, dst, skip=()):
    """Copy the regular files under src to dst (symbolic links and special files are left out, never
    followed), as root-owned files every user may read and nobody but root may change."""
    dst.mkdir(mode=0o755)
    os.chmod(dst, 0o755)
    if not Path(src).is_dir():
        return dst
    for entry in os.scandir(src):
        if entry.name in skip or entry.name == "__pycache__" or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            copy_plain(entry.path, dst / entry.name, skip)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, dst / entry.name, follow_symlinks=False)
            os.chmod(dst / entry.name, 0o644)
    return dst


# The folders where any user may create files (sticky, world-writable): a worker's files there are removed when
# the grading ends, with whatever the worker user made anywhere below them.
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock")


def remove_user_files(uid, gid, folders, depth=64):
    """Remove every file and folder owned by uid under `folders`, never following a link.  Only folders uid may
    search are walked (it cannot have made anything elsewhere: a user cannot give a file away, and cannot link
    one where it cannot write); a folder it owns goes whole.  Run once the user's processes are gone, so that
    nothing moves meanwhile.  Returns the paths removed."""
    removed = []

    def walk(path, level):
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid == uid:
                try:
                    if stat.S_ISDIR(st.st_mode):
                        shutil.rmtree(entry.path)  # fd-based where the platform allows: never follows a link
                    else:
                        os.unlink(entry.path)
                    removed.append(entry.path)
                except OSError:
                    pass
            elif stat.S_ISDIR(st.st_mode) and level < depth and permitted(st, uid, gid, 1):
                walk(entry.path, level + 1)

    seen = set()
    for folder in folders:
        real = os.path.realpath(folder)  # /var/lock is often a link to /run/lock
        if real not in seen and os.path.isdir(real):
            seen.add(real)
            walk(real, 0)
    return removed


def remove_user_ipc(uid):
    """Remove the System V shared memory segments, semaphore sets and message queues that uid owns: they live on
    after their process, outside any folder."""
    import ctypes

    if not os.path.isdir("/proc/sysvipc"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # this process's own C library (find_library would run ldconfig)
    except OSError:
        return
    ipc_rmid = 0
    for kind, remove in (("shm", lambda i: libc.shmctl(i, ipc_rmid, None)),
                         ("sem", lambda i: libc.semctl(i, 0, ipc_rmid)),
                         ("msg", lambda i: libc.msgctl(i, ipc_rmid, None))):
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                header = f.readline().split()
                rows = [dict(zip(header, line.split())) for line in f]
        except OSError:
            continue
        for row in rows:
            try:
                if int(row.get("uid", -1)) == uid or int(row.get("cuid", -1)) == uid:
                    remove(int(row["shmid" if kind == "shm" else "semid" if kind == "sem" else "msqid"]))
            except (KeyError, ValueError):
                continue
