"""The dataset spec: vocabulary, span corruption and the finetuning examples."""

import random
import statistics

import pytest
import torch

from submission.dataset import MASK_CHAR, PAD_CHAR, CharCorruptionDataset, NameDataset

TEXT = "the quick brown fox\njumps over the lazy dog\n" + "\n".join(
    "".join(random.Random(i).choice("abcdefghij klmnop") for _ in range(40 + 3 * i)) for i in range(30)
) + "\n"


def decode(ds, ids):
    return "".join(ds.itos[int(i)] for i in ids)


def test_vocabulary_ids_and_order():
    ds = CharCorruptionDataset(TEXT, 128)
    assert ds.stoi[PAD_CHAR] == 0 and ds.stoi[MASK_CHAR] == 1
    assert PAD_CHAR == "\u25A1" and MASK_CHAR == "\u2047"
    chars = sorted(set(TEXT))
    assert [ds.itos[i] for i in range(2, ds.vocab_size)] == chars
    assert ds.vocab_size == len(chars) + 2
    assert all(ds.itos[ds.stoi[c]] == c for c in chars)


def test_len_is_number_of_lines():
    ds = CharCorruptionDataset(TEXT, 128)
    assert len(ds) == len([l for l in TEXT.split("\n") if l]) == 32
    assert ds.data[1] == "jumps over the lazy dog"


def test_reserved_characters_rejected():
    with pytest.raises(ValueError, match="reserved"):
        CharCorruptionDataset("abc" + MASK_CHAR, 16)


def split_example(ds, x, y):
    """Decode an example into (prefix, suffix, masked, n_pad) and check x/y are one shift apart."""
    assert x.dtype == torch.long and y.dtype == torch.long
    assert len(x) == len(y) == ds.block_size - 1
    assert torch.equal(x[1:], y[:-1])
    s = decode(ds, x) + decode(ds, y[-1:])
    body = s.rstrip(PAD_CHAR)
    n_pad = len(s) - len(body)
    assert PAD_CHAR not in body, "PAD may only appear at the end"
    parts = body.split(MASK_CHAR)
    assert len(parts) == 4 and parts[3] == "", f"expected prefix⁇suffix⁇masked⁇, got {s!r}"
    prefix, suffix, masked, _ = parts
    return prefix, suffix, masked, n_pad


def sample_examples(ds, n, seed=0):
    random.seed(seed)
    out = []
    for k in range(n):
        idx = k % len(ds)
        out.append((idx, *split_example(ds, *ds[idx])))
    return out


def test_rearrangement_reconstructs_line_prefix_and_pads_at_end():
    ds = CharCorruptionDataset(TEXT, 128)
    for idx, prefix, suffix, masked, n_pad in sample_examples(ds, 300):
        original = prefix + masked + suffix
        assert ds.data[idx].startswith(original)
        assert n_pad == ds.block_size - (len(original) + 3)


def test_truncation_length_in_range_and_varies():
    # one long line, so the truncated length is exactly the drawn length
    block = 64
    ds = CharCorruptionDataset("x" * 500 + "y", block)
    lengths = [len(p) + len(m) + len(s) for _, p, s, m, _ in sample_examples(ds, 2000)]
    assert min(lengths) >= 4 and max(lengths) <= int(block * 3 / 4)
    # every length 4..48 possible: with 2000 draws over 45 values each appears (P(miss) < 45 * e^-44)
    assert set(lengths) == set(range(4, int(block * 3 / 4) + 1))


def test_masked_length_averages_a_quarter_and_varies():
    ds = CharCorruptionDataset("abcdefghij" * 30, 128)
    ratios = []
    for _, p, s, m, _ in sample_examples(ds, 3000, seed=1):
        ratios.append(len(m) / (len(p) + len(m) + len(s)))
    assert 0.2 <= statistics.mean(ratios) <= 0.3
    assert statistics.pstdev(ratios) > 0.05
    assert 0 < min(len(m) for _, p, s, m, _ in sample_examples(ds, 50))


def test_docstring_example_layout():
    """The layout the docstring shows: prefix⁇suffix⁇masked⁇ then PAD, x and y one apart."""
    ds = CharCorruptionDataset("Anna was born in Oslo\n", 16)
    for _ in range(400):
        x, y = ds[0]
        s = decode(ds, x) + decode(ds, y[-1:])
        # at most 12 characters of text + 3 MASK_CHARs, so at least one PAD_CHAR closes every example
        assert len(s) == 16 and s.endswith(PAD_CHAR) and s.rstrip(PAD_CHAR).endswith(MASK_CHAR)
        assert s.count(MASK_CHAR) == 3


def test_longest_truncation_still_fits_the_block():
    """3/4 of the block plus the three MASK_CHARs always fits, even for the smallest sensible blocks."""
    for block in (12, 13, 16, 17, 31, 128):
        ds = CharCorruptionDataset("z" * 300, block)
        for _ in range(200):
            x, y = ds[0]
            assert len(x) == len(y) == block - 1


def test_short_lines_do_not_crash():
    ds = CharCorruptionDataset("ab\nabcd\nz\n", 32)
    for idx, prefix, suffix, masked, _ in sample_examples(ds, 60):
        assert ds.data[idx].startswith(prefix + masked + suffix)


def test_seeded_examples_are_reproducible():
    ds = CharCorruptionDataset(TEXT, 128)
    random.seed(7)
    a = [ds[i] for i in range(10)]
    random.seed(7)
    b = [ds[i] for i in range(10)]
    assert all(torch.equal(p[0], q[0]) for p, q in zip(a, b))


FINETUNE = "Where was Ana Smith born?\tParis\nWhere was Bö Ng born?\tRome\n"


def test_name_dataset_targets_cover_only_the_answer():
    corpus = CharCorruptionDataset("Where was Ana Smith Bo Ng born? Paris Rome ö\n", 64)
    nd = NameDataset(FINETUNE, corpus)
    assert len(nd) == 2
    x, y = nd[0]
    q = "Where was Ana Smith born?"
    assert decode(corpus, x) == (q + MASK_CHAR + "Paris" + MASK_CHAR).ljust(63, PAD_CHAR)
    assert decode(corpus, y) == (PAD_CHAR * (len(q) - 1) + MASK_CHAR + "Paris" + MASK_CHAR).ljust(63, PAD_CHAR)
    assert torch.equal(x[len(q):], y[len(q) - 1 : -1])
    # non-ASCII is dropped from the finetuning text, as in the course
    x, _ = nd[1]
    assert decode(corpus, x).startswith("Where was B Ng born?" + MASK_CHAR + "Rome")


def test_name_dataset_errors_are_clear():
    corpus = CharCorruptionDataset("Where was Ana born? Paris\n", 64)
    with pytest.raises(ValueError, match="line 1 is not 'question<TAB>place'"):
        NameDataset("Where was Ana born? Paris\n", corpus)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        NameDataset("Where was Zed born?\tParis\n", corpus)
    with pytest.raises(ValueError, match="longer than the block size"):
        NameDataset("Where was " + "Ana " * 20 + "born?\tParis\n", corpus)
