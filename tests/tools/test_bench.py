"""tools/bench/bench.py compares the project's path with a course-style one (tools/bench/bench_course.py); its
course-style datasets must give exactly the project's examples (same spec, same random draws), or the comparison
would not be like for like.  The benchmark itself runs outside CI (python tools/bench/bench.py).
tools/bench/bench_course_loop.py times the course's own loop beside the kit's (where the course's starter is present)."""

import dataclasses
import random
import re
import subprocess
import sys

import bench_course
import bench_course_loop
import pytest
import torch
from conftest import ROOT
from kit import training
from submission.dataset import CharCorruptionDataset, NameDataset


def same_examples(a, b, seed, indices):
    for i in indices:
        random.seed(seed + i)
        x1, y1 = a[i]
        random.seed(seed + i)
        x2, y2 = b[i]
        assert torch.equal(x1, x2) and torch.equal(y1, y2), i


def test_course_style_datasets_give_the_project_examples(world):
    path, _ = world
    vocab = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    names = NameDataset((path / "birth_places_train.tsv").read_text(encoding="utf-8"), vocab)
    same_examples(vocab, bench_course.CourseCharCorruption(vocab), 0, range(len(vocab)))
    same_examples(vocab, bench_course.CourseCharCorruption(vocab), 100, range(len(vocab)))
    same_examples(names, bench_course.CourseNameDataset(names), 0, range(len(names)))


def test_course_data_line_lengths(tmp_path):
    """Lines longer than 3/4 of the block are truncated by both in the same way."""
    text = "\n".join("Ana Smith was born in Paris, studied in Rome and worked in Oslo for " + "x" * n
                     for n in (0, 40, 80, 200)) + "\nWhere was Ana Smith born?\n"
    vocab = CharCorruptionDataset(text, 128)
    same_examples(vocab, bench_course.CourseCharCorruption(vocab), 7, range(len(vocab)))



def test_course_style_loop_trains_the_trainers_math(world):
    """The speed comparison is fair only if both paths train the same thing: the course-style loop (full
    blocks, per-character dataset, a new loader per pass) and Trainer (padding trimmed, one loader) must
    reach the same parameters from the same start, here through a learning-rate warmup and two epochs."""
    from submission.model import GPT
    from submission.trainer import Trainer, TrainerConfig
    from conftest import small_config

    path, _ = world
    vocab = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)
    names = NameDataset((path / "birth_places_train.tsv").read_text(encoding="utf-8"), vocab)
    conf = dict(max_epochs=2, batch_size=7, learning_rate=1e-3, lr_decay=True, warmup_tokens=63 * 7 * 3,
                final_tokens=63 * 7 * 8, num_workers=0, device="cpu", precision="fp32", show_progress=False)

    def model():
        torch.manual_seed(0)
        return GPT(small_config(vocab.vocab_size, dropout=0.0))  # trimmed and full blocks draw different dropout

    ours = Trainer(model(), names, None, TrainerConfig(**conf))
    ours.train()
    course = bench_course.CourseStyleTrainer(model(), bench_course.CourseNameDataset(names), TrainerConfig(**conf),
                                             torch.device("cpu"))
    for _ in range(conf["max_epochs"]):
        for x, y in course.loader:
            course.step(x, y)
    assert course.tokens == ours.tokens == 2 * len(names) * 63
    theirs = dict(course.model.named_parameters())
    for name, p in ours.model.named_parameters():
        assert torch.allclose(p, theirs[name], atol=1e-5), name


@pytest.mark.parametrize("path", ["default", "course"])
def test_part_e_measures_a_step_in_a_fresh_run_of_the_script(world, path):
    """Part (e)'s measurements run tools/bench/bench.py itself, with its hidden --memory-child, in a process of their
    own (bench_memory.BENCH): run as part (e) runs it, the script trains two steps of the course's model on the
    world's corpus and prints the memory they added, one whole number of MiB."""
    import bench_memory

    data, _ = world
    cmd = [sys.executable, str(bench_memory.BENCH), "--memory-child", "perceiver", path, str(data), "--device", "cpu"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert re.fullmatch(r"-?\d+", (r.stdout.strip().splitlines() or [""])[-1]), r.stdout[-500:]


COURSE_STARTER = ROOT.parent / "shared" / "course-starter"


@pytest.mark.slow  # the course-size model, two epochs on each side
@pytest.mark.skipif(not (COURSE_STARTER / "submission" / "trainer.py").is_file(),
                    reason="the course's starter is not present")
def test_the_course_loop_benchmark_times_both_loops_and_writes_its_results(world, tmp_path):
    """bench_course_loop.py on the world's corpus (one step an epoch): both loops run their epochs, the whole
    pretraining is estimated from the helper's 650 epochs, and the results file holds what tools/gpu_session.sh
    brings back."""
    import json

    data, _ = world
    out = tmp_path / "speed.json"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "bench_course_loop.py"), "--course-starter",
                        str(COURSE_STARTER), "--data", str(data), "--epochs", "2", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["kind"] == "cs224n-course-loop-speed" and results["device"]["type"] == "cpu"
    assert results["lines"] == 41 and results["steps_per_epoch"] == 1 and results["full_epochs"] == 650
    assert results["kit"]["precision"] == training.resolve_precision(torch.device("cpu"), "auto")
    for side in ("course", "kit"):
        timed = results[side]
        assert len(timed["epoch_seconds"]) == 2 and all(t > 0 for t in timed["epoch_seconds"])
        first, median = timed["epoch_seconds"]
        assert timed["full_pretraining_minutes"] == pytest.approx((first + 649 * median) / 60, abs=0.01)
    speedup = results["course"]["median_epoch_seconds"] / results["kit"]["median_epoch_seconds"]
    assert results["epoch_speedup"] == pytest.approx(speedup, abs=0.01)


def test_the_course_loop_benchmark_refuses_a_folder_without_the_course_s_files(tmp_path, capsys):
    assert bench_course_loop.main(["--course-starter", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not the course's starter" in err


@pytest.mark.slow  # three course-size perceivers, two epochs each
def test_the_learning_arms_each_change_their_one_thing_and_report_every_epoch(tmp_path, capsys):
    """bench_learning.py (tools/gpu_session.sh runs it before any training on a GPU): each arm trains in a process
    of its own, and the results file gives each arm's device, numerics, the kernels its step ran and one mean loss
    per epoch; a CUDA-only arm says it was skipped."""
    import json
    import math

    out = tmp_path / "learning.json"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "bench_learning.py"), "--epochs", "2",
                        "--lines", "64", "--arms", "default,fused-fp32,fused-no-attn-drop,cudnn", "--no-gradients",
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["kind"] == "cs224n-learning-arms" and results["epochs"] == 2 and results["gradients"] is None
    arms = {a["arm"]: a for a in results["arms"]}
    assert list(arms) == ["default", "fused-fp32", "fused-no-attn-drop", "cudnn"]
    assert arms["cudnn"] == {"arm": "cudnn", "skipped": "needs CUDA"}
    assert arms["default"]["numerics"] == dataclasses.asdict(training.resolve_numerics(torch.device("cpu"), "auto"))
    assert arms["fused-fp32"]["numerics"]["precision"] == "fp32"
    for name in ("default", "fused-fp32", "fused-no-attn-drop"):
        arm = arms[name]
        assert arm["device"] == "cpu" and len(arm["epoch_loss"]) == 2 and all(map(math.isfinite, arm["epoch_loss"]))
        assert any("attention" in k for k in arm["kernels"]) and any("adam" in k.lower() for k in arm["kernels"])
        # 64 lines make one step an epoch: the check comes at step 100, which two epochs cannot reach
        assert arm["check_epoch"] == 100 and arm["watch"] is None
    # the same seed and batches: the first step is the same everywhere, so only the dropout's draws tell the arm
    # without attention dropout from the default
    assert arms["fused-no-attn-drop"]["epoch_loss"] != arms["default"]["epoch_loss"]
    assert r.stdout.count("\n") == 4 and r.stdout.startswith("default")
    assert "cudnn               skipped: needs CUDA" in r.stdout
    # tools/gpu_session.sh asks whether the default learned (bench_learning.py --learned default FILE, whose exit
    # status is main's): two epochs cannot say, so it did not
    import bench_learning

    assert bench_learning.main(["--learned", "default", str(out)]) == 1
    assert capsys.readouterr().out == "default: too few epochs to say\n"
    results["arms"][0].update(watch="off the plateau")
    out.write_text(json.dumps(results), encoding="utf-8")
    assert bench_learning.main(["--learned", "default", str(out)]) == 0
    assert capsys.readouterr().out == "default: off the plateau\n"


def test_the_learning_arms_train_to_the_watch_s_check_of_the_course_s_pretraining_by_default():
    """The arms' 20 epochs are where the learning watch checks the course's pretraining on the built-in data."""
    import math

    import bench_learning
    from kit import watch

    corpus = bench_learning.pretraining_corpus(ROOT / "src" / "data")
    check = watch.plateau_check_epoch(bench_learning.COURSE_EPOCHS, math.ceil(len(corpus) / 128))
    assert bench_learning.CHECK_EPOCH == check == 20


def test_the_gradient_check_compares_each_tensor_and_sees_a_mask_that_changes(monkeypatch):
    """bench_learning.attention_gradients, at a small batch on the CPU: the formula written out and the math backend
    agree with float64 in every tensor, at a self- and a cross-attention shape; a kernel whose keys get no gradient
    is off in the keys' tensors alone, and a dropout that draws another mask for its backward pass is seen."""
    import bench_learning

    for tq, tk, self_attention in [(64, 64, True), (32, 98, False)]:
        for r in bench_learning.attention_gradients("cpu", ["written", "math"], tq, tk, self_attention, batch=4):
            assert r["worst_error"] < 1e-4 and not r["not_finite"] and r["dropout_mask_mismatch"] < 1e-5, r
    attend = bench_learning.attention._AttentionBase.attend
    monkeypatch.setattr(bench_learning.attention._AttentionBase, "attend",
                        lambda self, q, k, v, mask: attend(self, q, k.detach(), v, mask))
    [r] = bench_learning.attention_gradients("cpu", ["written"], 64, 64, True, batch=4)
    assert r["errors"]["key.weight"] == pytest.approx(1.0) and r["errors"]["value.weight"] < 1e-4, r
    monkeypatch.setattr(bench_learning.attention._AttentionBase, "attend", bench_learning.attend_with_another_mask)
    [r] = bench_learning.attention_gradients("cpu", ["written"], 64, 64, True, batch=4)
    assert r["worst_error"] < 1e-4 and r["dropout_mask_mismatch"] > 1e-3, r


def test_the_learning_arms_refuse_an_arm_they_do_not_know(capsys):
    import bench_learning

    with pytest.raises(SystemExit) as e:
        bench_learning.main(["--arms", "default,no-such-arm"])
    assert e.value.code == 2 and "unknown arm no-such-arm" in capsys.readouterr().err


SUITE_CPU_TESTS = '''
import subprocess
import sys
import time


def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_in_its_own_process():
    burn(0.3)


def test_in_a_child():
    subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.3\\n"
                    "while time.process_time() < end: pass"], check=True)
'''


def test_the_suites_cpu_is_recorded_per_test_its_childrens_included(tmp_path):
    """tools/bench/suite_cpu.py, the plugin that measures where the suite's CPU goes: each test's CPU seconds in
    its own process and in the children it reaped, and the summary by layer, file and test."""
    import json

    import suite_cpu

    (tmp_path / "test_burn.py").write_text(SUITE_CPU_TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the suite's: no xdist, no paths
    records = tmp_path / "records"
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("PYTEST_")}  # not a worker's
    env.update(SUITE_CPU_DIR=str(records), PYTHONPATH=str(ROOT / "tools" / "bench"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-c", str(tmp_path / "pytest.ini"), "-p", "suite_cpu",
                        "-p", "no:cacheprovider", str(tmp_path / "test_burn.py")],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    got = {json.loads(line)["test"].split("::")[1]: json.loads(line)
           for line in (records / "main.jsonl").read_text(encoding="utf-8").splitlines()}
    assert got["test_in_its_own_process"]["self"] >= 0.25 and got["test_in_its_own_process"]["children"] < 0.2
    assert got["test_in_a_child"]["children"] >= 0.25 and got["test_in_a_child"]["self"] < 0.2
    lines = suite_cpu.summary(records, 5)
    assert lines[0].startswith("2 tests: ") and any(line.endswith("test_burn.py::test_in_a_child") for line in lines)


@pytest.mark.slow
def test_the_layout_benchmark_trains_each_construction_and_reads_both_statistics(world, tmp_path, capsys):
    """tools/bench/bench_layout_fit.py, rehearsed on the tests' small world (2 steps): it trains on the former
    judge's one layout (every example the line cut to 64 characters, its middle quarter masked) or on the course's
    own dataset, and measures the pretraining record in that layout and in the judge's drawn ones, beside the
    course row's bars."""
    import json

    import bench_layout_fit
    from checks import learned

    data, _ = world
    line = "Ada Najjar. Ada Najjar was born in Lima and later worked in Oslo, in Bergen, then in Trondheim."
    (data / "wiki.txt").write_text((data / "wiki.txt").read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    stoi = CharCorruptionDataset((data / "wiki.txt").read_text(encoding="utf-8"), 128).stoi
    fixed = bench_layout_fit.FixedCorpus(data / "wiki.txt", stoi)
    x, y = fixed[len(fixed) - 1]
    want = learned.corrupted([stoi[ch] for ch in line], fixed.mask, learned.Layout(64, 24, 16)) + [fixed.mask]
    example = torch.cat([x[:1], y]).tolist()
    assert len(example) == 128 and example[:len(want)] == want and set(example[len(want):]) == {0}
    for layout in ("fixed", "course"):
        out = tmp_path / f"{layout}.json"
        bench_layout_fit.main(["--data", str(data), "--steps", "2", "--every", "2", "--layout", layout,
                               "--json", str(out), "--snapshots", str(tmp_path / layout)])
        assert [f.name for f in (tmp_path / layout).iterdir()] == ["step-2.vanilla.pretrain.params"]
        result = json.loads(out.read_text(encoding="utf-8"))
        assert result["layout"] == layout and [r["step"] for r in result["rows"]] == [2]
        row = result["rows"][0]
        assert set(result["bars"]) == {"gain", "share", "bigram_gain"}
        assert row["fixed"]["lines"] == row["drawn"]["lines"] > 0 and row["fixed"] != row["drawn"]
        assert row["passes_fixed"] is row["passes_drawn"] is row["passes_judged"] is False  # 2 steps learn nothing
        assert set(row["places"]) == set(learned.PLACES) and row["places"]["drawn"] == row["drawn"]
        assert row["judged"] == max(row["places"].values(), key=learned.fit_score)  # none passes: the best fit
    assert "step     2" in capsys.readouterr().out


def test_the_layout_benchmark_pretrains_with_the_dataset_it_is_given(world, tmp_path):
    """--dataset FILE: the pretraining draws its examples from that dataset.py's CharCorruptionDataset (a student's
    reading of the spec), not the reference's; it goes with --layout course alone."""
    import bench_layout_fit

    data, _ = world
    theirs = tmp_path / "dataset.py"
    theirs.write_text((ROOT / "src" / "submission" / "dataset.py").read_text(encoding="utf-8") + """

def _their_getitem(self, idx):
    raise RuntimeError(f"their reading drew line {idx}")


CharCorruptionDataset.__getitem__ = _their_getitem
""", encoding="utf-8")
    with pytest.raises(RuntimeError, match="their reading drew line"):
        bench_layout_fit.main(["--data", str(data), "--steps", "1", "--layout", "course", "--dataset", str(theirs)])
    with pytest.raises(SystemExit):
        bench_layout_fit.main(["--data", str(data), "--steps", "1", "--layout", "fixed", "--dataset", str(theirs)])
