"""What students receive of the threat model: the starter's docs/security.md says what a grading promises; how an
attack could earn points, and how each is held, stays in the instructor's copy (docs/attacks.md)."""

import re

from conftest import ROOT

# What reads as a recipe for forging a report: that zero tensors pass a check, that the worker's key or frame can
# be used, the internal exception that lets a failed comparison vouch, and the review that earned the 10 points
# judged on what the student's process reports.
RECIPE = re.compile(r"zero tensors|all-zero|worker's own key|worker's key|worker's frame|Mismatch|from a review|"
                    r"reaches (those|them)|writes those reports itself|fill the file system", re.IGNORECASE)


def recipes(text):
    return {m.group(0).lower() for m in RECIPE.finditer(" ".join(text.split()))}


def test_the_starters_security_page_promises_and_holds_no_recipe(starter):
    shipped = (starter / "docs" / "security.md").read_text(encoding="utf-8")
    assert shipped == (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert recipes(shipped) == set()
    # the promises stay: every verdict is the judge's, which tests count with which, and what is isolated
    for promise in ("never imports student code", "counts with", "Counting with a comparison (`vouched_by`)",
                    "Isolation as root",
                    "nothing is isolated", "No sandbox, judge or grading folder of root's is left"):
        assert promise in " ".join(shipped.split()), promise
    assert not (starter / "docs" / "attacks.md").exists()
    assert "attacks.md" not in shipped  # no link the starter cannot follow


def test_the_instructors_page_holds_what_the_starter_leaves_out():
    """Each recipe the starter leaves out is written down where the instructor reads it."""
    attacks = (ROOT / "docs" / "attacks.md").read_text(encoding="utf-8")
    found = recipes(attacks)
    assert {"all-zero", "worker's own key", "mismatch", "from a review", "fill the file system"} <= found, found
