"""The fork server (src/grading/forkserver.py): workers forked from one process that has imported torch hold
nothing of it but their pipes, report as started workers do, are reaped only when the parent asks, and the
grader falls back to starting each worker where there is no server (macOS, Windows) or it has stopped."""

import hashlib
import hmac
import json
import os
import secrets
import signal
import subprocess
import time

import pytest

import graderUtil  # noqa: F401  (puts the grader's folder on the path and configures the registry)
from grading import cli, forkserver, process
from grading.registry import SRC
from gradings import make_data, make_solution

# a worker's configuration without tests: it says it is ready, then done
NO_TESTS = {"tests": [], "threads": 1, "submission_dir": ".", "data_dir": ".", "predictions_dir": "."}

linux_only = pytest.mark.skipif(not forkserver.available(), reason="the fork server runs on Linux only")


def signed_messages(fd, key):
    """The messages a worker wrote to fd until it closed it, each checked against its signature."""
    with os.fdopen(fd, "rb") as out:
        lines = out.read().splitlines()
    messages = []
    for line in lines:
        outer = json.loads(line)
        assert hmac.compare_digest(outer["h"], hmac.new(key, outer["m"].encode(), hashlib.sha256).hexdigest())
        messages.append(json.loads(outer["m"]))
    return messages


@pytest.fixture
def server():
    started = process.fork_server(1)
    assert started is not None
    yield started
    started.close()


@linux_only
def test_a_forked_worker_holds_only_its_pipes_in_a_session_of_its_own(server):
    forked, stdin, out, err = server.start()
    pid = forked.pid
    assert os.getsid(pid) == pid  # killpg(pid) reaches it and what it starts, not the server
    # waiting for its configuration: descriptors 0-2, our pipes, and nothing else (not the server's socket)
    deadline = time.monotonic() + 30
    while sorted(os.listdir(f"/proc/{pid}/fd")) != ["0", "1", "2"] and time.monotonic() < deadline:
        time.sleep(0.05)
    links = {fd: os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    ours = [os.readlink(f"/proc/self/fd/{fd}") for fd in (stdin, out, err)]
    assert links == {"0": ours[0], "1": ours[1], "2": ours[2]}, links
    key = secrets.token_bytes(32)
    os.write(stdin, json.dumps(dict(NO_TESTS, key=key.hex())).encode())
    os.close(stdin)
    assert [m["ev"] for m in signed_messages(out, key)] == ["ready", "done"]
    os.close(err)
    assert forked.wait(30) == 0
    assert not os.path.exists(f"/proc/{pid}")  # reaped by the server, when asked


@linux_only
def test_a_child_is_reaped_only_when_the_parent_asks(server):
    """Until kill() has signalled its session, the child's pid stays a zombie's: no other process can get it."""
    forked, stdin, out, err = server.start()
    os.close(stdin)  # no configuration: the worker exits
    for fd in (out, err):
        os.close(fd)
    deadline = time.monotonic() + 30
    while not forked.exited() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(2 * forkserver.REAP_EVERY)
    with open(f"/proc/{forked.pid}/stat", encoding="ascii") as f:
        assert f.read().rsplit(")", 1)[1].split()[0] == "Z"
    assert forked.wait(5) == 1  # a worker without tests exits with an error
    assert not os.path.exists(f"/proc/{forked.pid}")


@linux_only
def test_once_its_server_has_died_a_worker_that_exited_is_never_signalled(server, monkeypatch):
    """A server killed from outside (the out-of-memory killer, say) leaves its children to init, which reaps
    them: the pid of a worker that has exited may then be another process's, and killing its group would
    kill that process (a review's attack got the pid for a process of its own within 4 s)."""
    forked, stdin, out, err = server.start()
    for fd in (stdin, out, err):  # no configuration: the worker exits
        os.close(fd)
    deadline = time.monotonic() + 30
    while not forked.exited() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(timeout=30)
    signalled = []
    monkeypatch.setattr(forkserver.os, "killpg", lambda pid, sig: signalled.append(pid))
    forked.kill()
    assert signalled == [] and server.broken


@linux_only
def test_the_server_ends_with_its_parent_and_then_workers_are_started_as_processes(server):
    server.sock.close()  # as when the parent dies
    assert server.proc.wait(timeout=30) == 0
    worker = process.Worker(NO_TESTS, server=server)
    try:
        assert isinstance(worker.proc, subprocess.Popen)
        deadline = time.monotonic() + 60
        assert [worker.next(deadline)["ev"], worker.next(deadline)["ev"]] == ["ready", "done"]
    finally:
        worker.kill()


@linux_only
def test_an_answer_to_another_request_stops_the_server_for_good(server):
    """A late answer (a timeout, an interrupt between a request and its answer) is never taken for the next
    request's: the server is killed, whatever it was asked, and the next worker is started as a process."""
    server.sock.send(b"99 reap 1")  # a request whose answer the next one would read first
    with pytest.raises(OSError, match="answered '99 -1'"):
        server.start()
    assert server.broken and server.proc.wait(timeout=30) == -9
    worker = process.Worker(NO_TESTS, server=server)
    try:
        assert isinstance(worker.proc, subprocess.Popen)
    finally:
        worker.kill()


def test_students_workers_and_judges_are_forked_by_servers_of_their_own(monkeypatch):
    """A judge (root, loading what a student's process sent) is never a fork of the image the student's code
    ran in, which would tell that code the judge's memory layout."""
    from grading import runner

    made = []
    monkeypatch.setattr(runner, "fork_server", lambda threads: made.append(threads) or object())
    r = runner.Runner({}, {"threads": 2}, 1.0, lambda result: None, {"threads": 2})
    try:
        worker = r._fork_server({"threads": 2})
        assert len(made) == 2  # the judges' server starts with the first worker, to import while it runs
        judge = r._fork_server({"threads": 2, "judge": True})
        assert worker is not judge and r._fork_server({"threads": 2}) is worker and len(made) == 2
    finally:
        r.servers = {}  # nothing to close
        r.close()
    assert r._fork_server({"threads": 2}) is None  # none starts once the run is closing


@pytest.mark.grader
def test_without_a_fork_server_each_worker_is_started_and_grades_alike(tmp_path, monkeypatch, capsys):
    """Where there is no fork server (macOS, Windows) every worker and judge is a process of its own: the
    reference still passes a basic test, a hidden one with its reference, and their judges."""
    data, solution = make_data(tmp_path / "data"), make_solution(tmp_path)
    started = []  # the kind of process of each worker and judge
    init = process.Worker.__init__

    def spied(self, cfg, env=None, server=None):
        init(self, cfg, env, server)
        started.append(type(self.proc))

    monkeypatch.setattr(forkserver, "available", lambda: False)
    monkeypatch.setattr(process.Worker, "__init__", spied)
    out = tmp_path / "results.json"
    code = cli.main(["1e-4-basic", "1c-3-basic", "1c-0-hidden", "--data-dir", str(data), "--solution-dir",
                     str(solution), "--submission-dir", str(SRC / "submission"), "--json", str(out)])
    assert code == 0, capsys.readouterr()
    results = {t["number"]: (t["score"], t["max_score"]) for t in json.loads(out.read_text())["tests"]}
    assert results == {"1e-4-basic": (2, 2), "1c-3-basic": (1, 1), "1c-0-hidden": (1, 1)}
    assert started and set(started) == {subprocess.Popen}
