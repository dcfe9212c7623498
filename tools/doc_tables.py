"""The docs' lists of test ids, made from the grader's own listing (`grader.py --list --json`), so that renaming a
test, or changing which comparison vouches for it, touches grader.py (and points.json) alone; and the margins of
the learned bars, made from points.json, where each bar and its evidence live.

  python tools/doc_tables.py            # say whether the docs are up to date (exit status 1 if not)
  python tools/doc_tables.py --write    # rewrite the generated parts of docs/grading.md and docs/security.md

Each generated part sits between a BEGIN and an END comment line that name it; the test suite checks that every
part is what this script makes of the current grader and points.json (tests/checks/test_table.py).
"""

import argparse
import json
import re
import subprocess
import sys
import textwrap

import margins
import srcpath
from srcpath import ROOT, SRC

srcpath.use(SRC)
from grader import AS_REPORTED  # noqa: E402  (what the description of a test with nothing to compare says)
from grading.points import load_points  # noqa: E402
from kit.fileio import write_text_atomic  # noqa: E402


def listing():
    """The grader's tests as data, in its order: `grader.py --list --json -`."""
    out = subprocess.run([sys.executable, str(SRC / "grader.py"), "--list", "--json", "-"], cwd=SRC,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def id_table(tests):
    """docs/grading.md: every test, its points, and the course grader's test it is (the same id), if any."""
    rows = ["| test | points | the course's test | what it checks |", "|---|---|---|---|"]
    for t in tests:
        points = "info" if t["info"] else f"{t['points']:g}" + (" extra credit" if t["extra_credit"] and t["points"]
                                                                else " practice" if not t["points"] else "")
        course = ("the same" if t["course_id"] == t["id"] else f"part of {t['course_id']}" if t["course_id"]
                  else "none")
        what = re.sub(r"(?<!\w)(__\w+__)", r"`\1`", t["description"].replace("|", "/"))  # __x__ is no emphasis
        rows.append(f"| {t['id']} | {points} | {course} | {what} |")
    return "\n".join(rows)


def ids(names):
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def vouching(tests):
    """docs/security.md: which basic tests count only with which hidden comparisons, and which tests are judged on
    what the student's process reports, with nothing to compare with."""
    by_comparison = {}
    for t in tests:
        if t["vouched_by"]:
            by_comparison.setdefault(tuple(t["vouched_by"]), []).append(t["id"])
    counts = "; ".join(f"{ids(tids)} with {ids(vouchers)}" for vouchers, tids in by_comparison.items())
    reported = [t for t in tests if AS_REPORTED in t["description"]]
    bullets = [f"Counting with a comparison (`vouched_by`): {counts}.",
               f"Judged on what the student's process reports, with nothing to compare: "
               f"{ids(t['id'] for t in reported)}, {sum(t['points'] for t in reported):g} points."]
    return "\n".join(textwrap.fill(b, 120, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False)
                     for b in bullets)


def margins_table(points):
    """docs/grading.md: each thresholds row's learned bars, beside the weakest correct run measured and the strongest
    attack each stops (the row's evidence); ValueError where they contradict the bars (margins.problems)."""
    parts = []
    for name, row in points["thresholds"]["rows"].items():
        if "learned" not in row:
            continue
        problems = margins.problems(row)
        if problems:
            raise ValueError(f"the {name} row's margins: " + "; ".join(problems))
        bars = margins.bars_of(row)
        lines = [f"The `{name}` row:", "",
                 "| bar | params files | the weakest correct run measured | bar | the strongest attack it stops |",
                 "|---|---|---|---|---|"]
        for m in row["evidence"]["margins"]:
            bar = m["bar"]
            sign = "≥" if margins.at_least(bar) else "≤"
            attack = m.get("strongest_attack")
            cells = [f"`{bar}`", ", ".join(f"`{f}`" for f in bars[bar]),
                     f"**{m['weakest_correct']['value']:g}**: {m['weakest_correct']['run']}",
                     " or ".join(f"{sign} {v:g}" for v in sorted(set(bars[bar].values()))),
                     f"{attack['value']:g}: {attack['run']}" if attack else "none measured on this data set"]
            lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


# each generated part: (file, name, what it is made from, the function that makes it from that)
PARTS = [("docs/grading.md", "test ids", "listing", id_table), ("docs/security.md", "vouching", "listing", vouching),
         ("docs/grading.md", "margins", "points", margins_table)]
SOURCES = {"listing": "grader.py --list --json", "points": "points.json"}


def markers(name, source="listing"):
    # no path in them: docs/security.md ships in the student starter, which has no tools/
    return (f"<!-- BEGIN {name}: made from {SOURCES[source]}, not by hand -->",
            f"<!-- END {name} -->")


def rewrite(text, name, body, source="listing"):
    """text with the part `name` replaced by body; ValueError if the file lacks its markers."""
    begin, end = markers(name, source)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"the markers of '{name}' are missing or repeated")
    head, rest = text.split(begin)
    return f"{head}{begin}\n{body}\n{end}{rest.split(end, 1)[1]}"


def stale(tests=None, write=False, points=None):
    """The files whose generated parts differ from what the grader lists and points.json holds (rewritten with
    write=True, each file once with all its parts)."""
    given = {"listing": listing() if tests is None else tests, "points": load_points() if points is None else points}
    texts = {}
    for fname, name, source, make in PARTS:
        path = ROOT / fname
        text = texts.get(fname, path.read_text(encoding="utf-8"))
        texts[fname] = rewrite(text, name, make(given[source]), source)
    changed = [f for f, text in texts.items() if text != (ROOT / f).read_text(encoding="utf-8")]
    if write:
        for fname in changed:
            write_text_atomic(ROOT / fname, texts[fname])
    return changed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help="rewrite the generated parts")
    args = p.parse_args(argv)
    try:
        changed = stale(write=args.write)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for fname in changed:
        print(f"{fname}: {'rewritten' if args.write else 'out of date: python tools/doc_tables.py --write'}")
    return 1 if changed and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
