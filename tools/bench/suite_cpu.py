#!/usr/bin/env python3
"""Where the test suite's CPU goes: each test's wall time and CPU seconds, its own process's and its children's
(a grader, run.py, a fork server: every process it started and reaped), added up by file and by layer.

    SUITE_CPU_DIR=/tmp/suite-cpu python3 -m pytest -q -p suite_cpu      # a record per test, per xdist worker
    python3 tools/bench/suite_cpu.py /tmp/suite-cpu --top 30            # the summary

Why CPU and not --durations: on 2 cores the suite is CPU-bound (its workers are busy nearly all the time), so its
wall time is its CPU seconds over the cores, and a test's CPU is what removing it saves, where its wall time also
counts the other worker's load.  A child's CPU is counted once the test has reaped it (getrusage's
RUSAGE_CHILDREN): a grader's fork servers and workers are its children, reaped before it ends.

As a pytest plugin (-p suite_cpu, tools/bench is on pytest.ini's pythonpath) it does nothing without
SUITE_CPU_DIR."""

import argparse
import json
import os
import resource
import sys
import time
from collections import Counter
from pathlib import Path

import pytest


def _cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    folder = os.environ.get("SUITE_CPU_DIR")
    if not folder:
        yield
        return
    started, (own, children) = time.monotonic(), _cpu()
    yield
    wall, (own_after, children_after) = time.monotonic() - started, _cpu()
    record = {"test": item.nodeid, "wall": round(wall, 3), "self": round(own_after - own, 3),
              "children": round(children_after - children, 3)}
    Path(folder).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(Path(folder) / f"{worker}.jsonl", "a", encoding="utf-8") as f:  # one writer per file: its worker
        f.write(json.dumps(record) + "\n")


def summary(folder, top):
    """The lines of the report on the records in folder."""
    records = [json.loads(line) for path in sorted(Path(folder).glob("*.jsonl"))
               for line in path.read_text(encoding="utf-8").splitlines() if line]
    if not records:
        raise SystemExit(f"error: no records in {folder}: run pytest with -p suite_cpu and SUITE_CPU_DIR={folder}")
    by_test = {r["test"]: r for r in records}  # one record a test (a folder written twice: the later run's)
    cpu = {t: r["self"] + r["children"] for t, r in by_test.items()}
    wall = {t: r["wall"] for t, r in by_test.items()}
    own = sum(r["self"] for r in by_test.values())
    lines = [f"{len(by_test)} tests: {sum(cpu.values()):.0f} CPU-s ({own:.0f} in the tests' own processes), "
             f"{sum(wall.values()):.0f} s of wall time over the workers"]
    for name, key in (("layer", lambda t: t.split("/")[1] if t.count("/") > 1 else t.split("::")[0]),
                      ("file", lambda t: t.split("::")[0])):
        by, count = Counter(), Counter()
        for test, seconds in cpu.items():
            by[key(test)] += seconds
            count[key(test)] += 1
        lines.append(f"\nCPU-s by {name}:")
        lines += [f"{seconds:8.1f}  {count[k]:4d} tests  {k}" for k, seconds in by.most_common(top)]
    lines.append(f"\nthe {top} tests of most CPU (CPU-s, wall s):")
    lines += [f"{seconds:8.1f} {wall[t]:8.1f}  {t}" for t, seconds in Counter(cpu).most_common(top)]
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="SUITE_CPU_DIR of the run")
    p.add_argument("--top", type=int, default=30, help="how many files and tests to list (default 30)")
    args = p.parse_args(argv)
    print("\n".join(summary(args.folder, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
