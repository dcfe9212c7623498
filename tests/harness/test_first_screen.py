"""The first screen a TA reads: `python src/grader.py` in the instructor's copy grades that copy's own
src/submission, the reference itself, with its hidden tests pending for want of a reference to compare with.  The
header says so, lists the pending tests and gives the one command that grades a student's folder, which works."""

import shlex

import pytest

from gradings import copy_src, run_grader

pytestmark = pytest.mark.grader


def header(run):
    return run.stdout.split("\n\n")[0].splitlines()


def test_the_instructors_copy_says_what_it_graded_and_how_to_grade_a_student(tmp_path, data, public_data):
    src = copy_src(tmp_path / "instructor")
    own = run_grader(src, "1c", data=data)  # the held-out answers are there, no reference: the instructor's copy
    # piped, as in a log (run_grader's pipe): a line for each result as it comes on stderr, 1c-0-hidden waiting for a
    # reference; stdout is the header, then the summary
    assert sum(1 for line in own.proc.stderr.splitlines() if line.startswith("  1c-")) == 3, own.proc.stderr
    assert not [line for line in own.stdout.splitlines() if line.startswith("  1c-")], own.stdout
    lines = header(own)
    assert lines[0] == f"Grading {src / 'submission'}"
    assert f"pending (1 tests, {own.tests['1c-0-hidden']['max_score']:g} points): 1c-0-hidden" in lines
    assert any(line.startswith("this is the instructor's copy") and "reference solution itself" in line
               for line in lines)
    command = [line for line in lines if line.startswith("to grade a student's folder")]
    assert len(command) == 1 and "off root nothing is isolated" in command[0]
    words = shlex.split(command[0].split("): ", 1)[1])
    assert words == ["python3", str(src / "grader.py"), "--submission-dir", "FOLDER", "--solution-dir",
                     str(src / "submission")]
    # the command, with a student's folder for FOLDER, grades the hidden test it said was pending
    student = copy_src(tmp_path / "student") / "submission"
    graded = run_grader(src, "1c", data=data, extra=[*words[2:3], str(student), *words[4:]])
    assert header(graded)[0] == f"Grading {student}"
    assert graded.status("1c-0-hidden") == "passed"
    assert not any("instructor's copy" in line or line.startswith("pending") for line in header(graded))
    # a student's starter has no held-out answers: only the pending tests, nothing of an instructor's copy
    starter = run_grader(src, "1c", data=public_data)
    assert not any("instructor's copy" in line or "to grade a student" in line for line in header(starter))
    assert any(line.startswith("pending (1 tests") for line in header(starter))


def test_on_a_terminal_progress_is_one_line_that_gives_way_to_the_summary(tmp_path, data):
    """On a terminal the results as they come rewrite one line ("[2/3] 1c-2-basic passed"), erased before the
    ordered summary: the screen a TA reads is the header and the summary.  (Piped, as in a log, a line each: the
    same selection's piped run in the test above.)"""
    import os
    import pty
    import subprocess
    import sys

    src = copy_src(tmp_path)
    argv = [sys.executable, str(src / "grader.py"), "1c", "--data-dir", str(data)]
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=secondary, stderr=subprocess.DEVNULL,
                            cwd=src)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal's other end closed: the grader is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert proc.wait(timeout=300) == 0
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "[3/3] " in screen and "\r\033[K" in screen  # 1c-0-hidden waits for a reference: 3 run
    lines = [line for line in screen.replace("\r\n", "\n").split("\n")]
    # what stays on the screen: no line of its own for a result as it came, only the summary's rows
    assert not [line for line in lines if line.startswith("  1c-") and "(" in line and "s)" in line], lines


@pytest.mark.skipif(not __import__("graderUtil").privileged(), reason="the sandbox exists only as root")
def test_the_sandboxs_details_are_the_tas_verbose_view(tmp_path, data):
    """As root (Gradescope), the worker user id and the cgroup's bounds mean nothing to a student: they are not on the
    student's screen (the header, results.json's output), and the TA's --verbose shows them."""
    src = copy_src(tmp_path)
    plain = run_grader(src, "1c-3-basic", data=data)
    details = ("student code runs as uid", "cgroup")
    assert not [line for line in header(plain) if any(d in line for d in details)], header(plain)
    assert not any(d in plain.json["output"] for d in details), plain.json["output"]
    verbose = run_grader(src, "1c-3-basic", data=data, extra=["--verbose"])
    assert any(line.startswith("student code runs as uid") for line in header(verbose)), header(verbose)
    assert "student code runs as uid" in verbose.json["output"]


def test_the_students_first_screen_gives_the_reasons_by_part_in_the_handouts_order(tmp_path, data):
    """Piped (a notebook's cell, a log), stdout was 28 "failed (0.0 s)" lines in the order the tests finished, then
    the reasons: now it is the header, then each part's heading (its points) with its tests and each failure's
    reason under its row, the parts in the handout's order; the results as they come are stderr's."""
    src = copy_src(tmp_path, mutations={"helper.py": [("max_epochs = 10", "max_epochs = 75")],  # a bug in 1f, one in 1e
                                        "dataset.py": [("[prefix, mask, suffix, mask, masked, mask]",
                                                        "[prefix, mask, masked, mask, suffix, mask]")]})
    run = run_grader(src, "1f-3-basic", "1e-1-basic", "1e-2-basic", data=data)
    lines = run.stdout.splitlines()
    assert not [line for line in lines if line.startswith("  1") and "(" in line], run.stdout  # no progress lines
    headings = [k for k, line in enumerate(lines) if line.startswith("part ")]
    assert [lines[k].split(":")[0] for k in headings] == ["part 1e", "part 1f"], run.stdout
    assert lines[headings[0]] == "part 1e: 2/6 points" and lines[headings[1]] == "part 1f: 0/3 points", run.stdout
    for tid, part in (("1e-1-basic", 0), ("1f-3-basic", 1)):
        row = next(k for k, line in enumerate(lines) if line.startswith(tid))
        assert headings[part] < row and "FAIL" in lines[row] and lines[row + 1].strip().startswith("->"), run.stdout
    assert "swapped" in run.stdout
