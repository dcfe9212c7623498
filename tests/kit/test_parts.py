"""src/kit/parts.py: an empty student part is named in one sentence; a written part, right or wrong, is left alone.

The end-to-end checks (every run.sh target of the generated starter names the next function to write) are in
tests/tools/test_release.py; these pin the checks themselves, one part at a time, on the reference's own classes."""

import random

import numpy as np
import pytest
import torch
import torch.nn as nn

from kit import parts
from conftest import small_config
from submission import helper
from submission import model as model_mod
from submission.dataset import CharCorruptionDataset


def perceiver(vocab=20):
    torch.manual_seed(0)
    return helper.initialize_perceiver_model(small_config(vocab, perceiver=True), 8)


def test_a_written_model_passes_and_keeps_its_state():
    net, vanilla = perceiver(), helper.initialize_vanilla_model(small_config(20))
    net.train()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    rng = torch.get_rng_state()
    parts.check_model(net)
    parts.check_model(vanilla)
    assert net.training and torch.equal(torch.get_rng_state(), rng)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())


@pytest.mark.parametrize("block", ["down_block", "up_block"])
def test_an_empty_block_is_named(block):
    name = {"down_block": "DownProjectBlock", "up_block": "UpProjectBlock"}[block]
    net = perceiver()
    real = getattr(net, block)

    class EmptyForward(nn.Module):  # the starter's forward: the region is empty, so x stays None
        def __init__(self):
            super().__init__()
            self.inner = real

        def forward(self, *args):
            return None

    setattr(net, block, EmptyForward())
    with pytest.raises(parts.NotImplementedPart, match=rf"implement {name}\.forward in src/submission/model\.py "
                                                         r"\(part g\)"):
        parts.check_model(net)
    setattr(net, block, nn.Module())  # the starter's __init__: no layer at all
    with pytest.raises(parts.NotImplementedPart, match=rf"{name}\.__init__"):
        parts.check_model(net)


def test_a_wrong_block_is_the_students_to_see():
    """A block that is written but raises is not an empty part: the probe says nothing, and the real run shows
    the traceback."""
    net = perceiver()

    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Linear(2, 2)

        def forward(self, *args):
            raise RuntimeError("shapes do not match")

    net.down_block = Broken()
    parts.check_model(net)  # no NotImplementedPart
    with pytest.raises(RuntimeError, match="shapes do not match"):
        net(torch.zeros(1, 4, dtype=torch.long))


def test_an_empty_corruption_is_named_without_using_random_numbers():
    ds = CharCorruptionDataset("abcdefgh ijkl\nmnop qrstu\n", 16)
    states = random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state()
    parts.check_corruption(ds)  # the reference's draws one example...
    assert random.getstate() == states[0] and np.array_equal(np.random.get_state()[1], states[1])
    assert torch.equal(torch.get_rng_state(), states[2])  # ...and leaves every generator where it was
    ds.__class__ = type("Empty", (CharCorruptionDataset,), {"__getitem__": lambda self, i: (None, None)})
    with pytest.raises(parts.NotImplementedPart, match=r"CharCorruptionDataset\.__getitem__ in "
                                                         r"src/submission/dataset\.py \(part e\)"):
        parts.check_corruption(ds)


def test_training_pair_and_trained(tmp_path):
    assert parts.training_pair((1, 2), "finetune", "c") == (1, 2)
    for empty in [None, (None, None), (1, None)]:
        with pytest.raises(parts.NotImplementedPart, match=r"implement pretrain in src/submission/helper\.py"):
            parts.training_pair(empty, "pretrain", "f")
    path = tmp_path / "out.params"
    parts.trained(lambda m, p, t: torch.save({}, p), None, path, None)
    with pytest.raises(parts.NotImplementedPart, match=r"implement train in"):
        parts.trained(lambda m, p, t: None, None, path, None)  # an earlier file is not this run's


def test_the_student_files_hold_no_empty_part_check():
    """GPT builds the model and nothing else: the checks are the driver's (issue 19)."""
    assert not hasattr(model_mod, "NotImplementedPart") and not hasattr(model_mod, "_implemented")
