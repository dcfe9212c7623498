"""What a graded class is reported as: one row of grades.csv per submission (per-test points, total, the
accuracy of each prediction file against the answers, the problems found), the pairs of submissions whose
prediction files are nearly identical (possible copying, grades.pairs.csv), the pairs whose code is
(grades.similar.csv, with the matching code side by side in grades.similar/), the pairs whose params files descend
one from another (grades.params.csv) and those that compute alike (grades.behaviour.csv), the histograms
(grades.png) and one page that shows all of it (report.html).

tools/grade_class.py grades the submissions and hands their results here; nothing here runs a grader.  The
prediction files and the code are read from each submission as the grader chose them (src/kit/upload.py); the
predictions are scored against the answers in the data folder, the code compared by tools/code_similarity.py, the
params files by tools/params_similarity.py (in a process of its own, which grade_class runs).

Every output holds students' grades or code: each is written readable and writable by its owner alone (0600,
the side-by-side folder 0700), whatever the umask.
"""

import base64
import contextlib
import csv
import html
import os
from pathlib import Path
from typing import NamedTuple

import srcpath
from srcpath import SRC

srcpath.use(SRC)
from kit.course import DELIVERABLES, PARAMS_FILES, PREDICTION_FILES  # noqa: E402  (the one list of deliverables)
from kit import fileio  # noqa: E402  (how the grader reads prediction lines and answer rows)
from kit.fileio import atomic_path  # noqa: E402  (the drivers' one atomic writer)
from kit import upload  # noqa: E402  (which files of an upload are graded: the same rule as on Gradescope)
# the answers each prediction file is scored against: dev answers ship with the data, test answers are held
# out (present only where submissions are graded)
from grader import GOLD_FILES  # noqa: E402
# which prediction file each test grades, and the kind of failure whose judge found a file that its params do not
# give (results.json's extra_data "reason": a typed word, never read from a message)
from grader import PREDICTION_TESTS  # noqa: E402
from grading.registry import PredictionsNotFromParams  # noqa: E402

# A pair of submissions is flagged where their prediction files share more wrong answers than independent runs do:
# at least MIN_EVIDENCE of them, beyond what each file shares with the class's other files (similar_pairs) by so much
# that a count of independent coincidences (Poisson's tail, Bernstein's bound) reaches it with probability below
# ALARM
MIN_EVIDENCE = 10
ALARM = 1e-6


# ----------------------------------------------------------------------------------------------------------
# Prediction lines and answers.


def split_lines(text):
    """A prediction or answer file's lines as the grader counts them, without surrounding spaces."""
    return [line.strip() for line in fileio.split_lines(text)]


def load_answers(data_dir):
    """{prediction file: [answers]} for the splits whose answer file is in data_dir."""
    answers = {}
    for fname in PREDICTION_FILES:
        gold = Path(data_dir) / GOLD_FILES[fname.split(".")[2]]
        if gold.is_file():
            answers[fname] = [r[1].strip() if len(r) > 1 else "" for r in fileio.read_tsv(gold)]
    return answers


# A prediction file is a place name a line (the course's test set has 437 lines): one larger than this is not
# scored here (its accuracy cell stays empty; the grader's own tests judge it), and is never read whole.
PREDICTION_BYTES = 1 << 20


def submission_texts(path, names, wanted, limit, left_out=None):
    """{file: text} of the files `wanted` read straight from the submission (zip or folder), the copies the grader
    graded, each at most `limit` bytes; {} if unreadable (its row says why: it is not graded either).  A file
    larger than `limit` is not compared: (file, why) goes to left_out, which the terminal and the roster show.
    names: every deliverable's name (grade_class's deliverable_names()), as the upload's rule picks which copy of a
    file is graded from all of them, not from the wanted ones alone."""
    texts = {}
    try:
        with upload.Upload(path) as up:
            for fname, rel in up.choose(names).chosen.items():
                if fname not in wanted:
                    continue
                if up.size(rel) > limit:
                    if left_out is not None:
                        left_out.append((fname, f"it is larger than the {limit >> 20} MiB the comparison reads"))
                    continue
                texts[fname] = up.read(rel, limit).decode("utf-8", errors="replace")
    except (OSError, ValueError):  # upload.UploadError is a ValueError
        return {}
    return texts


def submission_predictions(path, names, left_out=None):
    """{prediction file: [lines]} of the submission, as the grader graded them; {} if unreadable (left_out:
    submission_texts')."""
    texts = submission_texts(path, names, PREDICTION_FILES, PREDICTION_BYTES, left_out)
    return {fname: split_lines(text) for fname, text in texts.items()}


CODE_BYTES = 1 << 20  # a student's .py file is a few KB; a larger one is not compared


def submission_code(path, names, code_files, left_out=None):
    """{file: source text} of the submission's code_files (the seven student files), as the grader graded them
    (left_out: submission_texts')."""
    return submission_texts(path, names, code_files, CODE_BYTES, left_out)


# ----------------------------------------------------------------------------------------------------------
# Accuracy and similarity.


def accuracy(lines, answers):
    if lines is None or answers is None or len(lines) != len(answers) or not answers:
        return None
    return sum(p == a for p, a in zip(lines, answers)) / len(answers)


class PredictionPair(NamedTuple):
    """One prediction file of a flagged pair of submissions: the wrong answers the two files share."""
    a: str
    b: str
    file: str
    lines: int
    both_wrong: int  # lines both answer (not blank), both wrongly
    same_wrong: int  # of them, those with the same wrong answer
    fraction: float  # same_wrong / both_wrong
    expected: float  # the wrong answers in common that independent runs share: the larger of the two files' median
    # over the class's other files of that length
    distinct_a: int  # distinct non-blank answers in each file: a file of one answer repeated has 1
    distinct_b: int


PAIR_COLUMNS = ["submission_a", "submission_b", "file", "lines", "wrong_in_both", "same_wrong_answers",
                "fraction_same_wrong", "independent_runs_share", "distinct_answers_a", "distinct_answers_b"]


def beyond_chance(observed, expected):
    """Whether `observed` coincidences, where independent runs make `expected`, are more than chance makes with
    probability ALARM: Bernstein's bound on a sum of independent 0/1 counts of mean `expected`, exp(-t^2 / (2
    (expected + t / 3))) for t = observed - expected, below ALARM."""
    import math

    t = observed - expected
    return t > 0 and t * t / (2 * (expected + t / 3)) > -math.log(ALARM)


def similar_pairs(preds_by_name, answers):
    """The PredictionPairs of every pair of submissions whose prediction files share more wrong answers than
    independent runs do.  Right answers in common are no evidence (two good runs agree on them), nor blank lines
    (no answer); a wrong answer two files share is, against what independent runs share: for each file, the median
    of the wrong answers it shares with each other file of the class of its length (the pair left out).  A deliverable
    whose files most of the class computed alike (one seed, one data order, the same code: the vanilla model without
    pretraining) shares its wrong answers with most files, and two of them are not a pair; a copy shares them with
    its source alone.  A pair is flagged on the sum over its files: MIN_EVIDENCE wrong answers in common or more,
    beyond_chance over the larger of the two medians.  Files are compared with the answers of their length only
    (unanswered names those not compared).  Vectorised per file: each distinct answer gets an integer id, so a class
    of hundreds is a few numpy products, not a Python loop over line pairs."""
    import numpy as np

    found = {}  # (a, b) -> [(file, lines, both wrong, same wrong, expected, distinct a, distinct b)]
    for fname in PREDICTION_FILES:
        gold = answers.get(fname)
        group = sorted((n, p[fname]) for n, p in preds_by_name.items() if p.get(fname) and gold is not None
                       and len(p[fname]) == len(gold))
        if len(group) < 2:
            continue
        ids = {"": 0}
        mat = np.array([[ids.setdefault(line.strip(), len(ids)) for line in lines] for _, lines in group])
        right = np.array([ids.get(a.strip(), -1) for a in gold])
        wrong = (mat != right) & (mat != 0)  # a blank line is no answer
        both = wrong.astype(np.int64) @ wrong.T.astype(np.int64)
        same = np.zeros_like(both)
        for i in range(len(group)):
            same[i] = ((mat == mat[i]) & wrong[i]).sum(axis=1)
        distinct = [len({line.strip() for line in lines} - {""}) for _, lines in group]
        typical = medians_without(same)
        for i, k in zip(*np.nonzero(np.triu(same, 1))):
            found.setdefault((group[i][0], group[k][0]), []).append(
                (fname, len(gold), int(both[i, k]), int(same[i, k]), float(max(typical[i, k], typical[k, i])),
                 distinct[i], distinct[k]))
    rows = []
    for (a, b), files in sorted(found.items()):
        observed, expected = sum(f[3] for f in files), sum(f[4] for f in files)
        if observed >= MIN_EVIDENCE and beyond_chance(observed, expected):
            rows += [PredictionPair(a, b, f, lines, both, same, round(same / max(both, 1), 4), round(expected, 1),
                                    da, db) for f, lines, both, same, expected, da, db in files]
    rows.sort(key=lambda r: (r.a, r.b, PREDICTION_FILES.index(r.file)))
    return rows


def medians_without(same):
    """M[i, k]: the median of same[i, c] over the files c other than i and k (0 where there is none), for every i and
    k at once: each row sorted once without its own entry, and the entry of k taken out by shifting the indices at
    and past its place (a class of hundreds whose files most share is n^2 entries, not n^2 medians)."""
    import numpy as np

    n = len(same)
    if n < 3:
        return np.zeros((n, n))
    rows = np.sort(same[~np.eye(n, dtype=bool)].reshape(n, n - 1), axis=1)  # row i without same[i, i]
    place = np.stack([np.searchsorted(rows[i], same[i]) for i in range(n)])  # where same[i, k] sits in row i

    def nth(j):  # the j-th smallest of row i without the entry of k
        return np.take_along_axis(rows, j + (j >= place), axis=1)

    m = n - 2
    return nth(m // 2).astype(float) if m % 2 else (nth(m // 2 - 1) + nth(m // 2)) / 2


def unanswered(preds_by_name, answers):
    """[(prediction file, why)] of the files that similar_pairs could not compare: no answers in the data folder, or
    files of another length than the answers (their accuracy cells stay empty too)."""
    out = []
    for fname in PREDICTION_FILES:
        held = [n for n, p in preds_by_name.items() if p.get(fname)]
        gold = answers.get(fname)
        if held and gold is None:
            out.append((fname, f"the data folder has no answers for {fname}: its {len(held)} files were not "
                               "compared"))
        elif held:
            odd = sorted(n for n in held if len(preds_by_name[n][fname]) != len(gold))
            if odd:
                out.append((fname, f"{len(odd)} {fname} files have another number of lines than its "
                                   f"{len(gold)} answers and were not compared ({', '.join(odd[:5])}"
                                   f"{', ...' if len(odd) > 5 else ''})"))
    return out


# ----------------------------------------------------------------------------------------------------------
# Writing the outputs (each written to a temporary name beside it, then renamed, by fileio.atomic_path: an
# interrupted run never leaves half a file in place of an earlier one).


@contextlib.contextmanager
def private_path(path):
    """atomic_path, with the temporary file made readable and writable by its owner alone before anything is
    written to it (the writers open it again and keep its mode)."""
    with atomic_path(path) as tmp:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        os.chmod(tmp, 0o600)  # whatever the umask
        yield tmp


# A cell that starts with one of these is a formula to a spreadsheet (=HYPERLINK(...), +cmd|...): a submission's
# name, which its student chose, must stay text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_text_cell(value):
    """A CSV cell that a spreadsheet shows as what it holds: a string that would start a formula is prefixed with
    an apostrophe, which spreadsheets read as "text follows"; numbers stay numbers."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def shown(text):
    """text as a terminal may print it: every control or other unprintable character (an escape sequence in a
    submission's name, a carriage return that overwrites the line) written as its Python escape."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in str(text))


def write_csv(path, header, rows):
    with private_path(path) as tmp:
        # newline="": the csv module writes "\r\n"; a name that is not UTF-8 (a surrogate) is written escaped
        with open(tmp, "w", newline="", encoding="utf-8", errors="backslashreplace") as f:
            w = csv.writer(f)
            w.writerow([as_text_cell(v) for v in header])
            w.writerows([as_text_cell(v) for v in row] for row in rows)


def score_split(results):
    """(coding points, coding maximum, extra credit, extra-credit maximum) of one grading's results.json, as the
    grader's own summary keeps them apart; Gradescope's total is the two points together."""
    split = {False: [0.0, 0.0], True: [0.0, 0.0]}  # extra credit? -> [points, maximum]
    for t in results.get("tests", []):
        cell = split["extra credit" in t.get("tags", [])]
        cell[0] += t.get("score") or 0
        cell[1] += t.get("max_score") or 0
    return split[False][0], split[False][1], split[True][0], split[True][1]


def grade_rows(records, test_ids, preds, answers):
    header = (["submission", "graded", "coding", "coding_max", "extra_credit", "extra_credit_max", "total"]
              + list(test_ids)
              + [f"accuracy:{f}" for f in PREDICTION_FILES] + ["problems"])
    rows, totals, accs = [], [], {f: [] for f in PREDICTION_FILES}
    for name, rec in records:
        res = rec.get("results") or {}
        by_id = {t.get("number"): t for t in res.get("tests", [])}
        points = []
        for tid in test_ids:
            t = by_id.get(tid)
            status = (t or {}).get("extra_data", {}).get("status")  # the grader states every test's status
            if t is None:
                points.append("")
            elif status == "pending":
                points.append("pending")
            else:
                points.append(f"{t['score']:g}")
        sums = ([f"{v:g}" for v in score_split(res)] + [f"{res['score']:g}"]) if rec.get("graded") else [""] * 5
        if rec.get("graded"):
            totals.append(res["score"])
        acc_cells = []
        unmatched = unmatched_files(rec)
        for f in PREDICTION_FILES:
            a = accuracy(preds.get(name, {}).get(f), answers.get(f))
            acc_cells.append("" if a is None else f"{a:.4f}")
            if a is not None and f not in unmatched:  # a file its params do not give earns nothing: not in the plot
                accs[f].append(a)
        rows.append([name, "yes" if rec.get("graded") else "no", *sums] + points + acc_cells
                    + ["; ".join(rec.get("problems", []))])
    return header, rows, totals, accs


def parts_of(test_ids):
    """{part: [test ids]}: the parts of the assignment (a test id's first field: 1c, 1e, 3a, ...) in the order the
    ids first name them."""
    parts = {}
    for tid in test_ids:
        parts.setdefault(tid.split("-")[0], []).append(tid)
    return parts


def points_by_part(results, parts):
    """{part: points} that one grading's results.json earned in each part of `parts` (parts_of); a test it lacks,
    or a pending one, counts 0."""
    by_id = {t.get("number"): t for t in results.get("tests", [])}
    return {part: sum(by_id[t].get("score") or 0 for t in ids if t in by_id) for part, ids in parts.items()}


def part_points(records, test_ids):
    """{part: [points]}: per part of the assignment, the points each graded submission earned in its tests."""
    parts = parts_of(test_ids)
    out = {part: [] for part in parts}
    for _, rec in records:
        if rec.get("graded"):
            for part, points in points_by_part(rec.get("results") or {}, parts).items():
                out[part].append(points)
    return out


def histogram_bins(values, points):
    """The bin edges of a histogram: for points, one bin per whole point from 0 to the highest score, each centred
    on its number (a part everyone scored 0 in is one bar at 0, not an axis of -0.4..0.4); for accuracies, twenty
    bins over 0..1."""
    if not points:
        return [k / 20 for k in range(21)]
    top = int(max(values, default=0)) + 1
    return [k - 0.5 for k in range(top + 1)]


def plot(path, totals, accs, parts=None):
    """Histograms of the totals, of each part's points and of each prediction file's accuracy, if matplotlib is
    installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    panels = ([("total points", totals)] + [(f"part {p}: points", v) for p, v in (parts or {}).items() if v]
              + [(f, v) for f, v in accs.items() if v])
    cols = 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 3 * rows), squeeze=False)
    from matplotlib.ticker import MaxNLocator

    for ax, (title, values) in zip(axes.flat, panels):
        points = title.endswith("points")
        ax.hist(values, bins=histogram_bins(values, points))
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("points" if points else "accuracy")
        ax.set_ylabel("submissions")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # whole submissions
        if points:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole points
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    with private_path(path) as tmp:  # the temporary name keeps the .png, from which savefig picks the format
        fig.savefig(tmp)
    plt.close(fig)
    return True


def write_report(out, ordered, test_ids, preds, answers, code=None, boilerplate=None, code_files=(), facts=(),
                 others=None, params=None, left_out=None):
    """Write grades.csv (out), grades.pairs.csv, grades.png, grades.similar.csv with grades.similar/,
    grades.params.csv and report.html, and print what a person should look at: the problems of each submission
    and the pairs flagged as possible copying.  ordered: (name, cache record) of every submission in the CSV's
    order; preds: {name: submission_predictions(...)}; answers: load_answers(); code: {name: submission_code(...)}
    (None: no code comparison); boilerplate: code_similarity.boilerplate_code(...); code_files: the seven files,
    one score column each; facts: (label, value) of the run, shown at the top of the page; others: {label: {file:
    text}} of code each submission's is compared with too, but not one with another (code_similarity.all_pairs);
    params: params_similarity.compare_class(...)'s Comparison (None: no params comparison); left_out: {name: [(file,
    why)]} of the prediction and code files the comparisons could not read (submission_texts')."""
    header, rows, totals, accs = grade_rows(ordered, test_ids, preds, answers)
    write_csv(out, header, rows)
    print(f"wrote {out} ({len(rows)} rows; {sum(1 for _, r in ordered if r.get('graded'))} graded)")
    for name, rec in ordered:
        if rec.get("problems"):
            print(shown(f"  {name}: {'; '.join(rec['problems'])}"))
    for name, files in sorted((left_out or {}).items()):
        for fname, why in files:
            print(shown(f"warning: {name}: {fname} not compared: {why}"))

    pairs = similar_pairs(preds, answers)
    pairs_path = out.with_name(out.stem + ".pairs.csv")
    write_csv(pairs_path, PAIR_COLUMNS, pairs)
    by_pair = predictions_by_pair(pairs)
    print(f"possible copying (prediction files sharing more wrong answers than independent runs do): "
          f"{len(by_pair)} pair(s); details in {pairs_path}")
    for (a, b), rows in by_pair.items():
        print(shown(f"  {a} ~ {b}: {shared_words(rows)}"))
    for _, why in unanswered(preds, answers):
        print(shown(f"warning: {why}"))

    code_pairs, ranked, pair_pages = ((None, None, None) if code is None else
                                      write_code_pairs(out, code, boilerplate, code_files, others))
    if params is not None:
        write_params_pairs(out, params)
    groups = clusters(pairs, code_pairs, params)
    if groups:
        print(shown(f"groups that the flagged pairs join: {len(groups)}; the largest: {', '.join(groups[0].members)} "
                    f"({' and '.join(groups[0].kinds)})"))

    png = out.with_suffix(".png")
    by_part = part_points(ordered, test_ids)
    zero_parts = [p for p, v in by_part.items() if v and not any(v)]  # no histogram of an axis around 0
    if plot(png, totals, accs, {p: v for p, v in by_part.items() if p not in zero_parts}):
        print(f"wrote {png}")
    else:
        png = None
        print("(matplotlib is not installed: no histogram)")

    students = write_student_pages(out, ordered, roster(ordered, test_ids, pairs, code_pairs, params, left_out)[2])
    page = out.with_name("report.html")
    with private_path(page) as tmp:
        Path(tmp).write_text(report_page(out, ordered, pairs, code_pairs, png, test_ids, facts, ranked, params,
                                         students, pair_pages, zero_parts, left_out),
                             encoding="utf-8", errors="backslashreplace")
    print(f"wrote {page}: open it in a browser")


# ----------------------------------------------------------------------------------------------------------
# Code similarity (tools/code_similarity.py) and the report page.


def write_code_pairs(out, code, boilerplate, code_files, others=None):
    """Compare the class's code (and each submission's with `others`), write grades.similar.csv and one
    side-by-side page per pair the report lists (the flagged ones, and the RANKED_SHOWN highest, near misses
    included) in grades.similar/; returns [(pair, the page's path relative to out's folder)] of the flagged pairs,
    every pair compared, the highest score first, and {(a, b): its page's path} of every listed pair."""
    import code_similarity  # copydetect: tools/requirements.txt

    starter = code_similarity.fingerprint(boilerplate)  # never counts, and never highlighted on a pair's page
    pairs, bodies = code_similarity.all_pairs(code, starter, others)
    ranked = sorted(pairs, key=lambda p: (-p.score, p.a, p.b))
    flagged = code_similarity.flagged(pairs)
    folder = out.with_name(out.stem + ".similar")
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    listed = flagged + [p for p in ranked[:RANKED_SHOWN] if p not in flagged]
    pair_pages = {}
    for k, pair in enumerate(listed, 1):
        page = folder / f"pair-{k}.html"
        with private_path(page) as tmp:
            Path(tmp).write_text(code_similarity.side_by_side(pair, bodies, "report.html", starter), encoding="utf-8",
                                 errors="backslashreplace")
        pair_pages[pair.a, pair.b] = f"{folder.name}/{page.name}"
    pages = [(pair, pair_pages[pair.a, pair.b]) for pair in flagged]
    for old in folder.glob("pair-*.html"):  # an earlier run's pages of pairs no longer listed
        if old.name not in {Path(rel).name for rel in pair_pages.values()}:
            old.unlink()
    path = out.with_name(out.stem + ".similar.csv")
    write_csv(path, ["submission_a", "submission_b", "score", "score_a", "score_b", "matched_characters",
                     "most_similar_file"] + [f"score:{f}" for f in code_files] + ["side_by_side"],
              [[p.a, p.b, p.score, p.score_a, p.score_b, p.matched, p.most_similar_file]
               + [p.per_file.get(f, "") for f in code_files] + [rel] for p, rel in pages])
    print(f"possible copying (code, score >= {code_similarity.THRESHOLD:.0%} beyond the starter): {len(pages)} "
          f"pair(s); details in {path}, side by side in {folder}/")
    for p, rel in pages:
        print(shown(f"  {p.a} ~ {p.b}: {p.score:.0%}, most in {p.most_similar_file}"))
    return pages, ranked, pair_pages


def write_params_pairs(out, params):
    """Write grades.params.csv, the pairs of params files within the drift ceiling of each other, and
    grades.behaviour.csv, the pairs that compute alike far beyond the class's pairs (tools/params_similarity.py), and
    print them."""
    import params_similarity

    path = out.with_name(out.stem + ".params.csv")
    write_csv(path, params_similarity.PAIR_COLUMNS, params.pairs)
    computed_path = out.with_name(out.stem + ".behaviour.csv")
    write_csv(computed_path, params_similarity.BEHAVIOUR_COLUMNS, params.behaviour)
    if params.failed:
        print(f"warning: the params files were not compared: {params.failed}")
        return
    for name, fname, why in params.problems:  # each submission's files that were left out, loudly
        print(shown(f"warning: {name}: {fname + ' ' if fname else ''}not compared: "
                    f"{why.removesuffix(': not compared')}"))
    if not params.files:
        print("warning: no params file was compared (none could be read): the class's params are unchecked, "
              "not clean")
        return
    by_pair = params_by_pair(params.pairs)
    print(f"possible copying (params files within {params_similarity.DRIFT_CEILING:.0%} of each other's size, "
          f"{params.files} files compared): {len(by_pair)} pair(s); details in {path}")
    for c in params.common:
        print(f"  not flagged: {c.file}, which {c.near} of the {c.files} submissions holding it hold near another's "
              "(one computation: one seed, one data order)")
    for (a, b), found in by_pair.items():
        print(shown(f"  {a} ~ {b}: {nearest_files(found)}"))
    if params.unprobed:
        print(f"warning: the params files were not compared by what they compute: {params.unprobed}")
        return
    alike = behaviour_by_pair(params.behaviour)
    print(f"possible copying (params files that compute alike, far beyond the class's pairs; {params.computed} files "
          f"compared): {len(alike)} pair(s); details in {computed_path}")
    for spread in params.spreads:
        if spread.cannot_tell:
            print(f"  cannot tell: {comparison_words(spread)}: {spread.cannot_tell}")
    for (a, b), found in alike.items():
        print(shown(f"  {a} ~ {b}: {alike_files(found)}"))


def predictions_by_pair(rows):
    """{(a, b): their PredictionPairs} of similar_pairs' rows, in its order."""
    out = {}
    for r in rows:
        out.setdefault((r.a, r.b), []).append(r)
    return out


def shared_words(rows):
    """A flagged pair's prediction files in a few words: the wrong answers in common, and what independent runs
    share."""
    same, expected = sum(r.same_wrong for r in rows), sum(r.expected for r in rows)
    return (f"{same} wrong answers in common over {len(rows)} file{'s' if len(rows) > 1 else ''} (independent runs "
            f"share {expected:.1f})")


def params_by_pair(pairs):
    """{(a, b): their ParamsPairs, the nearest first} of params_similarity's flagged pairs."""
    out = {}
    for p in sorted(pairs, key=lambda p: p.drift):
        out.setdefault((p.a, p.b), []).append(p)
    return dict(sorted(out.items()))


def behaviour_by_pair(pairs):
    """{(a, b): their BehaviourPairs, the nearest first} of params_similarity's pairs flagged by what they compute
    (a and b in name order: a finetuned file of b against a's pretrain file is the same pair of submissions)."""
    out = {}
    for p in sorted(pairs, key=lambda p: p.distance):
        out.setdefault(tuple(sorted((p.a, p.b))), []).append(p)
    return dict(sorted(out.items()))


def comparison_words(spread):
    """A comparison of params_similarity in a few words: "vanilla.model.params" or "vanilla.finetune.params ~
    vanilla.pretrain.params"."""
    return spread.file_a if spread.file_a == spread.file_b else f"{spread.file_a} ~ {spread.file_b}"


def alike_words(p):
    return (f"{p.a}'s {p.file_a} ~ {p.b}'s {p.file_b}: {p.distance:.3g} apart, where the class's median pair is "
            f"{p.typical:.3g} ({p.spreads:g} spreads below it)")


def alike_files(found):
    """A pair of submissions' files flagged by what they compute, in a few words: the nearest and how many more."""
    more = f" (and {len(found) - 1} more file pair{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    return alike_words(found[0]) + more


def nearest_files(found):
    """A pair of submissions' flagged files in a few words: the nearest two and how many more."""
    p = found[0]
    more = f" (and {len(found) - 1} more file pair{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    return f"{p.file_a} ~ {p.file_b} {drift_words(p.drift)}{more}"


def drift_words(drift):
    return f"{100 * drift:.1f}% apart"


RANKED_SHOWN = 40  # pairs of the ranked list on the page (grades.similar.csv's flagged pairs are all there)


def cut_histogram(series, bins, cut, cut_label, xlabel, ylabel):
    """A PNG (bytes) of a histogram with a cut marked, or None without matplotlib.  series: {label: values}, stacked
    one colour each (an empty label: no legend entry)."""
    try:
        import io

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(8, 2.6))
    labels = list(series)
    ax.hist([series[k] for k in labels], bins=bins, stacked=True, label=[k or "_nolegend_" for k in labels])
    ax.axvline(cut, color="red", linestyle="--", label=cut_label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def score_histogram(scores, cut):
    """The histogram of every pair's code score, the cut marked (cut_histogram): where the flagged pairs stand
    against the class's, and the near misses below the cut."""
    return cut_histogram({"": scores}, [k / 40 for k in range(41)], cut, f"flagged from {cut:.0%}",
                         "score: the share of a submission's own code that matches the other's", "pairs")


def nearest_histogram(nearest, cut):
    """The histogram of each params file's distance to its nearest file of another submission, one colour per
    variant, the cut marked (cut_histogram); None without files."""
    if not nearest:
        return None
    import params_similarity

    top = min(4.0, max(2.0, max(n.drift for n in nearest)))  # one file scaled up a million times stretches nothing
    kinds = sorted({params_similarity.variant(n.file) for n in nearest})
    return cut_histogram({k: [min(n.drift, top) for n in nearest if params_similarity.variant(n.file) == k]
                          for k in kinds},
                         [top * k / 50 for k in range(51)], cut, f"flagged up to {cut:.0%}",
                         "each params file's drift from the nearest file of another submission (share of its size; "
                         f"{top:g} and more in the last bar)", "files")


def table(header, rows):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>" if rows else "<p>None.</p>"


REPORT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Class report: {title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em 2em; max-width: 70em; }}
table {{ border-collapse: collapse; margin: .5em 0 1.5em; }}
th, td {{ border: 1px solid #ccc; padding: .2em .6em; text-align: left; font-size: 14px; }}
th {{ background: #eee; }}
img {{ max-width: 100%; }}
table.sortable th {{ cursor: pointer; }}
.warn {{ color: #a00000; font-weight: bold; }}
</style></head><body>
<h1>Class report: {title}</h1>
<p>{summary}</p>
<ul>{facts}</ul>
<h2>Roster</h2>
{roster}
<h2>Per part and per test</h2>
<p>Over the graded submissions. "all points": the share that earned every point of the part, or passed the
test.</p>
{stats}
<h2>Score distributions</h2>
{histograms}
<h2>Possible copying: groups</h2>
<p>Submissions that the flagged pairs below join, of code, of params files or of prediction files, directly or
through another member: the largest group first.  A group that more kinds of evidence join is the first to look
at.</p>
{clusters}
<h2>Possible copying: code</h2>
{code}
<h2 id="params">Possible copying: params files</h2>
{params}
<h2 id="predictions">Possible copying: prediction files</h2>
<p>Pairs whose prediction files share more wrong answers than independent runs do: right answers in common show
nothing (two good runs agree on them), nor blank lines.  What independent runs share is, for each file, the median
of the wrong answers it shares with each other file of the class; a deliverable most of the class computed alike
(one seed, one data order) shares them with most files, and is no evidence.  A pair is flagged from {least} wrong
answers in common, where chance gives that many beyond what independent runs share with probability below
{alarm:g}.</p>
{predictions}
<h2>Not graded</h2>
{ungraded}
<script>
// a click on a roster column's name sorts its rows by that column (numbers as numbers), again the other way
document.querySelectorAll("table.sortable th").forEach(function (th, column) {{
  th.addEventListener("click", function () {{
    var table = th.closest("table"), rows = Array.from(table.querySelectorAll("tr")).slice(1);
    var up = th.dataset.order !== "up";
    th.dataset.order = up ? "up" : "down";
    function key(row) {{
      var cell = row.children[column], text = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent;
      var n = parseFloat(text);
      return isNaN(n) ? [1, text.toLowerCase()] : [0, n];
    }}
    rows.sort(function (a, b) {{
      var x = key(a), y = key(b);
      var order = x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
      return up ? order : -order;
    }});
    rows.forEach(function (row) {{ row.parentNode.appendChild(row); }});  // within the table's body
  }});
}});
</script>
</body></html>
"""


def unmatched_files(rec):
    """The prediction files of a cache record whose judge found that their params do not give them."""
    tests = (rec.get("results") or {}).get("tests", [])
    return [PREDICTION_TESTS[t["number"]] for t in tests if t.get("number") in PREDICTION_TESTS
            and (t.get("extra_data") or {}).get("reason") == PredictionsNotFromParams.reason]


def missing_words(missing):
    """A submission's missing deliverables in a few words: "missing 12 of 18 deliverables: model.py, 6 prediction
    files, 5 params files" (a kind of file named where one is missing, counted where more are)."""
    code = [n for n in missing if n.endswith(".py")]
    said = code[:2] + ([f"{len(code) - 2} more .py files"] if len(code) > 2 else [])
    for kind, names in (("prediction files", [n for n in missing if n in PREDICTION_FILES]),
                        ("params files", [n for n in missing if n in PARAMS_FILES])):
        if names:
            said.append(names[0] if len(names) == 1 else f"{len(names)} {kind}")
    return f"missing {len(missing)} of {len(DELIVERABLES)} deliverables: {', '.join(said)}"


# What needs the instructor, the strongest first: a submission that was not graded; prediction files that their
# params do not give (not one run's: the strongest sign of files taken from elsewhere); a flagged pair (params, code
# or prediction files copied); missing deliverables; params files that could not be compared
NOT_GRADED, NOT_FROM_PARAMS, COPIED, MISSING, NOT_COMPARED = range(5)
# where each reason's evidence is: a page beside the report (a pair's side by side), an anchor of the report
# ("#params"), or OWN_PAGE, the submission's own page of per-test results
OWN_PAGE = "own page"


def roster(ordered, test_ids, pred_pairs, code_pairs, params=None, left_out=None):
    """The rows of the page's roster: per submission, its coding points, extra credit and total, each part's points,
    and what needs the instructor ("attention": [(rank, words)], the strongest first: NOT_GRADED ... NOT_COMPARED),
    with its problems in full.  params: params_similarity's Comparison (None: not compared); left_out: the prediction
    and code files not compared (write_report's).  Returns (the parts, {part: its maximum}, the rows)."""
    parts = parts_of(test_ids)
    said = {}

    def add(name, rank, words, where=OWN_PAGE):
        said.setdefault(name, []).append((rank, words, where))

    for (a, b), found in params_by_pair([] if params is None else params.pairs).items():
        add(a, COPIED, f"params ~ {b} ({drift_words(found[0].drift)})", "#params")
        add(b, COPIED, f"params ~ {a} ({drift_words(found[0].drift)})", "#params")
    for (a, b), found in behaviour_by_pair([] if params is None else params.behaviour).items():
        add(a, COPIED, f"params compute alike ~ {b} ({found[0].distance:.2g} apart)", "#params")
        add(b, COPIED, f"params compute alike ~ {a} ({found[0].distance:.2g} apart)", "#params")
    for (a, b), rows in predictions_by_pair(pred_pairs).items():
        common = sum(r.same_wrong for r in rows)
        add(a, COPIED, f"predictions ~ {b} ({common} wrong answers in common)", "#predictions")
        add(b, COPIED, f"predictions ~ {a} ({common} wrong answers in common)", "#predictions")
    for p, page in code_pairs or []:
        add(p.a, COPIED, f"code ~ {p.b} ({p.score:.0%})", page)
        add(p.b, COPIED, f"code ~ {p.a} ({p.score:.0%})", page)
    for name, fname, why in [] if params is None else params.problems:
        add(name, NOT_COMPARED, f"params not compared{' (' + fname + ')' if fname else ''}", "#params")
    for name, files in (left_out or {}).items():
        if files:
            add(name, NOT_COMPARED, f"not compared ({', '.join(sorted(f for f, _ in files))})")
    maxima = {}
    rows = []
    for name, rec in ordered:
        res = rec.get("results") or {}
        graded = bool(rec.get("graded"))
        if not graded:
            first = (rec.get("problems") or ["not graded"])[0]
            add(name, NOT_GRADED, "not graded: " + upload.shown(first.removesuffix("; not graded"), 120))
        unmatched = unmatched_files(rec) if graded else []
        if unmatched:
            add(name, NOT_FROM_PARAMS, f"predictions do not match their params ({len(unmatched)} file"
                                       f"{'s' if len(unmatched) > 1 else ''})")
        if rec.get("missing"):
            add(name, MISSING, missing_words(rec["missing"]))
        row = {"name": name, "graded": graded, "attention": sorted(set(said.get(name, ()))),
               "problems": rec.get("problems", []), "parts": {}, "unmatched": unmatched}
        if graded:
            row["coding"], row["coding_max"], row["extra"], row["extra_max"] = score_split(res)
            row["total"] = res.get("score", 0)
            row["parts"] = points_by_part(res, parts)
            for part, top in maxima_by_part(res, parts).items():
                maxima[part] = max(maxima.get(part, 0), top)
        rows.append(row)
    return sorted(parts), maxima, rows


def maxima_by_part(results, parts):
    """{part: the points its tests in one grading's results.json are worth}."""
    by_id = {t.get("number"): t for t in results.get("tests", [])}
    return {part: sum(by_id[t].get("max_score") or 0 for t in ids if t in by_id) for part, ids in parts.items()}


def student_page(name, row, rec, report_name):
    """One submission's page: its points, what needs attention, its problems in full, and every test's result
    (points, maximum, status and the grader's output), as Gradescope shows a student's."""
    e = html.escape
    tests = (rec.get("results") or {}).get("tests", [])
    points = (f"<p>coding {row['coding']:g} of {row['coding_max']:g}, extra credit {row['extra']:g} of "
              f"{row['extra_max']:g}, total {row['total']:g}</p>" if row["graded"] else "<p>Not graded.</p>")
    listed = "".join(f"<li>{e(words)}</li>" for _, words, _ in row["attention"])
    problems = "".join(f"<li>{e(p)}</li>" for p in row["problems"])
    results = table(["test", "points", "of", "status", "output"],
                    [[e(str(t.get("number", ""))), f"{t.get('score') or 0:g}", f"{t.get('max_score') or 0:g}",
                      e(str((t.get("extra_data") or {}).get("status", ""))),
                      f"<pre>{e(str(t.get('output', '')))}</pre>"] for t in tests])
    return STUDENT_PAGE.format(title=e(name), report=e(report_name), points=points,
                               attention=f"<ul>{listed}</ul>" if listed else "<p>Nothing.</p>",
                               problems=f"<ul>{problems}</ul>" if problems else "<p>None.</p>", results=results)


STUDENT_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: .2em .6em; text-align: left; vertical-align: top; font-size: 14px; }}
th {{ background: #eee; }}
pre {{ margin: 0; white-space: pre-wrap; max-width: 60em; }}
</style></head><body>
<p><a href="../{report}">back to the report</a></p>
<h1>{title}</h1>
{points}
<h2>Needs attention</h2>
{attention}
<h2>Problems</h2>
{problems}
<h2>Per test</h2>
{results}
</body></html>
"""


def write_student_pages(out, ordered, people):
    """One page per submission in grades.students/ (0700; each page 0600), named by its place in the roster (a name
    a student chose is no file name); returns {submission: the page's path relative to out's folder}.  An earlier
    run's pages beyond this class are removed."""
    folder = out.with_name(out.stem + ".students")
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    records = dict(ordered)
    links = {}
    for k, row in enumerate(people, 1):
        page = folder / f"student-{k}.html"
        with private_path(page) as tmp:
            Path(tmp).write_text(student_page(row["name"], row, records[row["name"]], "report.html"),
                                 encoding="utf-8", errors="backslashreplace")
        links[row["name"]] = f"{folder.name}/{page.name}"
    for old in folder.glob("student-*.html"):
        if old.name not in {Path(rel).name for rel in links.values()}:
            old.unlink()
    return links


class Cluster(NamedTuple):
    """Submissions that flagged pairs join, directly or through one another: its members, each flagged pair among
    them with what joins it ("code 72%", "predictions: FILE 99.2%", "params: FILE ~ FILE 3.1% apart"), and the
    kinds of evidence that join them ("code", "params", "predictions"): a group that more kinds join is the first to
    look at."""

    members: list
    links: list  # [(a, b, what)]
    kinds: list


def clusters(pred_pairs, code_pairs, params=None):
    """The groups of submissions that flagged pairs of any kind join (a pair of prediction files, of code, of
    params files by their weights or by what they compute; their union), the largest first, then those more kinds
    join: [Cluster].  params: params_similarity's Comparison (None: not compared)."""
    links = [(a, b, "predictions", f"predictions: {shared_words(rows)}")
             for (a, b), rows in predictions_by_pair(pred_pairs).items()]
    links += [(p.a, p.b, "code", f"code {p.score:.0%}") for p, _ in code_pairs or []]
    links += [(a, b, "params", f"params: {nearest_files(found)}") for (a, b), found in
              params_by_pair([] if params is None else params.pairs).items()]
    links += [(a, b, "params", f"params compute alike: {alike_files(found)}") for (a, b), found in
              behaviour_by_pair([] if params is None else params.behaviour).items()]
    parent = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, _, _ in links:
        parent[root(a)] = root(b)
    groups = {}
    for link in links:
        groups.setdefault(root(link[0]), []).append(link)
    found = [Cluster(members=sorted({n for a, b, _, _ in group for n in (a, b)}),
                     links=sorted((a, b, what) for a, b, _, what in group),
                     kinds=sorted({kind for _, _, kind, _ in group})) for group in groups.values()]
    return sorted(found, key=lambda c: (-len(c.members), -len(c.kinds), c.members))


def statistics_rows(ordered, test_ids):
    """Per part and per test over the graded submissions: maximum points, mean, median, standard deviation,
    highest score, and the share that passed (a test) or earned every point (a part)."""
    import statistics

    graded = [(rec.get("results") or {}) for _, rec in ordered if rec.get("graded")]
    by_test = [{t.get("number"): t for t in res.get("tests", [])} for res in graded]
    groups = sorted(parts_of(test_ids).items()) + [(tid, [tid]) for tid in test_ids]
    rows = []
    for label, ids in groups:
        scores, full, maximum = [], 0, None
        for tests in by_test:
            present = [tests[t] for t in ids if t in tests]
            if not present:
                continue
            got = sum(t.get("score") or 0 for t in present)
            top = sum(t.get("max_score") or 0 for t in present)
            maximum = top if maximum is None else max(maximum, top)
            scores.append(got)
            full += all(t.get("extra_data", {}).get("status") in ("passed", "info") for t in present)
        if not scores:
            continue
        rows.append([label, f"{maximum:g}", f"{statistics.mean(scores):.2f}", f"{statistics.median(scores):g}",
                     f"{statistics.pstdev(scores):.2f}", f"{max(scores):g}",
                     f"{full / len(scores):.0%}" if maximum else "no points"])  # a 0-point test has none to earn
    return rows


def params_section(params):
    """The page's section on params files: the flagged pairs, the class's distribution, what was not compared."""
    if params is None:
        return "<p>Not compared.</p>"
    e = html.escape
    if params.failed:
        return f'<p class="warn">Not compared: {e(params.failed)}.</p>'
    not_compared = ("<h3>Params files not compared</h3>" + table(
        ["submission", "file", "why"], [[e(n), e(f), e(why)] for n, f, why in params.problems])
        if params.problems else "")
    if not params.files:  # nothing was compared: no pair found is no evidence of a clean class
        return ('<p class="warn">No params file was compared: none could be read (below, why). The class\'s params '
                "files are unchecked, not clean.</p>" + not_compared)
    import params_similarity  # the ceiling, stated once

    cut = params_similarity.DRIFT_CEILING
    section = (f"<p>Pairs of submissions one of whose params files is within {cut:.0%} of its size of a file of "
               f"the other (their drift, tools/params_similarity.py; {params.files} files compared, each with every "
               "file of its variant of every other submission).  A finetuning moves its pretraining's weights less "
               "than that; runs that did not come one from the other, trained for thousands of steps, are further "
               "apart.  But runs of the same code from the same seed on the same data are near without copying, and "
               "so are two files that barely trained (both near the seed's random start): the distribution below "
               "shows whether near files are the class's rule or an exception.</p>")
    if params.common:
        section += ("<p>Not evidence in this class: the deliverables below, which most submissions hold near "
                    "another's (their runs were one computation: one seed, one data order, the same code).  No pair "
                    "with one of them is flagged: a copy among them cannot be told by its weights, only by its "
                    "prediction files and code.</p>") + table(
            ["file", "submissions holding it near another's"],
            [[e(c.file), f"{c.near} of {c.files}"] for c in params.common])
    section += table(["submission", "submission", "files within the cut"],
                     [[e(a), e(b), "<br>".join(e(f"{p.file_a} ~ {p.file_b}: {drift_words(p.drift)}") for p in found)]
                      for (a, b), found in params_by_pair(params.pairs).items()])
    histogram = nearest_histogram(params.nearest, cut)
    if histogram:
        section += (f'<img alt="histogram of each params file\'s drift from its nearest file of another submission, '
                    f'the cut at {cut:.0%} marked" src="data:image/png;base64,{base64.b64encode(histogram).decode()}">')
    return section + behaviour_section(params) + not_compared


def behaviour_section(params):
    """The params section's part on what the files compute: each comparison's distribution over the class, where
    it cannot tell, and the flagged pairs."""
    e = html.escape
    if params.unprobed:
        return f'<h3>By what they compute</h3><p class="warn">Not compared: {e(params.unprobed)}.</p>'
    import params_similarity  # the rule, stated once

    section = ("<h3>By what they compute</h3><p>Each file's next-character distributions on corpus lines and "
               f"training questions drawn for this run ({params.computed} files), through the grader's own forward "
               "pass: the distance of two files is the root-mean-square Hellinger distance of their distributions (0: "
               "the same computation, as a copy disguised by permuting or rotating its weights stays; 1: nothing in "
               "common).  Each deliverable is compared with the same deliverable of every other submission, and each "
               "finetuned file, on the corpus lines, with every other submission's pretrain file.  A pair is flagged "
               f"where it stands {params_similarity.BEHAVIOUR_Z:g} robust spreads below the class's median pair of "
               "that comparison; where that cut is within what rounding a file's own weights to bfloat16 changes (the "
               "noise), the class computed the deliverable as one computation, and a copy cannot be told from an "
               "honest run.</p>")
    section += table(["comparison", "pairs", "least", "median", "largest", "flagged below", "noise", "flagged",
                      "can it tell?"],
                     [[e(comparison_words(s)), s.pairs, f"{s.least:.3g}", f"{s.median:.3g}", f"{s.largest:.3g}",
                       f"{s.cut:.3g}", f"{s.noise:.2g}", s.flagged,
                       f'<b class="warn">no: {e(s.cannot_tell)}</b>' if s.cannot_tell else "yes"]
                      for s in params.spreads])
    section += table(["submission", "submission", "files that compute alike"],
                     [[e(a), e(b), "<br>".join(e(alike_words(p)) for p in found)]
                      for (a, b), found in behaviour_by_pair(params.behaviour).items()])
    return section


def report_page(out, ordered, pred_pairs, code_pairs, png, test_ids=(), facts=(), ranked=None, params=None,
                students=None, pair_pages=None, zero_parts=(), left_out=None):
    """report.html: the run's facts, a sortable roster (each submission's points, parts with their maxima, and what
    needs attention, the strongest first; each name linked to its page of per-test results, `students`: {name:
    path}), statistics per part and per test, the histograms (grades.png, inlined; zero_parts: the parts everyone
    scored 0 in, which have none), the flagged pairs (code, with links to their pages, and every listed pair with
    its page, pair_pages: {(a, b): path}; params files, with the class's distribution; prediction files) and the
    submissions that were not graded, with the reason."""
    e = html.escape
    graded = sum(1 for _, r in ordered if r.get("graded"))
    summary = (f"{len(ordered)} submissions, {graded} graded.  The grades are in {e(out.name)}; this page and the "
               "files beside it hold students' grades and code: keep them to the course's staff.")
    fact_list = "".join(f"<li>{e(k)}: {e(str(v))}</li>" for k, v in facts)
    parts, part_max, people = roster(ordered, test_ids, pred_pairs, code_pairs, params, left_out)
    parts = [p for p in parts if part_max.get(p)]  # a part of 0 points (a practice check) has nothing to earn
    students = students or {}

    def number(value):  # a cell that sorts as a number; empty where the submission was not graded
        return "<td></td>" if value is None else f'<td data-sort="{value:g}">{value:g}</td>'

    roster_rows = []
    for row in people:
        name = (f'<a href="{e(students[row["name"]])}">{e(row["name"])}</a>' if row["name"] in students
                else e(row["name"]))
        cells = [f"<td>{name}</td>"]
        if row["graded"]:
            cells += [number(row["coding"]), number(row["extra"]), number(row["total"])]
            cells += [number(row["parts"].get(part, 0)) for part in parts]
        else:
            cells += ['<td data-sort="-1">not graded</td>'] + ['<td data-sort="-1"></td>'] * (2 + len(parts))
        # sorted by its strongest reason (a click on the column puts those that need the instructor most first)
        strongest = min((rank for rank, _, _ in row["attention"]), default=NOT_COMPARED + 1)

        def evidence(rank, words, where):  # each reason one click from its evidence
            href = students.get(row["name"]) if where == OWN_PAGE else where
            text = f'<b class="warn">{e(words)}</b>' if rank <= NOT_FROM_PARAMS else e(words)
            return f'<a href="{e(href)}">{text}</a>' if href else text

        words = "<br>".join(evidence(*reason) for reason in row["attention"])
        cells.append(f'<td data-sort="{strongest}">{words}</td>')
        roster_rows.append("<tr>" + "".join(cells) + "</tr>")
    first = next((r for r in people if r["graded"]), None)
    maxima = (f" (coding of {first['coding_max']:g}, extra credit of {first['extra_max']:g})" if first else "")
    head = "".join(f"<th>{e(h)}</th>" for h in ["submission", "coding", "extra credit", "total",
                                                 *[f"part {p} of {part_max.get(p, 0):g}" for p in parts],
                                                 "needs attention"])
    roster_table = (f'<p>Click a column\'s name to sort by it{maxima}; a name opens its per-test results.  "Needs '
                    'attention" lists, the strongest first: not graded; prediction files that their params do not '
                    'give (not one run\'s); params, code or prediction files copied; missing deliverables; params '
                    f'not compared.</p><table class="sortable"><tr>{head}</tr>'
                    + "".join(roster_rows) + "</table>") if people else "<p>None.</p>"
    stats = table(["part or test", "max", "mean", "median", "sd", "highest", "all points"],
                  [[e(c) for c in r] for r in statistics_rows(ordered, test_ids)])
    histograms = ("<p>No histogram (matplotlib is not installed).</p>" if png is None else
                  f'<img alt="histograms of the total, each part\'s points and each prediction file\'s accuracy" '
                  f'src="data:image/png;base64,{base64.b64encode(Path(png).read_bytes()).decode()}">')
    unmatched = sum(len(r["unmatched"]) for r in people)
    notes = ([f"No histogram of part {', '.join(zero_parts)}: every graded submission scored 0 there."]
             if zero_parts else [])
    if unmatched:
        notes.append(f"The accuracies leave out the {unmatched} prediction files that their params do not give (they "
                     "earn no points; the roster names their submissions).")
    histograms = "".join(f"<p>{e(n)}</p>" for n in notes) + histograms
    if code_pairs is None:
        code = "<p>Not compared.</p>"
    else:
        import code_similarity  # the threshold, stated once

        code = (f"<p>Pairs whose code, beyond what the starter gives everyone, matches for at least "
                f"{code_similarity.THRESHOLD:.0%} of one of them (names, comments, layout and the order of functions "
                "set aside).  Each links to the matching code side by side.</p>")
        code += table(["submission", "submission", "score", "most similar file", ""],
                      [[e(p.a), e(p.b), f"{p.score:.0%}", e(p.most_similar_file),
                        f'<a href="{e(rel)}">side by side</a>'] for p, rel in code_pairs])
        ranked = ranked or []
        histogram = score_histogram([p.score for p in ranked], code_similarity.THRESHOLD) if ranked else None
        if histogram:
            code += (f'<img alt="histogram of every pair\'s code score, the cut at '
                     f'{code_similarity.THRESHOLD:.0%} marked" src="data:image/png;base64,'
                     f'{base64.b64encode(histogram).decode()}">')
        flagged_set = {(p.a, p.b) for p, _ in code_pairs}
        code += (f"<h3>Every pair compared, the highest score first ({min(len(ranked), RANKED_SHOWN)} of "
                 f"{len(ranked)} shown)</h3><p>A score is the larger of the two shares: how much of each side's own "
                 "code matches the other's.  The pairs just below the cut are the near misses to look at.</p>")
        pair_pages = pair_pages or {}
        code += table(["submission", "submission", "score", "share of the first", "share of the second", "flagged",
                       ""],
                      [[e(p.a), e(p.b), f"{p.score:.0%}", f"{p.score_a:.0%}", f"{p.score_b:.0%}",
                        "yes" if (p.a, p.b) in flagged_set else "",
                        f'<a href="{e(pair_pages[p.a, p.b])}">side by side</a>' if (p.a, p.b) in pair_pages else ""]
                       for p in ranked[:RANKED_SHOWN]])
    predictions = table(["submission", "submission", "in all", "files"],
                        [[e(a), e(b), e(shared_words(rows)),
                          "<br>".join(e(f"{r.file}: {r.same_wrong} of the {r.both_wrong} lines both answer wrongly "
                                        f"the same (independent runs share {r.expected:g}); distinct answers "
                                        f"{r.distinct_a} and {r.distinct_b}") for r in rows)]
                         for (a, b), rows in predictions_by_pair(pred_pairs).items()])
    groups = table(["submissions", "joined by", "flagged pairs"],
                   [["<br>".join(e(m) for m in c.members), e(" and ".join(c.kinds)),
                     "<br>".join(e(f"{a} ~ {b}: {what}") for a, b, what in c.links)]
                    for c in clusters(pred_pairs, code_pairs, params)])
    ungraded = table(["submission", "why"], [[e(name), e("; ".join(rec.get("problems", [])) or "not graded")]
                                             for name, rec in ordered if not rec.get("graded")])
    return REPORT.format(title=e(out.stem), summary=summary, facts=fact_list, roster=roster_table, stats=stats,
                         histograms=histograms, clusters=groups, code=code, params=params_section(params),
                         predictions=predictions,
                         ungraded=ungraded, least=MIN_EVIDENCE, alarm=ALARM)
