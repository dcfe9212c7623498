"""tools/rehearse_gradescope.sh, the clean-room rehearsal of the Gradescope bundle, takes 2-5 minutes and
network access (docs/instructor.md): these tests check the pieces that run here."""

import json
import shutil
import subprocess

import pytest

from conftest import ROOT

import rehearsal

SCRIPT = ROOT / "tools" / "rehearse_gradescope.sh"


def test_the_rehearsal_script_parses_and_passes_shellcheck():
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    r = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_the_rehearsal_refuses_an_unknown_distribution_before_doing_anything(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT), "sid", str(tmp_path / "work")], capture_output=True, text=True)
    assert (r.returncode, r.stderr.strip()) == (1, "error: unknown distribution 'sid'; use bookworm or trixie")
    assert not (tmp_path / "work").exists()


def test_a_python_without_the_kits_requirements_is_named_before_anything_is_written(tmp_path):
    """Plain sudo resets PATH: the python3 it finds may lack torch.  The rehearsal says which python3 it found and
    how to keep the user's, before it writes its work folder (it died at its first import, the folder written)."""
    import os

    if os.geteuid() != 0:
        pytest.skip("the rehearsal runs as root")
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
    (bare / "mmdebstrap").write_text("#!/bin/sh\nexit 0\n")
    for stub in bare.iterdir():
        stub.chmod(0o755)
    env = dict(os.environ, PATH=f"{bare}:/usr/sbin:/usr/bin:/sbin:/bin")
    r = subprocess.run(["bash", str(SCRIPT), "bookworm", str(tmp_path / "work")], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1 and r.stderr.startswith(f"error: {bare / 'python3'} cannot import torch"), r.stderr
    assert 'sudo env "PATH=$PATH"' in r.stderr
    assert not (tmp_path / "work").exists()


def test_the_submissions_are_laid_out_as_gradescope_unpacks_them(tmp_path):
    from kit import course
    import release

    starter = tmp_path / "starter"
    release.build_student(starter)
    rehearsal.write_submissions(tmp_path / "subs", starter)
    names = {d.name: sorted(p.name for p in d.iterdir()) for d in (tmp_path / "subs").iterdir()}
    assert sorted(names) == sorted(rehearsal.NAMES)
    deliverables = sorted(course.DELIVERABLES + course.OPTIONAL_FILES)  # flat, as collect_submission zips them
    assert names["reference"] == names["untrusted"] == deliverables
    assert names["empty"] == sorted(p.name for p in (starter / "src" / "submission").glob("*.py"))
    assert names["misbehaving"] == sorted(course.CODE_FILES + course.OPTIONAL_FILES)
    assert "Popen" in (tmp_path / "subs" / "misbehaving" / "helper.py").read_text(encoding="utf-8")


def test_the_reference_made_for_a_bundle_uploads_every_file_fitted_to_its_data(tmp_path):
    """From an unpacked bundle's starter, the reference uploads the params and predictions fitted to the bundle's data
    (course_params.fit_bundle, which earn every point through the bundle: tests/harness/test_grader_isolation.py),
    its vanilla.pretrain.params a pretraining of its own, which the grader reads (the finetuned file stood in for
    it: the rehearsal's reference lost 13 points)."""
    import zipfile

    import course_params
    import release
    from kit import course

    bundle = release.build_autograder(tmp_path / "autograder.zip")
    for folder in ("source", "again"):
        with zipfile.ZipFile(bundle) as zf:
            zf.extractall(tmp_path / folder)
    rehearsal.write_submissions(tmp_path / "subs", tmp_path / "source" / "starter")
    reference = tmp_path / "subs" / "reference"
    fitted = course_params.fit_bundle(tmp_path / "again")
    assert sorted(fitted) == sorted(n for n in course.DELIVERABLES if not n.endswith(".py"))
    for name, data in fitted.items():
        assert (reference / name).read_bytes() == data, name
    assert (reference / "vanilla.pretrain.params").read_bytes() != (reference / "vanilla.finetune.params").read_bytes()


def results(*tests):
    return {"score": sum(score for _, score, _ in tests),
            "tests": [{"name": name, "number": name.split(":")[0], "score": score, "max_score": top}
                      for name, score, top in tests]}


@pytest.mark.parametrize("name, scores, ok", [
    ("reference", (2, 3), True), ("reference", (2, 0), False),
    ("untrusted", (2, 0), True), ("misbehaving", (2, 0), True), ("misbehaving", (0, 0), False),
    ("misbehaving", (2, 3), False),  # points for predictions it never handed in
    ("empty", (0, 0), True), ("empty", (2, 0), False),
])
def test_the_rehearsal_expects_each_submission_s_score(tmp_path, name, scores, ok):
    code, predictions = scores
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results(("1c-3-basic: the code", code, 2), ("1f-1-hidden: the accuracy", predictions, 3))))
    assert rehearsal.check(name, path)[0] is ok


def test_the_rehearsal_knows_the_prediction_tests_from_the_grader_s_table():
    """Which tests grade prediction files comes from the grader's registry (the tests that need the held-out
    answers), not from their names: the six prediction files' tests, by their ids."""
    assert rehearsal.prediction_tests() == {"1d-0-hidden", "1d-1-hidden", "1f-1-hidden", "1f-2-hidden", "1g-1-hidden",
                                            "1g-2-hidden"}
