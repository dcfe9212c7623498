"""A grading run's control group (cgroup): the kernel's own bound on the cores, the memory and the number of
processes of everything the grading's workers start, which no process inside can widen or leave.

Why.  Resource limits (worker.py) bound each process and the worker user's process count, not a grading as a
whole, and an affinity mask (grade_class pins each grader to its share of the cores) is each process's own to
widen: a submission's hundreds of setsid'd spinners took the cores of the gradings beside it (one went from 6 s
to 100 s and lost a test to its time limit).  In a cgroup of its own a grading gets:
  cpuset   the cores the grader was given (its affinity when it starts: grade_class's share, or all of them);
           a process inside may ask for others, the kernel gives it only these
  cpu      at most those cores' time (a quota), and one share of the machine however many processes it runs:
           its processes together weigh as much as one other grading's
  memory   a bound on all of them together, /dev/shm's files included (the kernel charges them to the cgroup
           that wrote them), swap too where the kernel accounts it
  pids     a bound on their processes and threads together
and a list of its processes that no process can leave (setsid and double forks stay inside): a kill list.
A test's time limit stays a wall-clock limit (a test that waits, on a lock or a sleep, must end too), and this
is what keeps another submission from spending it: that submission's processes run on other cores, or, where
gradings share cores (more gradings than cores), get no more than their share of them.

How.  One folder per hierarchy, named cs224n-grader-<uid> (the run holds the uid, so it holds the name), below
the grader's own cgroup, so that whatever bounds the grader (a container's limits) bounds its workers too.
cgroup v1 (a hierarchy per controller, /sys/fs/cgroup/<controller>) and v2 (one hierarchy, /sys/fs/cgroup or
/sys/fs/cgroup/unified) are found in /proc/self/mountinfo and /proc/self/cgroup; a controller is taken from v1
where a v1 hierarchy has it, else from v2 where the grader's own cgroup can hand it down.  A worker, forked as
root, writes its own pid into each folder's cgroup.procs before it drops its privileges (worker.py), so that no
line of student code runs outside; the judges join too.  At the end everything inside is killed (v2's
cgroup.kill where there is one; else each listed pid, through a pidfd after checking that it is still inside,
so that a reused pid is never signalled) and the folders are removed.

Where no hierarchy can be written (a container with /sys/fs/cgroup read-only, as Docker mounts it; a system
without cgroups) the grading runs as before: each process under its resource limits, the user's process count
bounded, the affinity the grader started with (which a process may widen).  The grader's header says which
(describe).  On Gradescope each grading has a container, and its cores, of its own: there is no neighbour."""

import os
import signal
import time

PREFIX = "cs224n-grader-"
WANTED = ("cpuset", "cpu", "memory", "pids")  # the controllers a grading's group is bounded by
CFS_PERIOD = 100_000  # microseconds: the period a cgroup's CPU quota is counted in (the kernel's default)


def _read(path):
    with open(path, encoding="ascii", errors="replace") as f:
        return f.read().strip()


def _write(path, value):
    with open(path, "w", encoding="ascii") as f:
        f.write(str(value))


def _unescape(field):
    """A path of /proc/self/mountinfo: spaces, tabs, newlines and backslashes are written as octal escapes."""
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def hierarchies():
    """[(version, the grader's own cgroup folder, controllers)] for every cgroup hierarchy mounted here that has a
    controller of WANTED (v1) or is the v2 hierarchy; [] where there is none (or no /proc)."""
    own = {}  # the grader's cgroup in each hierarchy: v1 by its controllers, v2 under the key "v2"
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                number, controllers, path = line.rstrip("\n").split(":", 2)
                own["v2" if number == "0" and not controllers else frozenset(controllers.split(","))] = path
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            mounts = [line.split(" - ", 1) for line in f if " - " in line]
    except (OSError, ValueError):
        return []
    found, seen = [], set()
    for before, after in mounts:
        fields, (fstype, _, options) = before.split(), after.split()[:3]
        root, point = _unescape(fields[3]), _unescape(fields[4])
        if fstype == "cgroup2":
            key, version = "v2", 2
        elif fstype == "cgroup":
            names = set(options.split(","))
            key = next((k for k in own if k != "v2" and k <= names), None)
            version = 1
        else:
            continue
        if key is None or key in seen or key not in own:
            continue
        path = own[key]
        if root != "/" and not (path == root or path.startswith(root.rstrip("/") + "/")):
            continue  # this mount shows another part of the hierarchy than the grader's own cgroup
        folder = os.path.join(point, path[len(root.rstrip("/")):].lstrip("/")) if root != "/" else \
            os.path.join(point, path.lstrip("/"))
        if not os.path.isdir(folder):
            continue
        seen.add(key)
        if version == 1:
            controllers = tuple(c for c in WANTED if c in key)
            if controllers:
                found.append((1, folder, controllers))
        else:
            try:
                offered = _read(os.path.join(folder, "cgroup.controllers")).split()
            except OSError:
                offered = []
            found.append((2, folder, tuple(c for c in WANTED if c in offered)))
    return found


def _cpu_list(cpus):
    return ",".join(str(c) for c in sorted(cpus))


def _parse_cpu_list(text):
    cpus = set()
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-")
            cpus.update(range(int(low), int(high) + 1))
        elif part.strip():
            cpus.add(int(part))
    return cpus


def join(files):
    """In a worker, still root: move this process into its grading's cgroup (every folder's cgroup.procs in
    `files`).  Raises OSError where the kernel refuses: the worker must not run student code outside."""
    for path in files:
        _write(path, os.getpid())


def _kill_pid(pid, name):
    """SIGKILL process pid if it is still in the cgroup `name` (a pid read from cgroup.procs may have been reused
    by the time it is signalled: through a pidfd, the check and the signal are about one process)."""
    try:
        pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    except OSError:
        return  # gone
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8") as f:
            inside = any(line.rstrip("\n").endswith("/" + name) for line in f)
        if inside:
            if pidfd is not None:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    finally:
        if pidfd is not None:
            os.close(pidfd)


def remove_stale(folder):
    """The cgroup folder of a grader that was killed (its uid's name, in one hierarchy), with its processes
    killed, removed.  Returns what could not be removed."""
    if not os.path.isdir(folder):
        return []
    stale = WorkerGroup.__new__(WorkerGroup)
    stale.name, stale.folders = os.path.basename(folder), [(1, folder)]
    return stale.close()


def remove_stale_groups(uid):
    """remove_stale for uid's cgroup in every hierarchy."""
    left = []
    for _, parent, _ in hierarchies():
        left += remove_stale(os.path.join(parent, f"{PREFIX}{uid}"))
    return left


class WorkerGroup:
    """The cgroup of one grading run's workers (see the module's docstring): made at once, empty; join_files()
    for the workers; kill() and close() at the end.  `usable` says whether there is one."""

    def __init__(self, uid, cpus=None, memory=None, processes=None):
        self.name = f"{PREFIX}{uid}"
        self.folders = []  # [(version, folder)] made for this run
        self.bounds = {}  # what is enforced: controller -> the bound, as said in the header
        self.why_not = []  # why a hierarchy could not be used
        if cpus is None:
            cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
        taken = set()
        for version, parent, controllers in hierarchies():
            controllers = [c for c in controllers if c not in taken]
            if version == 2:
                controllers = self._delegate(parent, controllers)
            elif not controllers:
                continue
            folder = os.path.join(parent, self.name)
            try:
                if remove_stale(folder):
                    raise OSError(16, "a cgroup of an earlier grading could not be removed")
                os.mkdir(folder, 0o755)
            except OSError as e:
                self.why_not.append(f"{parent}: {e.strerror}")
                continue
            try:
                for controller in controllers:
                    self._bound(version, parent, folder, controller, cpus, memory, processes)
            except OSError as e:  # a half-bounded folder would take workers in: none at all instead
                self.why_not.append(f"{folder}: {e.strerror}")
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
                continue
            self.folders.append((version, folder))
            taken.update(controllers)

    @property
    def usable(self):
        return bool(self.folders)

    @staticmethod
    def _delegate(parent, controllers):
        """The controllers of `controllers` that the v2 cgroup `parent` hands down to its children (enabled in its
        cgroup.subtree_control where it can: a cgroup that holds processes itself, the grader's usually, may
        not, and then the group is only a kill list)."""
        control = os.path.join(parent, "cgroup.subtree_control")
        for controller in controllers:
            try:
                _write(control, f"+{controller}")
            except OSError:
                pass
        try:
            enabled = _read(control).split()
        except OSError:
            return []
        return [c for c in controllers if c in enabled]

    def _bound(self, version, parent, folder, controller, cpus, memory, processes):
        def put(name, value):
            _write(os.path.join(folder, name), value)

        if controller == "cpuset":
            mine = cpus
            for name in ("cpuset.effective_cpus", "cpuset.cpus.effective", "cpuset.cpus"):
                try:
                    mine = (cpus & _parse_cpu_list(_read(os.path.join(parent, name)))) or cpus
                    break
                except (OSError, ValueError):
                    continue
            if version == 1:  # a v1 cpuset takes no process before it has cores and memory nodes
                mems = _read(os.path.join(parent, "cpuset.mems")) or _read(os.path.join(parent,
                                                                                     "cpuset.effective_mems"))
                put("cpuset.mems", mems)
            put("cpuset.cpus", _cpu_list(mine))
            self.bounds["cpuset"] = f"cores {_cpu_list(mine)}"
            cpus = mine
        elif controller == "cpu":
            quota = CFS_PERIOD * max(1, len(cpus))
            if version == 1:
                put("cpu.cfs_period_us", CFS_PERIOD)
                put("cpu.cfs_quota_us", quota)
            else:
                put("cpu.max", f"{quota} {CFS_PERIOD}")
            self.bounds["cpu"] = f"the time of {max(1, len(cpus))} core{'s' if len(cpus) > 1 else ''}"
        elif controller == "memory" and memory:
            if version == 1:
                put("memory.limit_in_bytes", int(memory))
                try:
                    put("memory.memsw.limit_in_bytes", int(memory))  # memory and swap together
                except OSError:
                    pass  # swap not accounted here
            else:
                put("memory.max", int(memory))
                try:
                    put("memory.swap.max", 0)
                except OSError:
                    pass
            self.bounds["memory"] = f"{int(memory) / (1 << 30):.1f} GiB of memory"
        elif controller == "pids" and processes:
            put("pids.max", int(processes))
            self.bounds["pids"] = f"{int(processes)} processes and threads"

    def join_files(self):
        """What a worker writes its pid into (join) to be inside: every folder's cgroup.procs."""
        return [os.path.join(folder, "cgroup.procs") for _, folder in self.folders]

    def members(self):
        pids = set()
        for _, folder in self.folders:
            try:
                pids.update(int(p) for p in _read(os.path.join(folder, "cgroup.procs")).split())
            except (OSError, ValueError):
                continue
        return pids

    def kill(self, rounds=200):
        """Kill every process inside (forking or not), until none is left.  Returns what could not be done."""
        for version, folder in self.folders:
            if version == 2 and os.path.exists(os.path.join(folder, "cgroup.kill")):
                try:
                    _write(os.path.join(folder, "cgroup.kill"), 1)  # every process inside, at once (Linux 5.14)
                except OSError:
                    pass
        for _ in range(rounds):
            pids = self.members()
            if not pids:
                return []
            for pid in pids:
                _kill_pid(pid, self.name)
            time.sleep(0.02)
        left = self.members()
        return [f"{len(left)} processes of the cgroup {self.name} would not die"] if left else []

    def close(self, seconds=10.0):
        """Kill what is inside and remove the folders (a folder goes once its last process has exited).  Returns
        what could not be removed."""
        left = self.kill()
        deadline = time.monotonic() + seconds
        for version, folder in self.folders:
            while True:
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    if time.monotonic() > deadline:
                        left.append(f"the cgroup {folder} could not be removed ({e.strerror})")
                        break
                    time.sleep(0.05)
        self.folders = []
        return left

    def describe(self):
        """The grader's header line about it."""
        if self.usable:
            versions = sorted({f"v{v}" for v, _ in self.folders})
            bounds = ", ".join(self.bounds[c] for c in WANTED if c in self.bounds) or "no bound, a kill list only"
            return f"student code runs in a cgroup of its own (cgroup {' and '.join(versions)}): {bounds}"
        why = f" ({'; '.join(self.why_not)})" if self.why_not else ""
        return (f"no cgroup could be made here{why}: each process of the student's code is bounded by its "
                "resource limits, not the grading as a whole, and may widen its cores")
