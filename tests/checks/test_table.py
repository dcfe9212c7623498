"""The grader's table (src/grader.py, src/points.json): its tests and their points, per part as the handout gives
them, the accuracy bars per data set, and the course grader's ids beside ours."""

import hashlib
import json
import re

import pytest

from conftest import COURSE_DATA, ROOT, SRC
from gradings import POINTS, PREDICTION_TESTS

import doc_tables
import grader
import margins
from grading.points import load_points, with_bars

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
                       "3e-0-basic", "1g-10-basic"}
    per_part = {}
    for tid, pts in POINTS.items():
        per_part.setdefault(tid.split("-")[0], [0, 0])[tid in written] += pts
    assert {part: pts for part, (pts, _) in per_part.items() if pts or part in HANDOUT_POINTS} == HANDOUT_POINTS
    assert {part: pts for part, (_, pts) in per_part.items() if pts} == EXTRA_CREDIT
    # checks beyond the handout are practice: the written 3e and the 1g attention-cost check earn nothing
    assert POINTS["3e-0-basic"] == 0 and POINTS["1g-10-basic"] == 0
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]
    assert table["default"] in table["rows"]
    for name in table["rows"]:  # every row has a rule for every prediction file, its own or another row's
        assert set(PREDICTION_TESTS.values()) <= set(with_bars(table["rows"], name))
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


def course_numbers(specs):
    """(part, number) of each of the course's tests that we have: the course's grader runs a test by these alone."""
    return {tuple(s.course_id.split("-")[:2]) for s in specs if s.course_id}


def test_the_course_tests_have_the_course_ids():
    """A test that is the course's has the course's id (a test split from one, 3d-1 and 3d-2, names it), and no
    other test takes a part and number that one of the course's tests has: a TA's "1e-0 fails" means truncation."""
    specs = list(grader.REGISTRY.values())
    for spec in specs:
        if spec.course_id and spec.course_id != spec.id:  # a part of a course test that is ours under its id
            assert grader.REGISTRY[spec.course_id].course_id == spec.course_id and POINTS[spec.id] <= 1, spec.id
    ours = [s.id for s in specs if not s.course_id]
    assert ours and not [t for t in ours if tuple(t.split("-")[:2]) in course_numbers(specs)]
    assert [s.id for s in specs if s.course_id and s.course_id != s.id] == ["3d-1-basic", "3d-2-basic"]
    assert grader.REGISTRY["1e-0-basic"].description.startswith("truncation")
    assert grader.REGISTRY["1g-1-hidden"].description.startswith("perceiver.pretrain.dev.predictions")


def test_the_docs_lists_of_ids_are_the_graders():
    """docs/grading.md's id table and docs/security.md's vouching lists are made from grader.py --list --json, so
    that renaming a test touches grader.py (and points.json) alone: python tools/doc_tables.py --write."""
    tests = doc_tables.listing()
    assert [t["id"] for t in tests] == grader_order()
    assert doc_tables.stale(tests) == []
    renamed = [dict(t, id="1e-9-basic") if t["id"] == "1e-4-basic" else t for t in tests]
    assert doc_tables.stale(renamed) == ["docs/grading.md"]
    moved = [dict(t, vouched_by=["1g-4-hidden"]) if t["id"] == "1g-3-basic" else t for t in tests]
    assert doc_tables.stale(moved) == ["docs/security.md"]


def test_each_learned_bar_has_its_margin_and_the_docs_table_is_made_from_it():
    """Every learned bar of a row stands beside the weakest correct run measured, which it must pass, and the
    strongest attack it stops (points.json's evidence, docs/grading.md's table made from it): a margin that
    contradicts its bar, a bar without one, or a table that is not the evidence's, is found."""
    import copy

    points = load_points()
    course = points["thresholds"]["rows"]["course"]
    assert margins.problems(course) == []
    assert doc_tables.stale(points=points) == []
    table = doc_tables.margins_table(points)
    for margin in course["evidence"]["margins"]:
        assert f"`{margin['bar']}`" in table and margin["strongest_attack"]["run"] in table

    def broken(change):
        changed = copy.deepcopy(points)
        change(changed["thresholds"]["rows"]["course"])
        return changed

    def margin_of(row, bar):
        return next(m for m in row["evidence"]["margins"] if m["bar"] == bar)

    evidence = broken(lambda row: margin_of(row, "min_question_evidence")["weakest_correct"].update(value=3.9))
    drift = broken(lambda row: margin_of(row, "max_finetune_drift")["strongest_attack"].update(value=0.3))
    missing = broken(lambda row: row["evidence"]["margins"].remove(margin_of(row, "min_corpus_gain")))
    new_bar = broken(lambda row: row["learned"]["vanilla.finetune.params"].update(min_heldout_gain=1.0))
    nan = broken(lambda row: margin_of(row, "min_pretraining_share")["weakest_correct"].update(value=float("nan")))
    prose = broken(lambda row: margin_of(row, "min_corpus_gain").update(strongest_attack="a model made by hand"))
    for changed, words in ((evidence, "weakest correct (3.9) fails"), (drift, "strongest attack (0.3) clears"),
                           (missing, "min_corpus_gain has no margin"), (new_bar, "min_heldout_gain has no margin"),
                           (nan, "min_pretraining_share needs its weakest_correct as a finite value"),
                           (prose, "min_corpus_gain needs its strongest_attack as a finite value")):
        assert any(words in p for p in margins.problems(changed["thresholds"]["rows"]["course"])), words
        with pytest.raises(ValueError, match="course row's margins"):
            doc_tables.margins_table(changed)
    lowered = broken(lambda row: row["learned"]["perceiver.finetune.params"].update(min_corpus_gain=0.05))
    assert margins.problems(lowered["thresholds"]["rows"]["course"]) == []
    assert doc_tables.stale(points=lowered) == ["docs/grading.md"]  # the table shows each file's bar


def grader_order():
    from grading.cli import in_order

    return in_order(grader.REGISTRY)


@pytest.mark.skipif(not (COURSE_STARTER / "points.json").is_file(), reason="the course's starter is not present")
def test_the_course_ids_are_the_course_graders_tests():
    """Every graded test of the course's points table is ours under the same id (its 1a and 1b samples are worth
    nothing), and where a test is the course's, its course_id names one of them."""
    course = json.loads((COURSE_STARTER / "points.json").read_text(encoding="utf-8"))
    graded = {c for c, row in course.items() if row["points"]}
    assert {tid for tid, spec in grader.REGISTRY.items() if spec.course_id == tid} == graded
    assert {spec.course_id for spec in grader.REGISTRY.values() if spec.course_id} == graded
    # our other tests take no part and number of the course's (1a and 1b samples aside)
    assert course_numbers(grader.REGISTRY.values()) == {tuple(c.split("-")[:2]) for c in graded}


def test_the_builtin_row_grades_by_the_course_rows_bars_without_a_copy():
    """The built-in data is not calibrated yet: its row names the course row (bars_of) instead of copying its bars,
    keeps its own identity and calibration, and a bar of its own (as calibrate writes) wins."""
    rows = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]["rows"]
    builtin, course = rows["builtin"], rows["course"]
    assert builtin["bars_of"] == "course" and builtin["calibrated"] is False
    assert not any(key.endswith(".predictions") or key == "learned" for key in builtin)  # no copy
    bars = with_bars(rows, "builtin")
    for key in [k for k in course if k.endswith(".predictions")] + ["learned"]:
        assert bars[key] == course[key], key
    assert bars["birth_dev_sha256"] == builtin["birth_dev_sha256"] and bars["calibrated"] is False
    builtin["vanilla.pretrain.dev.predictions"] = {"min_accuracy": 0.5}
    assert with_bars(rows, "builtin")["vanilla.pretrain.dev.predictions"] == {"min_accuracy": 0.5}
    assert with_bars(rows, "course") is course


def test_the_written_questions_page_names_every_written_check_by_its_id():
    """docs/written_questions.md's table maps each question to its function and its check: the ids it names are
    the grader's written tests (the group that runs attention_exploration.py), each named, none that is not one."""
    page = (ROOT / "docs" / "written_questions.md").read_text(encoding="utf-8")
    table = [line for line in page.splitlines() if line.startswith("| ")]
    named = set(re.findall(r"`(\d[a-z]-\d+-(?:basic|hidden))`", "\n".join(table)))
    assert named == {tid for tid, spec in grader.REGISTRY.items() if spec.group == "written"}
