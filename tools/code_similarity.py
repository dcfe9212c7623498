"""Code similarity across a class: the pairs of submissions whose Python files share code that the starter did
not give them, scored with copydetect's fingerprints (winnowing, the method of MOSS).

copydetect tokenizes each file with Pygments and writes every variable, attribute and argument as V, every
function name as F, every class name as O and every string as S, leaving out comments and whitespace.  So
renamed identifiers, rewritten comments and docstrings and another layout change nothing; a fingerprint is a
hash of K characters of that text, and a set of fingerprints has no order, so reordered functions change only
the few that straddle two of them.  Every fingerprint the boilerplate holds never counts: the starter's code
(tools/release.py's emptied regions; what all submissions inherit makes no pair similar, and two empty starters
score 0), and the reference's code of the files whose student part the handout dictates line by line (DICTATED:
helper.py's TrainerConfig values and calls, which every correct solution writes alike).

A submission's seven files are compared as one body of code with the other's seven (a function moved to another
file is still found).  Its score against the other is copydetect's: the fraction of its fingerprinted code that
lies in a match.  A pair's score is the larger of its two, so a submission copied whole into a larger one is
found; and a pair is flagged when that score is at least THRESHOLD and the match covers at least MIN_MATCHED
characters of code (a few generic lines in common are never a pair).  docs/instructor.md gives the scores of
distinct solutions and of planted copies from which THRESHOLD comes (tests/tools/test_code_similarity.py
measures them).

tools/class_report.py writes what this finds: grades.similar.csv and one side-by-side HTML page per flagged pair.
"""

import html
import io
from pathlib import Path
from typing import NamedTuple

import numpy as np
from copydetect import CodeFingerprint
from copydetect.utils import get_copied_slices

K = 25  # characters of the filtered text per fingerprint: copydetect's noise threshold (its default)
WINDOW = 1  # winnowing window: 1 keeps every fingerprint (copydetect's default: guarantee threshold = K)
THRESHOLD = 0.6  # a pair's score from which it is flagged: between distinct solutions and copies (docs/instructor.md)
MIN_MATCHED = 2 * K  # characters of filtered code a flagged pair must share, at the least
# helper.py's student part is the handout's numbers in TrainerConfig and the calls its docstrings name: two
# students who never met write it alike (a solution with its own dataset and perceiver scored 0.59 against the
# reference with it, 0.25 without), so the reference's helper.py is boilerplate too
DICTATED = ["helper.py"]


def boilerplate_code(solution_dir, names):
    """{label: text} of what never counts, from the reference solution's folder: each of the files `names` (the
    seven student files) as the starter has it (its student regions emptied by tools/release.py), and the
    DICTATED files as the reference has them."""
    from release import strip_regions  # the one rule that makes the starter

    out = {}
    for name in names:
        path = Path(solution_dir) / name
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            out[name] = strip_regions(text, name)
            if name in DICTATED:
                out[f"{name} (the reference's)"] = text
    return out


class Body(NamedTuple):
    """One submission's code as fingerprints: {file: CodeFingerprint} and the union of their hashes."""

    files: dict
    hashes: set

    @property
    def coverage(self):  # characters of filtered code that are fingerprinted (boilerplate left out)
        return sum(int(fp.token_coverage) for fp in self.files.values())


class Pair(NamedTuple):
    """Two submissions compared: the pair's score, each one's, and per file the larger of the two files' scores
    and of their characters in a match (a file that has no code of its own in either is left out)."""

    a: str
    b: str
    score: float
    score_a: float
    score_b: float
    matched: int  # characters of filtered code in a match, the larger of the two sides
    per_file: dict  # {file: score}
    matched_per_file: dict  # {file: characters}

    @property
    def most_similar_file(self):
        """The file with the most code in a match (a file of a few matching characters is not the one to read)."""
        return max(self.matched_per_file, key=lambda f: (self.matched_per_file[f], f)) if self.matched_per_file else ""


def fingerprint(code, boilerplate=None):
    """Body of {file name: source text}, with the hashes of `boilerplate` (a Body, the starter's) left out."""
    skip = np.array(sorted(boilerplate.hashes), dtype=np.int64) if boilerplate else None
    files = {name: CodeFingerprint(name, K, WINDOW, boilerplate=skip, language="python",
                                   fp=io.StringIO(text))
             for name, text in sorted(code.items())}
    return Body(files, set().union(*(fp.hashes for fp in files.values())))


def matched_slices(fp, other_hashes):
    """((starts, ends) in fp's raw text, characters of filtered code matched) of the parts of fp's file whose
    fingerprints are among other_hashes: copydetect's compare_files, for one file against a set of files."""
    common = fp.hashes & other_hashes
    idx = np.concatenate([fp.hash_idx[h] for h in common]).astype(np.int64) if common else np.array([], np.int64)
    slices = get_copied_slices(idx, fp.k).astype(np.int64)
    if slices.shape[1] == 0:
        return slices, 0
    matched = int(np.sum(slices[1] - slices[0]))
    if len(fp.offsets) > 0:  # from the filtered text back to the file's own characters (as compare_files does)
        slices = slices + fp.offsets[:, 1][np.clip(np.searchsorted(fp.offsets[:, 0], slices), 0,
                                                   fp.offsets.shape[0] - 1)]
    return slices, matched


def side_score(body, other):
    """(fraction of body's fingerprinted code that matches other's, characters matched, {file: (fraction,
    characters)})."""
    per_file, total = {}, 0
    for name, fp in body.files.items():
        if fp.token_coverage:
            _, matched = matched_slices(fp, other.hashes)
            per_file[name] = (matched / fp.token_coverage, matched)
            total += matched
    return (total / body.coverage if body.coverage else 0.0), total, per_file


def compare(a, body_a, b, body_b):
    score_a, matched_a, files_a = side_score(body_a, body_b)
    score_b, matched_b, files_b = side_score(body_b, body_a)
    files = sorted({*files_a, *files_b})
    per_file = {f: round(float(max(files_a.get(f, (0, 0))[0], files_b.get(f, (0, 0))[0])), 4) for f in files}
    matched = {f: max(files_a.get(f, (0, 0))[1], files_b.get(f, (0, 0))[1]) for f in files}
    return Pair(a, b, round(float(max(score_a, score_b)), 4), round(float(score_a), 4), round(float(score_b), 4),
                max(matched_a, matched_b), per_file, matched)


def all_pairs(code_by_name, boilerplate):
    """Every pair of submissions compared (a < b by name), and {submission: Body}.  code_by_name: {submission:
    {file: text}}; boilerplate: {label: text} whose code never counts (boilerplate_code()).  Pairs with nothing
    in common (no shared fingerprint) are left out."""
    common = fingerprint(boilerplate)
    bodies = {name: fingerprint(code, common) for name, code in sorted(code_by_name.items())}
    names = sorted(bodies)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if bodies[a].hashes & bodies[b].hashes:
                pairs.append(compare(a, bodies[a], b, bodies[b]))
    return pairs, bodies


def flagged(pairs, threshold=THRESHOLD):
    return [p for p in pairs if p.score >= threshold and p.matched >= MIN_MATCHED]


# ----------------------------------------------------------------------------------------------------------
# The matching regions side by side.


def highlighted(fp, other_hashes):
    """(fp's file as HTML, its parts that match other_hashes in <mark>; characters of filtered code matched)."""
    slices, matched = matched_slices(fp, other_hashes)
    text, out, at = fp.raw_code, [], 0
    for start, end in zip(*slices.tolist()):
        start, end = max(start, at), min(end, len(text))
        if start >= end:
            continue
        out += [html.escape(text[at:start]), "<mark>", html.escape(text[start:end]), "</mark>"]
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out), matched


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em; }}
.cols {{ display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }}
.cols > div {{ min-width: 0; }}
pre {{ background: #f6f6f6; padding: .5em; overflow-x: auto; font-size: 12px; }}
mark {{ background: #ffd36b; }}
summary {{ font-weight: bold; margin: .6em 0 .2em; cursor: pointer; }}
</style></head><body>
<p><a href="../{report}">back to the report</a></p>
<h1>{title}</h1>
<p>Score {score:.0%} ({a}: {score_a:.0%} of its own code matches; {b}: {score_b:.0%}).  Highlighted: the code
that matches the other submission's, anywhere in its files, after names, comments and layout are set aside;
what the starter gives everyone is never highlighted.  Files without a match are folded: click to open.  A
match is evidence for a person to weigh, not a verdict.</p>
<div class="cols"><div><h2>{a}</h2>{left}</div><div><h2>{b}</h2>{right}</div></div>
</body></html>
"""


def side_by_side(pair, bodies, report_name):
    """The HTML page of one pair: each submission's files, the code matching the other's highlighted."""
    def column(mine, other):
        parts = []
        for name, fp in bodies[mine].files.items():
            code, matched = highlighted(fp, bodies[other].hashes)
            label = (f"{matched / fp.token_coverage:.0%} of its own code matches" if fp.token_coverage else
                     "no code of its own: the starter's")
            parts.append(f"<details{' open' if matched else ''}><summary>{html.escape(name)} ({label})</summary>"
                         f"<pre>{code}</pre></details>")
        return "\n".join(parts)

    return PAGE.format(title=html.escape(f"{pair.a} ~ {pair.b}"), report=html.escape(report_name),
                       a=html.escape(pair.a), b=html.escape(pair.b), score=pair.score, score_a=pair.score_a,
                       score_b=pair.score_b, left=column(pair.a, pair.b), right=column(pair.b, pair.a))
