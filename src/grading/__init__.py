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
  points    the points table, the accuracy thresholds, the reference's folder
  vouching  which basic tests count: the hidden comparisons that vouch for them (vouch)
  report    the summary and Gradescope's results.json, as the hidden tests' visibility allows
  cli       grader.py's command line (main)

Who can reach what, the two sides of every test (a test observes beside the student's code, its check decides in a
judge) and the isolation as root are docs/security.md's: the threat model, stated once.

Run the grader through grader.py (`python grader.py --help`): the worker processes run grader.py too, so
that they know its tests.
"""
