"""checks/bars.py: a number is a finite real, and every comparison with a bar fails closed."""

import math

import pytest

from checks import bars
from graderUtil import Fail


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -math.inf, None, True, "0.5", [1.0], {}])
def test_what_is_not_a_finite_number_fails_every_comparison(value):
    for compare in (lambda: bars.at_least(value, 0.1, "the gain"), lambda: bars.at_most(value, 0.1, "the gain"),
                    lambda: bars.within(value, 0.0, 1.0, "the gain")):
        with pytest.raises(Fail, match="the gain is not a"):
            compare()


def test_numbers_of_every_kind_compare():
    import numpy as np
    import torch

    assert bars.number(3, "x") == 3.0 and bars.number(np.float32(0.5), "x") == 0.5
    assert bars.number(torch.tensor([0.25]), "x") == 0.25
    assert bars.at_least(1, 1, "x") and not bars.at_least(0.99, 1, "x")
    assert bars.at_most(1e-5, 1e-4, "x") and not bars.at_most(2e-4, 1e-4, "x")
    assert bars.within(0.2, 0.15, 0.35, "x") and not bars.within(0.4, 0.15, 0.35, "x")
    for bad in (torch.tensor([1.0, 2.0]), torch.tensor(float("nan")), np.float64("inf")):
        with pytest.raises(Fail):
            bars.number(bad, "x")
    with pytest.raises(Fail, match="the bar for x is not a finite number"):
        bars.at_least(1.0, float("nan"), "x")


def test_a_tensor_that_holds_nan_or_inf_is_refused():
    import torch

    assert bars.finite(torch.ones(3), "y").sum() == 3
    for bad in (torch.tensor([1.0, float("nan")]), torch.tensor([float("-inf")])):
        with pytest.raises(Fail, match="y holds NaN or inf"):
            bars.finite(bad, "y")
