"""run.py and run.sh end to end on a tiny world in a temporary folder."""

import os
import subprocess
import sys

import pytest
import torch

from conftest import ROOT

SMALL_FLAGS = ["--n_layer", "2", "--n_head", "2", "--n_embd", "32", "--block_size", "64", "--bottleneck_dim", "8",
               "--max_epochs", "2", "--batch_size", "16", "--num_workers", "0", "--no_progress"]


def run_py(*args):
    return subprocess.run([sys.executable, str(ROOT / "src" / "run.py"), *args], capture_output=True, text=True,
                          timeout=300)


def run_sh(*args, env=None):
    return subprocess.run(["bash", str(ROOT / "run.sh"), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})}, cwd="/")


@pytest.mark.parametrize("variant", ["vanilla", "perceiver"])
def test_pretrain_finetune_evaluate(world, variant):
    path, people = world
    common = ["--variant", variant, "--pretrain_corpus_path", str(path / "wiki.txt"), *SMALL_FLAGS]
    # --compile is accepted everywhere; without CUDA it says it is ignored
    r = run_py("--function", "pretrain", "--writing_params_path", str(path / "pre.params"), "--compile", *common)
    assert r.returncode == 0, r.stderr
    assert ("--compile only applies on CUDA" in r.stderr) != torch.cuda.is_available()
    r = run_py("--function", "finetune", "--reading_params_path", str(path / "pre.params"),
               "--writing_params_path", str(path / "ft.params"),
               "--finetune_corpus_path", str(path / "birth_places_train.tsv"), *common)
    assert r.returncode == 0, r.stderr
    r = run_py("--function", "evaluate", "--reading_params_path", str(path / "ft.params"),
               "--eval_corpus_path", str(path / "birth_dev.tsv"), "--outputs_path", str(path / "dev.pred"), *common)
    assert r.returncode == 0, r.stderr
    n_dev = len((path / "birth_dev.tsv").read_text().splitlines())
    assert len((path / "dev.pred").read_text(encoding="utf-8").split("\n")) == n_dev + 1  # one line each
    assert f"out of {n_dev}:" in r.stdout and r.stdout.startswith("Correct: ")
    r = run_py("--function", "evaluate", "--reading_params_path", str(path / "ft.params"),
               "--eval_corpus_path", str(path / "birth_test_inputs.tsv"), "--outputs_path", str(path / "t.pred"),
               *common)
    assert r.returncode == 0 and "no answers provided" in r.stdout
    assert len((path / "t.pred").read_text(encoding="utf-8").splitlines()) == n_dev


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
    assert r.returncode == 1 and "wiki.txt is missing" in r.stderr


TARGETS = """vanilla_finetune_without_pretrain vanilla_eval_dev_without_pretrain vanilla_eval_test_without_pretrain
vanilla_pretrain vanilla_finetune_with_pretrain vanilla_eval_dev_with_pretrain vanilla_eval_test_with_pretrain
perceiver_pretrain perceiver_finetune_with_pretrain perceiver_eval_dev_with_pretrain
perceiver_eval_test_with_pretrain""".split()

DELIVERABLES = ["vanilla.model.params", "vanilla.nopretrain.dev.predictions", "vanilla.nopretrain.test.predictions",
                "vanilla.pretrain.params", "vanilla.finetune.params", "vanilla.pretrain.dev.predictions",
                "vanilla.pretrain.test.predictions", "perceiver.pretrain.params", "perceiver.finetune.params",
                "perceiver.pretrain.dev.predictions", "perceiver.pretrain.test.predictions"]


def test_all_targets_in_sequence(world, tmp_path_factory):
    data, _ = world
    out = tmp_path_factory.mktemp("out")
    env = {"DATA_DIR": str(data), "OUT_DIR": str(out)}
    for target in TARGETS:
        r = run_sh(target, *SMALL_FLAGS, env=env)
        assert r.returncode == 0, f"{target}: {r.stderr[-2000:]}"
    # besides the deliverables: each trained params file's loss log (checkpoints are gone once params are saved)
    logs = sorted(p.name for p in out.iterdir() if p.name.endswith(".log.csv"))
    assert logs == sorted(f"{name}.log.csv" for name in DELIVERABLES if name.endswith(".params"))
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith(".log.csv")) == sorted(DELIVERABLES)
    r = run_sh("london_baseline", env=env)
    assert r.returncode == 0 and "Correct:" in r.stdout
    zip_path = tmp_path_factory.mktemp("zip") / "submission.zip"
    r = run_sh("collect_submission", "--out", str(zip_path), env=env)
    assert r.returncode == 0 and zip_path.exists() and "missing" not in r.stdout


def test_demo_pipeline_smoke(world, tmp_path_factory):
    data, _ = world
    out = tmp_path_factory.mktemp("demo")
    r = run_sh("demo", "--smoke", "--world", str(data), "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    for stage in ["baseline (always", "vanilla, no pretraining", "vanilla, pretrain + finetune",
                  "perceiver, pretrain + finetune"]:
        assert stage in r.stdout
    rows = (out / "losses.csv").read_text().splitlines()
    assert rows[0] == "seed,stage,step,epoch,loss,lr"
    stages = {row.split(",")[1] for row in rows[1:]}
    assert stages == {"vanilla.nopretrain.finetune", "vanilla.pretrain", "vanilla.finetune", "perceiver.pretrain",
                      "perceiver.finetune"}
    r = run_sh("demo", "--world", str(out))
    assert r.returncode == 2 and "wiki.txt is missing" in r.stderr
