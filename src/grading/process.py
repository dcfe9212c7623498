"""The parent's handle on one worker process: have the fork server fork it, or start it (as root: -s -E, an
environment of the grader's making), read its signed messages without ever blocking on what it leaves behind,
and kill its session."""

import hashlib
import hmac
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time

from grading import forkserver
from grading import users  # users.privileged(), looked up when called: one patch of it reaches every caller
from grading.protocol import MESSAGE_LINE_BYTES, MESSAGES_PER_TEST, MESSAGES_PER_WORKER
from grading.registry import GRADER_SCRIPT, SRC
from grading.worker import worker_environment

EXIT_GRACE = 0.5  # seconds to read what a worker wrote before it exited (its pipes may stay open elsewhere)

EOF = object()
FLOOD = object()  # the worker sent more messages than its tests need


def worker_command(threads, env=None):
    """The command line and environment of a worker process, or of the fork server (which forks workers).

    As root, the process starts as root.  -s: no user site-packages, whose .pth files Python would run at
    start-up; -E: no PYTHON* variable (PYTHONPATH, PYTHONSTARTUP, ...); and an environment of the parent's making
    (worker_environment).  Not -I, which would also leave the script's folder off sys.path, where grader.py finds
    graderUtil and grading/; that folder is the root-only grading copy.  Off root (a student's machine) the
    worker runs with the student's own rights and environment."""
    if users.privileged():
        return ([sys.executable, "-s", "-E", "-B", "-u", "-X", "utf8", str(GRADER_SCRIPT)],
                worker_environment(threads))
    return [sys.executable, str(GRADER_SCRIPT)], dict(env or os.environ, PYTHONIOENCODING="utf-8",
                                                      PYTHONUNBUFFERED="1")


def fork_server(threads):
    """A fork server for the workers of one run (forkserver.py), or None where there can be none."""
    if not forkserver.available():
        return None
    argv, env = worker_command(threads)
    try:
        return forkserver.ForkServer(argv, env, str(SRC))
    except OSError:
        return None


class Worker:
    """One child process running a list of tests; killed (with whatever it started) on a timeout.

    The pipes are read with plain os.read in daemon threads that never get joined and close their descriptor
    themselves: a process the child started may hold the pipes open after the child has gone, and nothing
    here waits for it.  That the child has exited is seen with waitid(WNOWAIT), which leaves it unreaped, so
    its pid (its process group's id) cannot be reused before kill() has signalled the group; a child of the fork
    server is watched through a pidfd, and the server reaps it only when kill() asks, after the signal."""

    def __init__(self, cfg, env=None, server=None):
        self.key = secrets.token_bytes(32)
        cfg = dict(cfg, key=self.key.hex())
        self.proc = None
        if server is not None:  # forked by the run's fork server (forkserver.py), which has torch imported
            try:
                self.proc, stdin, out_fd, err_fd = server.start()
                self.proc.stdin = os.fdopen(stdin, "wb")
            except OSError:
                self.proc = None  # started as a process of its own below
        if self.proc is None:
            argv, env = worker_command(cfg.get("threads", 1), env)
            kwargs = {}
            if os.name == "posix":
                kwargs["start_new_session"] = True
            else:
                kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
            self.proc = subprocess.Popen(argv + ["--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, cwd=str(SRC), env=env, **kwargs)
            out_fd, err_fd = os.dup(self.proc.stdout.fileno()), os.dup(self.proc.stderr.fileno())
            self.proc.stdout.close()
            self.proc.stderr.close()
        self.messages = queue.Queue()
        self.budget = MESSAGES_PER_WORKER + MESSAGES_PER_TEST * len(cfg.get("tests", []))
        self.err_tail = b""
        self.killed = False
        self.exited_at = None
        for target, fd in ((self._read_out, out_fd), (self._read_err, err_fd)):
            threading.Thread(target=target, args=(fd,), daemon=True).start()
        try:
            self.proc.stdin.write(json.dumps(cfg).encode("utf-8"))
            self.proc.stdin.close()
        except OSError:
            pass  # the child died at once; next() sees it exit

    @staticmethod
    def _chunks(fd):
        try:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except InterruptedError:
                    continue
                if not chunk:
                    return
                yield chunk
        except OSError:
            return
        finally:
            os.close(fd)

    def _read_out(self, fd):
        """Queue the signed messages, at most self.budget of them (then FLOOD, and the rest is read and
        dropped); EOF when the pipe closes.  Nothing the worker writes stops this thread."""
        buf, queued = b"", 0
        try:
            for chunk in self._chunks(fd):
                if queued > self.budget:
                    continue
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    msg = self._verify(line)
                    if msg is None:
                        continue
                    queued += 1
                    self.messages.put(msg if queued <= self.budget else FLOOD)
                    if queued > self.budget:
                        break
                if len(buf) > MESSAGE_LINE_BYTES:
                    buf = b""  # no message is that long
        finally:
            self.messages.put(EOF)

    def _verify(self, line):
        """The message (a dict) of a line the worker signed; None for anything else (e.g. a line student code
        wrote).  The signature says only that the line came from the worker's process, not that it is honest:
        _drive checks every field."""
        if len(line) > MESSAGE_LINE_BYTES:
            return None
        try:
            outer = json.loads(line)
            text, mac = outer["m"], outer["h"]
            if not isinstance(text, str) or not isinstance(mac, str):
                return None
            want = hmac.new(self.key, text.encode("utf-8"), hashlib.sha256).hexdigest()
            if hmac.compare_digest(mac, want):
                msg = json.loads(text)
                return msg if isinstance(msg, dict) else None
        except Exception:  # noqa: BLE001 - whatever the line holds (deep nesting raises RecursionError)
            pass
        return None

    def _read_err(self, fd):
        for chunk in self._chunks(fd):
            self.err_tail = (self.err_tail + chunk)[-4000:]

    def exited(self):
        """Whether the child has exited (without reaping it)."""
        if self.proc.returncode is not None:
            return True
        if isinstance(self.proc, forkserver.Forked):
            return self.proc.exited()
        if hasattr(os, "waitid"):
            try:
                return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:
                return True
        return self.proc.poll() is not None

    def next(self, deadline):
        """The next message; EOF when the child has gone (its output read), None when the deadline passes."""
        while True:
            now = time.monotonic()
            if now >= deadline:
                return None
            try:
                return self.messages.get(timeout=min(0.25, deadline - now))
            except queue.Empty:
                pass
            if self.exited():
                if self.exited_at is None:
                    self.exited_at = time.monotonic()
                elif time.monotonic() - self.exited_at > EXIT_GRACE:
                    return EOF  # the pipes may still be open in a process it started: do not wait for EOF

    def stderr_tail(self, chars=600):
        text = self.err_tail.decode("utf-8", errors="replace").strip()
        return text[-chars:]

    def kill(self):
        """Kill the child's session (the child and what it started, unless that left the session: as root the
        Sandbox kills those).  Nothing reaped the child before this, so its process group id is still its."""
        if self.killed:
            return
        self.killed = True
        try:
            if os.name == "posix" and not isinstance(self.proc, forkserver.Forked):
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
