"""The code on the official course files, when ../shared/course-data is present (skipped otherwise)."""

import random

import pytest

from conftest import COURSE_DATA
from kit.decoding import read_questions
from submission.dataset import CharCorruptionDataset, NameDataset
from submission.utils import evaluate_places
from test_dataset import split_example

pytestmark = pytest.mark.skipif(not (COURSE_DATA / "wiki.txt").is_file(),
                                reason="official course data (../shared/course-data) not present")


@pytest.fixture(scope="module")
def corpus():
    return CharCorruptionDataset((COURSE_DATA / "wiki.txt").read_text(encoding="utf-8"), 128)


def test_vocabulary_of_256(corpus):
    assert corpus.vocab_size == 256
    assert len(corpus) == 2937


def test_corruption_spec_on_real_lines(corpus):
    random.seed(0)
    for idx in random.Random(1).sample(range(len(corpus)), 400):
        prefix, suffix, masked, _ = split_example(corpus, *corpus[idx])
        assert corpus.data[idx].startswith(prefix + masked + suffix)
        assert 1 <= len(prefix + masked + suffix) <= 112


@pytest.mark.parametrize("name", ["birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv"])
def test_finetune_files_build(corpus, name):
    nd = NameDataset((COURSE_DATA / name).read_text(encoding="utf-8"), corpus)
    assert len(nd) == len(read_questions(COURSE_DATA / name))
    for x, y in nd:
        assert len(x) == len(y) == 127


def test_questions_encode_and_gold_answers_score(corpus):
    questions = read_questions(COURSE_DATA / "birth_test_inputs.tsv")
    assert len(questions) == 437
    for q in questions:
        corpus.encode(q + corpus.MASK_CHAR)
    gold = [line.split("\t")[1] for line in (COURSE_DATA / "birth_dev.tsv").read_text(encoding="utf-8").splitlines()]
    assert evaluate_places(COURSE_DATA / "birth_dev.tsv", gold) == (500.0, 500.0)
    assert evaluate_places(COURSE_DATA / "birth_test_inputs.tsv", ["x"] * 437) == (0, 0)
