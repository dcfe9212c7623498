"""The margins of a thresholds row's learned bars (src/points.json): how far each bar sits from the weakest correct
run measured, which it must pass, and from the strongest attack it stops, which it must fail.

A row's evidence holds them, one a bar:

  "margins": [{"bar": "min_corpus_gain",
               "weakest_correct": {"value": 0.52, "run": "which run, where, when"},
               "strongest_attack": {"value": -1.08, "run": "what was made without the work"}}, ...]

tools/doc_tables.py makes docs/grading.md's table of them; tools/experiment.py's calibrate writes them from its
runs, keeping the attacks measured on the same data set.  A bar named min_... is passed by a value at least it, one
named max_... by a value at most it.
"""

import math

SIDES = ("weakest_correct", "strongest_attack")


def at_least(bar):
    """Whether the learned bar named `bar` asks for at least its threshold (min_...), not at most (max_...)."""
    return bar.startswith("min_")


def passes(bar, value, threshold):
    """Whether value clears the learned bar named `bar` set at threshold."""
    return value >= threshold if at_least(bar) else value <= threshold


def weaker(bar, a, b):
    """The weaker of two correct runs' values of one bar: the one nearer failing it."""
    return min(a, b) if at_least(bar) else max(a, b)


def bars_of(row):
    """{bar name: {params file: threshold}} of a row's learned section."""
    bars = {}
    for fname, rule in row.get("learned", {}).items():
        for bar, threshold in rule.items():
            bars.setdefault(bar, {})[fname] = threshold
    return bars


def problems(row):
    """What is wrong with a row's margins, one sentence each: every learned bar has one, its weakest correct run
    clears the bar on every params file that has it, and its strongest attack, where one was measured on this data
    set, fails it.  None for a row without learned bars."""
    bars = bars_of(row)
    margins = [m if isinstance(m, dict) else {} for m in row.get("evidence", {}).get("margins", [])]
    found = [f"{bar} has no margin in the row's evidence" for bar in bars
             if bar not in {m.get("bar") for m in margins}]
    for m in margins:
        bar = m.get("bar")
        if bar not in bars:
            found.append(f"the margin of {bar} names no bar of the row's learned section")
            continue
        for side in SIDES:
            if side not in m and side == "strongest_attack":
                continue  # none measured on this data set yet
            entry = m.get(side) if isinstance(m.get(side), dict) else {}
            value = entry.get("value")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or not entry.get("run"):
                found.append(f"the margin of {bar} needs its {side} as a finite value and the run it is of")
                continue
            for fname, threshold in bars[bar].items():
                if passes(bar, value, threshold) != (side == "weakest_correct"):
                    verb = "fails" if side == "weakest_correct" else "clears"
                    found.append(f"{bar}: the {side.replace('_', ' ')} ({value:g}) {verb} {fname}'s bar of "
                                 f"{threshold:g}")
    return found
