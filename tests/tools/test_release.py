"""tools/release.py: the student starter has no solution code, no answers, and still imports."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, check_shell_script
from gradings import rehearse
import markdown_links

import graderUtil
import release


def instructor_python_files():
    return [f for f in release.tracked_files() if f.endswith(".py")]


def test_every_region_is_emptied_and_markers_kept(starter):
    n_regions = 0
    for rel in instructor_python_files():
        text = (ROOT / rel).read_text(encoding="utf-8")
        spans = list(release.regions(text, rel))
        if not spans or not (starter / rel).exists():
            continue
        n_regions += len(spans)
        out = (starter / rel).read_text(encoding="utf-8")
        assert out.count(release.START) == out.count(release.END) == len(spans)
        for start, end in release.regions(out, rel):
            inside = [l.strip() for l in out.splitlines()[start:end - 1]]
            # the release keeps a region's full-line comments (an instructor's hints), but the kit's hints sit
            # above their regions: a comment left inside one is the reference's reasoning, an answer
            assert inside == ["pass"], f"{rel}:{start}: {inside}"
    assert n_regions >= 10


def normalise(line):
    """A statement as the no-leak check compares it: `self.` and all whitespace removed."""
    return "".join(line.replace("self.", "").split())


TRIVIAL = {"", "return", "pass", "else:", "try:", "continue", "break", ")", "]", "}", "),", "],", "},", "))"}


def test_no_solution_statement_appears_anywhere_in_the_starter(starter):
    # Every statement of a solution region, compared without `self.` and whitespace, must appear nowhere
    # in the starter: not as code, and not in a docstring or comment either.  Statements the instructor's
    # copy also has outside every region (e.g. Block's MLP line) are given code, not solution.
    given, secret = set(), set()
    for rel in instructor_python_files():
        text = (ROOT / rel).read_text(encoding="utf-8")
        lines = text.splitlines()
        inside_idx = {i for start, end in release.regions(text, rel) for i in range(start, end - 1)}
        secret |= {normalise(l) for l in release.solution_lines(text, rel)}
        given |= {normalise(l) for i, l in enumerate(lines) if i not in inside_idx}
    secret = {l for l in secret - given if l not in TRIVIAL and not l.startswith("return")}
    assert len(secret) >= 20
    for path in starter.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="ignore")
            # a docstring may write a statement after a bullet or inside a comment: strip those too
            # and may follow it with a comment
            lines = set()
            for l in text.splitlines():
                l = l.strip().lstrip("-*#>").strip()
                lines |= {normalise(l), normalise(l.split("#")[0])}
            leaked = secret & lines
            assert not leaked, f"{path}: {sorted(leaked)[:3]}"


# Run machinery the handout never mentions, which lives in src/kit/ (decoding.py, training.py) and never in the
# files students read: a word here in a student file is a sign it came back.
MACHINERY = re.compile(r"cache|batched|batching|resum|checkpoint_path|csv|cpuinfo|avx|amx|native bf16|"
                       r"_is_.*supported", re.I)


def test_the_student_files_read_like_the_courses(starter):
    """Issue 19: the seven files students read hold the course's code, cleaned, their parts and the spec: at
    most 1,000 lines together (the course's are 866), and none of the kit's speed or run machinery."""
    from kit import course

    files = [starter / "src" / "submission" / name for name in course.CODE_FILES]
    lines = {f.name: len(f.read_text(encoding="utf-8").splitlines()) for f in files}
    assert sum(lines.values()) <= 1000, lines
    for f in files:
        for number, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            assert not MACHINERY.search(line), f"{f.name}:{number}: {line.strip()}"


def test_excluded_files_are_absent(starter):
    names = {p.relative_to(starter).as_posix() for p in starter.rglob("*") if p.is_file()}
    assert not any(n.endswith(("birth_test.tsv", ".params", ".predictions")) for n in names)
    assert not any(n.startswith(("tools/", "instructor/", "tests/", ".ci/")) for n in names)
    assert "README.md" in names and "run.sh" in names and "src/submission/helper.py" in names
    assert "START CODE HERE" in (starter / "README.md").read_text(encoding="utf-8")  # the student README


@pytest.mark.parametrize("text, message", [
    ("def f():\n    ### START CODE HERE ###\n    return 1\n", "x.py:2: START marker is never closed"),
    ("def f():\n    ### END CODE HERE ###\n", "x.py:2: END marker without a START"),
    ("def f():\n    ### START CODE HERE ###\n    ### START CODE HERE ###\n", "x.py:3: START marker inside"),
    ("def f():\n    ## START CODE HERE\n", "x.py:2: malformed marker"),
    ("def f():\n    #### END CODE HERE\n", "x.py:2: malformed marker"),
])
def test_unpaired_markers_stop_the_release(text, message):
    with pytest.raises(release.ReleaseError, match=message):
        release.strip_regions(text, "x.py")


SPELLINGS = [f"### START{a}CODE{b}HERE{end}" for a in " _" for b in " _" for end in (" ###", "")]


@pytest.mark.parametrize("start", SPELLINGS)
def test_every_marker_spelling_is_emptied(start):
    # the handout writes START_CODE_HERE ###, the course's files START CODE HERE (no closing ###)
    end = start.replace("START", "END")
    text = f"def f():\n    x = None\n    {start}\n    # a hint stays\n    x = 42\n    {end}\n    return x\n"
    out = release.strip_regions(text, "x.py")
    assert "42" not in out and "# a hint stays" in out and start in out and end in out
    namespace = {}
    exec(out, namespace)
    assert namespace["f"]() is None


def test_every_region_is_introduced_by_a_todo_line(starter):
    for path in sorted((ROOT / "src" / "submission").glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for start, _ in release.regions("\n".join(lines), path.name):
            above = lines[start - 2].strip()
            assert above.startswith("### TODO: [part "), f"{path.name}:{start}: {above!r}"
        shipped = (starter / "src" / "submission" / path.name).read_text(encoding="utf-8")
        assert shipped.count("### TODO: [part ") == sum(l.strip().startswith("### TODO: [part ") for l in lines)


OUTPUT_SUFFIXES = (".params", ".predictions", ".zip", ".csv", ".png", ".ckpt", ".pdf", ".log")
# Names the starter may mention without shipping them: the grader's own output files, and the held-out
# answers, which only the Gradescope bundle adds (the grader reports those tests as hidden without them).
MAY_BE_ABSENT = {"results.json", "args.json", "birth_test.tsv"}


# the files of the starter whose text the checks of what it mentions read (points.json's too: it ships)
TEXT_SUFFIXES = (".py", ".md", ".sh", ".txt", ".yml", ".json", ".ipynb", ".tex", "")


def mentioned_paths(text):
    """Repository paths (src/..., docs/..., tools/...) and bare file names (x.py, y.md) a text mentions."""
    import re

    paths = re.findall(r"(?<![\w.$/-])((?:src|docs|tools|tex|tests|instructor|\.ci)/[\w./-]*\w)", text)
    names = re.findall(r"(?<![\w./-])([\w-]+\.(?:py|md|sh|ipynb|tex|txt|tsv|yml|json))\b", text)
    return [p for p in paths if not p.endswith(OUTPUT_SUFFIXES)], names


def test_every_path_the_starter_mentions_exists(starter):
    shipped = {p.name for p in starter.rglob("*") if p.is_file()}
    checked = 0
    for path in sorted(starter.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        paths, names = mentioned_paths(path.read_text(encoding="utf-8", errors="ignore"))
        for p in paths:
            assert (starter / p).exists(), f"{path.relative_to(starter)} mentions {p}, which the starter lacks"
        for n in names:
            assert n in shipped or n in MAY_BE_ABSENT, f"{path.relative_to(starter)} mentions {n}, which it lacks"
        checked += len(paths) + len(names)
    assert checked > 50


def dangling_references(text, where, readme, root):
    """The references of `text` (the file at `where`, a path relative to root) that lead nowhere, in a few words
    each; readme: the text of the README it refers to (None: there is none).

    - "the README's X": X must start with a heading of the README ("the README's Demo results measure it");
    - "[text](#anchor)" and "[text](file#anchor)": a heading of that file (this one for #anchor), the file there;
    - "see README", "see the README": a README to see;
    - 'see "X" below/above': the quoted text somewhere else in the same file."""
    bad = []
    titles = [h.lower() for h in markdown_links.headings(readme)] if readme is not None else []
    for phrase in re.findall(r"the README's ([^.,;:()\n]+)", text):
        if not any(phrase.lower().startswith(t) for t in titles):
            bad.append(f"the README's {phrase.strip()}")
    if where.endswith(".md"):
        bad += [what for _, what in markdown_links.broken_links(text, root / Path(where).parent, root)]
    if re.search(r"\bsee (the )?README\b(?!')", text) and readme is None:
        bad.append("see README: there is no README")
    for quoted in re.findall(r'see "([^"]+)" (?:below|above)', text):
        if text.count(quoted) < 2:
            bad.append(f'see "{quoted}"')
    return bad


def references_in(root):
    """(file, dangling references) for every text file under root that has a dangling reference, and how many
    references were checked in all."""
    readme = root / "README.md"
    readme_text = readme.read_text(encoding="utf-8") if readme.is_file() else None
    found, checked = {}, 0
    pattern = re.compile(r"the README's|\]\(|\bsee (the )?README\b|see \"")
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8", errors="ignore")
        checked += len(pattern.findall(text))
        bad = dangling_references(text, path.relative_to(root).as_posix(), readme_text, root)
        if bad:
            found[path.relative_to(root).as_posix()] = bad
    return found, checked


def test_every_reference_in_the_starter_leads_to_something_it_contains(starter):
    """Issue 31: model.py and demo.py cited "the README's Demo results", which the student's README lacked.  Every
    README section reference, Markdown link, "see README" and 'see "X" below' of every file the starter ships
    resolves in the starter itself (paths: test_every_path_the_starter_mentions_exists)."""
    found, checked = references_in(starter)
    assert not found
    # the demo's citation, the requirements' "see README", the README's links (the harness's 'see "Isolation" below'
    # became a path, docs/security.md, which test_every_path_the_starter_mentions_exists reads)
    assert checked >= 3


def test_the_reference_check_finds_a_dangling_reference(tmp_path):
    (tmp_path / "README.md").write_text("# Kit\n\n## Set up\n\nSee [Set up](#set-up), [Demo](#demo), "
                                        "[data](src/data/README.md).\n", encoding="utf-8")
    (tmp_path / "a.py").write_text('''"""As the README's Set up says; the README's Demo results measure it.
see "Isolation" below."""\n''', encoding="utf-8")
    found, _ = references_in(tmp_path)
    assert found == {"README.md": ["[...](#demo): no heading with that anchor",
                                   "[...](src/data/README.md): no src/data/README.md"],
                     "a.py": ["the README's Demo results measure it", 'see "Isolation"']}
    (tmp_path / "README.md").unlink()
    (tmp_path / "requirements.txt").write_text("# the CPU wheel (see README)\n", encoding="utf-8")
    found, _ = references_in(tmp_path)
    assert found["requirements.txt"] == ["see README: there is no README"]


def torch_pin():
    return next(line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
                if line.startswith("torch=="))


@pytest.mark.parametrize("readme", ["README.md", "tools/STUDENT_README.md"])
def test_the_readmes_say_how_to_install_the_cpu_torch_that_requirements_pins(readme):
    """requirements.txt sends Linux users without a GPU to the README for the CPU-only torch: both READMEs give
    the command, for the version requirements.txt pins."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    commands = re.findall(r"pip install (torch==\S+) --index-url https://download\.pytorch\.org/whl/cpu", text)
    assert commands and set(commands) == {torch_pin()}


def test_nothing_in_the_starter_reads_or_rebuilds_the_held_out_answers(starter):
    names = {p.relative_to(starter).as_posix() for p in starter.rglob("*") if p.is_file()}
    assert not {"tools/data/generate.py", "tools/data/measure.py", "tools/data/world_lists.py"} & names
    assert not any(name.startswith("tools/") for name in names)
    for rel in names:
        if rel.endswith(".py") and rel not in ("src/grader.py", "src/graderUtil.py"):  # the grader grades the hidden tests with them
            assert "birth_test.tsv" not in (starter / rel).read_text(encoding="utf-8"), rel


TARGETS = """vanilla_finetune_without_pretrain vanilla_eval_dev_without_pretrain vanilla_eval_test_without_pretrain
vanilla_pretrain vanilla_finetune_with_pretrain vanilla_eval_dev_with_pretrain vanilla_eval_test_with_pretrain
perceiver_pretrain perceiver_finetune_with_pretrain perceiver_eval_dev_with_pretrain
perceiver_eval_test_with_pretrain""".split()
SMALL = ["--n_layer", "2", "--n_head", "2", "--n_embd", "16", "--block_size", "64", "--bottleneck_dim", "8",
         "--max_epochs", "1", "--batch_size", "8", "--num_workers", "0", "--no_progress"]


def run_target(starter_dir, data, out, target):
    env = {**os.environ, "DATA_DIR": str(data), "OUT_DIR": str(out)}
    return subprocess.run(["bash", str(starter_dir / "run.sh"), target, *SMALL], capture_output=True, text=True,
                          env=env, timeout=300)


def says_only(r, sentence):
    """The run ended with exit status 1 and exactly one line on stderr: `error: <sentence>`."""
    assert (r.returncode, r.stderr.strip()) == (1, f"error: {sentence}"), (r.returncode, r.stderr[-2000:])
    assert "saved" not in r.stdout


@pytest.fixture(scope="module")
def tiny_world(tmp_path_factory):
    from conftest import make_world

    data = tmp_path_factory.mktemp("tiny_world")
    make_world(data)
    return data


def test_every_target_of_the_empty_starter_names_the_missing_function(starter, tiny_world, tmp_path):
    # the evaluation targets need parameter files to get past run.sh's own check; any file will do,
    # since the model is built (from the student's empty initialize_*_model) before they are read
    for name in ["vanilla.model.params", "vanilla.pretrain.params", "vanilla.finetune.params",
                 "perceiver.pretrain.params", "perceiver.finetune.params"]:
        (tmp_path / name).write_bytes(b"")
    for target in TARGETS:
        variant = target.split("_")[0]
        part = "c" if variant == "vanilla" else "g"
        says_only(run_target(starter, tiny_world, tmp_path, target),
                  f"implement initialize_{variant}_model in src/submission/helper.py (part {part})")
    assert sorted(p.name for p in tmp_path.iterdir() if p.stat().st_size) == []  # nothing written


def region_names(text):
    """'Class.function' or 'function' for each solution region of a file, in order."""
    lines = text.splitlines()
    names = []
    for start, _ in release.regions(text, "x.py"):
        function = owner = None
        for line in reversed(lines[: start - 1]):
            indent, code = len(line) - len(line.lstrip()), line.strip()
            if function is None and code.startswith("def "):
                function, function_indent = code[4:].split("(")[0], indent
            elif function is not None and indent < function_indent and code.startswith("class "):
                owner = code[6:].split("(")[0].split(":")[0]
                break
            elif function is not None and indent == 0 and code:
                break
        names.append(f"{owner}.{function}" if owner else function)
    return names


def fill(starter_dir, rel, name):
    """Put the instructor's solution region of `name` (e.g. 'DownProjectBlock.forward') into the starter."""
    solution = (ROOT / rel).read_text(encoding="utf-8")
    target = starter_dir / rel
    text = target.read_text(encoding="utf-8")
    k = region_names(solution).index(name)
    s0, s1 = list(release.regions(solution, rel))[k]
    t0, t1 = list(release.regions(text, rel))[k]
    lines = text.splitlines(keepends=True)
    lines[t0 - 1 : t1] = solution.splitlines(keepends=True)[s0 - 1 : s1]
    target.write_text("".join(lines), encoding="utf-8")


def test_a_starter_filled_in_part_by_part_always_names_the_next_function(starter, tiny_world, tmp_path):
    work = tmp_path / "starter"
    shutil.copytree(starter, work)
    out = tmp_path / "out"
    out.mkdir()
    helper, model, dataset = "src/submission/helper.py", "src/submission/model.py", "src/submission/dataset.py"
    steps = [  # (fill this region first, run this target, expect this sentence)
        ((helper, "initialize_vanilla_model"), "vanilla_finetune_without_pretrain", ("finetune", "helper.py", "c")),
        ((helper, "finetune"), "vanilla_finetune_without_pretrain", ("train", "helper.py", "c")),
        ((helper, "train"), "vanilla_pretrain", ("CharCorruptionDataset.__getitem__", "dataset.py", "e")),
        ((dataset, "CharCorruptionDataset.__getitem__"), "vanilla_pretrain", ("pretrain", "helper.py", "f")),
        ((helper, "pretrain"), "perceiver_pretrain", ("initialize_perceiver_model", "helper.py", "g")),
        ((helper, "initialize_perceiver_model"), "perceiver_pretrain", ("DownProjectBlock.__init__", "model.py", "g")),
        ((model, "DownProjectBlock.__init__"), "perceiver_pretrain", ("UpProjectBlock.__init__", "model.py", "g")),
        ((model, "UpProjectBlock.__init__"), "perceiver_pretrain", ("DownProjectBlock.forward", "model.py", "g")),
        ((model, "DownProjectBlock.forward"), "perceiver_pretrain", ("UpProjectBlock.forward", "model.py", "g")),
    ]
    for (rel, name), target, (function, file, part) in steps:
        fill(work, rel, name)
        says_only(run_target(work, tiny_world, out, target),
                  f"implement {function} in src/submission/{file} (part {part})")
        assert list(out.iterdir()) == [], f"{target} wrote {list(out.iterdir())}"
    fill(work, model, "UpProjectBlock.forward")  # now complete: the run saves, and says so
    r = run_target(work, tiny_world, out, "perceiver_pretrain")
    assert r.returncode == 0 and "saved" in r.stdout and (out / "perceiver.pretrain.params").is_file(), r.stderr


def test_dataset_demo_of_the_empty_starter_names_the_missing_function(starter, tiny_world):
    demo = [sys.executable, "src/submission/dataset.py"]
    r = subprocess.run([*demo, "charcorruption", "--pretrain_corpus_path", str(tiny_world / "wiki.txt")],
                       cwd=starter, capture_output=True, text=True, timeout=120)
    says_only(r, "implement CharCorruptionDataset.__getitem__ in src/submission/dataset.py (part e)")
    r = subprocess.run([*demo, "namedata", "--pretrain_corpus_path", str(tiny_world / "wiki.txt"),
                        "--finetune_corpus_path", str(tiny_world / "birth_places_train.tsv")],
                       cwd=starter, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "x: Where was" in r.stdout  # NameDataset is given code: it works already


def test_run_sh_demo_of_the_empty_starter_names_the_missing_function(starter, tmp_path):
    r = subprocess.run(["bash", str(starter / "run.sh"), "demo", "--smoke", "--out", str(tmp_path / "demo")],
                       cwd=starter, capture_output=True, text=True, timeout=300)
    says_only(r, "implement initialize_vanilla_model in src/submission/helper.py (part c)")


def test_the_starters_readme_has_what_to_expect_of_the_demo_and_not_the_measurement_log(starter):
    """The student's README takes the lead of docs/benchmarks.md's Demo results (what to expect); the dated runs
    beneath it (their machines, the jobs that shared the cores) are the instructor's log."""
    readme = (starter / "README.md").read_text(encoding="utf-8")
    log = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = log[log.index("## Demo results"):log.index("\n## ", log.index("## Demo results"))]
    dated = re.findall(r"^### (.+)$", section, re.M)
    assert dated, "the Demo results section has no dated runs to leave out"
    assert "**What to expect:**" in readme
    for heading in dated:
        assert heading not in readme, heading


def test_the_starters_points_table_has_every_bar_and_not_the_instructors_evidence(starter):
    """points.json's rows keep, beside their bars, the instructor's notes on the runs and attacks behind each bar
    ("evidence"): the starter (and so the bundle) ships every bar and every test's points, without those notes."""
    ours = json.loads((ROOT / "src" / "points.json").read_text(encoding="utf-8"))
    shipped = json.loads((starter / "src" / "points.json").read_text(encoding="utf-8"))
    rows = ours["thresholds"]["rows"]
    assert any("evidence" in row for row in rows.values()), "no row has evidence to leave out"
    assert not any("evidence" in row for row in shipped["thresholds"]["rows"].values())
    for row in rows.values():
        row.pop("evidence", None)
    assert shipped == ours


def test_the_starter_holds_no_hidden_judge_and_its_grader_still_lists_every_test(starter):
    """The hidden tests' judges spell out what the student writes (the perceiver's blocks in every accepted
    reading, the model's forward pass in plain tensor operations, the span corruption's draws): the starter ships
    none of them, and its grader still registers every test, the hidden ones listed as hidden."""
    import grader

    assert grader.JUDGE_ONLY_FILES and all((ROOT / "src" / name).is_file() for name in grader.JUDGE_ONLY_FILES)
    for name in grader.JUDGE_ONLY_FILES:
        assert not (starter / "src" / name).exists(), name
    judges = {}
    for name in grader.JUDGE_ONLY_FILES:  # every function these modules define, by its line "def name("
        judges.update({m: name for m in re.findall(r"^def (\w+)\(", (ROOT / "src" / name).read_text(), re.M)})
    assert {"block_readings", "logits", "corrupted"} <= set(judges)
    for path in starter.rglob("*.py"):
        defined = set(re.findall(r"^\s*def (\w+)\(", path.read_text(encoding="utf-8"), re.M))
        assert not {"block_readings", "_bottleneck", "_up", "_cross", "corrupted"} & defined, path
    r = subprocess.run([sys.executable, "src/grader.py", "--list"], cwd=starter, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    listed = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    assert sorted(listed) == sorted(grader.REGISTRY), listed


def test_refuses_a_non_empty_output_folder(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(release.ReleaseError, match="not empty"):
        release.build_student(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_refuses_to_replace_a_bundle_unless_forced(tmp_path, capsys):
    """docs/instructor.md's recipes each name their own bundle; one that exists is kept unless --force says so."""
    bundle = tmp_path / "autograder.zip"
    bundle.write_bytes(b"last term's")
    assert release.main(["autograder", str(bundle)]) == 1
    err = capsys.readouterr().err
    assert err == f"error: {bundle} exists; name a new file, or pass --force to replace it\n"
    assert bundle.read_bytes() == b"last term's"
    assert release.main(["autograder", str(bundle), "--force"]) == 0
    assert bundle.read_bytes()[:2] == b"PK"


GRADESCOPE = ROOT / "tools" / "gradescope"


def test_setup_sh_installs_the_cpu_build_of_the_torch_that_requirements_pins(tmp_path):
    setup = (GRADESCOPE / "setup.sh").read_text(encoding="utf-8")
    pin = torch_pin()
    line = next(line for line in setup.splitlines() if line.startswith("TORCH_PIN="))
    requirements = tmp_path / "requirements.txt"
    for text in ((ROOT / "requirements.txt").read_text(), f"numpy==1.0\n{pin}  # a comment\n"):
        requirements.write_text(text)
        script = line.replace('"$SOURCE/requirements.txt"', f"'{requirements}'") + '; echo "$TORCH_PIN"'
        assert subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout.strip() == pin
    # the CPU wheel index first, then the default index; never into the system Python (PEP 668), never `|| true`
    cpu = setup.index('"$TORCH_PIN" --index-url "$CPU_INDEX"')
    assert 'CPU_INDEX="https://download.pytorch.org/whl/cpu"' in setup
    assert cpu < setup.index('"${PIP[@]}" "$TORCH_PIN"\n') < setup.index('"${PIP[@]}" -r "$SOURCE/requirements.txt"')
    assert 'PIP=("$VENV/bin/python" -m pip install' in setup and '"$PYTHON" -m venv "$VENV"' in setup
    assert "|| true" not in setup and "python3 -m pip" not in setup and "set -euo pipefail" in setup
    assert pin.split("==")[1] not in setup  # the version is read, never written twice
    assert "useradd" not in setup  # the grader picks a free user id of its own for each run


def test_run_autograder_runs_the_grader_with_setup_sh_s_venv(tmp_path):
    # setup.sh makes $ROOT/venv; run_autograder runs that venv's python on the bundle's autograder_run.py
    setup = (GRADESCOPE / "setup.sh").read_text(encoding="utf-8")
    run = (GRADESCOPE / "run_autograder").read_text(encoding="utf-8")
    assert 'VENV="$ROOT/venv"' in setup and 'PYTHON="$ROOT/venv/bin/python"' in run
    assert 'exec "$PYTHON" "$ROOT/source/autograder_run.py"' in run
    # without the venv: one sentence, and no grading with whatever python3 the image has
    r = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], capture_output=True, text=True,
                       env={**os.environ, "AUTOGRADER_ROOT": str(tmp_path)})
    assert r.returncode == 1 and "setup.sh did not finish" in r.stderr and not (tmp_path / "results").exists()


@pytest.mark.parametrize("name", ["setup.sh", "run_autograder"])
def test_gradescope_entry_points_parse_and_pass_shellcheck(name):
    check_shell_script(GRADESCOPE / name)


def local_imports(path, src):
    """The modules of src/ (e.g. course, submission.model) that the Python file at path imports."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            rel = Path(*name.split("."))
            if (src / rel).with_suffix(".py").is_file() or (src / rel / "__init__.py").is_file():
                found.add(name)
    return found


@pytest.mark.grader
def test_the_bundle_holds_every_file_the_grader_imports(bundle, tmp_path):
    import zipfile

    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(tmp_path)
    src = ROOT / "src"
    # from Gradescope's entry (autograder_run.py) through the grader, every module it reaches in src/
    todo = [ROOT / "tools" / "autograder_run.py", src / "grader.py"]
    seen = set()
    while todo:
        path = todo.pop()
        for name in local_imports(path, src) - seen:
            seen.add(name)
            rel = Path(*name.split("."))
            module = (src / rel).with_suffix(".py") if (src / rel).with_suffix(".py").is_file() else src / rel / "__init__.py"
            todo.append(module)
            shipped = tmp_path / "starter" / "src" / module.relative_to(src)
            assert shipped.is_file(), f"the bundle lacks {module.relative_to(ROOT)}, which the grader imports"
    assert {"kit.course", "graderUtil", "grading", "grading.worker", "checks.written"} <= seen  # the harness's package
    import grader

    for name in grader.JUDGE_ONLY_FILES:  # the hidden tests' judges, which the student starter lacks
        assert (tmp_path / "starter" / "src" / name).read_bytes() == (src / name).read_bytes(), name
    for name in ("setup.sh", "run_autograder", "autograder_run.py", "requirements.txt"):
        assert (tmp_path / name).is_file(), name
    assert (tmp_path / "setup.sh").read_bytes() == (GRADESCOPE / "setup.sh").read_bytes()


def test_what_holds_answers_solutions_or_grades_is_private_and_never_offered_for_commit(bundle):
    """The bundle (the held-out answers, the solution) is its owner's alone whatever the umask, and git ignores it
    and the class's grades and the experiment's results where docs/instructor.md writes them, in the checkout's top
    folder."""
    import stat

    assert stat.S_IMODE(bundle.stat().st_mode) == 0o600
    names = ["autograder.zip", "autograder-2027.zip", "grades.csv", "grades.pairs.csv", "grades.similar.csv",
             "grades.png", "report.html", "grades.cache/x.json", "grades.similar/pair-1.html",
             "grades.students/student-1.html", "results.json",
             "results.work/seed-0/vanilla.model.params"]
    r = subprocess.run(["git", "check-ignore", "--no-index", *names], cwd=ROOT, capture_output=True, text=True)
    assert sorted(r.stdout.split()) == sorted(names), r.stdout + r.stderr


@pytest.mark.grader
@pytest.mark.skipif(graderUtil.privileged(),
                    reason="as root, the same upload is graded through the bundle with these assertions and more by "
                           "tests/harness/test_grader_isolation.py::test_reference_keeps_every_point_and_a_leftover_"
                           "cannot_rewrite_the_results (one grading of the reference, not two)")
def test_gradescope_bundle_gives_the_solution_full_marks(bundle, tmp_path):
    """Off root (a maintainer's machine): the reference with params and predictions that agree earns every point
    through the bundle, a grader.py uploaded beside the files ignored."""
    import course_params

    # params and predictions that agree, and answers that are theirs (tests/course_params.py)
    files = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "src" / "submission").glob("*.py")}
    files["grader.py"] = "print('a submitted grader must be ignored')\n"
    results = rehearse(bundle, tmp_path, files, prepare=course_params.fit_bundle)
    hidden = [t for t in results["tests"] if t["number"].endswith("-hidden")]
    assert len(hidden) >= 9
    for t in results["tests"]:
        assert t["score"] == t["max_score"], t
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 40


@pytest.mark.grader
def test_gradescope_bundle_gives_the_empty_starter_zero(bundle, starter, tmp_path):
    files = {p.name: p.read_text(encoding="utf-8") for p in (starter / "src" / "submission").glob("*.py")}
    results = rehearse(bundle, tmp_path, files)
    assert results["score"] == 0
    assert len(results["tests"]) >= 30 and all(t["score"] == 0 for t in results["tests"])


@pytest.mark.grader
def test_starter_grader_runs_to_the_summary(starter):
    r = subprocess.run([sys.executable, "grader.py"], cwd=starter / "src", capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    total = int(r.stdout.split("Total basic: ")[1].split("/")[1].split()[0])
    assert f"Total basic: 0/{total} points" in r.stdout and total > 20
    assert "hidden - graded after submission" in r.stdout
    assert "Extra credit: 0/" in r.stdout
