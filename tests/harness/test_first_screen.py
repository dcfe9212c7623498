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
