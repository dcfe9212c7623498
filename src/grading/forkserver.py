"""Workers forked from one process that has already imported torch, so that a grading run pays for that import
(about 1.3 CPU-seconds) once instead of once per worker and per judge.

The fork server is started as a worker is (as root: -s -E and an environment of the parent's making) and does
what every worker does before its configuration arrives: it imports grader.py (the tests), numpy and torch.
It never reads a configuration, a key, a report or a line of student code; all it ever reads is the parent's
requests on a socket.  For each worker the parent makes the worker's three pipes and sends their far ends over
that socket (SCM_RIGHTS); the server forks, and the child starts a session of its own, takes the pipes as its
standard input, output and error, closes every other descriptor it inherited (the socket first) and runs
worker_main exactly as a started worker does, the privilege drop included.  The parent then writes the
configuration (with the worker's key) into the child's standard input: the server never sees it.

The parent watches the child through a pidfd and kills its session as it kills a worker it started; the server
reaps a child only when the parent asks, after that kill, so that the child's pid (its session's id) is not
reused while the parent may still signal it.  The server ends when the parent closes the socket (or dies).

Only on Linux with pidfd_open (Python 3.9, Linux 5.3): fork after importing torch is not safe on macOS, and
Windows has no fork.  Elsewhere, or when the server fails, the workers are started one process each (Worker)."""

import os
import select
import socket
import subprocess
import sys
import threading
import time
import traceback

REQUEST_BYTES = 64
REPLY_TIMEOUT = 120.0  # seconds for the server's answer (the first waits for its imports)
REAP_EVERY = 0.5  # seconds between two passes of the server over the children it was asked to reap


def available():
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


# -- the server's side ----------------------------------------------------------------------------------------


def serve(fd):
    """The server process (grader.py --fork-server FD): import what every worker imports, then fork a worker for
    each request on the socket FD until the parent closes it."""
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
        words = request.decode("ascii", "replace").split()
        if words == ["fork"] and len(fds) == 3:
            settled, child_settled = os.pipe()
            try:
                pid = os.fork()
            except OSError as e:
                reply = f"error {e.errno}"
            else:
                if pid == 0:
                    os.close(settled)
                    _child(sock, fds, child_settled)  # never returns
                reply = str(pid)
            os.close(child_settled)
            os.read(settled, 1)  # the end of file: the child is in its session (the parent may kill it now)
            os.close(settled)
        elif len(words) == 2 and words[0] == "reap" and words[1].isdigit():
            code = _reap(int(words[1]))
            if code is None:
                to_reap.add(int(words[1]))
            reply = "-" if code is None else str(code)
        else:
            reply = "?"
        for received in fds:
            os.close(received)
        sock.send(reply.encode("ascii"))


def _reap(pid):
    """The exit code of child pid (as Popen.returncode: -N for signal N) once it has exited, else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return -1  # not ours, or reaped already: nothing to wait for
    return os.waitstatus_to_exitcode(status) if done else None


def _child(sock, fds, settled):
    """The forked worker: a session of its own (then it closes `settled`, which the server waits for before it
    gives the parent the pid), the pipes as fds 0-2, nothing else of the server's, then the worker's loop.  Ends
    the process itself: nothing of the server's loop runs here again."""
    code = 1
    try:
        os.setsid()
        os.close(settled)
        sock.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        sys.argv[1:] = ["--worker"]
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False, buffering=1)
        sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", closefd=False, buffering=1)
        from grading.worker import worker_main

        code = worker_main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
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
    """The parent's handle on its fork server: start a worker (start), have one reaped (reap), stop it (close).
    One request at a time: the threads of the Runner share it."""

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

    def _ask(self, request, fds=()):
        with self.lock:
            if self.broken:
                raise OSError("the fork server has stopped")
            try:
                self.sock.settimeout(self.timeout)
                socket.send_fds(self.sock, [request.encode("ascii")], list(fds))
                reply = self.sock.recv(REQUEST_BYTES).decode("ascii")
                if not reply:
                    raise OSError("the fork server has stopped")
                return reply
            except OSError:  # a timeout included: a reply that came later would answer the next request
                self.broken = True
                raise

    def start(self):
        """A new worker: (Forked, its stdin's write end, its stdout's and stderr's read ends).  OSError where
        the server cannot fork one (the caller starts a process instead)."""
        pipes = [os.pipe() for _ in range(3)]
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        try:
            reply = self._ask("fork", theirs)
            if not reply.isdigit():
                raise OSError(f"the fork server could not fork ({reply})")
            try:
                forked = Forked(self, int(reply))
            except OSError:  # no pidfd: this child is killed, and the server is not used again
                os.killpg(int(reply), 9)
                self.reap(int(reply))
                self.broken = True
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
        try:
            os.killpg(self.proc.pid, 9)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.sock.close()


class Forked:
    """What Worker uses of a Popen, for a worker the fork server started: its pid (its session's id), whether
    it has exited (a pidfd), wait() and its returncode (the server's, once it has reaped it)."""

    def __init__(self, server, pid):
        self.server, self.pid = server, pid
        self.returncode = None
        self.pidfd = os.pidfd_open(pid)  # before any reap: the server reaps only when asked

    def exited(self):
        if self.returncode is not None or self.pidfd is None:
            return True
        return bool(select.select([self.pidfd], [], [], 0)[0])

    def wait(self, timeout):
        """After the kill: wait up to `timeout` seconds for the exit, then have the server reap the child."""
        if self.returncode is not None:
            return self.returncode
        select.select([self.pidfd], [], [], timeout)
        try:
            self.returncode = self.server.reap(self.pid)
        except OSError:
            pass
        os.close(self.pidfd)
        self.pidfd = None
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return self.returncode
