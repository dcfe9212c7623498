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
