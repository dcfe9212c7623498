"""src/kit/upload.py: the one rule for which file of an upload is graded (Gradescope's entry, grade_class and
collect_submission's check share it), and the limits it reads an upload within (docs/grading.md, "How an upload is
read")."""

import zipfile

from kit import upload


def test_an_upload_is_read_by_one_rule_flat_or_in_folders(tmp_path):
    """src/kit/upload.py, which Gradescope's entry, grade_class and collect_submission's check share: the copy beside
    the most deliverables wins, else the shallowest; a copy with other content left out is named."""
    names = ["model.py", "helper.py", "utils.py", "vanilla.model.params"]
    (tmp_path / "src" / "submission").mkdir(parents=True)
    (tmp_path / "src" / "submission" / "model.py").write_text("nested")
    (tmp_path / "src" / "submission" / "helper.py").write_text("nested")
    (tmp_path / "vanilla.model.params").write_text("flat")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "model.py").write_text("an older draft")
    (tmp_path / "backup").mkdir()
    (tmp_path / "backup" / "helper.py").write_text("nested")  # the same content: not worth a note
    (tmp_path / "__MACOSX" / "src").mkdir(parents=True)
    (tmp_path / "__MACOSX" / "src" / "utils.py").write_text("resource fork")
    choice = upload.Upload(tmp_path).choose(names)
    assert choice.base == "src/submission"
    assert choice.chosen == {"model.py": "src/submission/model.py", "helper.py": "src/submission/helper.py",
                             "vanilla.model.params": "vanilla.model.params"}
    assert len(choice.notes) == 1 and choice.notes[0].startswith("model.py: graded src/submission/model.py")
    assert "old/model.py" in choice.notes[0]
    # a zip with the same layout reads the same
    with zipfile.ZipFile(tmp_path / "up.zip", "w") as zf:
        for path in sorted(tmp_path.rglob("*")):
            if path.is_file() and path.suffix != ".zip":
                zf.write(path, path.relative_to(tmp_path).as_posix())
    with upload.Upload(tmp_path / "up.zip") as up:
        assert up.choose(names) == choice


def test_the_autograder_takes_no_symbolic_link(tmp_path):
    secret = tmp_path / "answers.tsv"
    secret.write_text("held out")
    (tmp_path / "up" / "src").mkdir(parents=True)
    (tmp_path / "up" / "model.py").symlink_to(secret)  # copied as root, it would bring the answers along
    (tmp_path / "up" / "src" / "submission").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "helper.py").write_text("behind a linked folder")
    assert upload.Upload(tmp_path / "up").choose(["model.py", "helper.py"]).chosen == {}


def test_folders_past_the_depth_limit_are_not_searched_and_a_note_says_so(tmp_path):
    """A folder upload is searched 32 folders deep (upload.MAX_DEPTH): a deliverable deeper down is not graded, the
    rest is, and a note says what was left out; the upload is not refused."""
    deep = tmp_path / "up" / "/".join(f"d{i}" for i in range(upload.MAX_DEPTH + 1))
    deep.mkdir(parents=True)
    (deep / "helper.py").write_text("too deep")
    (tmp_path / "up" / "model.py").write_text("at the top")
    up = upload.Upload(tmp_path / "up")
    choice = up.choose(["model.py", "helper.py"])
    assert choice.chosen == {"model.py": "model.py"}
    assert any(f"more than {upload.MAX_DEPTH} deep" in note for note in choice.notes), choice.notes
    shallow = tmp_path / "up2" / "/".join(f"d{i}" for i in range(upload.MAX_DEPTH - 1))
    shallow.mkdir(parents=True)
    (shallow / "helper.py").write_text("deep, within the limit")
    assert upload.Upload(tmp_path / "up2").choose(["helper.py"]).chosen == {
        "helper.py": shallow.relative_to(tmp_path / "up2").as_posix() + "/helper.py"}
