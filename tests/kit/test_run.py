"""run.py and run.sh end to end on a tiny world in a temporary folder."""

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

from kit import course
from conftest import ROOT, on_each_device

SMALL_FLAGS = ["--n_layer", "2", "--n_head", "2", "--n_embd", "32", "--block_size", "64", "--bottleneck_dim", "8",
               "--max_epochs", "2", "--batch_size", "16", "--num_workers", "0", "--no_progress"]


def run_py(*args):
    return subprocess.run([sys.executable, str(ROOT / "src" / "run.py"), *args], capture_output=True, text=True,
                          timeout=300)


def run_sh(*args, env=None):
    return subprocess.run(["bash", str(ROOT / "run.sh"), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})}, cwd="/")


@pytest.mark.slow  # run.py, run.sh or the demo in processes of their own
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity (Linux)")
def test_a_training_run_on_a_one_core_machine_prints_no_framework_warning(world, tmp_path):
    """The course's 4 DataLoader workers (helper.py keeps them) on a machine with fewer cores: run.py starts no
    more workers than cores, and PyTorch does not warn.  The run is pinned to one core, so the test can fail on
    any machine.  Python's own warning filters, as a student's run has them: with -W default, Python 3.12+
    also shows its DeprecationWarning about forking a multi-threaded process, which every DataLoader worker on
    Linux does and which a plain run does not print."""
    path, _ = world
    i = SMALL_FLAGS.index("--num_workers")
    flags = SMALL_FLAGS[:i] + SMALL_FLAGS[i + 2 :] + ["--max_epochs", "1"]  # the last --max_epochs counts
    one_core = {min(os.sched_getaffinity(0))}
    r = subprocess.run([sys.executable, str(ROOT / "src" / "run.py"), "--function", "pretrain",
                        "--variant", "vanilla", "--pretrain_corpus_path", str(path / "wiki.txt"),
                        "--writing_params_path", str(tmp_path / "pre.params"), *flags],
                       capture_output=True, text=True, timeout=300,
                       preexec_fn=lambda: os.sched_setaffinity(0, one_core))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Warning" not in r.stderr, r.stderr[-2000:]


@pytest.mark.slow  # run.py, run.sh or the demo in processes of their own
def test_user_errors_are_one_clear_sentence(world):
    path, _ = world
    r = run_py("--function", "evaluate", "--variant", "vanilla")
    assert r.returncode == 2 and "needs --reading_params_path" in r.stderr
    r = run_py("--function", "finetune", "--variant", "vanilla", "--writing_params_path", str(path / "x"),
               "--finetune_corpus_path", str(path / "nope.tsv"), "--pretrain_corpus_path", str(path / "wiki.txt"))
    assert r.returncode == 2 and "nope.tsv does not exist" in r.stderr and "Traceback" not in r.stderr
    (path / "bad.tsv").write_text("Where was Ana Smith born? Paris\n")
    r = run_py("--function", "finetune", "--variant", "vanilla", "--writing_params_path", str(path / "x"),
               "--finetune_corpus_path", str(path / "bad.tsv"), "--pretrain_corpus_path", str(path / "wiki.txt"),
               *SMALL_FLAGS)
    assert r.returncode == 2 and "not 'question<TAB>place'" in r.stderr and "Traceback" not in r.stderr


def one_sentence(r, *fragments):
    """A user error: exit status 2, one line on stderr holding every fragment, no traceback."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr[-2000:])
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.slow  # run.py, run.sh or the demo in processes of their own
def test_bad_inputs_are_one_sentence_and_overwrite_nothing(world):
    from submission.dataset import CharCorruptionDataset
    from submission.model import GPT, GPTConfig

    path, _ = world
    wiki = ["--pretrain_corpus_path", str(path / "wiki.txt")]
    old = path / "old.params"
    old.write_bytes(b"earlier results")
    finetune = ["--function", "finetune", "--writing_params_path", str(old), *SMALL_FLAGS]
    (path / "empty.txt").write_text("\n\n")
    (path / "empty.tsv").write_text("")
    # an empty corpus or TSV
    one_sentence(run_py(*finetune, "--variant", "vanilla", "--pretrain_corpus_path", str(path / "empty.txt"),
                        "--finetune_corpus_path", str(path / "birth_places_train.tsv")), "empty.txt has no lines")
    one_sentence(run_py(*finetune, "--variant", "vanilla", *wiki, "--finetune_corpus_path", str(path / "empty.tsv")),
                 "empty.tsv has no lines")
    # a bottleneck longer than the block (SMALL_FLAGS: block size 64)
    one_sentence(run_py(*finetune, "--variant", "perceiver", *wiki, "--bottleneck_dim", "65",
                        "--finetune_corpus_path", str(path / "birth_places_train.tsv")), "--bottleneck_dim 65", "64")
    assert old.read_bytes() == b"earlier results"
    # parameter files: readable, from the same corpus
    vocab = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64).vocab_size
    cfg = dict(n_layer=2, n_head=2, n_embd=32)
    torch.save(GPT(GPTConfig(vocab, 64, **cfg)).state_dict(), path / "good.params")
    torch.save(GPT(GPTConfig(vocab + 5, 64, **cfg)).state_dict(), path / "other.params")
    data = (path / "good.params").read_bytes()
    (path / "cut.params").write_bytes(data[: len(data) // 3])
    preds = path / "dev.pred"
    preds.write_text("earlier predictions\n")
    evaluate = ["--function", "evaluate", "--variant", "vanilla", *wiki, "--eval_corpus_path",
                str(path / "birth_dev.tsv"), *SMALL_FLAGS]
    one_sentence(run_py(*evaluate, "--reading_params_path", str(path / "cut.params"), "--outputs_path", str(preds)),
                 "cut.params is not a readable parameter file", "truncated or corrupt")
    one_sentence(run_py(*evaluate, "--reading_params_path", str(path / "other.params"), "--outputs_path", str(preds)),
                 "different pretraining corpus", f"vocab {vocab + 5} vs {vocab}")
    one_sentence(run_py(*finetune, "--variant", "vanilla", *wiki, "--reading_params_path", str(path / "other.params"),
                        "--finetune_corpus_path", str(path / "birth_places_train.tsv")), "different pretraining corpus")
    # an --outputs_path that is a folder
    one_sentence(run_py(*evaluate, "--reading_params_path", str(path / "good.params"), "--outputs_path", str(path)),
                 "is a directory")
    assert preds.read_text() == "earlier predictions\n" and old.read_bytes() == b"earlier results"


def test_flags_that_cannot_work_are_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    """Counts below what can run (0 epochs saved an untrained model over a trained one; a batch of 0 or a head count
    that does not divide the width failed deep in torch), a flag that says what the run is given twice (./run.sh
    passes those from its target, and an extra --variant silently won and overwrote the target's file), and an
    output folder that cannot be written (found only when the training was over): each one sentence, at once."""
    import run

    base = ["--function", "pretrain", "--variant", "vanilla", "--writing_params_path", str(tmp_path / "a.params")]
    for extra, says in [(["--max_epochs", "0"], "argument --max_epochs: 0 is less than 1"),
                        (["--batch_size", "0"], "argument --batch_size: 0 is less than 1"),
                        (["--num_workers", "-1"], "argument --num_workers: -1 is less than 0"),
                        (["--n_head", "two"], "argument --n_head: 'two' is not a whole number"),
                        (["--variant", "perceiver"], "--variant is given twice"),
                        (["--vari", "perceiver"], "--variant is given twice"),  # argparse's abbreviation, the same
                        (["--writing_params_path", "b.params"], "--writing_params_path is given twice")]:
        with pytest.raises(SystemExit) as e:
            run.build_parser().parse_args(base + extra)
        assert e.value.code == 2 and says in capsys.readouterr().err, extra
    args = run.build_parser().parse_args(base + ["--n_head", "3", "--n_embd", "16"])
    with pytest.raises(run.UserError, match="--n_embd 16 must be a multiple of --n_head 3"):
        run.check_options(args)
    args = run.build_parser().parse_args(base)
    monkeypatch.setattr(run.os, "access", lambda path, mode: Path(path) != tmp_path)  # a read-only mount, say
    with pytest.raises(run.UserError, match=f"the folder {tmp_path} is not writable"):
        run.check_options(args)


def test_an_eval_file_with_a_stray_character_or_a_missing_answer_names_the_line(world):
    """The eval TSV's problems are the file's, not the corpus's: a character the corpus lacks (a zero-width space,
    a byte-order mark) was blamed on --pretrain_corpus_path with no line named, and a line without its answer in a
    file of answers ended in an IndexError inside utils.evaluate_places."""
    import run
    from submission.dataset import CharCorruptionDataset

    path, _ = world
    vocab = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    dev = (path / "birth_dev.tsv").read_text(encoding="utf-8").splitlines()
    run.check_eval_file(path / "birth_dev.tsv", vocab)  # the world's own files pass, answered or not
    run.check_eval_file(path / "birth_test_inputs.tsv", vocab)
    bad = path / "bad.tsv"
    bad.write_text("\n".join(dev[:2] + ["\ufeff" + dev[2]] + dev[3:]) + "\n", encoding="utf-8")
    with pytest.raises(run.UserError, match=r"bad.tsv line 3 has the character '\\ufeff'.*remove it"):
        run.check_eval_file(bad, vocab)
    bad.write_text("\n".join(dev[:4] + [dev[4].split("\t")[0]] + dev[5:]) + "\n", encoding="utf-8")
    with pytest.raises(run.UserError, match="bad.tsv line 5 has no place after a tab"):
        run.check_eval_file(bad, vocab)


def copy_of_src(tmp_path):
    """A private copy of src/ (code only) whose student files a test may edit."""
    import shutil

    dst = tmp_path / "src"
    shutil.copytree(ROOT / "src", dst, ignore=shutil.ignore_patterns("data", "__pycache__", "*.params",
                                                                    "*.predictions"))
    return dst


@pytest.mark.slow  # run.py, run.sh or the demo in processes of their own
def test_a_bug_inside_student_code_keeps_its_traceback(world, tmp_path):
    path, _ = world
    src = copy_of_src(tmp_path)
    helper = src / "submission" / "helper.py"
    text = helper.read_text(encoding="utf-8")
    helper.write_text(text.replace("    max_epochs = 75\n", "    max_epochs = 75\n    int('seventy-five')\n"))
    r = subprocess.run([sys.executable, str(src / "run.py"), "--function", "finetune", "--variant", "vanilla",
                        "--pretrain_corpus_path", str(path / "wiki.txt"), "--writing_params_path", str(path / "x"),
                        "--finetune_corpus_path", str(path / "birth_places_train.tsv"), *SMALL_FLAGS],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" in r.stderr and "helper.py" in r.stderr
    assert "ValueError: invalid literal for int()" in r.stderr and not (path / "x").exists()


def test_run_sh_lists_targets_and_names_missing_prerequisites(tmp_path):
    r = run_sh()
    assert r.returncode == 2
    for target in ["vanilla_finetune_without_pretrain", "perceiver_eval_test_with_pretrain", "london_baseline",
                   "collect_submission"]:
        assert target in r.stdout
    r = run_sh("no_such_target")
    assert r.returncode == 2 and "unknown target" in r.stderr
    r = run_sh("vanilla_eval_dev_with_pretrain", env={"OUT_DIR": str(tmp_path)})
    assert r.returncode == 1 and "run './run.sh vanilla_finetune_with_pretrain' first" in r.stderr
    r = run_sh("vanilla_pretrain", env={"OUT_DIR": str(tmp_path), "DATA_DIR": str(tmp_path)})
    assert r.returncode == 1 and "wiki.txt is missing" in r.stderr and f"DATA_DIR={tmp_path}" in r.stderr
    r = run_sh("vanila_pretrain", env={"OUT_DIR": str(tmp_path / "out")})
    assert r.returncode == 2 and "unknown target" in r.stderr and not (tmp_path / "out").exists()


TARGETS = """vanilla_finetune_without_pretrain vanilla_eval_dev_without_pretrain vanilla_eval_test_without_pretrain
vanilla_pretrain vanilla_finetune_with_pretrain vanilla_eval_dev_with_pretrain vanilla_eval_test_with_pretrain
perceiver_pretrain perceiver_finetune_with_pretrain perceiver_eval_dev_with_pretrain
perceiver_eval_test_with_pretrain""".split()

DELIVERABLES = ["vanilla.model.params", "vanilla.nopretrain.dev.predictions", "vanilla.nopretrain.test.predictions",
                "vanilla.pretrain.params", "vanilla.finetune.params", "vanilla.pretrain.dev.predictions",
                "vanilla.pretrain.test.predictions", "perceiver.pretrain.params", "perceiver.finetune.params",
                "perceiver.pretrain.dev.predictions", "perceiver.pretrain.test.predictions"]


@pytest.mark.slow  # run.py, run.sh or the demo in processes of their own
@pytest.mark.parametrize("device", on_each_device())
def test_all_targets_in_sequence(world, tmp_path_factory, device):
    """Every target of run.sh in the handout's order, each vanilla and perceiver pretraining, finetuning and
    evaluation on the device, given `no-compile` as the course's run.sh gives every target (run.py gets
    --no-compile and a backend; tests/kit/test_compile.py compiles): the deliverables and their loss logs, one
    prediction line per question, the evaluation's one line of accuracy where the file has answers and one notice
    where it has none; then the London baseline and the upload's zip."""
    data, _ = world
    out = tmp_path_factory.mktemp("out")
    env = {"DATA_DIR": str(data), "OUT_DIR": str(out)}
    n_dev = len((data / "birth_dev.tsv").read_text(encoding="utf-8").splitlines())
    for target in TARGETS:
        r = run_sh(target, "no-compile", *SMALL_FLAGS, "--device", device, env=env)
        assert r.returncode == 0, f"{target}: {r.stderr[-2000:]}"
        writes = course.TARGET[target].writes
        if course.TARGET[target].function != "evaluate":
            continue
        assert len((out / writes).read_text(encoding="utf-8").split("\n")) == n_dev + 1  # one line each
        if ".dev." in writes:
            assert f"out of {n_dev}:" in r.stdout and r.stdout.startswith("Correct: "), r.stdout
        else:  # one message for a file without answers (utils.evaluate_places has its own, not printed as well)
            assert r.stdout.count("no answers") == 1 and "No gold" not in r.stdout + r.stderr, r.stdout + r.stderr
    # besides the deliverables: each trained params file's loss log (checkpoints are gone once params are saved)
    logs = sorted(p.name for p in out.iterdir() if p.name.endswith(".log.csv"))
    assert logs == sorted(f"{name}.log.csv" for name in DELIVERABLES if name.endswith(".params"))
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith(".log.csv")) == sorted(DELIVERABLES)
    r = run_sh("london_baseline", env=env)
    assert r.returncode == 0 and "Correct:" in r.stdout
    zip_path = tmp_path_factory.mktemp("zip") / "submission.zip"
    r = run_sh("collect_submission", "--out", str(zip_path), env=env)
    # OUT_DIR holds the 11 outputs; the 7 code files stay in src/submission/, so they are listed missing
    assert r.returncode == 0 and "11 of the 18 deliverables" in r.stdout and "missing 7" in r.stdout
    with zipfile.ZipFile(zip_path) as zf:
        assert sorted(zf.namelist()) == sorted(DELIVERABLES)  # flat: no folder inside the zip


def run_sh_targets():
    """What run.sh does for each target, read from its source: {target: (function, variant, reads, data, writes)}
    in the form of course.Target, and its data file names {"corpus": "wiki.txt", ...}."""
    import re

    text = (ROOT / "run.sh").read_text(encoding="utf-8")
    data_vars = dict(re.findall(r'^(WIKI|TRAIN|DEV|TEST)="\$DATA/([^"]+)"$', text, re.M))
    split_of = {"$DEV": "dev", "$TEST": "test"}
    arms = dict(re.findall(r"^  (\w+)\)\n(.*?);;$", text, re.M | re.S))
    found = {}
    for name, body in arms.items():
        calls = [line.split() for line in body.strip().splitlines()]
        call = calls[-1]
        need = [c for c in calls[:-1] if c[0] == "need_params"]
        if call[0] == "pretrain":
            found[name] = ("pretrain", call[1], None, "corpus", f"{call[1]}.pretrain.params")
        elif call[0] == "finetune":
            reads = None if call[2] == '""' else call[2]
            found[name] = ("finetune", call[1], reads, "train", call[3])
        elif call[0] == "evaluate":
            found[name] = ("evaluate", call[1], call[2], split_of[call[3].strip('"')], call[4])
        else:
            continue
        if found[name][2] is not None:  # a target that reads params first names the target that writes them
            assert need == [["need_params", found[name][2], course.WRITTEN_BY[found[name][2]].name]], name
    files = {"corpus": data_vars["WIKI"], "train": data_vars["TRAIN"], "dev": data_vars["DEV"],
             "test": data_vars["TEST"]}
    listed = re.search(r'^TARGETS="([^"]*)"', text, re.M | re.S).group(1).split()
    return found, files, listed


def test_run_sh_does_what_course_py_says():
    """course.py is the one home of the targets; run.sh is bash, so this test holds it to the same facts."""
    found, files, listed = run_sh_targets()
    assert [t.name for t in course.TARGETS] == TARGETS  # the handout's 11 targets, in its order
    assert found == {t.name: tuple(t[1:]) for t in course.TARGETS}
    assert files == course.DATA_FILES
    assert listed == TARGETS + ["london_baseline", "collect_submission", "demo"]
    assert sorted(course.PARAMS_FILES + course.PREDICTION_FILES) == sorted(DELIVERABLES)


def test_collect_submission_zips_the_18_files_flat(tmp_path):
    from kit.course import CODE_FILES, DELIVERABLES as ALL

    assert len(ALL) == 18 and len(CODE_FILES) == 7
    folder = tmp_path / "submission"
    folder.mkdir()
    for name in ALL + ["attention_exploration.py", "notes.txt", "vanilla.model.params.ckpt"]:
        (folder / name).write_text(name)
    (folder / "helper.py").unlink()
    out = tmp_path / "submission.zip"
    out.write_text("an earlier zip")
    r = run_sh("collect_submission", "--out", str(out), env={"OUT_DIR": str(folder)})
    assert r.returncode == 0 and "17 of the 18 deliverables, plus attention_exploration.py" in r.stdout
    assert "missing 1" in r.stdout and str(folder / "helper.py") in r.stdout
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == sorted(set(ALL) - {"helper.py"} | {"attention_exploration.py"})
        assert zf.read("perceiver.finetune.params") == b"perceiver.finetune.params"
    r = run_sh("collect_submission", "--out", str(tmp_path), env={"OUT_DIR": str(folder)})
    assert r.returncode == 2 and "is a directory" in r.stderr
    # a mistyped OUT_DIR, or a folder without a deliverable, never replaces the zip with an empty one
    good = out.read_bytes()
    r = run_sh("collect_submission", "--out", str(out), env={"OUT_DIR": str(tmp_path / "submision")})
    assert r.returncode == 2 and "is not a folder" in r.stderr and not (tmp_path / "submision").exists()
    (tmp_path / "empty").mkdir()
    r = run_sh("collect_submission", "--out", str(out), env={"OUT_DIR": str(tmp_path / "empty")})
    assert r.returncode == 2 and "holds none of the 18 deliverables" in r.stderr
    assert out.read_bytes() == good


@pytest.mark.slow  # run.py, run.sh or the demo in processes of their own
def test_demo_pipeline_smoke(world, tmp_path_factory):
    data, _ = world
    out = tmp_path_factory.mktemp("demo")
    r = run_sh("demo", "--smoke", "--world", str(data), "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    for stage in ["baseline (always", "vanilla, no pretraining", "vanilla, pretrain + finetune",
                  "perceiver, pretrain + finetune"]:
        assert stage in r.stdout
    first = (data / "birth_dev.tsv").read_text(encoding="utf-8").split("\t", 1)[0]
    assert f"questions, such as {first!r})" in r.stdout  # what the demo asks is on its results table
    # Each training stage's progress counts all its steps (pretraining and finetuning) and says the time left.
    for stage in ["vanilla, no pretraining", "vanilla, pretrain + finetune", "perceiver, pretrain + finetune"]:
        lines = [line for line in r.stdout.splitlines() if line.startswith(f"seed 0: {stage}: step ")]
        steps = [re.fullmatch(r".*: step (\d+)/(\d+), loss [0-9.]+, about (\d+) s left", line) for line in lines]
        assert lines and all(steps), (stage, lines)
        done, total, left = steps[-1].groups()
        assert done == total and left == "0", (stage, lines)
    rows = (out / "losses.csv").read_text().splitlines()
    assert rows[0] == "seed,stage,step,epoch,loss,lr"
    stages = {row.split(",")[1] for row in rows[1:]}
    assert stages == {"vanilla.nopretrain.finetune", "vanilla.pretrain", "vanilla.finetune", "perceiver.pretrain",
                      "perceiver.finetune"}
    r = run_sh("demo", "--world", str(out))
    assert r.returncode == 2 and "wiki.txt is missing" in r.stderr


def test_the_demos_perceiver_bottleneck_covers_every_pretraining_sequence():
    """Bottleneck row i reads input positions 0..i (a causal cross-attention), and the up block lets position t
    read rows 0..t: with fewer rows than a sequence has positions, the end of a long line never reaches the middle
    layers.  Span corruption adds two MASK characters to a line and the model reads all but the last character."""
    import demo

    lines = (ROOT / "src" / "data" / "demo" / "wiki.txt").read_text(encoding="utf-8").splitlines()
    positions = max(len(line) for line in lines) + 2 - 1
    assert positions <= demo.DemoConfig.bottleneck_dim < demo.DemoConfig.block_size
