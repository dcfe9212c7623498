"""What a graded class is reported as: one row of grades.csv per submission (per-test points, total, the
accuracy of each prediction file against the answers, the problems found), the pairs of submissions whose
prediction files are nearly identical (possible copying, grades.pairs.csv) and the histograms (grades.png).

tools/grade_class.py grades the submissions and hands their results here; nothing here runs a grader.  The
prediction files are read from each submission as the grader chose them (src/kit/upload.py) and scored against the
answers in the data folder.
"""

import csv
from pathlib import Path

import srcpath
from srcpath import SRC

srcpath.use(SRC)
from kit.course import PREDICTION_FILES  # noqa: E402  (the one list of deliverables)
from kit import fileio  # noqa: E402  (how the grader reads prediction lines and answer rows)
from kit.fileio import atomic_path  # noqa: E402  (the drivers' one atomic writer)
from kit import upload  # noqa: E402  (which files of an upload are graded: the same rule as on Gradescope)
# the answers each prediction file is scored against: dev answers ship with the data, test answers are held
# out (present only where submissions are graded)
from grader import GOLD_FILES  # noqa: E402

SIMILAR = 0.98  # fraction of identical lines above which two prediction files are flagged


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


def submission_predictions(path, names):
    """{prediction file: [lines]} read straight from the submission (zip or folder), the copies the grader
    graded; {} if unreadable.  names: every deliverable's name (grade_class's deliverable_names()), as the
    upload's rule picks which copy of a file is graded from all of them, not from the prediction files alone."""
    preds = {}
    try:
        with upload.Upload(path) as up:
            for fname, rel in up.choose(names).chosen.items():
                if fname in PREDICTION_FILES and up.size(rel) <= PREDICTION_BYTES:
                    preds[fname] = split_lines(up.read(rel, PREDICTION_BYTES).decode("utf-8", errors="replace"))
    except (OSError, ValueError):  # upload.UploadError is a ValueError
        return {}
    return preds


# ----------------------------------------------------------------------------------------------------------
# Accuracy and similarity.


def accuracy(lines, answers):
    if lines is None or answers is None or len(lines) != len(answers) or not answers:
        return None
    return sum(p == a for p, a in zip(lines, answers)) / len(answers)


def similar_pairs(preds_by_name, answers, threshold=SIMILAR):
    """Rows (a, b, file, lines, same, fraction, same_wrong) for every pair of submissions and prediction file
    whose lines agree on at least `threshold` of them. Vectorised per file: each distinct line gets an
    integer id, so a class of hundreds is a few numpy comparisons, not a Python loop over line pairs."""
    import numpy as np

    rows = []
    for fname in PREDICTION_FILES:
        have = [(n, p[fname]) for n, p in preds_by_name.items() if fname in p and p[fname]]
        by_length = {}
        for n, lines in have:
            by_length.setdefault(len(lines), []).append((n, lines))  # only files of equal length compare
        gold = answers.get(fname)
        for length, group in by_length.items():
            if len(group) < 2:
                continue
            ids = {}
            mat = np.array([[ids.setdefault(line, len(ids)) for line in lines] for _, lines in group])
            wrong = None
            if gold is not None and len(gold) == length:
                g = np.array([ids.get(a, -1) for a in gold])
                wrong = mat != g
            for i in range(len(group) - 1):
                same = mat[i] == mat[i + 1:]
                frac = same.mean(axis=1)
                for k in np.nonzero(frac >= threshold)[0]:
                    j = i + 1 + int(k)
                    same_wrong = int((same[k] & wrong[i]).sum()) if wrong is not None else ""
                    rows.append((group[i][0], group[j][0], fname, length, int(same[k].sum()),
                                 round(float(frac[k]), 4), same_wrong))
    rows.sort(key=lambda r: (r[0], r[1], PREDICTION_FILES.index(r[2])))
    return rows


# ----------------------------------------------------------------------------------------------------------
# Writing the outputs (each written to a temporary name beside it, then renamed, by fileio.atomic_path: an
# interrupted run never leaves half a file in place of an earlier one).


def write_csv(path, header, rows):
    with atomic_path(path) as tmp:
        # newline="": the csv module writes "\r\n"; a name that is not UTF-8 (a surrogate) is written escaped
        with open(tmp, "w", newline="", encoding="utf-8", errors="backslashreplace") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)


def grade_rows(records, test_ids, preds, answers):
    header = (["submission", "graded", "total", "max"] + list(test_ids)
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
        maximum = sum(t.get("max_score", 0) for t in res.get("tests", []) if "extra credit" not in t.get("tags", []))
        total = f"{res['score']:g}" if rec.get("graded") else ""
        if rec.get("graded"):
            totals.append(res["score"])
        acc_cells = []
        for f in PREDICTION_FILES:
            a = accuracy(preds.get(name, {}).get(f), answers.get(f))
            acc_cells.append("" if a is None else f"{a:.4f}")
            if a is not None:
                accs[f].append(a)
        rows.append([name, "yes" if rec.get("graded") else "no", total, maximum if rec.get("graded") else ""]
                    + points + acc_cells + ["; ".join(rec.get("problems", []))])
    return header, rows, totals, accs


def plot(path, totals, accs):
    """Histograms of the totals and of each prediction file's accuracy, if matplotlib is installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    panels = [("total points", totals)] + [(f, v) for f, v in accs.items() if v]
    cols = 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 3 * rows), squeeze=False)
    for k, (ax, (title, values)) in enumerate(zip(axes.flat, panels)):
        ax.hist(values, bins=20, range=None if k == 0 else (0, 1))
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("points" if k == 0 else "accuracy")
        ax.set_ylabel("submissions")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    with atomic_path(path) as tmp:  # the temporary name keeps the .png, from which savefig picks the format
        fig.savefig(tmp)
    plt.close(fig)
    return True


def write_report(out, ordered, test_ids, preds, answers):
    """Write grades.csv (out), grades.pairs.csv and grades.png, and print what a person should look at: the
    problems of each submission and the pairs flagged as possible copying.  ordered: (name, cache record) of
    every submission in the CSV's order; preds: {name: submission_predictions(...)}; answers: load_answers()."""
    header, rows, totals, accs = grade_rows(ordered, test_ids, preds, answers)
    write_csv(out, header, rows)
    print(f"wrote {out} ({len(rows)} rows; {sum(1 for _, r in ordered if r.get('graded'))} graded)")
    for name, rec in ordered:
        if rec.get("problems"):
            print(f"  {name}: {'; '.join(rec['problems'])}")

    pairs = similar_pairs(preds, answers)
    pairs_path = out.with_name(out.stem + ".pairs.csv")
    write_csv(pairs_path, ["submission_a", "submission_b", "file", "lines", "same_lines", "fraction_same",
                           "same_wrong_answers"], pairs)
    flagged = sorted({(a, b) for a, b, *_ in pairs})
    print(f"possible copying (prediction files >= {SIMILAR:.0%} identical): {len(flagged)} pair(s); "
          f"details in {pairs_path}")
    for a, b in flagged:
        files = [f"{r[2]} {r[5]:.1%}" for r in pairs if (r[0], r[1]) == (a, b)]
        print(f"  {a} ~ {b}: {', '.join(files)}")

    png = out.with_suffix(".png")
    if plot(png, totals, accs):
        print(f"wrote {png}")
    else:
        print("(matplotlib is not installed: no histogram)")
