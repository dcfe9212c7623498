"""tools/bench.py compares the project's path with a course-style one; its course-style datasets must give
exactly the project's examples (same spec, same random draws), or the comparison would not be like for like.
The benchmark itself runs outside CI (python tools/bench.py)."""

import random
import sys

import torch

from conftest import ROOT
from submission.dataset import CharCorruptionDataset, NameDataset

sys.path.insert(0, str(ROOT / "tools"))
import bench  # noqa: E402


def same_examples(a, b, seed, indices):
    for i in indices:
        random.seed(seed + i)
        x1, y1 = a[i]
        random.seed(seed + i)
        x2, y2 = b[i]
        assert torch.equal(x1, x2) and torch.equal(y1, y2), i


def test_course_style_datasets_give_the_project_examples(world):
    path, _ = world
    vocab = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    names = NameDataset((path / "birth_places_train.tsv").read_text(encoding="utf-8"), vocab)
    same_examples(vocab, bench.CourseCharCorruption(vocab), 0, range(len(vocab)))
    same_examples(vocab, bench.CourseCharCorruption(vocab), 100, range(len(vocab)))
    same_examples(names, bench.CourseNameDataset(names), 0, range(len(names)))


def test_course_data_line_lengths(tmp_path):
    """Lines longer than 3/4 of the block are truncated by both in the same way."""
    text = "\n".join("Ana Smith was born in Paris, studied in Rome and worked in Oslo for " + "x" * n
                     for n in (0, 40, 80, 200)) + "\nWhere was Ana Smith born?\n"
    vocab = CharCorruptionDataset(text, 128)
    same_examples(vocab, bench.CourseCharCorruption(vocab), 7, range(len(vocab)))

