"""Compare the built-in world with the official course data, when it is present.

The course data lives outside the repository (../shared/course-data) and is never
committed; these tests skip when the folder is absent.
"""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT.parent / "shared" / "course-data"
import measure

pytestmark = pytest.mark.skipif(not (COURSE / "wiki.txt").is_file(),
                                reason="course data not present (../shared/course-data)")


@pytest.fixture(scope="module")
def course():
    return measure.load(COURSE)


@pytest.fixture(scope="module")
def course_stats(course):
    return measure.measure(course)


@pytest.fixture(scope="module")
def ours():
    return measure.load(ROOT / "src" / "data")


@pytest.fixture(scope="module")
def our_stats(ours):
    return measure.measure(ours)


def test_course_figures_are_as_documented(course_stats):
    s = course_stats
    assert (s["people"], s["train"], s["dev"], s["test"]) == (2937, 2000, 500, 437)
    assert s["median_len"] == 131
    assert s["vocab"] == 254
    assert abs(s["answer_in_line"] - 0.914) < 0.001
    assert abs(s["answer_in_window"] - 0.842) < 0.001
    assert s["distinct_train_answers"] == 500
    assert s["top_dev_answer"] == "London" and abs(s["top_dev_share"] - 0.05) < 0.001
    assert abs(s["dev_answers_in_train"] - 0.922) < 0.001


def test_our_statistics_are_near_the_course(our_stats, course_stats):
    o, c = our_stats, course_stats
    assert (o["train"], o["dev"], o["test"]) == (c["train"], c["dev"], c["test"])
    assert abs(o["median_len"] - c["median_len"]) <= 15
    assert abs(o["answer_in_line"] - c["answer_in_line"]) <= 0.05
    assert abs(o["answer_in_window"] - c["answer_in_window"]) <= 0.05
    assert abs(o["distinct_train_answers"] - c["distinct_train_answers"]) <= 0.2 * 500
    assert abs(o["top_train_share"] - c["top_train_share"]) <= 0.015
    assert abs(o["top10_train_share"] - c["top10_train_share"]) <= 0.05
    assert abs(o["dev_answers_in_train"] - c["dev_answers_in_train"]) <= 0.04
    assert o["vocab"] <= c["vocab"]


def test_no_course_text_in_our_data(ours, course):
    """Our lines are our own: none equals a course line, and the few shared
    names are chance collisions of very common names."""
    assert not set(ours["wiki"]) & set(course["wiki"])
    our_names = {l.split(". ", 1)[0] for l in ours["wiki"]}
    course_names = {l.split(". ", 1)[0] for l in course["wiki"]}
    assert len(our_names & course_names) <= 0.01 * len(our_names)
