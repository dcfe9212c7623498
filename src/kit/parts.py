"""Is a student part still empty?  The driver's checks, in one place.

The starter's regions are empty, so the functions around them return None (helper.py's return their None
results, CharCorruptionDataset.__getitem__ returns (None, None), an empty block's forward returns None).
Left alone, that None fails later, somewhere unrelated: in a DataLoader worker, inside a LayerNorm.  The
driver (run.py, demo.py, examples.py) asks here first, and an empty part becomes one sentence that names
the function to write, its file and its part: NotImplementedPart, exit status 1.  A part that is written
but wrong is not caught here: its traceback is the student's to see.
"""

import contextlib
import os
import random

import numpy as np
import torch


class NotImplementedPart(NotImplementedError):
    """A student part is still empty.  The message names the function, its file and the handout part, e.g.
    "implement finetune in src/submission/helper.py (part c)"."""

    def __init__(self, function, filename, part):
        super().__init__(f"implement {function} in src/submission/{filename} (part {part})")
        self.function, self.filename, self.part = function, filename, part


def implemented(value, function, part, filename="helper.py"):
    """value, unless it is the None an empty region leaves."""
    if value is None:
        raise NotImplementedPart(function, filename, part)
    return value


def new_model(helper, variant, mconf, bottleneck_dim):
    """The student's model of `variant` ("vanilla" or "perceiver") from helper.initialize_vanilla_model(mconf) or
    helper.initialize_perceiver_model(mconf, bottleneck_dim), with every part it needs written (check_model)."""
    if variant == "vanilla":
        net = implemented(helper.initialize_vanilla_model(mconf), "initialize_vanilla_model", "c")
    else:
        net = implemented(helper.initialize_perceiver_model(mconf, bottleneck_dim), "initialize_perceiver_model", "g")
    check_model(net)
    return net


def training_pair(result, function, part):
    """(tconf, trainer_obj) from finetune or pretrain: the empty region returns (None, None), a half-written
    one leaves one of them None."""
    if result is None or (isinstance(result, tuple) and any(value is None for value in result)):
        raise NotImplementedPart(function, "helper.py", part)
    return result


def _stamp(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def trained(train, model, path, trainer_obj):
    """Call helper.train (passed as `train`) and check that it wrote the params file: an empty train()
    returns without writing it, and a run must never claim a file it did not write."""
    before = _stamp(path)
    train(model, path, trainer_obj)
    after = _stamp(path)
    if after is None or after == before:
        raise NotImplementedPart("train", "helper.py", "c")


@contextlib.contextmanager
def random_states_kept():
    """Run a probe without consuming random numbers (Python's, NumPy's or torch's): a run is the same whether
    or not it was probed."""
    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])


def check_corruption(dataset):
    """Draw one example of a CharCorruptionDataset before training: the empty __getitem__ returns None values,
    which would otherwise fail deep inside a DataLoader worker."""
    with random_states_kept():
        example = dataset[0]
    if example is None or any(value is None for value in example):
        raise NotImplementedPart("CharCorruptionDataset.__getitem__", "dataset.py", "e")


def check_model(net):
    """The perceiver's DownProjectBlock and UpProjectBlock are written: each has parameters, and a forward pass
    of a short input returns a tensor from each.  A vanilla model has no student block to check."""
    if not getattr(net, "perceiver", False):
        return
    blocks = {"DownProjectBlock": net.down_block, "UpProjectBlock": net.up_block}
    for name, block in blocks.items():
        if next(block.parameters(), None) is None:
            raise NotImplementedPart(f"{name}.__init__", "model.py", "g")
    returned = {}

    def keep(name):
        def hook(module, args, out):
            returned.setdefault(name, out)
        return hook

    hooks = [block.register_forward_hook(keep(name)) for name, block in blocks.items()]
    was_training = net.training
    try:
        net.eval()
        idx = torch.zeros(1, net.get_block_size(), dtype=torch.long, device=next(net.parameters()).device)
        with torch.no_grad(), random_states_kept():
            net(idx)
    except Exception:  # noqa: BLE001 - a None from a block fails further on; any other bug shows in the real run
        pass
    finally:
        for hook in hooks:
            hook.remove()
        net.train(was_training)
    for name in blocks:
        if name in returned and returned[name] is None:
            raise NotImplementedPart(f"{name}.forward", "model.py", "g")
