"""tools/release.py --data-dir: the starter and the bundle on another data set (the course's files, or a world
generated this term), and the one rule (src/kit/datafolder.py) by which the release, class grading and the
experiment check a data folder and pick its thresholds row."""

import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import COURSE_DATA, ROOT, make_world
from gradings import rehearse

import release
from kit import course

HAS_COURSE_DATA = (COURSE_DATA / "wiki.txt").is_file()
# the thresholds line of the grading header (src/grading/cli.py), for each data set
RECOGNISED = "accuracy thresholds: 'course' (recognised by its birth_dev.tsv)"
NOT_RECOGNISED = "accuracy thresholds: 'course' (data set not recognised, default row)"


@pytest.fixture(scope="module", params=["course", "new world"])
def released(request, tmp_path_factory):
    """(data folder, starter, bundle, the header's thresholds line) of a release on the course's files (skipped
    where ../shared/course-data is absent) or on a world that tools/data/generate.py made this term."""
    if request.param == "course":
        if not HAS_COURSE_DATA:
            pytest.skip("the course's data (../shared/course-data) is not present")
        data, header = COURSE_DATA, RECOGNISED
    else:
        data, header = tmp_path_factory.mktemp("term") / "world", NOT_RECOGNISED
        subprocess.run([sys.executable, str(ROOT / "tools" / "data" / "generate.py"), "--seed", "7", "--out",
                        str(data)], check=True, capture_output=True)
    out = tmp_path_factory.mktemp("release")
    starter = out / "starter"
    release.build_student(starter, data_dir=data)
    bundle = release.build_autograder(out / "autograder.zip", data_dir=data)
    return data, starter, bundle, header


def test_the_starter_holds_the_data_set_s_four_public_files_and_the_demo_s_world(released):
    data, starter, bundle, _ = released
    shipped = sorted(p.name for p in (starter / "src" / "data").iterdir())
    assert shipped == sorted([*course.DATA_FILES.values(), "demo"])  # no README of another world, no answers
    for name in course.DATA_FILES.values():
        assert (starter / "src" / "data" / name).read_bytes() == (data / name).read_bytes(), name
    demo = ROOT / "src" / "data" / "demo"
    assert (starter / "src" / "data" / "demo" / "wiki.txt").read_bytes() == (demo / "wiki.txt").read_bytes()
    with zipfile.ZipFile(bundle) as zf:
        assert zf.read("answers/birth_test.tsv") == (data / "birth_test.tsv").read_bytes()
        for name in course.DATA_FILES.values():
            assert zf.read(f"starter/src/data/{name}") == (data / name).read_bytes(), name
        assert not any(n.startswith("starter/") and n.endswith("birth_test.tsv") for n in zf.namelist())


def test_the_release_names_the_row_that_grades_the_data_set(released, capsys, tmp_path):
    data, _, _, header = released
    assert release.main(["student", str(tmp_path / "starter"), "--data-dir", str(data)]) == 0
    assert header.replace("accuracy thresholds: ", "") in capsys.readouterr().out
    assert release.main(["check", "--data-dir", str(data)]) == 0  # the check alone writes nothing
    assert capsys.readouterr().out == f"data: {data.resolve()}; {header}\n"


@pytest.mark.grader
def test_the_bundle_on_a_data_set_gives_the_reference_full_marks_by_its_row(released, tmp_path):
    import course_params

    _, _, bundle, header = released
    files = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "src" / "submission").glob("*.py")}
    results = rehearse(bundle, tmp_path, files, prepare=course_params.fit_bundle)
    assert header in results["output"]
    assert [t["number"] for t in results["tests"] if t["score"] != t["max_score"]] == []
    hidden = [t for t in results["tests"] if t["number"].endswith("-hidden")]
    assert len(hidden) >= 9 and results["score"] == sum(t["max_score"] for t in results["tests"]) > 40


@pytest.mark.grader
def test_the_bundle_on_a_data_set_gives_the_empty_starter_zero(released, tmp_path):
    _, starter, bundle, header = released
    files = {p.name: p.read_text(encoding="utf-8") for p in (starter / "src" / "submission").glob("*.py")}
    results = rehearse(bundle, tmp_path, files)  # the data set's own files, as released: the row recognises them
    assert header in results["output"]
    assert results["score"] == 0 and len(results["tests"]) >= 30


# -- refusals: each planted break, one sentence naming the file and the line, nothing written --------------------


def valid_world(folder):
    """The tests' tiny world with its held-out answers: a data folder of the course's shape."""
    folder.mkdir()
    make_world(folder, held_out=True)
    return folder


def edit(name, change):
    """A planted break: file name -> its text changed by change(lines) (None: the file removed)."""
    def plant(folder):
        path = folder / name
        if change is None:
            path.unlink()
        else:
            path.write_text("".join(line + "\n" for line in change(path.read_text(encoding="utf-8").splitlines())),
                            encoding="utf-8")
    return plant


def replace_line(number, text):
    return lambda lines: lines[: number - 1] + [text] + lines[number:]


BREAKS = {
    "a public file missing": (edit("birth_test_inputs.tsv", None), "student",
                              "lacks birth_test_inputs.tsv; a data folder holds wiki.txt, birth_places_train.tsv"),
    "the held-out answers missing": (edit("birth_test.tsv", None), "autograder",
                                     "lacks birth_test.tsv; a data folder holds wiki.txt"),
    "a dev line without its tab": (edit("birth_dev.tsv", replace_line(3, "Where was Ann Lee born? Oslo")), "student",
                                   "birth_dev.tsv:3: 'Where was Ann Lee born? Oslo' is not a question, a tab and an"),
    "a training line of three fields": (edit("birth_places_train.tsv", replace_line(2, "Where?\tOslo\tRome")),
                                        "student", "birth_places_train.tsv:2: 'Where?\\tOslo\\tRome' is not a"),
    "a blank line in the answers": (edit("birth_test.tsv", lambda lines: lines[:4] + [""] + lines[4:]), "autograder",
                                    "birth_test.tsv:5: '' is not a question, a tab and an answer"),
    "test inputs that carry their answers": (edit("birth_test_inputs.tsv", lambda lines: [f"{q}\tX" for q in lines]),
                                             "student", "birth_test_inputs.tsv:1: 'Where was"),
    "an empty dev file": (edit("birth_dev.tsv", lambda lines: []), "student", "birth_dev.tsv:1: the file is empty"),
    "a question the corpus cannot spell": (edit("birth_dev.tsv", replace_line(2, "Where was ë born?\tOslo")),
                                           "student", "birth_dev.tsv:2: the character 'ë' is not in wiki.txt"),
    "a training answer the corpus cannot spell": (edit("birth_places_train.tsv", replace_line(4, "Where?\tOslï")),
                                                  "student", "birth_places_train.tsv:4: the character 'ï'"),
    "a corpus with the mask character": (edit("wiki.txt", replace_line(6, "a \u2047 here")), "student",
                                         "wiki.txt:6: the corpus holds '\u2047'"),
    "answers to other questions": (edit("birth_test.tsv", replace_line(4, "Where was Nobody born?\tOslo")),
                                   "autograder",
                                   "birth_test.tsv:4: the question 'Where was Nobody born?' is not line 4 of "
                                   "birth_test_inputs.tsv"),
    "answers to fewer questions": (edit("birth_test.tsv", lambda lines: lines[:-1]), "autograder",
                                   "birth_test.tsv:10: it answers 9 questions, birth_test_inputs.tsv asks 10"),
}


@pytest.mark.parametrize("what", BREAKS)
def test_a_data_folder_not_of_the_course_s_shape_is_refused_before_anything_is_written(what, tmp_path, capsys):
    plant, command, sentence = BREAKS[what]
    data = valid_world(tmp_path / "data")
    out = tmp_path / "out"
    out.mkdir()
    target = out / ("starter" if command == "student" else "autograder.zip")
    assert release.main([command, str(target), "--data-dir", str(data)]) == 0  # the world itself is fine
    shutil.rmtree(out)
    out.mkdir()
    capsys.readouterr()
    plant(data)
    assert release.main([command, str(target), "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and sentence in err, err
    assert list(out.iterdir()) == []


def test_class_grading_and_the_experiment_refuse_a_data_folder_by_the_same_rule(tmp_path, capsys):
    """One rule for "which data set is this": the release, grade_class --data-dir and experiment.py --data-dir
    refuse the same folder with the same sentence."""
    import experiment
    import grade_class

    data = valid_world(tmp_path / "data")
    edit("birth_dev.tsv", replace_line(3, "Where was Ann Lee born? Oslo"))(data)
    (tmp_path / "subs" / "someone").mkdir(parents=True)
    sentence = f"error: {data}/birth_dev.tsv:3: 'Where was Ann Lee born? Oslo' is not a question, a tab and an answer"
    assert release.main(["student", str(tmp_path / "starter"), "--data-dir", str(data)]) == 1
    assert capsys.readouterr().err.startswith(sentence)
    assert grade_class.main([str(tmp_path / "subs"), "--out", str(tmp_path / "grades.csv"),
                             "--data-dir", str(data)]) == 2
    assert capsys.readouterr().err.startswith(sentence)
    assert experiment.main(["run", "--out", str(tmp_path / "results.json"), "--data-dir", str(data)]) == 2
    assert capsys.readouterr().err.startswith(sentence)
    assert not (tmp_path / "results.json").exists() and not (tmp_path / "grades.csv").exists()
