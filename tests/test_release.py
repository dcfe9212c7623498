"""tools/release.py: the student starter has no solution code, no answers, and still imports."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import release  # noqa: E402


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "starter"
    release.build_student(out)
    return out


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
            assert [l for l in inside if not l.startswith("#")] == ["pass"], f"{rel}:{start}"
    assert n_regions >= 10


def test_no_solution_line_appears_in_the_starter(starter):
    # Lines that the instructor's copy also has outside any region (e.g. Block's MLP line) are given
    # code, not solution; every other line of a region must appear nowhere in the starter.
    given, secret = set(), set()
    for rel in instructor_python_files():
        text = (ROOT / rel).read_text(encoding="utf-8")
        lines = text.splitlines()
        inside_idx = {i for start, end in release.regions(text, rel) for i in range(start, end - 1)}
        secret |= set(release.solution_lines(text, rel))
        given |= {l.strip() for i, l in enumerate(lines) if i not in inside_idx}
    secret -= given
    assert secret
    for path in starter.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="ignore")
            lines = {l.strip() for l in text.splitlines()}
            assert not (secret & lines), f"{path}: {sorted(secret & lines)[:3]}"


def test_excluded_files_are_absent(starter):
    names = {p.relative_to(starter).as_posix() for p in starter.rglob("*") if p.is_file()}
    assert not any(n.endswith(("birth_test.tsv", ".params", ".predictions")) for n in names)
    assert not any(n.startswith(("tools/", "instructor/", "tests/", ".ci/")) for n in names)
    assert "README.md" in names and "run.sh" in names and "src/submission/helper.py" in names
    assert "START CODE HERE" in (starter / "README.md").read_text(encoding="utf-8")  # the student README


def test_starter_imports_and_says_what_is_missing(starter, world):
    data, _ = world
    code = ("import sys; sys.path.insert(0, 'src');"
            "import submission.dataset, submission.model, submission.helper, submission.utils, submission.trainer")
    r = subprocess.run([sys.executable, "-c", code], cwd=starter, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "src/run.py", "--function", "pretrain", "--variant", "vanilla",
                        "--pretrain_corpus_path", str(data / "wiki.txt"), "--writing_params_path", "x.params"],
                       cwd=starter, capture_output=True, text=True)
    assert r.returncode == 1 and "initialize_vanilla_model in src/submission/helper.py returned None" in r.stderr


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


def test_refuses_a_non_empty_output_folder(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(release.ReleaseError, match="not empty"):
        release.build_student(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def answers_of(path):
    return [line.split("\t")[1] for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    import zipfile

    zip_path = release.build_autograder(tmp_path_factory.mktemp("bundle") / "autograder.zip")
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        assert {"setup.sh", "run_autograder", "answers/birth_test.tsv", "solution/model.py",
                "starter/src/grader.py"} <= set(names)
        assert not any(n.startswith("starter/") and n.endswith("birth_test.tsv") for n in names)
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    return zip_path


def rehearse(bundle, root, files):
    """Lay out Gradescope's folders under root, 'upload' files {name: text}, run the bundle."""
    import zipfile

    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    upload = root / "submission" / "submission"  # the zip from collect_submission has a folder level
    upload.mkdir(parents=True)
    for name, text in files.items():
        (upload / name).write_text(text, encoding="utf-8")
    r = subprocess.run(["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True,
                       env={**__import__("os").environ, "AUTOGRADER_ROOT": str(root)}, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    import json

    results = json.loads((root / "results" / "results.json").read_text())
    for test in results["tests"]:
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
    return results


def test_gradescope_bundle_gives_the_solution_full_marks(bundle, tmp_path, monkeypatch):
    # the answer key stands in for the predictions, without params that would produce it: skip the grader's
    # params check here (tests/test_grader_params.py tests it)
    monkeypatch.setenv("GRADER_TRUST_PREDICTIONS", "1")
    data = ROOT / "src" / "data"
    dev, test = "\n".join(answers_of(data / "birth_dev.tsv")) + "\n", "\n".join(answers_of(data / "birth_test.tsv")) + "\n"
    files = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "src" / "submission").glob("*.py")}
    for variant in ("vanilla.nopretrain", "vanilla.pretrain", "perceiver.pretrain"):
        files[f"{variant}.dev.predictions"], files[f"{variant}.test.predictions"] = dev, test
    files["grader.py"] = "print('a submitted grader must be ignored')\n"
    results = rehearse(bundle, tmp_path, files)
    hidden = [t for t in results["tests"] if t["visibility"] == "after_published"]
    assert len(hidden) >= 9
    for t in results["tests"]:
        assert t["score"] == t["max_score"], t
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 40


def test_gradescope_bundle_gives_the_empty_starter_zero(bundle, starter, tmp_path):
    files = {p.name: p.read_text(encoding="utf-8") for p in (starter / "src" / "submission").glob("*.py")}
    results = rehearse(bundle, tmp_path, files)
    assert results["score"] == 0
    assert len(results["tests"]) >= 30 and all(t["score"] == 0 for t in results["tests"])


def test_starter_grader_runs_to_the_summary(starter):
    r = subprocess.run([sys.executable, "grader.py"], cwd=starter / "src", capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    total = int(r.stdout.split("Total basic: ")[1].split("/")[1].split()[0])
    assert f"Total basic: 0/{total} points" in r.stdout and total > 20
    assert "hidden - graded after submission" in r.stdout
    assert "Extra credit: 0/" in r.stdout
