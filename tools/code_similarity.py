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
characters of code (a few generic lines in common are never a pair), or nearly all of one side's own code (WHOLE)
and at least MIN_SMALL characters (a small part copied whole).  docs/instructor.md gives the scores of
distinct solutions and of planted copies from which THRESHOLD comes (tests/tools/test_code_similarity.py
measures them).

tools/class_report.py writes what this finds: grades.similar.csv and one side-by-side HTML page per flagged pair.
"""

import functools
import html
import io
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np
from copydetect import CodeFingerprint
from copydetect.utils import get_copied_slices

K = 25  # characters of the filtered text per fingerprint: copydetect's noise threshold (its default)
WINDOW = 1  # winnowing window: 1 keeps every fingerprint (copydetect's default: guarantee threshold = K)
# A pair's score from which it is flagged (docs/instructor.md).  On 14 real students' solutions, 0.6 flagged 3 of
# the 35 pairs of complete independent solutions (0.61-0.69: the MLP the hint says to copy from Block, the nearly
# forced one-line forwards) and 0.7 none, while every whole copy scored 0.944 or more.  A partial copy (one part of
# another's solution) scores 0.52-0.86 and is flagged from 0.7 in 3 of 8: the ranked list of every pair shows the
# others.  A student flagged without a copy is worse than a copy missed.
THRESHOLD = 0.7
# Characters of filtered code a flagged pair must share, at the least: a pair's score is its larger side's, so a
# submission with little code of its own (only helper.py's dictated calls) would decide a pair with a few common
# lines.  On 14 real students' solutions of the course's 2023-24 terms laid into this starter (docs/instructor.md),
# 50 characters flagged 14 of 77 independent pairs, 11 of them with such a submission (at most 0.825), and 300
# flagged 4; every whole copy (30, at least 946 characters) and every partial copy that scores above THRESHOLD (at
# least 517) stays.  A small body of code copied whole still is one: below MIN_MATCHED, a pair is flagged where
# WHOLE of one side's own code matches, and at least MIN_SMALL characters.
MIN_MATCHED = 300
WHOLE, MIN_SMALL = 0.9, 2 * K
# helper.py's student part is the handout's numbers in TrainerConfig and the calls its docstrings name: two
# students who never met write it alike (a solution with its own dataset and perceiver scored 0.59 against the
# reference with it, 0.25 without), so the reference's helper.py is boilerplate too
DICTATED = ["helper.py"]


def boilerplate_code(solution_dir, names):
    """{label: text} of what never counts, from the reference solution's folder: each of the files `names` (the
    seven student files) as the starter has it (its student regions emptied by tools/release.py), the same
    without the regions' `pass` placeholders (a student who deletes one joins the code before the region to the
    code after it: fingerprints that no starter holds, and no student wrote), and the DICTATED files as the
    reference has them."""
    from release import strip_regions  # the one rule that makes the starter

    out = {}
    for name in names:
        path = Path(solution_dir) / name
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            out[name] = strip_regions(text, name)
            out[f"{name} (its regions empty)"] = strip_regions(text, name, placeholder=False)
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


def filtered_slices(fp, hashes):
    """(fp's fingerprints among `hashes`, the (starts, ends) in fp's filtered text that they cover): copydetect's
    compare_files, for one file against a set of fingerprints."""
    common = fp.hashes & hashes
    idx = np.concatenate([fp.hash_idx[h] for h in common]).astype(np.int64) if common else np.array([], np.int64)
    return common, get_copied_slices(idx, fp.k).astype(np.int64)


def matched_slices(fp, other_hashes):
    """((starts, ends) in fp's raw text, characters of filtered code matched) of the parts of fp's file whose
    fingerprints are among other_hashes."""
    _, slices = filtered_slices(fp, other_hashes)
    if slices.shape[1] == 0:
        return slices, 0
    return to_raw(fp, slices), int(np.sum(slices[1] - slices[0]))


def to_raw(fp, positions):
    """Positions in fp's filtered text (an array) as positions in the file's own characters (as copydetect's
    compare_files maps them)."""
    positions = np.asarray(positions, dtype=np.int64)
    if len(fp.offsets) == 0:
        return positions
    return positions + fp.offsets[:, 1][np.clip(np.searchsorted(fp.offsets[:, 0], positions), 0,
                                                fp.offsets.shape[0] - 1)]


def runs(fp, hashes):
    """[(start, end, {hash})]: the runs of fp's filtered text whose fingerprints are among `hashes`, in order, each
    with the hashes that lie in it."""
    common, slices = filtered_slices(fp, hashes)
    return [(start, end, {h for h in common if any(start <= i < end for i in fp.hash_idx[h])})
            for start, end in zip(*slices.tolist())]


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


def all_pairs(code_by_name, common, others=None):
    """Every pair of submissions compared (a < b by name), and {submission: Body}.  code_by_name: {submission:
    {file: text}}; common: the Body of the code that never counts (fingerprint(boilerplate_code())), which the
    pair pages need too; others: {label: {file: text}} of code to compare each submission with but not with each
    other (the reference solution, past terms' submissions), each pair with the submission first.  Pairs with
    nothing in common (no shared fingerprint) are left out."""
    bodies = {name: fingerprint(code, common) for name, code in sorted(code_by_name.items())}
    names = sorted(bodies)
    extra = {label: fingerprint(code, common) for label, code in sorted((others or {}).items())}
    candidates = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]] + [(a, b) for a in names for b in extra]
    bodies.update(extra)
    pairs = [compare(a, bodies[a], b, bodies[b]) for a, b in candidates if bodies[a].hashes & bodies[b].hashes]
    return pairs, bodies


def flagged(pairs, threshold=THRESHOLD):
    return [p for p in pairs if p.score >= threshold
            and (p.matched >= MIN_MATCHED or (p.score >= WHOLE and p.matched >= MIN_SMALL))]


# ----------------------------------------------------------------------------------------------------------
# The matching regions side by side.


def matching_blocks(body_a, body_b):
    """The code the two sides share, as numbered blocks: ({file: [(start, end, number)]} of each side, in its raw
    text).  A's runs that match B are numbered in file order; each of B's runs takes the number of the run of A
    it shares the most fingerprints with, so that a block has one number, and one colour, on both sides."""
    def spans(fp, start, end, number):
        raw = to_raw(fp, [start, end]).tolist()
        return raw[0], min(raw[1], len(fp.raw_code)), number

    owner, side_a, side_b, number = {}, {}, {}, 0
    for name, fp in body_a.files.items():
        for start, end, inside in runs(fp, body_b.hashes):
            number += 1
            owner.update({h: number for h in inside if h not in owner})
            side_a.setdefault(name, []).append(spans(fp, start, end, number))
    for name, fp in body_b.files.items():
        for start, end, inside in runs(fp, body_a.hashes):
            votes = Counter(owner[h] for h in inside if h in owner)
            side_b.setdefault(name, []).append(spans(fp, start, end, votes.most_common(1)[0][0] if votes else 0))
    return side_a, side_b


@functools.lru_cache(maxsize=4096)
def plain_fingerprint(filename, raw_code):
    """A file fingerprinted with nothing left out, once per text: a submission's file is on the page of each pair it
    is in, and many files are the same text (the starter's, the dictated helper.py)."""
    return CodeFingerprint(filename, K, WINDOW, language="python", fp=io.StringIO(raw_code))


def starter_spans(fp, starter):
    """[(start, end)] of fp's raw text that the starter gives everyone: its runs among the starter's fingerprints
    (starter: the boilerplate's Body), found in the file fingerprinted without the boilerplate left out."""
    if starter is None:
        return []
    whole = plain_fingerprint(fp.filename, fp.raw_code)
    return [tuple(to_raw(whole, [start, end]).tolist()) for start, end, _ in runs(whole, starter.hashes)]


def without(spans, holes):
    """The parts of the spans [(start, end, tag)] outside every hole [(start, end)]."""
    out = []
    for start, end, tag in spans:
        pieces = [(start, end)]
        for h0, h1 in holes:
            pieces = [piece for a, b in pieces for piece in ((a, min(b, h0)), (max(a, h1), b)) if piece[0] < piece[1]]
        out += [(a, b, tag) for a, b in pieces]
    return sorted(out)


COLOURS = 6  # mark colours, one per block number modulo this


def highlighted(text, spans, mine, other):
    """text as HTML, each span (start, end, number) in a <mark> of its block's colour; the first piece of each
    block starts with its number, a link to the same block on the other side (ids mine-N and other-N)."""
    out, at, seen = [], 0, set()
    for start, end, number in spans:
        start, end = max(start, at), min(end, len(text))
        if start >= end:
            continue
        out.append(html.escape(text[at:start]))
        if number not in seen:
            seen.add(number)
            out.append(f'<a class="n" id="{mine}-{number}" href="#{other}-{number}">{number}</a>')
        out += [f'<mark class="c{number % COLOURS}">', html.escape(text[start:end]), "</mark>"]
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out)


def line_of(text, position):
    return text.count("\n", 0, position) + 1


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em; }}
.cols {{ display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }}
.cols > div {{ min-width: 0; }}
pre {{ background: #f6f6f6; padding: .5em; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }}
mark.c0 {{ background: #ffd36b; }} mark.c1 {{ background: #9fd8ff; }} mark.c2 {{ background: #b5eca0; }}
mark.c3 {{ background: #ffb3c6; }} mark.c4 {{ background: #d9c2ff; }} mark.c5 {{ background: #ffc99a; }}
a.n {{ font-size: 10px; vertical-align: super; margin-right: 2px; }}
summary {{ font-weight: bold; margin: .6em 0 .2em; cursor: pointer; }}
</style></head><body>
<p><a href="../{report}">back to the report</a></p>
<h1>{title}</h1>
<p>Score {score:.0%} ({a}: {score_a:.0%} of its own code matches; {b}: {score_b:.0%}).  Highlighted: the code
that matches the other submission's, anywhere in its files, after names, comments and layout are set aside, one
colour and number per matching block (a number links to the same block on the other side); what the starter gives
everyone is never highlighted.  Files without a match are folded: click to open.  A match is evidence for a person
to weigh, not a verdict.</p>
{blocks}
<div class="cols"><div><h2>{a}</h2>{left}</div><div><h2>{b}</h2>{right}</div></div>
</body></html>
"""


def side_by_side(pair, bodies, report_name, starter=None):
    """The HTML page of one pair: each submission's files, the code matching the other's highlighted block by block,
    and the list of blocks with their lines on each side.  starter: the boilerplate's Body, whose code is never
    highlighted."""
    sides = matching_blocks(bodies[pair.a], bodies[pair.b])
    where = {}

    def column(k, mine, tag, other_tag):
        parts = []
        for name, fp in bodies[mine].files.items():
            spans = without(sides[k].get(name, []), starter_spans(fp, starter))
            for start, end, number in spans:
                first, last = where.setdefault((number, k), {}).setdefault(name, (start, end))
                where[(number, k)][name] = (min(first, start), max(last, end))
            if fp.token_coverage:
                _, matched = matched_slices(fp, bodies[pair.b if mine == pair.a else pair.a].hashes)
                label = f"{matched / fp.token_coverage:.0%} of its own code matches"
            elif name in DICTATED:
                label = "every line is the starter's or what the handout dictates: not compared"
            else:
                label = "no code of its own: the starter's"
            parts.append(f"<details{' open' if spans else ''}><summary>{html.escape(name)} ({label})</summary>"
                         f"<pre>{highlighted(fp.raw_code, spans, tag, other_tag)}</pre></details>")
        return "\n".join(parts)

    left, right = column(0, pair.a, "a", "b"), column(1, pair.b, "b", "a")

    def lines(number, k, body):
        return "; ".join(f"{html.escape(name)} lines {line_of(body.files[name].raw_code, s)}-"
                         f"{line_of(body.files[name].raw_code, max(s, e - 1))}"
                         for name, (s, e) in sorted(where.get((number, k), {}).items()))

    numbers = sorted({n for (n, _) in where})
    blocks = ("<table><tr><th>block</th><th>" + html.escape(pair.a) + "</th><th>" + html.escape(pair.b)
              + "</th></tr>" + "".join(f'<tr><td><a href="#a-{n}">{n}</a></td><td>{lines(n, 0, bodies[pair.a])}</td>'
                                       f"<td>{lines(n, 1, bodies[pair.b])}</td></tr>" for n in numbers)
              + "</table>") if numbers else ""
    return PAGE.format(title=html.escape(f"{pair.a} ~ {pair.b}"), report=html.escape(report_name),
                       a=html.escape(pair.a), b=html.escape(pair.b), score=pair.score, score_a=pair.score_a,
                       score_b=pair.score_b, blocks=blocks, left=left, right=right)
