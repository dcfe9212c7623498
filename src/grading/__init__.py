"""The grader's harness (the course calls it graderUtil.py, which re-exports it): grader.py holds the tests.
Nothing here knows what the assignment asks: grader.py registers its tests and calls configure() with the few
facts the harness needs (which student modules import which, the held-out files, the file that identifies a
data set).  One job a module:

  registry  the tests grader.py registers (grader_test, Spec, Fail) and configure()'s settings
  context   what a test runs with in a worker: the Context (student's code, reference, data, report), output
            capture, the messages that name the student's line (describe, call)
  worker    inside a worker process: its environment and limits, the privilege drop, the loop (worker_main)
  protocol  what a worker may send: the messages and their checks, the report handed to a judge
  process   the parent's handle on one worker process (Worker): start, read signed messages, kill
  forkserver  the run's fork servers: workers (and, apart, judges) forked from a process that has imported torch
  runner    the scheduler (Runner): groups of tests on workers, time limits, then the judges (--jobs at a time)
  users     the unprivileged user: root or not, a user id of the run's own, its processes, what it may read
  sandbox   the worker user's copies and folders as root, and their end (kill, remove, let the user id go)
  cgroups   the grading's control group: the kernel's bound on its cores, memory and processes, a kill list
  cleanup   what the worker user can leave behind (files at any depth, IPC objects, message queues, keys),
            found and removed as root
  points    the points table, the accuracy thresholds, the reference's folder, prediction files
  report    which basic tests count (vouch), the summary and Gradescope's results.json, as the hidden tests'
            visibility allows
  cli       grader.py's command line (main)

Who can reach what (see "Isolation" below).  Every test has two halves: the test runs in a worker process beside
the student's code and only reports what that code computed, as data (`ctx.report`); its check (grader_test)
decides, in a second worker that never imports student code, from that data alone (and the reference solution or
the held-out answers where it needs them).  What the student's process concludes never counts: a test it fails
fails (failing early can only cost the student), a test it passes is the judge's to decide, so code that patches
the grader in its own memory or forges the worker's messages wins nothing.  Code that writes the reports itself
can only send data; a basic test whose data zero tensors would pass (shapes, causality) counts only where a
hidden comparison of values at the same weights vouches for the same code (Spec.vouched_by, report.vouch).

Isolation.  Run as root (Gradescope runs the autograder as root), the grader keeps the held-out answers, the
reference solution and the results to itself.  A Sandbox holds, in a root-owned folder the workers can read
but not change, copies of the submission (code, params, predictions) and of the data folder without the
held-out files; each worker that runs student code gets a private temp folder there, joins the grading's
cgroup (where the kernel allows one: cgroups.py bounds the grading's cores, memory and processes as a whole) and
drops to the unprivileged user before the student's first line runs.  The answers, the reference and the results
stay where they are, readable only by root (the Gradescope bundle makes them so; the header warns otherwise).
Nothing the worker user can write is read by a process while it is root: a worker's Python starts without
user site-packages and PYTHON* variables, in an environment of the parent's making (Worker), and its folder
becomes the user's only after the drop (drop_privileges).  On Linux the workers are forked from the run's
fork server, a process started the same way that has imported the grader, numpy and torch and reads nothing but
the parent's requests; a forked worker keeps none of its descriptors and drops its privileges as a started one
does, and the judges have a server of their own, which no student's process shares a memory image with
(forkserver.py).  When the grading ends, every process of the user is killed and every file, IPC object,
message queue and key it owns is removed (Sandbox.close); an id whose leftovers cannot all be removed is marked
and never used again, and an id is cleaned before a grading uses it too (sandbox.claim_clean_user).

Run the grader through grader.py (`python grader.py --help`): the worker processes run grader.py too, so
that they know its tests.
"""
