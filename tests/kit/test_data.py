"""Tests for the built-in biography world (src/data/).

The committed files are checked for shape and for statistics inside stated
ranges around the course's figures; regeneration must reproduce them byte for
byte. Everything here runs in a few seconds.
"""
from __future__ import annotations

import statistics
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "data"
import generate
import measure
import world_lists

QUESTION = "Where was {} born?"


@pytest.fixture(scope="module")
def world():
    return measure.load(DATA)


@pytest.fixture(scope="module")
def stats(world):
    return measure.measure(world)


def people(world):
    return world["train"] + world["dev"] + world["test"]


def wiki_name(line):
    return line.split(". ", 1)[0]


# --------------------------------------------------------------------------
# Files and formats
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", generate.FILES)
def test_file_is_committed_and_clean(name):
    raw = (DATA / name).read_bytes()
    text = raw.decode("utf-8")  # fails on invalid UTF-8
    assert text.endswith("\n") and "\r" not in text
    lines = text[:-1].split("\n")
    assert all(lines), "no empty lines"
    if name.endswith(".tsv"):
        tabs = 0 if name == "birth_test_inputs.tsv" else 1
        for line in lines:
            assert line.count("\t") == tabs, line
            q = line.split("\t")[0]
            assert q.startswith("Where was ") and q.endswith(" born?"), line


def test_split_sizes(world):
    assert len(world["wiki"]) == 2937
    assert (len(world["train"]), len(world["dev"]), len(world["test"])) == (2000, 500, 437)


def test_test_inputs_are_the_test_questions(world):
    assert world["test_inputs"] == [n for n, _ in world["test"]]
    text = (DATA / "birth_test_inputs.tsv").read_text(encoding="utf-8")
    assert text == "".join(QUESTION.format(n) + "\n" for n, _ in world["test"])


def test_no_person_in_two_splits(world):
    tr, dv, te = ({n for n, _ in world[s]} for s in ("train", "dev", "test"))
    assert len(tr) == 2000 and len(dv) == 500 and len(te) == 437
    assert not tr & dv and not tr & te and not dv & te


def test_exactly_one_wiki_line_per_person(world):
    everyone = [n for n, _ in people(world)]
    names = set(everyone)
    assert len(names) == len(everyone) == len(world["wiki"])
    starts = Counter()
    for line in world["wiki"]:
        # every prefix that ends just before ". " could be a name
        i = line.find(". ")
        while i >= 0:
            if line[:i] in names:
                starts[line[:i]] += 1
            i = line.find(". ", i + 1)
    assert all(starts[n] == 1 for n in everyone), [n for n in everyone if starts[n] != 1]
    # the course's finetuning code drops non-ASCII; the names must stay distinct then too
    assert len({generate.ascii_key(n) for n in everyone}) == len(everyone)


def test_wiki_lines_look_like_the_course(world):
    for line in world["wiki"]:
        name = wiki_name(line)
        assert line.startswith(name + ". ") and line.endswith(" .")
        assert "\t" not in line and len(line) < 522


def test_answers_are_single_ascii_words(world):
    for _, a in people(world):
        assert a.isascii() and a.isalpha(), a


def test_names_are_latin_script(world):
    for n, _ in people(world):
        for ch in n:
            assert ch in " '-" or unicodedata.name(ch).startswith("LATIN"), (n, ch)


# --------------------------------------------------------------------------
# Statistics (ranges around the course's figures; see src/data/README.md)
# --------------------------------------------------------------------------
def test_answer_in_own_line(stats):
    assert 0.80 <= stats["answer_in_line"] <= 0.97


def test_answer_in_first_96_characters(stats):
    assert 0.80 <= stats["answer_in_window"] <= 0.97


def test_top_dev_answer_share(stats):
    assert 0.03 <= stats["top_dev_share"] <= 0.08


def test_distinct_train_answers(stats):
    assert stats["distinct_train_answers"] >= 300


def test_vocabulary(stats):
    assert stats["vocab"] <= 254


def test_median_line_length(stats):
    assert 90 <= stats["median_len"] <= 180


def test_dev_answers_mostly_seen_in_train(stats):
    assert 0.85 <= stats["dev_answers_in_train"] <= 0.97


def test_some_names_have_diacritics(stats):
    assert 0.02 <= stats["non_ascii_names"] <= 0.15


def test_birthplace_named_early_when_named(world):
    """Lines that name the birthplace do so inside the 112-character window."""
    lines = {wiki_name(l): l for l in world["wiki"]}
    named = 0
    for n, a in people(world):
        pos = lines[n].find(a)
        if pos >= 0:
            named += 1
            assert pos + len(a) <= generate.WINDOW, lines[n]
    assert 0.85 <= named / len(lines) <= 0.95


@pytest.mark.slow  # reads every line of the world against every place
def test_lines_carry_distractor_places(world):
    """Most lines name places other than the birthplace (studied, worked, died...)."""
    places = {p.name for c in generate.load_countries() for p in c.places}
    lines = {wiki_name(l): l for l in world["wiki"]}
    with_other = sum(
        any(p != a and p in lines[n].split(". ", 1)[1].replace(",", " ").split() for p in places)
        for n, a in people(world))
    assert with_other / len(lines) >= 0.6


# --------------------------------------------------------------------------
# Name style follows region
# --------------------------------------------------------------------------
def test_surname_predicts_naming_tradition(world):
    """Guessing a dev person's language area from train people with the same
    surname beats always guessing the most common area."""
    area = {}
    for c in generate.load_countries():
        main = max(zip(c.styles.items, c.styles.cum, [0] + c.styles.cum[:-1]),
                   key=lambda t: t[1] - t[2])[0].rstrip("~")
        for p in c.places:
            area[p.name] = main
    by_surname = defaultdict(Counter)
    for n, a in world["train"]:
        by_surname[n.split()[-1]][area[a]] += 1
    majority = Counter(area[a] for _, a in world["train"]).most_common(1)[0][0]
    hits = base = 0
    for n, a in world["dev"]:
        seen = by_surname.get(n.split()[-1])
        guess = seen.most_common(1)[0][0] if seen else majority
        hits += guess == area[a]
        base += majority == area[a]
    assert hits >= base + 0.05 * len(world["dev"])


def test_names_fit_the_birth_country(world):
    styles = generate.load_styles()
    tokens = {k: {generate.fold(t) for w in s.male + s.female + s.surnames for t in w.split()}
              for k, s in styles.items()}
    allowed = {p.name: {s.rstrip("~") for s in c.styles.items}
               for c in generate.load_countries() for p in c.places}

    def fits(name, place):
        toks = {generate.fold(t) for t in name.split()}
        return any(toks & tokens[s] for s in allowed[place])

    everyone = people(world)
    rotated = [(n, everyone[(i + 1) % len(everyone)][1]) for i, (n, _) in enumerate(everyone)]
    assert sum(fits(n, a) for n, a in everyone) / len(everyone) >= 0.98
    assert sum(fits(n, a) for n, a in rotated) / len(rotated) <= 0.7


# --------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------
def test_regeneration_is_byte_identical(tmp_path):
    assert generate.main(["--out", str(tmp_path)]) == 0
    for name in generate.FILES:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(generate.FILES)  # no temp files


def test_seed_changes_the_world():
    a = generate.generate(people=200, seed=1)
    b = generate.generate(people=200, seed=2)
    assert a["wiki.txt"] != b["wiki.txt"]
    assert a == generate.generate(people=200, seed=1)


def test_small_course_style_world_is_proportional():
    files = generate.generate(people=300)
    sizes = [files[f].count("\n") for f in
             ("birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv")]
    assert sizes == [204, 51, 45]
    assert files["wiki.txt"].count("\n") == 300


def test_explicit_splits():
    files = generate.generate(style="demo", splits=(225, 75, 10))
    assert [files[f].count("\n") for f in ("birth_places_train.tsv", "birth_dev.tsv",
                                           "birth_test.tsv")] == [225, 75, 10]


def test_too_small_world_is_refused():
    with pytest.raises(SystemExit):
        generate.generate(people=2)


def test_template_count():
    assert generate.template_count() >= 30


def test_demo_world(tmp_path):
    assert generate.main(["--style", "demo", "--out", str(tmp_path)]) == 0
    first = {f: (tmp_path / f).read_bytes() for f in generate.FILES}
    assert generate.main(["--style", "demo", "--out", str(tmp_path)]) == 0
    assert first == {f: (tmp_path / f).read_bytes() for f in generate.FILES}
    assert first == {f: (DATA / "demo" / f).read_bytes() for f in generate.FILES}  # the committed demo world
    d = measure.load(tmp_path)
    assert (len(d["wiki"]), len(d["train"]), len(d["dev"]), len(d["test"])) == (190, 85, 100, 5)
    # The demo asks with the name first, where each person's biography has it (generate.QUESTIONS says why).
    lines = measure.line_by_name(d["wiki"])
    for split, names in (("birth_places_train.tsv", [n for n, _ in d["train"]]),
                         ("birth_dev.tsv", [n for n, _ in d["dev"]]), ("birth_test_inputs.tsv", d["test_inputs"])):
        questions = [q.split("\t")[0] for q in (tmp_path / split).read_text(encoding="utf-8").splitlines()]
        assert questions == [f"{name}, born where?" for name in names]
        assert all(lines[name].startswith(name + ". ") for name in names)
    lengths = [len(l) for l in d["wiki"]]
    # Short lines keep the demo's steps cheap: the longest sets the perceiver's bottleneck (test_run.py checks it).
    assert 20 <= min(lengths) and max(lengths) <= generate.DEMO_MAX_LINE == 36 and 28 <= statistics.median(lengths)
    places = world_lists.DEMO_PLACES.split()
    assert len(places) == 50
    answers = [a for _, a in d["train"] + d["dev"] + d["test"]]
    assert set(answers) <= set(places)
    assert 0.03 <= Counter(answers).most_common(1)[0][1] / len(answers) <= 0.09
    names = [wiki_name(l) for l in d["wiki"]]
    assert len(set(names)) == 190 and all(n.isascii() for n in names)
    assert len({n.split()[0] for n in names}) <= 40
    assert 9 <= statistics.median(len(n) for n in names) <= 13
    s = measure.measure(d)
    assert 0.8 <= s["answer_in_line"] <= 1.0


def test_a_demo_line_longer_than_its_limit_is_refused(monkeypatch):
    monkeypatch.setattr(generate, "DEMO_MAX_LINE", 24)
    with pytest.raises(RuntimeError, match="no demo template fits"):
        generate.generate(style="demo")


def test_place_lists_are_clean():
    places = [p for c in generate.load_countries() for p in c.places]
    names = [p.name for p in places]
    assert len(names) == len(set(names))
    assert all(n.isascii() and n.isalpha() for n in names)
    # a place is never a whole word of a name in the pools
    tokens = {generate.fold(t) for s in generate.load_styles().values()
              for w in s.male + s.female + s.surnames for t in w.split()}
    assert not set(names) & tokens


def test_fold_and_feminine_forms():
    assert generate.fold("Müller") == "Muller"
    assert generate.fold("Søren Groß") == "Soren Gross"
    f = generate.feminine_surname
    assert f("czech", "Novák") == "Nováková"
    assert f("czech", "Svoboda") == "Svobodová"
    assert f("czech", "Černý") == "Černá"
    assert f("russian", "Ivanov") == "Ivanova"
    assert f("polish", "Kowalski") == "Kowalska"
    assert f("greek", "Papadopoulos") == "Papadopoulou"
    assert f("lithuanian", "Kazlauskas") == "Kazlauskienė"
    assert f("english", "Smith") == "Smith"


def test_weighted_draws_follow_weights():
    rng = generate.Rng(7)
    w = generate.Weighted(["a", "b", "c"], [1, 2, 7])
    counts = Counter(w.pick(rng) for _ in range(20000))
    assert abs(counts["c"] / 20000 - 0.7) < 0.02
    assert abs(counts["a"] / 20000 - 0.1) < 0.02


@pytest.mark.parametrize("folder", [DATA, DATA / "demo"])
def test_questions_use_only_corpus_characters(folder):
    # The vocabulary is built from wiki.txt: a question character missing there makes finetuning fail.
    vocab = set((folder / "wiki.txt").read_text(encoding="utf-8"))
    for name in ("birth_places_train.tsv", "birth_dev.tsv", "birth_test_inputs.tsv"):
        text = (folder / name).read_text(encoding="utf-8").encode("ascii", "ignore").decode()
        assert set(text) - {"\t"} <= vocab, name


def test_world_without_question_characters_is_refused():
    with pytest.raises(SystemExit, match="lacks the question characters"):
        generate.generate(people=3, style="course", splits=(1, 1, 1))


def test_grader_recognises_the_builtin_data():
    # Regenerating the data changes birth_dev.tsv: the grader's threshold table must then list its hash.
    import grader

    name, _, recognised = grader.select_thresholds(grader.load_points()["thresholds"], DATA)
    assert (name, recognised) == ("builtin", True)


def test_questions_of_either_wording_are_read(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("Where was Ana Lu born?\tOslo\nAna Lu, born where?\tRome\n", encoding="utf-8")
    assert measure.read_qa(path) == [("Ana Lu", "Oslo"), ("Ana Lu", "Rome")]
    for line in ("Who was Ana Lu?\tOslo\n", ", born where?\tOslo\n", "Where was born?\tOslo\n"):
        path.write_text(line, encoding="utf-8")
        with pytest.raises(ValueError, match="not a question"):
            measure.read_qa(path)
