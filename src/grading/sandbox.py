"""A grading run's sandbox as root: the Sandbox (the worker user, its copies of the submission and the data, its
private folders, its cgroup) and its end, which kills whatever the user left running and removes whatever it
made (cleanup.py).  The isolation model as a whole: docs/security.md."""

import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from grading.cgroups import WorkerGroup, remove_stale_groups
from grading.cleanup import SHARED_FOLDERS, remove_everything, remove_folder
from grading.users import (WORKER_UIDS, UidClaim, claim_worker_user, is_named_user, kill_user_processes, mark_left,
                          user_pids)
from kit.fileio import FOLDER_FLAGS, walk_folders

__all__ = ["SHARED_FOLDERS", "Sandbox", "claim_clean_user", "copy_named", "copy_plain", "reclaim"]


def stale_sandboxes(gid):
    """The sandbox folders in the temporary folder that a grader with the worker group gid left (it was killed
    before its clean-up): root's, open to that group, holding an earlier submission's copies."""
    found = []
    try:
        with os.scandir(tempfile.gettempdir()) as entries:
            for entry in entries:
                if entry.name.startswith("grader-sandbox-"):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and st.st_gid == gid:
                        found.append(entry.path)
    except OSError:
        pass
    return found


def claim_clean_user(user=None):
    """claim_worker_user (uid, gid, label, claim), for an id that starts clean: whatever an earlier grading with
    an id of the run's own left (a grader killed before its clean-up, or one whose clean-up failed) is removed
    first, its stale sandbox included.  An id that cannot be made clean is marked (users.mark_left) and the next
    one is tried; a named one (GRADER_WORKER_USER) is then refused.  A named user's files are never removed: they
    may be older than any grading."""
    tried = set()
    while True:
        uid, gid, label, claim = claim_worker_user(user, skip=tried)  # a named, marked user raises here
        if is_named_user(uid):
            return uid, gid, label, claim
        left = remove_everything(uid, gid, SHARED_FOLDERS)
        for folder in stale_sandboxes(gid):
            left += remove_folder(folder)
        if not left:
            return uid, gid, label, claim
        mark_left(uid, left)
        claim.release()
        tried.add(uid)


def reclaim(uid):
    """After a grader that ran student code as uid was killed before its clean-up (grade_class's outer time
    limit): hold uid, kill its processes (its cgroup's too), remove what they left and the stale sandbox, and let
    it go.  An id another grader holds by now is that grader's, and is left alone; so is an id that names a user
    or is not one of WORKER_UIDS.  Returns what is left (the id is then marked)."""
    if uid not in WORKER_UIDS or is_named_user(uid):
        return []
    claim = UidClaim(uid)
    if not claim.acquire():
        return []
    try:
        left = remove_stale_groups(uid)
        if not kill_user_processes(uid, uid):
            left.append(f"some processes of uid {uid} could not be killed")
        left += remove_everything(uid, uid, SHARED_FOLDERS)
        for folder in stale_sandboxes(uid):
            left += remove_folder(folder)
        if left:
            mark_left(uid, left)
        return left
    finally:
        claim.release()


class Sandbox:
    """The unprivileged side of one grading run as root: the user, its cgroup (where the kernel allows one:
    cgroups.py; `limits` are its bounds), and a root-owned folder that only the user's group may enter, with the
    copies the workers read (submission, predictions, and of the data the `public` files alone, by name) and their
    private temp folders.  On any failure while it is made, what it had made is removed again."""

    def __init__(self, submission_dir, predictions_dir, data_dir, public, user=None, limits=None):
        self.uid, self.gid, self.user, self.claim = claim_clean_user(user)
        self.spare = set(user_pids(self.uid))  # not ours (a named user's daemons): close() leaves them alone
        # an id that names no user is this run's own (claim_worker_user): every file it owns was made by our
        # workers, and close() removes them; a named user's files (nobody's, say) may be older than the grading
        self.own_id = not is_named_user(self.uid)
        self.base = None
        self.group = None
        self.left = None  # what close() could not remove, once it has run
        self.private = []  # what the workers' Python must not expose (reachable_imports): set by main
        self.count = 0
        self.lock = threading.Lock()
        try:
            self.base = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
            os.chown(self.base, 0, self.gid)  # the workers' group may enter, other users not (grade_class grades
            os.chmod(self.base, 0o750)  # several submissions at a time, each as a user of its own)
            self.submission_dir = copy_plain(submission_dir, self.base / "submission")
            self.predictions_dir = (self.submission_dir if Path(predictions_dir) == Path(submission_dir)
                                    else copy_plain(predictions_dir, self.base / "predictions"))
            # by name: an editor's backup of the answers' file or a copy of it beside it never reaches student
            # code, nor anything else the instructor keeps in the data folder
            self.data_dir = copy_named(data_dir, self.base / "data", public)
            self.group = WorkerGroup(self.uid, **(limits or {}))
        except BaseException:
            self.close()
            raise

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
        return {"uid": self.uid, "gid": self.gid, "tmp_dir": str(tmp), "private": self.private,
                "cgroup": self.group.join_files() if self.group else []}

    def close(self):
        """Close the sandbox to the user at once (its folder becomes root's alone), kill everything the workers
        left (the cgroup's processes, then every process of the user), remove every file, IPC object, message
        queue and key the user made (for an id of the run's own) and the folder, remove the cgroup, then let the
        user id go.  Never raises; safe to call
        twice.  Returns what could not be done or removed (nothing when all went): then the id is marked, and no
        later grading takes it (users.mark_left)."""
        if self.left is not None:
            return self.left
        left = []

        def step(what, fn):
            try:
                return fn()
            except Exception as e:  # noqa: BLE001 - a failure of the grader's: said, and the rest still runs
                left.append(f"{what} failed ({type(e).__name__}: {e})")
                return None

        if self.base is not None:
            step("closing the sandbox", lambda: (os.chown(self.base, 0, 0), os.chmod(self.base, 0o700)))
        if self.group is not None:
            left += step("killing the cgroup's processes", self.group.kill) or []
        gone = step("killing the worker user's processes",
                    lambda: kill_user_processes(self.uid, self.gid, self.spare))
        if not gone:
            left.append(f"some processes of {self.user} could not be killed")
        if self.own_id:
            left += remove_everything(self.uid, self.gid, SHARED_FOLDERS)
        if self.base is not None:
            left += step("removing the sandbox", lambda: remove_folder(self.base)) or []
        if self.group is not None:
            left += step("removing the cgroup", self.group.close) or []
        if left and self.own_id:
            step("marking the user id", lambda: mark_left(self.uid, left))
        if gone:  # else its processes live on: no later grader may take the id (the claim ends with us)
            self.claim.release()
        self.left = left
        return left


# Folders below a copied folder that are copied too (the data folder's demo/; a submission has none): a deeper
# tree is left out, whatever its depth.
COPY_DEPTH = 8


def _start_copy(src, dst):
    """(dst, made a folder every user may read, and src opened as a folder), or (dst, None) where src is no folder."""
    dst = Path(dst)
    dst.mkdir(mode=0o755)
    os.chmod(dst, 0o755)
    try:
        return dst, os.open(src, FOLDER_FLAGS)
    except OSError:
        return dst, None


def copy_plain(src, dst):
    """Copy the regular files under src to dst (symbolic links and special files are left out, never followed;
    folders to COPY_DEPTH), as root-owned files every user may read and nobody
    but root may change.  Iterative, on open folders: no tree can make it recurse or build too long a path."""
    dst, top = _start_copy(src, dst)
    if top is None:
        return dst  # not a folder (a missing submission folder: its tests say what is missing)

    def visit(fd, out, level):  # copy the folder's files, and list the folders to copy below it
        below = []
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.name == "__pycache__" or entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if level <= COPY_DEPTH:
                        below.append(entry.name)
                elif entry.is_file(follow_symlinks=False):
                    _copy_file(fd, entry.name, out / entry.name)
        return below

    def go_down(out, name):  # the copy of a folder, made once the folder is open
        (out / name).mkdir(mode=0o755)
        os.chmod(out / name, 0o755)
        return out / name

    try:
        walk_folders(top, dst, visit, go_down)
    finally:
        os.close(top)
    return dst


def copy_named(src, dst, names):
    """Copy the regular files of the folder src called `names` (plain names, none with a separator) to dst, as
    copy_plain copies a file; a name that is missing, a link or not a regular file is left out."""
    dst, top = _start_copy(src, dst)
    if top is None:
        return dst  # not a folder: the tests that read the data say what is missing
    try:
        for name in names:
            if name and os.sep not in name and "/" not in name and name not in (".", ".."):
                _copy_file(top, name, dst / name)
    finally:
        os.close(top)
    return dst


def _copy_file(dir_fd, name, dst):
    """Copy the regular file `name` of the open folder dir_fd to dst, mode 0644; anything else is left out (a
    FIFO is never waited on, a link never followed)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return
        with open(dst, "wb") as out:
            shutil.copyfileobj(f, out, 1 << 20)
    os.chmod(dst, 0o644)
