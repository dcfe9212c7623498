"""The grader's table (src/grader.py, src/points.json): its tests and their points, per part as the handout gives
them, the accuracy bars per data set, and the course grader's ids beside ours."""

import hashlib
import json
import re

import pytest

from conftest import COURSE_DATA, ROOT, SRC
from gradings import POINTS, PREDICTION_TESTS

import grader

COURSE_STARTER = ROOT.parent / "shared" / "course-starter"  # the course's own grader, where it is present

# the handout's points per part: 64 for the coding parts, 10 of extra credit for the written part (as the handout
# writes them: a typo here shows as a mismatch with points.json)
HANDOUT_POINTS = {"1c": 4, "1d": 6, "1e": 20, "1f": 20, "1g": 14}
EXTRA_CREDIT = {"3a": 2, "3b": 2, "3c": 3, "3d": 3}


def test_points_table_matches_the_registered_tests():
    assert set(POINTS) == set(grader.REGISTRY)
    for tid, pts in POINTS.items():
        assert re.fullmatch(r"[1-9][a-z]-\d+-(basic|hidden)", tid)
        assert isinstance(pts, int) and pts >= 0
        if tid in grader.REGISTRY and not grader.REGISTRY[tid].extra_credit:
            assert (pts == 0) == grader.REGISTRY[tid].info


def test_points_add_up_to_the_handouts_per_part():
    written = {t for t, spec in grader.REGISTRY.items() if spec.extra_credit}
    assert written == {"3a-0-basic", "3b-0-basic", "3c-0-basic", "3d-0-basic", "3d-1-basic", "3d-2-basic",
                       "3e-0-basic", "1g-9-basic"}
    per_part = {}
    for tid, pts in POINTS.items():
        per_part.setdefault(tid.split("-")[0], [0, 0])[tid in written] += pts
    assert {part: pts for part, (pts, _) in per_part.items() if pts or part in HANDOUT_POINTS} == HANDOUT_POINTS
    assert {part: pts for part, (_, pts) in per_part.items() if pts} == EXTRA_CREDIT
    # checks beyond the handout are practice: the written 3e and the 1g attention-cost check earn nothing
    assert POINTS["3e-0-basic"] == 0 and POINTS["1g-9-basic"] == 0
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]
    assert table["default"] in table["rows"]
    for row in table["rows"].values():
        assert set(PREDICTION_TESTS.values()) <= set(row)
    course = table["rows"]["course"]
    assert course["vanilla.pretrain.dev.predictions"] == {"min_accuracy": 0.10}
    assert course["vanilla.pretrain.test.predictions"] == {"min_accuracy": 0.09}
    # the course grader's bar for this version (the handout's 6 % is an expectation, not the bar)
    assert course["perceiver.pretrain.dev.predictions"] == {"min_accuracy": 0.024}
    assert course["perceiver.pretrain.test.predictions"] == {"min_accuracy": 0.020}
    assert "2.4%" in course["description"] and "expectation" in course["description"]
    assert course["vanilla.nopretrain.dev.predictions"] == {"min_correct": 1}


def test_threshold_row_is_chosen_by_the_data(tmp_path, data):
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]
    name, row, recognised = grader.select_thresholds(table, data)
    assert (name, recognised) == ("course", False) and row is table["rows"]["course"]
    digest = hashlib.sha256((data / "birth_dev.tsv").read_bytes()).hexdigest()
    table["rows"]["builtin"]["birth_dev_sha256"] = [digest]
    assert grader.select_thresholds(table, data)[:3:2] == ("builtin", True)
    crlf = tmp_path / "crlf"
    crlf.mkdir()
    (crlf / "birth_dev.tsv").write_bytes((data / "birth_dev.tsv").read_bytes().replace(b"\n", b"\r\n"))
    assert grader.select_thresholds(table, crlf)[0] == "builtin"  # line endings do not matter
    assert grader.select_thresholds(table, tmp_path / "nowhere")[:3:2] == ("course", False)


@pytest.mark.skipif(not (COURSE_DATA / "birth_dev.tsv").is_file(), reason="official course data not present")
def test_course_data_is_recognised():
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]
    assert grader.select_thresholds(table, COURSE_DATA)[:3:2] == ("course", True)


@pytest.mark.skipif(not (COURSE_STARTER / "points.json").is_file(), reason="the course's starter is not present")
def test_the_course_ids_are_the_course_graders_tests():
    """Where a test is the course's, its course_id names a test of the course's points table, of the same part and
    kind (our 1e-1-basic, truncation, is the course's 1e-0-basic), and every graded test of the course's has one
    of ours."""
    course = json.loads((COURSE_STARTER / "points.json").read_text(encoding="utf-8"))
    mapped = {tid: spec.course_id for tid, spec in grader.REGISTRY.items() if spec.course_id}
    for tid, course_id in mapped.items():
        assert course_id in course, f"{tid}: the course has no test {course_id}"
        assert course_id.split("-")[0] == tid.split("-")[0] and course_id.split("-")[2] == tid.split("-")[2]
    # every graded test of the course's is one of ours (its 1a and 1b samples are worth nothing)
    assert {c for c, row in course.items() if row["points"]} == set(mapped.values())
    assert mapped["1e-1-basic"] == "1e-0-basic" and mapped["1f-0-hidden"] == "1f-1-hidden"
