"""The judge of part (e) reads a report that the student's process wrote, and student code may write anything
there.  Whatever a report holds, the judge either reads examples the dataset could have given or fails the test
with its own message (graderUtil.Fail): no report makes it raise anything else.  Each case below is an honest
report of the reference's examples with one field forged."""

import types

import pytest
import torch

from checks import dataset
from graderUtil import Fail

LINE = dataset.random_lines(2, [90])


@pytest.fixture(scope="module")
def honest():
    """A report of 20 examples of the reference's dataset, as observe_examples writes it."""
    import submission.dataset as reference

    ds = reference.CharCorruptionDataset("\n".join(LINE) + "\n", 128)
    return dataset.observe_examples(types.SimpleNamespace(submission_dir="."), ds, [0] * 20)


def test_an_honest_report_reads_as_the_examples(honest):
    seen = dataset.Examples(honest)
    assert len(seen) == 20 and seen.lengths == [127] * 20 and seen.dtypes == ["torch.int64"]
    for k in range(len(seen)):
        seen.parts(k, LINE[0])  # each reads prefix, masked, suffix of the line's beginning


FORGED = {
    "x of NaNs": dict(x=lambda r: torch.full(r["x"].shape, float("nan"))),
    "complex ids": dict(x=lambda r: r["x"].to(torch.complex64), y=lambda r: r["y"].to(torch.complex64)),
    "x and y of two dtypes": dict(y=lambda r: r["y"].long()),
    "negative ids": dict(x=lambda r: r["x"].long() - 200, y=lambda r: r["y"].long()),
    "an empty MASK_CHAR": dict(mask=lambda r: ""),
    "PAD_CHAR and MASK_CHAR the same": dict(mask=lambda r: r["pad"]),
    "a length of 0": dict(lengths=lambda r: [0] * 20),
    "lengths past the examples": dict(lengths=lambda r: [500] * 20),
    "lengths as floats": dict(lengths=lambda r: [127.0] * 20),
    "too few lengths": dict(lengths=lambda r: [127]),
    "dtypes as a tensor": dict(dtypes=lambda r: torch.zeros(2)),
    "examples far too long": dict(x=lambda r: torch.zeros((20, dataset.LONGEST + 1), dtype=torch.uint8),
                                  y=lambda r: torch.zeros((20, dataset.LONGEST + 1), dtype=torch.uint8)),
    "no lengths": dict(lengths=lambda r: None),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_report_fails_the_test_and_nothing_else(honest, case):
    report = dict(honest)
    for key, forge in FORGED[case].items():
        report[key] = forge(honest)
    with pytest.raises(Fail):
        seen = dataset.Examples(report)
        for k in range(len(seen)):  # what the checks do with what Examples let through
            seen.parts(k, LINE[0])
        dataset.whole_parts(report, LINE[0])
