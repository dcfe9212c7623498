"""Workers forked from one process that has already imported torch, so that a grading run pays for that import
(about 1.3 CPU-seconds) once instead of once per worker and per judge.

The fork server is started as a worker is (as root: -s -E and an environment of the parent's making) and does
what every worker does before its configuration arrives: it imports grader.py (the tests), numpy and torch.
It never reads a configuration, a key, a report or a line of student code; all it ever reads is the parent's
requests on a socket.  For each worker the parent makes the worker's three pipes and sends their far ends over
that socket (SCM_RIGHTS); the server forks, and the child starts a session of its own, takes the pipes as its
standard input, output and error, closes every other descriptor it inherited and runs worker_main exactly as a
started worker does, the privilege drop included.  The parent then writes the configuration (with the worker's
key) into the child's standard input: the server never sees it.

The parent watches the child through a pidfd and kills its session as it kills a worker it started; the server
reaps a child only when the parent asks, after that kill, so that the child's pid (its session's id) is not
reused while the parent may still signal it.  The server ends when the parent closes the socket (or dies).
A server that dies before (the kernel's out-of-memory killer could pick it) leaves its children to init, which
reaps them and may give a worker's pid to another process: from then on a worker that has exited is never
signalled (Forked.kill), and the Sandbox kills what the worker user left.  A student's process may make itself
the server's child (clone with CLONE_PARENT): the server reaps only the pids the parent asks about, so such a
child stays a zombie until the server ends.

Student code and judges never share a server: a run has one for the students' workers and, once they are done,
another for the judges, a process of its own (its own address-space layout, stack canaries, hash secret), so
that nothing a student's process can learn about itself describes the root process that loads its reports.

Only on Linux with pidfd_open (Python 3.9, Linux 5.3): fork after importing torch is not safe on macOS, and
Windows has no fork.  Elsewhere, or when a server fails, the workers are started one process each (Worker)."""

import io
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback

REQUEST_BYTES = 64
REPLY_TIMEOUT = 120.0  # seconds for the server's answer (the first waits for its imports)
REAP_EVERY = 0.5  # seconds between two passes of the server over the children it was asked to reap


def available():
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


# -- the server's side ----------------------------------------------------------------------------------------


def serve(fd):
    """The server process (grader.py --fork-server FD): import what every worker imports, then answer each
    request on the socket FD until the parent closes it.  A request starts with a number that its answer
    repeats, so that no answer is ever taken for another's: "N fork" with three descriptors forks a worker
    ("N PID"); "N reap PID" reaps one that has exited ("N CODE"), or keeps it to reap once it exits ("N -")."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # children stay until reaped, whatever the parent ignored
    sock = socket.socket(fileno=fd)
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        pass  # the workers report it, as started ones do
    to_reap = set()
    sock.settimeout(REAP_EVERY)
    while True:
        for pid in list(to_reap):
            if _reap(pid) is not None:
                to_reap.discard(pid)
        try:
            request, fds, _, _ = socket.recv_fds(sock, REQUEST_BYTES, 3)
        except socket.timeout:
            continue
        except OSError:
            return 0
        if not request:  # the parent is gone
            return 0
        number, *words = request.decode("ascii", "replace").split() or ["?"]
        if words == ["fork"] and len(fds) == 3:
            reply = _fork(sock, fds)
        elif len(words) == 2 and words[0] == "reap" and words[1].isdigit():
            code = _reap(int(words[1]))
            if code is None:
                to_reap.add(int(words[1]))
            reply = "-" if code is None else str(code)
        else:
            reply = "?"
        for received in fds:
            os.close(received)
        sock.send(f"{number} {reply}".encode("ascii"))


def _fork(sock, fds):
    """Fork a worker on the pipes `fds`: its pid, once it is in a session of its own (the parent may kill that
    session as soon as it has the pid)."""
    settled, child_settled = os.pipe()
    try:
        pid = os.fork()
    except OSError as e:
        os.close(settled)
        os.close(child_settled)
        return f"error-{e.errno}"
    if pid == 0:
        os.close(settled)
        _child(sock, fds, child_settled)  # never returns
    os.close(child_settled)
    os.read(settled, 1)  # the end of file: the child has closed its end, after setsid
    os.close(settled)
    return str(pid)


def _reap(pid):
    """The exit code of child pid (as Popen.returncode: -N for signal N) once it has exited, else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return -1  # not ours, or reaped already: nothing to wait for
    return os.waitstatus_to_exitcode(status) if done else None


def _stdio(fd, errors):
    """A text stream on fd like Python's own under -u -X utf8: UTF-8, output written through at once."""
    raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors=errors, line_buffering=fd != 0, write_through=fd != 0)


def _child(sock, fds, settled):
    """The forked worker: a session of its own (then it closes `settled`), the pipes as fds 0-2, no other
    descriptor of the server's, then the worker's loop.  It ends the process itself, as Python ends one (an
    exit message on stderr): nothing of the server's loop runs here again."""
    code = 1
    try:
        os.setsid()
        os.close(settled)
        sock.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        sys.argv[1:] = ["--worker"]
        sys.stdin = sys.__stdin__ = _stdio(0, "surrogateescape")
        sys.stdout = sys.__stdout__ = _stdio(1, "surrogateescape")
        sys.stderr = sys.__stderr__ = _stdio(2, "backslashreplace")
        from grading.worker import worker_main

        code = worker_main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        if not isinstance(e.code, int) and e.code is not None:
            try:
                print(e.code, file=sys.__stderr__)
            except Exception:  # noqa: BLE001
                pass
    except BaseException:  # noqa: BLE001 - shown on the worker's stderr, which the parent keeps the end of
        try:
            traceback.print_exc(file=sys.__stderr__)
        except Exception:  # noqa: BLE001
            pass
    finally:
        for stream in (sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


# -- the parent's side ----------------------------------------------------------------------------------------


class ForkServer:
    """The parent's handle on one fork server: start a worker (start), have one reaped (reap), stop it (close).
    One request at a time: the threads of the Runner share it.  Once a request has gone wrong in any way (an
    error, a timeout, an interrupt, an answer to another request), the server is killed and never asked again:
    the workers that follow are started as processes."""

    def __init__(self, argv, env, cwd, timeout=REPLY_TIMEOUT):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(argv + ["--fork-server", str(theirs.fileno())], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env,
                                         pass_fds=[theirs.fileno()], start_new_session=True)
        finally:
            theirs.close()
        self.sock = ours
        self.timeout = timeout
        self.lock = threading.Lock()
        self.broken = False
        self.asked = 0

    def _ask(self, request, fds=()):
        with self.lock:
            if self.broken:
                raise OSError("the fork server has stopped")
            self.asked += 1
            number = str(self.asked)
            try:
                self.sock.settimeout(self.timeout)
                socket.send_fds(self.sock, [f"{number} {request}".encode("ascii")], list(fds))
                reply = self.sock.recv(REQUEST_BYTES).decode("ascii", "replace").split()
                if len(reply) != 2 or reply[0] != number:
                    raise OSError(f"the fork server answered {' '.join(reply)!r} to {number} {request}")
                return reply[1]
            except BaseException:
                self._stop()
                raise

    def _stop(self):
        """Kill the server (whatever it was asked, it forks nothing more) and never ask it anything again."""
        self.broken = True
        if self.proc.returncode is None:  # not reaped: its pid is still its own
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def alive(self):
        """Whether the server still runs (seen without reaping it); once it has gone it is never asked again."""
        try:
            gone = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            gone = True
        if gone:
            self.broken = True
        return not gone

    def start(self):
        """A new worker: (Forked, its stdin's write end, its stdout's and stderr's read ends).  OSError where
        the server cannot fork one (the caller starts a process instead)."""
        pipes = [os.pipe() for _ in range(3)]
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        try:
            reply = self._ask("fork", theirs)
            if not reply.isdigit() or int(reply) <= 1:  # never a pid whose group signal reaches the grader
                self._stop()
                raise OSError(f"the fork server could not fork ({reply})")
            try:
                forked = Forked(self, int(reply))
            except OSError:  # no pidfd: this child is killed, and the server is not asked again
                os.killpg(int(reply), signal.SIGKILL)
                self.reap(int(reply))
                self._stop()
                raise
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        return forked, ours[0], ours[1], ours[2]

    def reap(self, pid):
        """The exit code of a child that has exited (the server then forgets it), or None: the server reaps
        it once it exits."""
        reply = self._ask(f"reap {pid}")
        return None if reply == "-" else int(reply)

    def close(self):
        self._stop()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # a thread waiting for an answer gets none, at once
        except OSError:
            pass
        with self.lock:
            self.sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


class Forked:
    """What Worker uses of a Popen, for a worker a fork server started: its pid (its session's id), whether it
    has exited (a pidfd), kill() and wait() with its returncode (the server's, once it has reaped it)."""

    def __init__(self, server, pid):
        self.server, self.pid = server, pid
        self.returncode = None
        self.lock = threading.Lock()  # the pidfd: a reader thread may ask exited() while wait() closes it
        self.pidfd = os.pidfd_open(pid)  # before any reap: the server reaps only when asked

    def _exited(self, timeout):
        if self.pidfd is None:
            return True
        poll = select.poll()
        poll.register(self.pidfd, select.POLLIN)
        return bool(poll.poll(int(timeout * 1000)))

    def exited(self):
        with self.lock:
            return self.returncode is not None or self._exited(0)

    def kill(self):
        """SIGKILL to the worker's session.  While its server lives, the child stays unreaped until wait(), so
        its pid still names it.  Once the server has gone (stopped, or died), init may have reaped the child and
        given its pid to another process: then only a child still running (whose pid is still its own) is
        signalled; as root the Sandbox kills whatever the worker user left."""
        with self.lock:
            if not (self.server.alive() and not self.server.broken) and self._exited(0):
                return
            os.killpg(self.pid, signal.SIGKILL)

    def wait(self, timeout):
        """After kill(): wait up to `timeout` seconds for the exit, then have the server reap the child."""
        with self.lock:
            if self.returncode is not None or self.pidfd is None:
                return self.returncode
            self._exited(timeout)
            try:
                self.returncode = self.server.reap(self.pid)
            except OSError:
                pass
            os.close(self.pidfd)
            self.pidfd = None
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return self.returncode
