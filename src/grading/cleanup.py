"""What the worker user can leave behind, found and removed as root: files and folders at any depth, System V
IPC objects, POSIX message queues and keys in the kernel's keyrings.  Each of them outlives the processes that
made it, and the next grading that gets the same user id could read it (a channel between submissions).

Nothing here may raise because of what the user made: a walk is iterative, works on open folders (never on
paths, which a deep tree makes too long, and never through a link), holds at most HELD folders open at once and
looks at no more than ENTRIES entries in all.  Every function returns what it could not remove, as short
sentences; an empty list means that nothing of the user is left."""

import ctypes
import errno
import os
import platform
import stat
import sys
import tempfile
import time

from grading.users import permitted
from kit.fileio import FOLDER_FLAGS, walk_folders

# The folders where any user may create files (sticky, world-writable): a worker's files there are removed when
# the grading ends, with whatever the worker user made anywhere below them.  On the Debian 12 machine this was
# written on, `find / -xdev -type d -perm -0002` finds /tmp, /var/tmp and /run/lock, and /dev/shm is a file
# system of its own; /run/user/<uid> is made only for users that log in (by logind, never by the user), and
# neither cron nor at is installed (for an id that names no user, crontab and at refuse anyway).
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock")

# Folders held open at once while a tree is removed: a folder found deeper than that is first moved up, into the
# tree's top folder (a rename: the same file system), so that a tree of any depth is removed with HELD
# descriptors.
HELD = 32
# Entries (files and folders) one clean-up looks at, at most.  A worker can make about a million empty files a
# minute; removing them costs root about as much.  Past this bound the clean-up stops, and what is left is
# reported (the user id is then not used again: users.mark_left).
ENTRIES = 5_000_000


class OverBudget(Exception):
    """The clean-up looked at ENTRIES entries and stopped."""


class Budget:
    """How many more entries one clean-up may look at (shared by all its walks)."""

    def __init__(self, entries=None):
        self.entries = ENTRIES if entries is None else entries
        self.left = self.entries

    def spend(self):
        self.left -= 1
        if self.left < 0:
            raise OverBudget


def shown(name, limit=200):
    """A name from the file system as one line of text: what is not printable (a newline, a byte that is not
    UTF-8, kept by Python as a surrogate) is escaped, and a long name is cut."""
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    text = "".join(c if c.isprintable() and not 0xD800 <= ord(c) < 0xE000  # a byte kept as a surrogate: \xff
                   else f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) < 0xDD00 else ascii(c)[1:-1] for c in name)
    return text if len(text) <= limit else text[:limit] + "..."


def open_folder(name, dir_fd=None):
    """The folder `name` (of the open folder dir_fd) opened with FOLDER_FLAGS.  Where that is refused (a folder its
    owner made unsearchable, to a root without the right to override modes, as in some containers), the folder
    is made root's, mode 0700, first, through a descriptor that pins the folder itself (it is removed next)."""
    try:
        return os.open(name, FOLDER_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        if not hasattr(os, "O_PATH"):
            raise
    pinned = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        os.chown(f"/proc/self/fd/{pinned}", 0, 0)  # the folder pinned above, never what a link names
        os.chmod(f"/proc/self/fd/{pinned}", 0o700)
    finally:
        os.close(pinned)
    return os.open(name, FOLDER_FLAGS, dir_fd=dir_fd)


def remove_tree(name, dir_fd=None, budget=None):
    """Remove the folder `name` (of the open folder dir_fd; a path without it) and everything in it, at any
    depth, never following a link: iterative, with at most HELD folders open (a deeper folder is renamed up into
    the top one, then removed from there).  OSError when something cannot be removed, OverBudget past the
    budget; what was removed by then stays removed."""
    budget = budget or Budget()
    top = open_folder(name, dir_fd)
    stack = [(top, name)]  # the open folders from the top down, each with its name in the one above
    moved = 0
    try:
        while stack:
            fd = stack[-1][0]
            below = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    budget.spend()
                    if entry.is_dir(follow_symlinks=False):
                        below = entry.name
                        break
                    try:
                        os.unlink(entry.name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
            if below is None:  # nothing but folders already removed: remove this one
                _, its_name = stack.pop()
                os.close(fd)
                os.rmdir(its_name, dir_fd=stack[-1][0] if stack else dir_fd)
            elif len(stack) < HELD:
                stack.append((open_folder(below, fd), below))
            else:  # too deep to hold open: move it up into the top folder, whose walk finds it again
                while True:
                    moved += 1
                    budget.spend()
                    try:
                        os.rename(below, f".removing-{moved}", src_dir_fd=fd, dst_dir_fd=top)
                        break
                    except OSError as e:  # the name is taken (the tree may hold anything): another name
                        if e.errno not in (errno.EEXIST, errno.ENOTDIR, errno.EISDIR, errno.ENOTEMPTY):
                            raise
    finally:
        for fd, _ in stack:
            os.close(fd)


def remove_user_files(uid, gid, folders, depth=64, budget=None):
    """Remove every file and folder owned by uid under `folders`, never following a link.  Only folders uid may
    search are walked, to `depth` (uid cannot have made anything elsewhere: a user cannot give a file away, and
    cannot link one where it cannot write), and only on each folder's own file system, as `find -xdev` walks: a
    file system mounted below a shared folder (a /proc or a /dev in a chroot left in /var/tmp) is root's doing; a
    user can mount nothing but over a folder of its own (FUSE), and a folder uid owns goes whole, at any depth
    (remove_tree), or is reported.  A folder that cannot be listed is reported, and the walk goes on.  Run once
    the user's processes are gone, so that nothing moves meanwhile.  Returns what could not be removed."""
    budget = budget or Budget()
    left = []
    seen = set()
    for folder in folders:
        real = os.path.realpath(folder)  # /var/lock is often a link to /run/lock
        if real in seen:
            continue
        seen.add(real)
        try:
            fd = os.open(real, FOLDER_FLAGS)
        except OSError:
            continue  # not on this system
        try:
            _remove_owned(fd, real, uid, gid, depth, budget, left)
        except OverBudget:
            left.append(f"{real}: more than {budget.entries:,} entries to look at; the clean-up stopped there")
        finally:
            os.close(fd)
    return left


def _remove_owned(top, where, uid, gid, depth, budget, left):
    """remove_user_files in one folder (the open descriptor top): a walk down the folders that are not uid's, on
    top's file system (walk_folders: at most `depth` of them open at once)."""
    device = os.fstat(top).st_dev

    def visit(fd, path, level):  # remove uid's entries, and list the folders uid may search
        below = []
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    budget.spend()
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if st.st_uid == uid:
                        try:
                            if stat.S_ISDIR(st.st_mode):
                                remove_tree(entry.name, fd, budget)
                            else:
                                os.unlink(entry.name, dir_fd=fd)
                        except FileNotFoundError:
                            pass
                        except OSError as e:
                            left.append(f"{path}/{shown(entry.name)} ({e.strerror})")
                    elif (stat.S_ISDIR(st.st_mode) and st.st_dev == device and level <= depth
                          and permitted(st, uid, gid, 1)):
                        below.append(entry.name)
        except OSError as e:  # the listing itself failed: what else the folder holds is not known
            left.append(f"{path} (its entries could not be listed: {e.strerror})")
        return below

    walk_folders(top, where, visit, lambda path, name: f"{path}/{shown(name)}")


def remove_folder(path, budget=None):
    """Remove the folder `path` with everything in it, whoever made it (a sandbox, a grading's work folder):
    remove_tree from the folder above it.  Returns what could not be removed (nothing if there is no such
    folder)."""
    budget = budget or Budget()
    path = os.path.abspath(path)
    parent, name = os.path.split(path)
    try:
        parent_fd = os.open(parent, FOLDER_FLAGS)
    except OSError as e:
        return [] if isinstance(e, FileNotFoundError) else [f"{path} ({e.strerror})"]
    try:
        remove_tree(name, parent_fd, budget)
        return []
    except FileNotFoundError:
        return []
    except OverBudget:
        return [f"{path}: more than {budget.entries:,} entries; the clean-up stopped there"]
    except OSError as e:
        return [f"{path}: {e.strerror} ({shown(e.filename or '')})"]
    finally:
        os.close(parent_fd)


# -- what lives outside any folder: IPC objects, message queues, keys ---------------------------------------


def _libc():
    return ctypes.CDLL(None, use_errno=True)  # this process's own C library (find_library would run ldconfig)


def in_child(fn, uid=None, gid=None, first=None):
    """The text fn() returns, computed in a forked child (as uid, in group gid alone, when given, after first()
    has run as root), or None where the child failed.  Only system calls and a little Python run there (the
    grader has threads), and nothing is imported once it is uid (root's Python may lie where uid cannot read it:
    this module imports first)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_end)
            if first is not None:
                first()
            if uid is not None:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
            os.write(write_end, fn().encode("utf-8", "backslashreplace")[:1 << 16])
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    try:
        while True:
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8") if os.waitstatus_to_exitcode(status) == 0 else None


def remove_user_ipc(uid):
    """Remove the System V shared memory segments, semaphore sets and message queues that uid owns or made: they
    live on after their process, outside any folder.  Returns those that could not be removed."""
    if not os.path.isdir("/proc/sysvipc"):
        return []
    try:
        libc = _libc()
    except OSError:
        return ["its System V IPC objects could not be checked (no C library)"]
    ipc_rmid = 0
    left = []
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
                    ipc_id = int(row["shmid" if kind == "shm" else "semid" if kind == "sem" else "msqid"])
                    if remove(ipc_id) != 0:
                        left.append(f"System V {kind} {ipc_id}")
            except (KeyError, ValueError):
                continue
    return left


CLONE_NEWNS, MS_REC, MS_PRIVATE = 0x00020000, 0x4000, 1 << 18


def remove_user_queues(uid):
    """Remove the POSIX message queues uid owns.  They live in the kernel's mqueue file system, which is often
    not mounted (no /dev/mqueue: then no folder lists them); a child with a mount namespace of its own mounts it
    over a folder only root may use, privately (nothing is seen outside the child), and unlinks uid's queues
    there.  Where mount namespaces are refused (a container without CAP_SYS_ADMIN) nothing is checked: the
    workers may not make a queue anyway (drop_privileges sets RLIMIT_MSGQUEUE to 0).  Returns those left."""
    if not sys.platform.startswith("linux") or os.path.ismount("/dev/mqueue"):
        return []  # elsewhere there are none; a mounted /dev/mqueue is one of SHARED_FOLDERS
    folder = tempfile.mkdtemp(prefix="grader-mqueue-")

    def unlink_queues():
        libc = _libc()
        if (libc.unshare(CLONE_NEWNS) != 0 or libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0
                or libc.mount(b"mqueue", os.fsencode(folder), b"mqueue", 0, None) != 0):
            return ""  # no namespace of its own here: not checked (see above)
        left = []
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        left.append(f"POSIX message queue /{shown(entry.name)}")
        return "\n".join(left)

    try:
        text = in_child(unlink_queues)
    finally:
        os.rmdir(folder)
    return ["its POSIX message queues could not be checked"] if text is None else text.splitlines()


# The kernel's keys (keyctl(2)), through the system call itself (libkeyutils is not always installed): its
# number per machine, the operations used, and the special keyring ids (the calling process's own keyrings).
KEYCTL_SYSCALL = {"x86_64": 250, "amd64": 250, "aarch64": 219, "arm64": 219, "riscv64": 219}
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 0, 1, 7, 22
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5
NO_KEYS = (errno.ENOSYS, errno.EPERM, errno.EOPNOTSUPP)  # no keys in this kernel, or a seccomp filter refuses


def keyctl(operation, *args):
    """keyctl(2): its result, or OSError (ENOSYS on a machine whose call number is not known here)."""
    number = KEYCTL_SYSCALL.get(platform.machine())
    if number is None:
        raise OSError(errno.ENOSYS, "keyctl's system call number is not known on this machine")
    libc = _libc()
    result = libc.syscall(number, ctypes.c_long(operation),
                          *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def leave_session_keyring():
    """Give this process a new, empty session keyring (a worker, before it drops root's ids).  A process inherits
    its parent's session keyring, and possessing it gives the possessor's rights on every key in it, whatever
    user the process becomes: a worker read a key of root's from the session keyring of a grader started from a
    login (pam_keyinit makes one).  The new keyring is root's, so that no quota of the worker user's can refuse
    it; it goes with the worker's last process.  Returns False where the kernel has no keys for this process
    (then its children have none either)."""
    try:
        keyctl(KEYCTL_JOIN_SESSION_KEYRING, None)
    except OSError as e:
        if e.errno in NO_KEYS:
            return False
        raise
    return True


def remove_user_keys(uid, gid, settle=1.0):
    """Empty uid's user keyring, user session keyring and persistent keyring, which outlive all its processes
    (a key left there is a note for the next grading with the same user id), as a child running as uid (nobody
    else may: root has no right on another user's keys).  Then check what uid can see in /proc/keys of keys it
    owns: only those keyrings, empty (keys that nothing links any more go within `settle` seconds, when the
    kernel collects them).  A keyring its user locked (no write permission for anyone) cannot be emptied: it is
    reported.  Returns what is left."""
    if not os.path.exists("/proc/keys"):
        return []

    own = {f"_uid.{uid}:", f"_uid_ses.{uid}:", f"_persistent.{uid}:"}

    def keys():
        """What uid sees in /proc/keys of keys it owns: [(kind, name, summary)]."""
        found = []
        with open("/proc/keys", encoding="utf-8", errors="replace") as f:
            for line in f:  # id flags usage timeout perm uid gid type description: summary
                fields = line.split(None, 8)
                if len(fields) == 9 and fields[5] == str(uid):
                    name, _, summary = fields[8].partition(" ")
                    found.append((fields[7], name, summary.strip()))
        return found

    def clear():
        left = []
        # the persistent keyring, only where it exists (asking for it makes one), linked into this child's own
        # session keyring: there the child possesses it, which it must to empty it (its user may only read it)
        if any(kind == "keyring" and name == f"_persistent.{uid}:" for kind, name, _ in keys()):
            try:
                keyctl(KEYCTL_CLEAR, keyctl(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_SESSION_KEYRING))
            except OSError as e:
                left.append(f"its persistent keyring could not be emptied ({e.strerror})")
        for ring, label in ((KEY_SPEC_USER_KEYRING, "user keyring"),
                            (KEY_SPEC_USER_SESSION_KEYRING, "user session keyring")):
            try:
                keyctl(KEYCTL_GET_KEYRING_ID, ring, 0)  # 0: never make one
                keyctl(KEYCTL_CLEAR, ring)
            except OSError as e:
                if e.errno == errno.ENOKEY or e.errno in NO_KEYS:
                    continue  # none (or an expired one, which the check below sees)
                left.append(f"its {label} could not be emptied ({e.strerror})")
        deadline = time.monotonic() + settle
        while True:
            seen = [f"a key ({kind} {shown(name + ' ' + summary)})" for kind, name, summary in keys()
                    if not (kind == "keyring" and name in own and summary == "empty")]
            if not seen or time.monotonic() > deadline:
                return "\n".join(left + seen)
            time.sleep(0.05)

    # the child leaves whatever session keyring the grader has (root's, from a login, say) for one of its own,
    # root's and empty, which goes with it: nothing of the grader's is touched, and nothing is left for uid
    text = in_child(clear, uid, gid, first=leave_session_keyring)
    return ["its keys could not be checked"] if text is None else text.splitlines()


def remove_everything(uid, gid, folders, budget=None):
    """Everything the worker user uid can have left: its files and folders under `folders` (SHARED_FOLDERS and
    the sandbox), its System V IPC objects, POSIX message queues and keys.  Run once its processes are gone.
    Returns what is left (one short sentence each); nothing when all is gone."""
    left = []
    for step in (lambda: remove_user_files(uid, gid, folders, budget=budget), lambda: remove_user_ipc(uid),
                 lambda: remove_user_queues(uid), lambda: remove_user_keys(uid, gid)):
        try:
            left += step()
        except Exception as e:  # noqa: BLE001 - a failure of the clean-up's own: reported, the rest still runs
            left.append(f"the clean-up failed ({type(e).__name__}: {e})")
    return left
