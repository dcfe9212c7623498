"""tools/code_similarity.py, the class's code-similarity check: distinct correct solutions are never flagged, planted
copies of the reference always are, and what the starter gives every student never makes a pair similar.

The distinct solutions are the reference (src/submission) and the other correct readings that the grader's tests
hold, each written in its own words (tests/checks/test_grader.py: OTHER_CORRUPTIONS, OTHER_BLOCKS), each laid
into the starter as a student would hand it in.  The planted copies are made here from the reference, each by
one of the edits students make to hide a copy, and one by all of them.  Nothing here grades a submission.
"""

import ast
import builtins
import functools
import importlib.util
import io
import keyword
import re
import textwrap
import tokenize

from conftest import ROOT, SRC

import code_similarity
import grade_class
import release

SEVEN = grade_class.student_code_files()


def reference():
    return {name: (SRC / "submission" / name).read_text(encoding="utf-8") for name in SEVEN}


def emptied():
    """The seven files as the student starter has them (tools/release.py empties every student region)."""
    return {name: release.strip_regions(text, name) for name, text in reference().items()}


def boilerplate():
    return code_similarity.boilerplate_code(SRC / "submission", SEVEN)


def common():
    """The Body of the boilerplate: the code that never counts."""
    return code_similarity.fingerprint(boilerplate())


def grader_tests_module():
    """tests/checks/test_grader.py, where the other correct readings are written (a module of another folder)."""
    spec = importlib.util.spec_from_file_location("test_grader", ROOT / "tests" / "checks" / "test_grader.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the distinct solutions ----------------------------------------------------------------------------------


def readings():
    """{name: the seven files}: the starter with one reading of the grader's tests in it, as that test grades it (the
    code appended to the file replaces the reference's).  One of each family that shares a template: the
    corruption() variants differ from each other in an expression or two, so they are one solution, not several."""
    tg = grader_tests_module()
    chosen = {
        "dataset-strings": ("dataset.py", tg.OTHER_CORRUPTIONS["torch random numbers, 3/4, closing MASK"]),
        "dataset-ids": ("dataset.py", tg.OTHER_CORRUPTIONS[
            "list-based on the reference's encoded ids, masked length n/8..3n/8, 7/8, no closing MASK"]),
        "dataset-course-chars": ("dataset.py", tg.OTHER_CORRUPTIONS[
            "course-style: PAD_CHAR and MASK_CHAR only on the instance"]),
        "perceiver-own-attention": ("model.py", tg.OTHER_BLOCKS["own attention math (no CausalCrossAttention)"]),
    }
    out = {}
    for name, (file, code) in chosen.items():
        files = emptied()
        files[file] += "\n\n" + textwrap.dedent(code)
        out[name] = files
    # a student who wrote both of these parts in their own words, and helper.py's part as the handout dictates it,
    # line by line: as the reference does
    out["own-parts-dictated-helper"] = {**emptied(), "helper.py": reference()["helper.py"],
                                        "dataset.py": out["dataset-ids"]["dataset.py"],
                                        "model.py": out["perceiver-own-attention"]["model.py"]}
    return out


# -- the planted copies: the reference, with the edits that hide a copy ------------------------------------------


KEEP = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls", "super", "__init__", "__name__"}


def bound_names(text):
    """The names the file itself binds (functions, classes, arguments, variables, self's attributes), less those
    it imports: what a student copying the file can rename without breaking it."""
    tree = ast.parse(text)
    names, imported = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id == "self"):
            names.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return {n for n in names - imported - KEEP if not n.startswith("__")}


def edited(text, edit):
    """text with each token replaced by edit(token, state) where that returns a string (None: kept), in place:
    the rest of the layout is kept, on every Python (tokenize's own untokenize spaces tokens its own way, and
    differently from 3.12 on, where it splits f-strings).  Names inside f-strings are never edited."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    state = {"fstring": 0, "prev": tokenize.NEWLINE, "comments": 0}
    edits = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = tokenize.tok_name[tok.type]
        state["fstring"] += kind == "FSTRING_START"
        state["fstring"] -= kind == "FSTRING_END"
        new = None if state["fstring"] else edit(tok, state)
        if new is not None:
            edits.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1], new))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            state["prev"] = tok.type
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    ast.parse(text)  # still Python
    return text


def renamed(files):
    """Every name each file binds renamed, consistently, wherever it appears but in its import statements (a module
    named as a variable is, `from .attention import ...` beside `attention = ...`, stays the module); the layout
    kept."""
    out = {}
    for name, text in files.items():
        bound = bound_names(text)
        imports = {line for node in ast.walk(ast.parse(text)) if isinstance(node, (ast.Import, ast.ImportFrom))
                   for line in range(node.lineno, node.end_lineno + 1)}
        out[name] = edited(text, lambda tok, _: "my_" + tok.string[::-1].strip("_")
                           if tok.type == tokenize.NAME and tok.string in bound and tok.start[0] not in imports
                           else None)
    return out


def blocks_of(body, text):
    """[(start, end)] 0-based line ranges of the statements of body, decorators and comments above them included."""
    lines = text.splitlines(keepends=True)
    spans = []
    for node in body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        while start > 0 and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        spans.append((start, node.end_lineno))
    return spans


def reordered(files):
    """The functions and classes of each file in the reverse order, and the methods of each class too."""
    out = {}
    for name, text in files.items():
        lines = text.splitlines(keepends=True)
        tree = ast.parse(text)

        def reverse_defs(body):
            spans = [(s, e) for (s, e), node in zip(blocks_of(body, text), body)
                     if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
            if len(spans) < 2:
                return
            pieces = ["".join(lines[s:e]) for s, e in spans]
            first, last = spans[0][0], spans[-1][1]
            kept = [ln for k, ln in enumerate(lines[first:last], first) if not any(s <= k < e for s, e in spans)]
            # as many list items as before, so that the line numbers ast gave the enclosing body still hold
            lines[first:last] = ["".join(kept) + "\n".join(reversed(pieces))] + [""] * (last - first - 1)

        for node in ast.walk(tree):  # the methods first (deepest), as their lines are still where ast says
            if isinstance(node, ast.ClassDef):
                reverse_defs(node.body)
        reverse_defs(tree.body)
        out[name] = "".join(lines)
        ast.parse(out[name])
    return out


def recommented(files):
    """Every comment and docstring rewritten, and a blank line added after every statement."""
    def rewrite(tok, state):
        if tok.type == tokenize.COMMENT:
            state["comments"] += 1
            return f"# step {state['comments']}: what happens here, in my own words"
        if (tok.type == tokenize.STRING and tok.string.startswith(('"""', "'''"))
                and state["prev"] in (tokenize.NEWLINE, tokenize.INDENT, tokenize.NL)):
            return '"""My notes on this part."""'
        if tok.type == tokenize.NEWLINE and tok.string:
            return tok.string + "\n"
        return None

    return {name: edited(text, rewrite) for name, text in files.items()}


def defined(text):
    return [n.name for n in ast.parse(text).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def moved(files, function="UpProjectBlock", source="model.py", target="attention.py"):
    """One student class moved to another file (model.py's UpProjectBlock, into attention.py)."""
    files = dict(files)
    text = files[source]
    node = next(n for n in ast.parse(text).body
                if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == function)
    lines = text.splitlines(keepends=True)
    (start, end), = blocks_of([node], text)
    files[source] = "".join(lines[:start] + lines[end:])
    files[target] = files[target] + "\n\n" + "".join(lines[start:end])
    assert function not in defined(files[source]) and function in defined(files[target])
    return files


@functools.lru_cache(maxsize=None)
def planted_copies():
    ref = reference()
    return {"copy-renamed": renamed(ref), "copy-reordered": reordered(ref), "copy-recommented": recommented(ref),
            "copy-moved": moved(ref),
            "copy-all": moved(recommented(reordered(renamed(ref))), function="my_kcolBtcejorPpU")}


@functools.lru_cache(maxsize=None)
def measured():
    """(pairs, bodies) of the class of distinct solutions and planted copies, with grade_class's boilerplate."""
    return code_similarity.all_pairs(the_class(), common())


def the_class():
    return {"reference": reference(), **readings(), **planted_copies()}


def is_copy(name):
    return name in planted_copies()


# the pairs that share a student's code: the reference with each planted copy, and the solution made of two
# readings with each of them
SAME_CODE = {("own-parts-dictated-helper", "perceiver-own-attention"), ("dataset-ids", "own-parts-dictated-helper")}


def same_code(a, b):
    """The reference and its planted copies, with each other; the solution made of two readings, with each."""
    return (a, b) in SAME_CODE or {a, b} <= {"reference", *planted_copies()}


def distinct(a, b):
    """Two solutions written apart (a copy of the reference and a reading of the tests included)."""
    return not same_code(a, b)


# -- the tests ---------------------------------------------------------------------------------------------------


def test_the_planted_copies_are_the_edits_they_say():
    """Each planted copy is the edit it says it is: a check of the generators, without which the next test
    shows nothing."""
    ref = reference()
    copies = planted_copies()
    assert copies["copy-renamed"]["helper.py"] != ref["helper.py"] and "my_" in copies["copy-renamed"]["helper.py"]
    assert "def finetune" not in copies["copy-renamed"]["helper.py"]
    assert defined(copies["copy-reordered"]["helper.py"]) == defined(ref["helper.py"])[::-1]
    assert len(defined(ref["helper.py"])) > 2
    comments = set(re.findall(r"#.*", ref["model.py"]))
    assert comments and not set(re.findall(r"#.*", copies["copy-recommented"]["model.py"])) & comments
    assert "UpProjectBlock" in defined(copies["copy-moved"]["attention.py"])
    assert "UpProjectBlock" not in defined(copies["copy-moved"]["model.py"])
    assert "my_kcolBtcejorPpU" in defined(copies["copy-all"]["attention.py"])


def test_every_planted_copy_is_flagged_and_no_distinct_pair(capsys):
    """The threshold's evidence (docs/instructor.md): every planted copy scores above THRESHOLD against the
    reference, with a margin, and every pair of distinct solutions below it, with a margin; the copies, copies of
    one code, are flagged with each other too, and nothing else is."""
    pairs, bodies = measured()
    names = sorted(bodies)
    every = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    scores = {(p.a, p.b): p.score for p in pairs}  # a pair left out shares no fingerprint: 0
    copies = [scores[(a, b)] for a, b in every if "reference" in (a, b) and (is_copy(a) or is_copy(b))]
    apart = [scores.get((a, b), 0.0) for a, b in every if distinct(a, b)]
    with capsys.disabled():  # the numbers docs/instructor.md quotes
        print(f"\nplanted copies against the reference: {len(copies)} pairs, min {min(copies):.3f}; distinct: "
              f"{len(apart)} pairs, max {max(apart):.3f}; threshold {code_similarity.THRESHOLD}")
        for p in sorted(pairs, key=lambda p: -p.score):
            print(f"  {p.a:25} {p.b:25} {p.score:.3f} ({p.score_a:.3f} / {p.score_b:.3f}) matched {p.matched}")
    flagged = {(p.a, p.b) for p in code_similarity.flagged(pairs)}
    assert flagged == {pair for pair in every if same_code(*pair)}
    assert min(copies) >= code_similarity.THRESHOLD + 0.2 and max(apart) <= code_similarity.THRESHOLD - 0.25
    # docs/instructor.md states these numbers: they are the ones measured here
    doc = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    low = min(s for s in apart if s > 0)
    among = [scores[(a, b)] for a, b in every if is_copy(a) and is_copy(b)]
    stated = [f"| a planted copy and the reference ({len(copies)}) | {min(copies):.3f} to {max(copies):.3f} |",
              f"| distinct solutions ({len(apart)}, the copies against the readings included) | "
              f"{'0' if min(apart) == 0 else f'{low:.3f}'} to {max(apart):.3f} |",
              f"At a threshold of {code_similarity.THRESHOLD:g} every copy is flagged with a margin of "
              f"{min(copies) - code_similarity.THRESHOLD:.3f}",
              f"with a margin of\n{code_similarity.THRESHOLD - max(apart):.3f}.",
              f"The copies with each other score {min(among):.3f} to {max(among):.3f}:",
              f"A pair is flagged from {code_similarity.THRESHOLD:g}, if the match covers at least "
              f"{code_similarity.MIN_MATCHED} characters"]
    assert [line for line in stated if line not in doc] == []


def test_the_code_the_handout_dictates_is_boilerplate():
    """helper.py's part is the handout's numbers and calls: with the starter alone as boilerplate, a solution whose
    other parts are its own, with that helper.py, would score 0.59 against the reference, and 0.25 without."""
    the_two = {"reference": reference(), "mine": readings()["own-parts-dictated-helper"]}
    starter_only = {k: v for k, v in boilerplate().items() if k in SEVEN}
    (pair,), _ = code_similarity.all_pairs(the_two, code_similarity.fingerprint(starter_only))
    assert pair.per_file["helper.py"] == 1.0 and pair.score > 0.55
    (pair,), _ = code_similarity.all_pairs(the_two, common())
    assert "helper.py" not in pair.per_file and pair.score < code_similarity.THRESHOLD - 0.25


def test_the_starter_never_makes_a_pair_similar(starter):
    """Two empty starters, as tools/release.py writes the starter, share every line, all of it the starter's: no
    fingerprint is left, no pair."""
    base = {name: (starter / "src" / "submission" / name).read_text(encoding="utf-8") for name in SEVEN}
    pairs, bodies = code_similarity.all_pairs({"empty-1": base, "empty-2": dict(base)}, common())
    assert bodies["empty-1"].coverage == bodies["empty-2"].coverage == 0
    assert pairs == [] and code_similarity.flagged(pairs) == []
    # without the starter as boilerplate the two would be identical: the boilerplate is what makes them distinct
    pairs, _ = code_similarity.all_pairs({"empty-1": base, "empty-2": dict(base)}, code_similarity.fingerprint({}))
    assert pairs[0].score == 1.0
    # two starters whose students deleted the placeholders and wrote nothing: the code on either side of each
    # region, now joined, is still the starter's (it made a pair of 339 matching characters at 100 %)
    unplaced = {name: re.sub(r"\n[ \t]*pass\n([ \t]*### END CODE HERE)", r"\n\1", text) for name, text in base.items()}
    assert unplaced != base
    pairs, bodies = code_similarity.all_pairs({"empty-1": unplaced, "empty-2": dict(unplaced)}, common())
    assert bodies["empty-1"].coverage == 0 and code_similarity.flagged(pairs) == [], pairs


def test_a_pair_needs_300_matching_characters_unless_nearly_all_of_one_side_matches():
    """A pair's score is its larger side's: a submission with a few hundred characters of its own (only helper.py's
    dictated calls, in real classes) scored 0.6-0.83 against independent solutions on 150-240 matching characters.
    Such a pair is not flagged; a score above the threshold on 460 characters is, and a small part copied whole (0.9
    or more of one side) on 60."""
    def pair(score, matched):
        return code_similarity.Pair("a", "b", score, score, score / 2, matched, {}, {})

    above = code_similarity.THRESHOLD + 0.02
    assert code_similarity.flagged([pair(0.825, 240), pair(above, 299)]) == []
    assert code_similarity.flagged([pair(above, 460)]) == [pair(above, 460)]
    assert code_similarity.flagged([pair(1.0, 60), pair(0.95, 49)]) == [pair(1.0, 60)]


def test_the_side_by_side_page_marks_the_matching_code(tmp_path):
    pairs, bodies = measured()
    pair = next(p for p in pairs if (p.a, p.b) == ("copy-moved", "reference"))
    starter = code_similarity.fingerprint(boilerplate())
    page = code_similarity.side_by_side(pair, bodies, "report.html", starter)
    assert "<h2>copy-moved</h2>" in page and 'href="../report.html"' in page
    # the moved class is marked in attention.py, where it now is, and in the reference's model.py
    left, right = page.split("<h2>copy-moved</h2>")[1].split("<h2>reference</h2>")
    assert "<mark" in left.split("<summary>attention.py")[1].split("</pre>")[0]
    assert "<mark" in right.split("<summary>model.py")[1].split("</pre>")[0]
    assert "<mark" not in right.split("<summary>attention.py")[1].split("</pre>")[0]  # the starter's, all of it
    assert pair.per_file["attention.py"] > 0.5 and "trainer.py" not in pair.per_file
    # helper.py, all of it the starter's or what the handout dictates, is said to be so, not "0 % of its own"
    assert "<summary>helper.py (every line is the starter's or what the handout dictates: not compared)" in left


def test_a_pairs_page_numbers_each_matching_block_on_both_sides_and_never_marks_the_starter():
    """Each block of matching code has one number and colour on both sides, links to the other side's, and a row
    of the page's table with its lines on each side; what the starter gives everyone (its docstrings, the
    signatures it writes) is never inside a mark, where without the starter's code to leave out it was."""
    pairs, bodies = measured()
    pair = next(p for p in pairs if (p.a, p.b) == ("copy-renamed", "reference"))
    starter = code_similarity.fingerprint(boilerplate())
    page = code_similarity.side_by_side(pair, bodies, "report.html", starter)
    left, right = page.split("<h2>copy-renamed</h2>")[1].split("<h2>reference</h2>")
    numbers = {side: set(re.findall(r'<a class="n" id="%s-(\d+)" href="#%s-\1">' % (mine, other), text))
               for side, mine, other, text in (("left", "a", "b", left), ("right", "b", "a", right))}
    assert numbers["left"] and numbers["left"] == numbers["right"], numbers
    for n in numbers["left"]:
        colour = int(n) % code_similarity.COLOURS
        assert f'id="a-{n}" href="#b-{n}">{n}</a><mark class="c{colour}">' in left
        assert f'<tr><td><a href="#a-{n}">{n}</a></td><td>' in page
    assert re.search(r"<td>dataset\.py lines \d+-\d+</td>", page), page[:3000]

    def marked(text):
        return "".join(re.findall(r'<mark class="c\d">(.*?)</mark>', text, re.S))

    said = ["Birthplace finetuning data", "Return (x, y), two LongTensors"]  # the starter's docstrings
    assert not any(s in marked(page) for s in said)
    unfiltered = code_similarity.side_by_side(pair, bodies, "report.html")
    assert all(s in marked(unfiltered) for s in said)
