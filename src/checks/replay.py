"""Record and replay: how the written part's checks (checks/written.py) run twice, and only the second run decides.

Beside the student's code a check runs on a Recorder, which calls the student's functions and keeps what each
returned, as data; in the judge (docs/security.md) the same check runs on a Replay of that data.
A check is a fixed sequence of calls on seeded instances, so the replay asks for the same calls in the same order
and sees the same values; what the student's process concluded never counts.  grader.py's written tests are
observe_answers and check_answers with the name of a check of checks/written.py.  torch is imported only inside a
worker: grader.py imports this module in the parent too.
"""

import numbers

from graderUtil import Fail


def observe_answers(ctx, check):
    """Beside the student's code: the check (by name) run on a Recorder of attention_exploration.py; what the
    student's functions returned, as data.  A check that fails here fails the test at once."""
    from checks import written

    recorder = Recorder(ctx.student("attention_exploration"))
    getattr(written, check)(recorder)
    return recorder.calls


def check_answers(ctx, report, check):
    """The judge: the same check on a Replay of what observe_answers recorded; only this verdict counts."""
    from checks import written

    getattr(written, check)(Replay(report))


def _data(value, depth=0):
    """What a student's function returned, as data a judge can load: tensors,
    numbers and None as they are, tuples and lists of them (two levels), a
    NumPy array as a tensor; anything else as its type's name, which every
    check rejects."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (tuple, list)) and depth < 2:  # not a bar: how deep the copy goes
        return [_data(v, depth + 1) for v in value]
    if hasattr(value, "__array__"):
        try:
            return torch.as_tensor(value)
        except Exception:  # noqa: BLE001 - an array of objects, say
            pass
    return {"unsupported": type(value).__name__}


class Recorder:
    """The student's module, seen through its functions: each call returns
    what the function returned, as data (_data), and is kept in .calls."""

    def __init__(self, module):
        self._module, self.calls = module, []

    def __getattr__(self, name):
        fn = getattr(self._module, name, None)
        if not callable(fn):
            return None

        def recorded(*args):
            out = _data(fn(*args))
            self.calls.append([name, out])
            return out

        return recorded


class Replay:
    """In the judge: the recorded calls, answered in the order the check makes
    them; a check that asks for anything else fails."""

    def __init__(self, calls):
        if not isinstance(calls, list) or not all(isinstance(c, list) and len(c) == 2 for c in calls):
            raise Fail("the test reported no answers of the student's functions to check")
        self._calls = list(calls)

    def __getattr__(self, name):
        def replayed(*args):
            if not self._calls or self._calls[0][0] != name:
                raise Fail("the test's report of the student's answers does not match the check's calls")
            return self._calls.pop(0)[1]

        return replayed
