"""The written part's LaTeX template: tex/submission.tex, its preamble and Makefile."""

import re
import shutil
import subprocess

import pytest

from conftest import ROOT

TEX = ROOT / "tex"
QUESTIONS = ["2.a", "2.b", "2.c", "3.a", "3.b", "3.c.i", "3.c.ii", "3.d.i", "3.d.ii"]


def copy_of_tex(tmp_path):
    """Build in a copy, so the tests leave no LaTeX output in the repository."""
    folder = tmp_path / "tex"
    shutil.copytree(TEX, folder, ignore=shutil.ignore_patterns("submission.pdf", "*.aux", "*.log", "*.out"))
    return folder


def test_one_answer_box_per_question_in_order():
    text = (TEX / "submission.tex").read_text(encoding="utf-8")
    body = re.sub(r"(?m)^\s*%.*$", "", text)  # comments do not count
    assert re.findall(r"\\question\{([^}]*)\}", body) == QUESTIONS
    # each question is followed by exactly one answer environment before the next question
    for chunk in re.split(r"\\question\{", body)[1:]:
        assert chunk.count(r"\begin{answer}") == 1 and chunk.count(r"\end{answer}") == 1
    assert r"\input{preamble}" in body


def test_template_ships_in_the_starter_and_the_model_answers_do_not():
    import release

    patterns = release.exclude_patterns()
    for name in ("submission.tex", "preamble.tex", "Makefile"):
        assert not release.is_excluded(f"tex/{name}", patterns)
    assert release.is_excluded("instructor/written_answers.md", patterns)


@pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("make") is None,
                    reason="pdflatex (TeX Live) is not installed")
def test_make_builds_the_pdf(tmp_path):
    folder = copy_of_tex(tmp_path)
    r = subprocess.run(["make", "-C", str(folder)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert (folder / "submission.pdf").read_bytes()[:5] == b"%PDF-"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_without_latex_says_what_to_install(tmp_path):
    folder = copy_of_tex(tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()  # a PATH on which neither latexmk nor pdflatex can be found
    r = subprocess.run([shutil.which("make"), "-C", str(folder)], capture_output=True, text=True, timeout=60,
                       env={"PATH": str(empty)})
    assert r.returncode != 0
    assert r.stderr.count("\n") == 1 and "install" in r.stderr and "pdflatex" in r.stderr
    assert not (folder / "submission.pdf").exists()
