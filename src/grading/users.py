"""The unprivileged user that student code runs as: whether the grader is root, which user id a grading run
claims and holds, that user's processes (found and killed by uid), and what the mode bits let it read."""

import os
import signal
import stat
import tempfile
import time
from pathlib import Path

from kit.fileio import atomic_path

# As root, student code runs as a user id of this run's own: the first of these that is free (claim_worker_user;
# GRADER_WORKER_USER, a name or a number, wins).  Below the uids that systemd hands out on its own
# (61184..65519) and above the usual human accounts; an id that names a user or a group is skipped.
WORKER_UIDS = range(59000, 60000)


def privileged():
    """True where the grader runs as root on a POSIX system (Gradescope): student code then runs unprivileged."""
    return os.name == "posix" and os.geteuid() == 0


def claims_folder():
    """Where grading runs hold their worker user ids: a folder only root may change, in /run where the system has
    one (only root may make an entry there), else in the temporary folder.  Not an abstract socket, which any
    user may bind first: a student's process bound all 1,000 names and no other grader could start."""
    run = Path("/run")
    try:
        st = os.stat(run)
        base = run if st.st_uid == 0 and not st.st_mode & 0o022 else Path(tempfile.gettempdir())
    except OSError:
        base = Path(tempfile.gettempdir())
    folder = base / "cs224n-grader-worker-uids"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o077:
        raise ValueError(f"{folder} is not a folder that only root may use; remove it")
    return folder


class UidClaim:
    """This grading run's hold on a worker user id, so that no other grader on the machine runs student code as
    the same user at the same time (each kills every process of its user when it ends): an exclusive lock on a
    file in claims_folder(), which the kernel releases when this process ends, however it ends."""

    def __init__(self, uid):
        self.uid = uid
        self._held = None

    def acquire(self):
        import fcntl

        # not inherited by the workers (PEP 446), so a worker that outlives this process holds nothing
        fd = os.open(claims_folder() / f"{self.uid}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._held = fd
        return True

    def release(self):
        held, self._held = self._held, None
        if held is not None:
            os.close(held)


def _named_user(name):
    """(uid, gid, label) of a user given by name or number; a number need not name an existing user."""
    import pwd

    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        uid, gid, label = entry.pw_uid, entry.pw_gid, entry.pw_name
    except KeyError:
        if not name.isdigit():
            raise ValueError(f"there is no user {name}; create it, or leave GRADER_WORKER_USER unset so that the "
                             "grader picks a free user id") from None
        uid = gid = int(name)
        label = f"uid {uid}"
    if uid == 0 or gid == 0:
        raise ValueError(f"the worker user {name} is root")
    return uid, gid, label


def passwd_name(uid):
    """uid's name in the passwd database, or None where it has none (a free user id of WORKER_UIDS)."""
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


def is_named_user(uid):
    return passwd_name(uid) is not None


def mark_path(uid):
    """The mark of a user id whose leftovers could not be removed (mark_left)."""
    return claims_folder() / f"{uid}.left"


def mark_left(uid, what):
    """Mark uid as not to be used again: something it made outlived a grading and could not be removed (a file
    the clean-up could not delete, a keyring its user locked, a process that would not die), and the next
    grading with that id could read it.  The mark, a file in claims_folder() that says what was left, stays
    until the instructor has removed the leftovers and the mark.  No claim, of any grader, takes a marked id."""
    text = "".join(f"{line}\n" for line in what)
    try:
        with atomic_path(mark_path(uid)) as tmp:  # root's alone: never through a link, readable by root only
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
    except OSError:
        pass


def marked(uid):
    try:
        return mark_path(uid).exists()
    except (OSError, ValueError):
        return False


def claim_worker_user(user=None, skip=()):
    """(uid, gid, label, claim): the user this run's workers run as, held for this run alone.  `user` (a name or
    a number), else GRADER_WORKER_USER, else the first id of WORKER_UIDS but `skip` that names no user and no
    group, runs no process, has no mark (mark_left) and no other grader holds: a user of the run's own, so that
    any number of graders can run at once as root and each kills only what it started."""
    user = user or os.environ.get("GRADER_WORKER_USER")
    if user:
        uid, gid, label = _named_user(str(user))
        if marked(uid):
            raise ValueError(f"the worker user {label} has leftovers of an earlier grading that could not be "
                             f"removed (listed in {mark_path(uid)}); remove them and that file, or leave "
                             "GRADER_WORKER_USER unset so that the grader picks a clean user id")
        claim = UidClaim(uid)
        if not claim.acquire():
            raise ValueError(f"another grader running now uses the worker user {label}; wait for it to finish, or "
                             "leave GRADER_WORKER_USER unset so that each grader gets a user id of its own")
        return uid, gid, label, claim
    for uid in unused_uids(WORKER_UIDS, len(WORKER_UIDS), claimed=True):
        if uid in skip or marked(uid):
            continue
        claim = UidClaim(uid)
        if not claim.acquire():
            continue
        if user_pids(uid) or marked(uid):  # it started running something (or was marked) meanwhile
            claim.release()
            continue
        return uid, uid, f"uid {uid}", claim
    raise ValueError(f"no user id of {min(WORKER_UIDS)}..{max(WORKER_UIDS)} is free for the student's code "
                     "(each is a user, a group, runs a process, is held by another grader or marked as not to be "
                     "used again); set GRADER_WORKER_USER to an unprivileged user")


def permitted(st, uid, gid, bit):
    """Whether the mode bits of st give uid (in group gid only) `bit`: 4 read, 1 execute (search a folder)."""
    if st.st_uid == uid:
        return bool(st.st_mode >> 6 & bit)
    if st.st_gid == gid:
        return bool(st.st_mode >> 3 & bit)
    return bool(st.st_mode & bit)


def readable_by(path, uid, gid):
    """Whether uid (in group gid only) could read the file or enter the folder `path`, by the mode bits of it
    and of every folder above it (ACLs are not read)."""
    path = Path(path).resolve()
    try:
        for folder in reversed(path.parents):
            if not permitted(os.stat(folder), uid, gid, 1):
                return False
        st = os.stat(path)
    except OSError:
        return False
    return permitted(st, uid, gid, 1 if stat.S_ISDIR(st.st_mode) else 4)



def user_pids(uid):
    """The live (not zombie) processes whose real, effective or saved uid is uid."""
    pids = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="utf-8") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if fields.get("State", "").strip()[:1] in ("Z", "X"):
            continue
        if uid in [int(x) for x in fields.get("Uid", "").split()[:3]]:
            pids.append(int(entry))
    return pids


def unused_uids(candidates, n, claimed=False):
    """The first n user ids of `candidates` that no user and no group has and no process runs as; fewer if there
    are not n.  With claimed=True, a generator that yields them one by one (claim_worker_user stops at the
    first it can hold: looking at the processes of all the others would be wasted)."""
    import grp

    def free():
        for uid in candidates:
            if is_named_user(uid):
                continue
            try:
                grp.getgrgid(uid)  # the id doubles as the workers' group: its members would share the sandbox
                continue
            except KeyError:
                pass
            if not user_pids(uid):
                yield uid

    if claimed:
        return free()
    found = []
    for uid in free():
        found.append(uid)
        if len(found) == n:
            break
    return found


def kill_user_processes(uid, gid, spare=(), rounds=100):
    """Kill every process of uid but those in `spare` (which ran before the grading: `nobody` may have daemons).
    Without any to spare, a child that becomes uid calls kill(-1, SIGKILL), which reaches all of them at once
    (a process forking meanwhile included) but not the caller; else each is killed by its pid.  Repeated until
    none is left; True when none is."""
    for _ in range(rounds):
        pids = [pid for pid in user_pids(uid) if pid not in spare]
        if not pids:
            return True
        if spare:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        else:
            pid = os.fork()
            if pid == 0:  # only system calls here, then _exit
                try:
                    os.setgroups([])
                    os.setgid(gid)
                    os.setuid(uid)
                    os.kill(-1, signal.SIGKILL)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
        time.sleep(0.05)
    return not [pid for pid in user_pids(uid) if pid not in spare]
