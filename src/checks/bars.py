"""Comparisons of a measured number against a bar, written once so that each fails closed.

NaN compares false with everything, so a check written `if gain < bar: fail` passes a gain of NaN, and one
written `if error > tol: fail` passes an error of NaN: a student's params or outputs that make a statistic NaN
(or inf, where inf - inf follows) would clear every bar.  So no check compares a measured number itself: it asks
here.  Each helper first makes sure that the value is a finite real number (`number`), and raises a Fail that
says what was not one otherwise; only then does it compare.  The instructor's test suite walks src/checks/ for
order comparisons (<, <=, >, >=) outside this module on values that can be floats.

    if not at_least(gain, rule["min_question_gain"], "the question gain"):
        raise Fail(...)   # gain too low; a NaN gain has already raised its own Fail inside at_least
"""

import math
import numbers

from graderUtil import Fail


def number(value, what):
    """value as a finite float: an int, a float, a numpy or a one-element torch number.  Anything else (NaN, inf,
    None, a bool, a string, a tensor of several elements) raises a Fail that names `what`."""
    if hasattr(value, "numel") and hasattr(value, "item"):  # a torch tensor: only a single element is a number
        if value.numel() != 1 or value.is_complex():
            raise Fail(f"{what} is not a number (a tensor of shape {tuple(value.shape)})")
        value = value.item()
    elif hasattr(value, "item") and getattr(value, "shape", None) == ():  # a numpy scalar
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise Fail(f"{what} is not a number (got {type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise Fail(f"{what} is not a finite number (got {value})")
    return value


def finite(t, what):
    """The tensor t, after checking that every element is finite (a Fail that names `what` otherwise): what is
    computed from it can then be compared."""
    import torch

    if not torch.is_tensor(t):
        raise Fail(f"{what} is not a tensor (got {type(t).__name__})")
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise Fail(f"{what} holds NaN or inf")
    return t


def at_least(value, bar, what):
    """value >= bar, both finite numbers."""
    return number(value, what) >= number(bar, f"the bar for {what}")


def at_most(value, bar, what):
    """value <= bar, both finite numbers."""
    return number(value, what) <= number(bar, f"the bar for {what}")


def within(value, low, high, what):
    """low <= value <= high, all finite numbers."""
    value = number(value, what)
    return number(low, f"the lower bar for {what}") <= value <= number(high, f"the upper bar for {what}")
