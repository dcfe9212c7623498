"""The grader's prediction tests check each prediction file against the params submitted with it.

Course-size params (n_layer 4, n_head 8, n_embd 256, block_size 128; ~13 MB) are made here from a random
initialisation, never committed. Their "own" predictions come from the kit's evaluation path
(decoding.predict_places, a key/value-cache decoder), an implementation independent of the grader's check.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SRC, make_world

PLACES_20 = 80  # people in the world: 20 dev and 20 test questions, so 95 % agreement allows one wrong line


def sharpen(net, stoi):
    """Make a random model's greedy answers varied and decisive: larger weights (no near-ties), and the
    newline and PAD characters never chosen (a predicted newline would split a prediction file's line).
    The final LayerNorm's bias gets a direction b; the head rows of the banned characters point against it,
    every other row is made orthogonal to it."""
    import torch

    with torch.no_grad():
        for _, p in net.named_parameters():
            if p.dim() >= 2:
                p.mul_(10)
        b = torch.randn(net.ln_f.bias.shape, generator=torch.Generator().manual_seed(1))
        b /= b.norm()
        net.ln_f.bias.copy_(20 * b)
        w = net.head.weight
        w -= torch.outer(w @ b, b)
        for ch in ("\n", "\u25A1"):
            if ch in stoi:
                w[stoi[ch]] = -w.norm(dim=1).mean() * b


def predictions_of(net, data, split, ds):
    import decoding

    questions = decoding.read_questions(data / ("birth_dev.tsv" if split == "dev" else "birth_test_inputs.tsv"))
    return decoding.predict_places(net, questions, ds, "cpu")


def answers(data, split):
    name = "birth_dev.tsv" if split == "dev" else "birth_test.tsv"
    return [line.split("\t")[1] for line in (data / name).read_text(encoding="utf-8").splitlines()]


def write(path, lines):
    assert all("\n" not in line for line in lines)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def changed(lines, k):
    """lines with the first k changed to a place no random model answers."""
    return ["Atlantis" if i < k else line for i, line in enumerate(lines)]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """(data, src copy with zero accuracy thresholds, folder of own params and predictions)."""
    import torch

    from submission import dataset, helper, model

    root = tmp_path_factory.mktemp("params")
    data = root / "data"
    data.mkdir()
    people = make_world(data, n_people=PLACES_20)
    cut = 3 * len(people) // 4
    (data / "birth_test.tsv").write_text("".join(f"Where was {n} born?\t{p}\n" for n, p in people[cut:]),
                                         encoding="utf-8")
    src = root / "src"
    src.mkdir()
    for name in ("grader.py", "graderUtil.py", "course.py"):
        shutil.copy(SRC / name, src / name)
    shutil.copytree(SRC / "submission", src / "submission",
                    ignore=shutil.ignore_patterns("__pycache__", "*.params", "*.predictions", "*.tmp*"))
    # thresholds of zero: a prediction test then passes exactly when its file matches its params
    table = json.loads((SRC / "points.json").read_text(encoding="utf-8"))
    for row in table["thresholds"]["rows"].values():
        for key in list(row):
            if key.endswith(".predictions"):
                row[key] = {}
    (src / "points.json").write_text(json.dumps(table), encoding="utf-8")

    ds = dataset.CharCorruptionDataset((data / "wiki.txt").read_text(encoding="utf-8"), 128)
    own = root / "own"
    own.mkdir()
    for variant, params in (("vanilla", "vanilla.finetune.params"), ("perceiver", "perceiver.finetune.params")):
        torch.manual_seed(0)
        mconf = model.GPTConfig(ds.vocab_size, 128, n_layer=4, n_head=8, n_embd=256)
        net = (helper.initialize_vanilla_model(mconf) if variant == "vanilla"
               else helper.initialize_perceiver_model(mconf, 32))
        sharpen(net, ds.stoi)
        net.eval()
        state = net.state_dict()
        if variant == "vanilla":  # the course's attention saves a causal `mask` buffer per block
            for k in range(4):
                state[f"blocks.{k}.attn.mask"] = torch.tril(torch.ones(128, 128)).view(1, 1, 128, 128)
        torch.save(state, own / params)
        prefix = "vanilla.pretrain" if variant == "vanilla" else "perceiver.pretrain"
        for split in ("dev", "test"):
            lines = predictions_of(net, data, split, ds)
            assert len(set(lines)) > len(lines) // 2, lines  # answers that depend on the question
            write(own / f"{prefix}.{split}.predictions", lines)
    return data, src, own


def grade(src, data, predictions, *tests):
    out = predictions / "results.json"
    env = {k: v for k, v in os.environ.items() if k != "GRADER_TRUST_PREDICTIONS"}
    proc = subprocess.run([sys.executable, str(src / "grader.py"), *tests, "--json", str(out), "--data-dir",
                           str(data), "--predictions-dir", str(predictions)],
                          capture_output=True, text=True, timeout=600, cwd=str(src), env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {t["number"]: t for t in json.loads(out.read_text(encoding="utf-8"))["tests"]}


def test_prediction_files_are_checked_against_their_params(world, tmp_path):
    data, src, own = world
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(own / "vanilla.finetune.params", sub)
    shutil.copy(own / "perceiver.finetune.params", sub)
    read = {f.name: f.read_text(encoding="utf-8").splitlines() for f in own.glob("*.predictions")}
    # vanilla: the model's own files, one of them with one line in 20 changed (95 % still agree)
    write(sub / "vanilla.pretrain.dev.predictions", read["vanilla.pretrain.dev.predictions"])
    write(sub / "vanilla.pretrain.test.predictions", changed(read["vanilla.pretrain.test.predictions"], 1))
    # perceiver: two lines in 20 changed (90 %), and the answers copied from the answer key
    write(sub / "perceiver.pretrain.dev.predictions", changed(read["perceiver.pretrain.dev.predictions"], 2))
    write(sub / "perceiver.pretrain.test.predictions", answers(data, "test"))
    # no vanilla.model.params beside the nopretrain predictions
    write(sub / "vanilla.nopretrain.dev.predictions", read["vanilla.pretrain.dev.predictions"])
    write(sub / "vanilla.nopretrain.test.predictions", answers(data, "test"))
    t = grade(src, data, sub, "1d", "1f-0-hidden", "1f-1-hidden", "1g-2-hidden", "1g-3-hidden")

    assert t["1f-0-hidden"]["status"] == "passed", t["1f-0-hidden"]["output"]
    assert t["1f-1-hidden"]["status"] == "passed", t["1f-1-hidden"]["output"]
    for tid in ("1g-2-hidden", "1g-3-hidden"):
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0
        assert "does not match perceiver.finetune.params" in t[tid]["output"], t[tid]["output"]
    assert "'Atlantis'" in t["1g-2-hidden"]["output"]
    for tid in ("1d-0-hidden", "1d-1-hidden"):
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0
        assert "earns no accuracy points" in t[tid]["output"]
        assert "vanilla.model.params is missing" in t[tid]["output"], t[tid]["output"]


def test_unloadable_or_misfitting_params_earn_no_accuracy_points(world, tmp_path):
    data, src, own = world
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "vanilla.model.params").write_bytes(b"not a state dict")
    shutil.copy(own / "vanilla.pretrain.dev.predictions", sub / "vanilla.nopretrain.dev.predictions")
    shutil.copy(own / "vanilla.pretrain.dev.predictions", sub / "vanilla.pretrain.dev.predictions")
    shutil.copy(own / "perceiver.finetune.params", sub / "vanilla.finetune.params")  # the other variant's
    t = grade(src, data, sub, "1d-0-hidden", "1f-0-hidden")
    assert t["1d-0-hidden"]["status"] == "failed"
    assert "vanilla.model.params could not be loaded" in t["1d-0-hidden"]["output"], t["1d-0-hidden"]["output"]
    assert t["1f-0-hidden"]["status"] == "failed"
    assert "does not fit the vanilla model" in t["1f-0-hidden"]["output"], t["1f-0-hidden"]["output"]


def test_a_submission_cannot_switch_the_check_off(world, tmp_path):
    """The tests' bypass (GRADER_TRUST_PREDICTIONS) is read before student code runs: a model.py that sets
    it at import time (imported by 1g-0-basic, in the same worker) still has its copied answers checked."""
    data, src, own = world
    cheat = tmp_path / "src"
    shutil.copytree(src, cheat)
    model = cheat / "submission" / "model.py"
    model.write_text('import os\nos.environ["GRADER_TRUST_PREDICTIONS"] = "1"\n' + model.read_text(encoding="utf-8"),
                     encoding="utf-8")
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(own / "perceiver.finetune.params", sub)
    write(sub / "perceiver.pretrain.test.predictions", answers(data, "test"))
    t = grade(cheat, data, sub, "1g-0-basic", "1g-3-hidden")
    assert t["1g-3-hidden"]["status"] == "failed" and t["1g-3-hidden"]["score"] == 0
    assert "does not match perceiver.finetune.params" in t["1g-3-hidden"]["output"], t["1g-3-hidden"]["output"]
