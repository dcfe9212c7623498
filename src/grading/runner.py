"""The parent's scheduler: runs groups of tests on worker processes, enforces their time limits, follows each
worker through the protocol, and has every test that passed beside the student's code decided by its judge.
The judges of all groups run once the groups are done, in as many processes at a time as the groups had
(--jobs; judge_pending).  Workers and judges are forked from the run's fork server where there is one
(forkserver.py: it pays for importing torch once), else started one process each."""

import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from grading import protocol  # protocol.check_message, looked up when called (a test patches it)
from grading.process import EOF, FLOOD, Worker, fork_server
from grading.worker import (STARTUP_CPU, THREAD_ADDRESS_SPACE, WORKER_ADDRESS_SPACE, WORKER_FILE_BYTES,
                            WORKER_PROCESSES)

STARTUP_TIMEOUT = 120.0  # seconds for a worker to report ready (a started one imports torch first)
IDLE_TIMEOUT = 60.0  # seconds between two tests of one worker (the harness's own work)

LIVE = set()
LIVE_LOCK = threading.Lock()


class Runner:
    """Runs groups of tests on workers; a test with a judge is decided afterwards by a judge worker."""

    def __init__(self, specs, base_cfg, timeout_scale, on_result, judge_cfg=None, sandbox=None):
        self.specs = specs
        self.base_cfg = base_cfg
        self.judge_cfg = judge_cfg or {}
        self.sandbox = sandbox
        self.timeout_scale = timeout_scale
        self.on_result = on_result
        self.hanging = set()
        self.lock = threading.Lock()
        self.stopped = False  # set on Ctrl-C: start no more workers
        self.judge_dir = Path(tempfile.mkdtemp(prefix="grader-judge-"))  # root-only where the grader is root
        self.pending = {}  # tests that passed beside the student's code, with their reports taken: judge_pending
        self.servers = {}  # the run's fork servers, one for students' workers, one for judges (False: none)
        self.server_lock = threading.Lock()

    def limit(self, tid):
        return self.specs[tid].timeout * self.timeout_scale

    def close(self):
        with self.server_lock:
            servers, self.servers = self.servers, None  # and none is started after this
        for server in (servers or {}).values():
            if server:
                server.close()
        shutil.rmtree(self.judge_dir, ignore_errors=True)

    def _fork_server(self, cfg):
        """The fork server that forks a worker of cfg: one for the students' workers and another for the
        judges (forkserver.py: a judge shares nothing with a student's process), each with the thread count of
        its workers in its environment.  The students' server starts the judges' with it, so that the judges'
        imports torch while the students' workers run."""
        kind = ("judge" if cfg.get("judge") else "worker", cfg.get("threads", 1))
        wanted = [kind] + ([("judge", self.judge_cfg.get("threads", 1))] if kind[0] == "worker" else [])
        with self.server_lock:
            if self.servers is None:
                return None
            for each in wanted:
                if each not in self.servers:
                    self.servers[each] = fork_server(each[1]) or False
            return self.servers[kind] or None

    def _start(self, cfg):
        worker = Worker(cfg, server=self._fork_server(cfg))
        with LIVE_LOCK:
            LIVE.add(worker)
            if self.stopped:  # main is cleaning up: this one must not outlive it
                worker.kill()
        return worker

    def _end(self, worker):
        worker.kill()
        with LIVE_LOCK:
            LIVE.discard(worker)

    def memory(self, cfg=None):
        """The address space of a worker that computes on cfg's threads (default: a student's worker's), the
        student's or a judge (see WORKER_ADDRESS_SPACE)."""
        threads = (cfg or self.base_cfg).get("threads", 1)
        return WORKER_ADDRESS_SPACE + max(1, int(threads)) * THREAD_ADDRESS_SPACE

    def limits(self, ids):
        """The resource limits of a student's worker that runs the tests `ids` (see WORKER_ADDRESS_SPACE)."""
        threads = max(1, int(self.base_cfg.get("threads", 1)))
        cpu = STARTUP_CPU + threads * sum(self.limit(t) for t in ids)
        return {"memory": self.memory(), "processes": WORKER_PROCESSES, "file": WORKER_FILE_BYTES,
                "cpu": int(cpu) + 1}

    def run_group(self, ids):
        provisional = {}  # tests with a judge that passed in the student's worker
        remaining = list(ids)
        while remaining and not self.stopped:
            with self.lock:
                cfg = dict(self.base_cfg, tests=remaining, hanging=sorted(self.hanging))
            cfg["preimport"] = any(self.specs[t].uses_torch for t in remaining)
            mine = list(remaining)
            if self.sandbox:
                tmp = self.sandbox.private_dir()
                cfg.update(self.sandbox.worker_settings(tmp), limits=self.limits(remaining))
            else:
                tmp = Path(tempfile.mkdtemp(prefix="grader-reports-"))
            cfg["report_dir"] = str(tmp)
            worker = self._start(cfg)
            try:
                remaining = self._drive(worker, remaining, provisional)
            finally:
                self._end(worker)
                for tid in mine:
                    if tid in provisional:
                        problem = protocol.take_report(tmp, tid, self.judge_dir,
                                                       self.sandbox.uid if self.sandbox else None)
                        if problem:  # the judge never sees it
                            first = provisional.pop(tid)
                            self._fail(tid, problem, first["seconds"])
                if not self.sandbox:
                    shutil.rmtree(tmp, ignore_errors=True)
        with self.lock:
            self.pending.update(provisional)

    def judge_pending(self, jobs=1):
        """Decide every test that passed beside the student's code, once every group has run: in `jobs` judge
        processes at a time (more where one dies or breaks the protocol).  A group's tests stay in one judge, whose
        cache they share (a dev and a test prediction file are judged on the same params: their statistics are
        computed once); the groups are dealt out longest first (the sum of their time limits), each to the judge
        with the least so far."""
        if not self.pending or self.stopped:
            return
        groups = {}
        for tid in self.pending:
            groups.setdefault(self.specs[tid].group, []).append(tid)
        shares = [{} for _ in range(max(1, min(jobs, len(groups))))]
        loads = [0.0] * len(shares)
        for group in sorted(groups.values(), key=lambda g: -sum(self.specs[t].timeout for t in g)):
            k = loads.index(min(loads))
            loads[k] += sum(self.specs[t].timeout for t in group)
            shares[k].update({tid: self.pending[tid] for tid in group})
        pool = ThreadPoolExecutor(max_workers=len(shares))
        futures = [pool.submit(self._judge, share) for share in shares]
        done = False
        try:
            wait(futures)  # every share, even where another failed: no judge may report after the summary
            done = True
        finally:  # interrupted: the caller stops the judges (kill_live_workers); waiting here would outlast it
            pool.shutdown(wait=done, cancel_futures=not done)
        for future in futures:
            future.result()  # a bug of the grader's in one share's judging, raised once all are done

    def _judge(self, provisional):
        judged = {}
        remaining = list(provisional)
        while remaining and not self.stopped:
            # a judge runs as the grader (root on Gradescope) on what a student's process sent: the same bound on
            # its memory as that process has, so that no report can take the machine's memory through it
            cfg = dict(self.judge_cfg, tests=remaining, judge=True, report_dir=str(self.judge_dir),
                       limits={"memory": self.memory(self.judge_cfg)})
            worker = self._start(cfg)
            try:
                remaining = self._drive(worker, remaining, None, judged)
            finally:
                self._end(worker)
        for tid, verdict in judged.items():
            first = provisional[tid]
            # the verdict is the judge's; what the student's code printed comes from the student's worker
            self.on_result(dict(verdict, output=first["output"],
                                seconds=round(first["seconds"] + verdict["seconds"], 3)))

    def _fail(self, tid, message, seconds=0.0, judged=None):
        result = {"id": tid, "status": "failed", "message": message, "output": "", "seconds": seconds}
        if judged is not None:
            judged[tid] = result
        else:
            self.on_result(result)

    def _drive(self, worker, remaining, provisional, judged=None):
        """Follow one worker through its tests.  A student's worker's passed result of a test with a judge goes
        to `provisional`; a judge worker's results (judged is a dict) go to `judged`.  Returns the tests still
        to run (in a fresh worker).

        Every message is checked (check_message): a worker is a process that ran student code, which can send
        any message it likes (it holds the key).  Each test may start once; its time limit runs from its start
        to a deadline that no later message moves; the results recorded are built here from checked fields.
        A message out of order or malformed breaks the protocol: the worker is killed, the test it ran fails
        (with a test it had finished and announces again), or, between tests, all its remaining tests."""
        remaining = list(remaining)
        announced = set()  # the tests this worker started: each at most once
        current, importing, started_at, ready, progress = None, None, 0.0, False, 0
        deadline = time.monotonic() + STARTUP_TIMEOUT * max(1.0, self.timeout_scale)

        def broke(why, also=None):
            worker.kill()
            message = f"the test's process broke the grader's protocol ({why}); its tests fail"
            if also is not None and also not in remaining:  # a finished test announced again: it loses its result
                if provisional is not None:
                    provisional.pop(also, None)
                self._fail(also, message, judged=judged)
            if current is not None:
                self._fail(current, message, round(time.monotonic() - started_at, 3), judged)
                remaining.remove(current)
                return remaining
            for tid in remaining:
                self._fail(tid, message, judged=judged)
            return []

        while True:
            msg = worker.next(deadline)
            now = time.monotonic()
            if msg is None:  # time is up
                if current is not None:
                    limit = self.limit(current)
                    if importing:
                        with self.lock:
                            self.hanging.add(importing)
                        what = f" while importing submission/{importing}.py"
                    else:
                        what = ""
                    self._fail(current, f"timed out after {limit:g} s{what} (an endless loop, or far too slow?)",
                               round(limit, 3), judged)
                    remaining.remove(current)
                    return remaining
                reason = "did not start in time" if not ready else "stopped responding between tests"
                for tid in remaining:
                    self._fail(tid, f"the grader's worker process {reason}. {worker.stderr_tail()}".strip(),
                               judged=judged)
                return []
            if msg is EOF:
                worker.kill()
                code = worker.proc.returncode
                tail = worker.stderr_tail()
                if current is not None:
                    self._fail(current, f"the test process died (exit code {code}) while running this test"
                                        + (f": {tail}" if tail else ""), round(now - started_at, 3), judged)
                    remaining.remove(current)
                    return remaining
                if progress and remaining:
                    return remaining
                for tid in remaining:
                    self._fail(tid, f"the grader's worker process exited (code {code}) before running this test"
                                    + (f": {tail}" if tail else ""), judged=judged)
                return []
            if msg is FLOOD:
                return broke("it sent more messages than its tests need")
            why = protocol.check_message(msg, self.specs)
            if why:
                return broke(why)
            ev = msg["ev"]
            if ev == "ready":
                if ready:
                    return broke("it said it was ready twice")
                ready = True
                deadline = now + IDLE_TIMEOUT
            elif not ready:
                return broke(f"it sent {ev!r} before it was ready")
            elif ev == "start":
                tid = msg["id"]
                if tid in announced:
                    return broke(f"it started {tid} a second time", also=tid)
                if current is not None:
                    return broke(f"it started {tid} while {current} was running")
                if tid not in remaining:
                    return broke(f"it started {tid}, which it was not given")
                announced.add(tid)
                current, importing, started_at = tid, None, now
                deadline = now + self.limit(tid)  # absolute: only the test's result ends it
            elif ev in ("import", "imported"):
                if current is None:
                    return broke(f"it sent {ev!r} outside a test")
                importing = msg["module"] if ev == "import" else None
            elif ev == "result":
                tid = msg["id"]
                if tid != current:
                    return broke(f"it sent a result for {tid}, which was not running")
                result = {"id": tid, "status": msg["status"], "message": msg["message"], "output": msg["output"],
                          "seconds": round(now - started_at, 3)}  # the parent's clock, not the worker's word
                if msg.get("missing") is True and msg["status"] == "failed":  # its file was not handed in
                    result["missing"] = True
                remaining.remove(tid)
                progress += 1
                if judged is not None:  # a judge's word: its failed comparison may still vouch (Mismatch), and
                    # its failure may say what kind it is (protocol.REASONS)
                    if "reason" in msg:
                        result["reason"] = msg["reason"]
                    judged[tid] = dict(result, vouches=True) if msg.get("vouches") is True else result
                elif self.specs[tid].check is not None and result["status"] == "passed":
                    provisional[tid] = result
                else:
                    self.on_result(result)
                current, importing = None, None
                deadline = now + IDLE_TIMEOUT
            elif ev == "done":
                if current is not None:
                    return broke(f"it said it was done while {current} was running")
                worker.kill()
                for tid in remaining:
                    self._fail(tid, "the worker finished without running this test", judged=judged)
                return []


def kill_live_workers():
    with LIVE_LOCK:
        workers = list(LIVE)
    for worker in workers:
        worker.kill()
