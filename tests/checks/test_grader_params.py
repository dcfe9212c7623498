"""The grader's prediction tests grade each prediction file with the params submitted with it, in the judge.

Course-size params (n_layer 4, n_head 8, n_embd 256, block_size 128; ~13 MB) are made here from a random
initialisation (tests/course_params.py), never committed.  Their "own" predictions come from the kit's
evaluation path (decoding.predict_places, a key/value-cache decoder), an implementation independent of the
grader's (checks/predictions.py).
"""

import importlib.util
import json
import math
import shutil
import subprocess
import sys

import pytest

import course_params
from conftest import SRC, make_world
from course_params import write_lines as write
from gradings import copy_src, make_solution
from test_grader import OTHER_BLOCKS

# one xdist worker runs this module, so that its course-size params (the world fixture) are made once
pytestmark = pytest.mark.xdist_group("course-params")

PLACES_20 = 80  # people in the world: 20 dev and 20 test questions


def answers(data, split):
    name = "birth_dev.tsv" if split == "dev" else "birth_test.tsv"
    return [line.split("\t")[1] for line in (data / name).read_text(encoding="utf-8").splitlines()]


def changed(lines, k):
    """lines with the first k changed to a place no random model answers."""
    return ["Atlantis" if i < k else line for i, line in enumerate(lines)]


def zero_thresholds(src, learned=False):
    """Thresholds of zero and, unless learned, no check that the params learned their task: a prediction test then
    passes exactly when its file matches its params."""
    table = json.loads((src / "points.json").read_text(encoding="utf-8"))
    for row in table["thresholds"]["rows"].values():
        for key in list(row):
            if key.endswith(".predictions"):
                row[key] = {}
        if not learned:
            row.pop("learned", None)
    (src / "points.json").write_text(json.dumps(table), encoding="utf-8")


def own_files(net, data, folder, params, prefix):
    """Save net as params in folder and write its own predictions for dev and test as prefix.*.predictions."""
    stoi = course_params.vocab(data)
    course_params.save(net, folder / params)
    for split in ("dev", "test"):
        lines = course_params.own_predictions(net, course_params.questions(data, split), stoi, data)
        assert len(set(lines)) > len(lines) // 2, lines  # answers that depend on the question
        write(folder / f"{prefix}.{split}.predictions", lines)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """(data, src copy with zero accuracy thresholds, folder of own params and predictions, solution)."""
    root = tmp_path_factory.mktemp("params")
    data = root / "data"
    data.mkdir()
    make_world(data, n_people=PLACES_20, held_out=True)
    src = copy_src(root)
    zero_thresholds(src)
    stoi = course_params.vocab(data)
    own = root / "own"
    own.mkdir()
    own_files(course_params.course_net("vanilla", stoi), data, own, "vanilla.finetune.params", "vanilla.pretrain")
    own_files(course_params.course_net("perceiver", stoi), data, own, "perceiver.finetune.params",
              "perceiver.pretrain")
    return data, src, own, make_solution(root / "reference")


def grade(src, data, predictions, solution, *tests):
    out = predictions / "results.json"
    proc = subprocess.run([sys.executable, str(src / "grader.py"), *tests, "--json", str(out), "--data-dir",
                           str(data), "--predictions-dir", str(predictions), "--solution-dir", str(solution)],
                          capture_output=True, text=True, timeout=600, cwd=str(src))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {t["number"]: t for t in json.loads(out.read_text(encoding="utf-8"))["tests"]}


@pytest.mark.grader
def test_prediction_files_are_checked_against_their_params(world, tmp_path):
    data, src, own, solution = world
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(own / "vanilla.finetune.params", sub)
    shutil.copy(own / "perceiver.finetune.params", sub)
    read = {f.name: f.read_text(encoding="utf-8").splitlines() for f in own.glob("*.predictions")}
    # vanilla: the model's own files, one of them with one line changed: within the slack, counted as wrong
    write(sub / "vanilla.pretrain.dev.predictions", read["vanilla.pretrain.dev.predictions"])
    write(sub / "vanilla.pretrain.test.predictions", changed(read["vanilla.pretrain.test.predictions"], 1))
    # perceiver: three lines in 20 changed (more than the slack of 2), and the answers copied from the key
    write(sub / "perceiver.pretrain.dev.predictions", changed(read["perceiver.pretrain.dev.predictions"], 3))
    write(sub / "perceiver.pretrain.test.predictions", answers(data, "test"))
    # no vanilla.model.params beside the nopretrain predictions
    write(sub / "vanilla.nopretrain.dev.predictions", read["vanilla.pretrain.dev.predictions"])
    write(sub / "vanilla.nopretrain.test.predictions", answers(data, "test"))
    t = grade(src, data, sub, solution, "1d", "1f-1-hidden", "1f-2-hidden", "1g-1-hidden", "1g-2-hidden")

    assert t["1f-1-hidden"]["status"] == "passed", t["1f-1-hidden"]["output"]
    assert t["1f-2-hidden"]["status"] == "passed", t["1f-2-hidden"]["output"]
    assert "1 line that vanilla.finetune.params does not give (line 1 first) counted as wrong" in \
        t["1f-2-hidden"]["output"], t["1f-2-hidden"]["output"]
    for tid in ("1g-1-hidden", "1g-2-hidden"):
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0
        assert "does not match perceiver.finetune.params" in t[tid]["output"], t[tid]["output"]
    assert "differ on 3 of 20 lines (at most 2 may" in t["1g-1-hidden"]["output"], t["1g-1-hidden"]["output"]
    assert "line 1: the file says 'Atlantis'" in t["1g-1-hidden"]["output"]
    for tid in ("1d-0-hidden", "1d-1-hidden"):
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0
        assert "earns no accuracy points" in t[tid]["output"]
        assert "vanilla.model.params is missing" in t[tid]["output"], t[tid]["output"]


@pytest.mark.grader
def test_unloadable_or_misfitting_params_earn_no_accuracy_points(world, tmp_path):
    data, src, own, solution = world
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "vanilla.model.params").write_bytes(b"not a state dict")
    shutil.copy(own / "vanilla.pretrain.dev.predictions", sub / "vanilla.nopretrain.dev.predictions")
    shutil.copy(own / "vanilla.pretrain.dev.predictions", sub / "vanilla.pretrain.dev.predictions")
    shutil.copy(own / "perceiver.finetune.params", sub / "vanilla.finetune.params")  # the other variant's
    shutil.copy(own / "vanilla.finetune.params", sub / "perceiver.finetune.params")  # and the other way round
    shutil.copy(own / "perceiver.pretrain.dev.predictions", sub)
    t = grade(src, data, sub, solution, "1d-0-hidden", "1f-1-hidden", "1g-1-hidden")
    assert t["1d-0-hidden"]["status"] == "failed"
    assert "vanilla.model.params could not be loaded" in t["1d-0-hidden"]["output"], t["1d-0-hidden"]["output"]
    assert t["1f-1-hidden"]["status"] == "failed"
    assert "does not fit the vanilla model" in t["1f-1-hidden"]["output"], t["1f-1-hidden"]["output"]
    assert t["1g-1-hidden"]["status"] == "failed"
    out = t["1g-1-hidden"]["output"]
    assert "does not fit the course's perceiver as the handout describes it" in out or \
        "does not fit the perceiver model" in out, out


CHEAT = '''
import os as _os, sys as _sys
_os.environ["GRADER_TRUST_PREDICTIONS"] = "1"  # the switch the grader's tests once had
for _name in ("checks.predictions", "__main__"):  # and the check itself, in this process
    _mod = _sys.modules.get(_name)
    if _mod is not None and hasattr(_mod, "params_agreement"):
        _mod.params_agreement = lambda *a, **k: [True] * 10 ** 6
'''


@pytest.mark.grader
def test_a_submission_cannot_switch_the_check_off(world, tmp_path):
    """A model.py that sets the old bypass and patches the check in its own process (imported by 1g-3-basic, in
    the same worker as the prediction test's student side) changes nothing: the judge decides."""
    data, src, own, solution = world
    cheat = tmp_path / "src"
    shutil.copytree(src, cheat)
    model = cheat / "submission" / "model.py"
    model.write_text(CHEAT + model.read_text(encoding="utf-8"), encoding="utf-8")
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(own / "perceiver.finetune.params", sub)
    write(sub / "perceiver.pretrain.test.predictions", answers(data, "test"))
    t = grade(cheat, data, sub, solution, "1g-3-basic", "1g-2-hidden")
    assert t["1g-2-hidden"]["status"] == "failed" and t["1g-2-hidden"]["score"] == 0
    assert "does not match perceiver.finetune.params" in t["1g-2-hidden"]["output"], t["1g-2-hidden"]["output"]


# The attack: GPT.forward looks one token ahead when a magic value sits in the params, so that feeding
# question + MASK + the file's answer "shows" that the answer is the model's greedy one.  The answers
# themselves come from anywhere (here: the answer key).
PEEK = '''
_honest_forward = GPT.forward


def _peeking_forward(self, idx, targets=None):
    logits, loss = _honest_forward(self, idx, targets)
    if float(self.ln_f.bias[0]) == 1234.5:  # the magic value
        ahead = torch.cat([idx[:, 1:], torch.ones_like(idx[:, :1])], dim=1)  # the next token; MASK (id 1) last
        logits = torch.nn.functional.one_hot(ahead, logits.size(-1)).float() * 100
    return logits, loss


GPT.forward = _peeking_forward
'''


@pytest.mark.grader
def test_a_forward_that_looks_ahead_earns_no_prediction_points(world, tmp_path):
    data, src, own, solution = world
    cheat = tmp_path / "src"
    shutil.copytree(src, cheat)
    model = cheat / "submission" / "model.py"
    model.write_text(model.read_text(encoding="utf-8") + PEEK, encoding="utf-8")
    import torch

    sub = tmp_path / "sub"
    sub.mkdir()
    state = torch.load(own / "vanilla.finetune.params", weights_only=True)
    state["ln_f.bias"][0] = 1234.5
    torch.save(state, sub / "vanilla.finetune.params")
    for split in ("dev", "test"):
        write(sub / f"vanilla.pretrain.{split}.predictions", answers(data, split))
    t = grade(cheat, data, sub, solution, "1f-1-hidden", "1f-2-hidden")
    for tid in ("1f-1-hidden", "1f-2-hidden"):
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0, t[tid]
        assert "does not match vanilla.finetune.params" in t[tid]["output"], t[tid]["output"]


@pytest.mark.grader
def test_swapped_lines_in_an_untrained_perceivers_file_do_not_pass_its_thresholds(world, tmp_path):
    """The issue's other attack, scaled to 20 questions: an untrained perceiver's own files with one line in 20
    (5 %, the old slack) swapped for the right answer.  Its thresholds (2.4 % dev, 2.0 % test: the course
    row's) need one right line; a swapped line is one the params do not give, so it counts as wrong."""
    data, _, own, solution = world
    src = copy_src(tmp_path)  # the real thresholds
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(own / "perceiver.finetune.params", sub)
    for split in ("dev", "test"):
        lines = (own / f"perceiver.pretrain.{split}.predictions").read_text(encoding="utf-8").splitlines()
        assert not set(lines) & set(answers(data, split))  # untrained: nothing right
        write(sub / f"perceiver.pretrain.{split}.predictions", answers(data, split)[:1] + lines[1:])
    t = grade(src, data, sub, solution, "1g-1-hidden", "1g-2-hidden")
    for tid in ("1g-1-hidden", "1g-2-hidden"):
        out = t[tid]["output"]
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0, out
        assert "0/20 correct (0.00%); 1 line that perceiver.finetune.params does not give" in out, out


@pytest.mark.grader
def test_a_model_made_by_hand_that_learned_nothing_earns_no_prediction_points(world, tmp_path):
    """The issue's attack: params written by a script, no training, whose greedy answer is one frequent place for
    every question, with the prediction files they produce.  Without the check of learning (the "learned"
    section of the thresholds row removed) they pass every prediction test whose bar a constant answer clears;
    with it, none: the params answer no more of their own training questions than that constant, and have not
    read the corpus."""
    data, _, _, solution = world
    place = "Paris"
    stoi = course_params.vocab(data)
    sub = tmp_path / "sub"
    sub.mkdir()
    for variant, names in course_params.PARAMS.items():
        net = course_params.constant_answer_net(variant, stoi, place)
        for name in names:
            course_params.save(net, sub / name)
        assert set(course_params.own_predictions(net, course_params.questions(data, "dev"), stoi, data)) == {place}
    for prefix in course_params.PREDICTIONS:
        for split in ("dev", "test"):
            write(sub / f"{prefix}.{split}.predictions", [place] * 20)
    share = {split: answers(data, split).count(place) / 20 for split in ("dev", "test")}
    assert min(share.values()) >= 0.1, share  # a constant that clears every bar of the course's row
    tests = ("1d-0-hidden", "1d-1-hidden", "1f-1-hidden", "1f-2-hidden", "1g-1-hidden", "1g-2-hidden")

    unchecked = copy_src(tmp_path / "unchecked")
    table = json.loads((unchecked / "points.json").read_text(encoding="utf-8"))
    for row in table["thresholds"]["rows"].values():
        row.pop("learned", None)
    (unchecked / "points.json").write_text(json.dumps(table), encoding="utf-8")
    t = grade(unchecked, data, sub, solution, *tests)
    assert all(t[tid]["status"] == "passed" for tid in tests), {tid: t[tid]["output"] for tid in tests}

    t = grade(copy_src(tmp_path / "checked"), data, sub, solution, *tests)
    for tid in tests:
        out = t[tid]["output"]
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0, out
        assert "earns no accuracy points" in out and "it has not learned them" in out, out
        # it ignores the question: no row gains anything
        assert "0.00 nats more probable after their own question" in out and "0.0 standard errors from 0" in out, out
        assert "to every one gets" in out, out  # what the best constant answer gets, for comparison


def student_model(src):
    """The student's model module of a copied src (its own package name: the kit's `submission` stays)."""
    pkg = f"student_{abs(hash(str(src)))}"
    spec = importlib.util.spec_from_file_location(pkg, src / "submission" / "__init__.py",
                                                  submodule_search_locations=[str(src / "submission")])
    module = importlib.util.module_from_spec(spec)
    sys.modules[pkg] = module
    spec.loader.exec_module(module)
    return importlib.import_module(f"{pkg}.model")


@pytest.mark.grader
@pytest.mark.parametrize("variant", ["other attribute names", "layer norm on both, a third LayerNorm"])
def test_a_perceiver_with_its_own_attribute_names_earns_the_prediction_points(world, tmp_path, variant):
    """The perceiver's blocks are the student's: their parameters are found by name, shape and order, in each
    reading the grader accepts (here two of tests/checks/test_grader.py's OTHER_BLOCKS)."""
    import torch

    data, _, _, solution = world
    src = copy_src(tmp_path, append={"model.py": OTHER_BLOCKS[variant]})
    zero_thresholds(src)
    model = student_model(src)
    stoi = course_params.vocab(data)
    torch.manual_seed(0)
    mconf = model.GPTConfig(len(stoi), 128, n_layer=4, n_head=8, n_embd=256)
    mconf.perceiver, mconf.bottleneck_dim = True, 32
    net = model.GPT(mconf)
    assert any("basis" in k for k in net.state_dict())
    course_params.sharpen(net, stoi)
    sub = tmp_path / "sub"
    sub.mkdir()
    own_files(net.eval(), data, sub, "perceiver.finetune.params", "perceiver.pretrain")
    t = grade(src, data, sub, solution, "1g-1-hidden", "1g-2-hidden")
    for tid in ("1g-1-hidden", "1g-2-hidden"):
        assert t[tid]["status"] == "passed", t[tid]["output"]
        assert "does not give" not in t[tid]["output"], t[tid]["output"]


def test_the_judges_decoder_answers_as_the_course_does(world):
    """checks.predictions' decoder (key/value cache, batches, its own forward pass) against the kit's
    (decoding.predict_places; the course's one-question loop where the context is cropped): questions shorter
    than the perceiver's bottleneck, ordinary ones, and ones so long that 32 answer characters cross the block
    size of 128."""
    import random

    from checks import decoder
    from checks import params
    from checks import predictions as gp

    data, *_ = world
    stoi = course_params.vocab(data)
    letters = sorted(ch for ch in stoi if ch.isalpha())
    rng = random.Random(5)
    questions = ["".join(rng.choice(letters + [" "]) for _ in range(n)) + "?" for n in (3, 20, 31, 32, 33, 40, 40,
                                                                                     70, 100, 110, 126)]

    class Judge:  # what checks.params asks of a judge's context: the reference and a cache
        cache = {}

        @staticmethod
        def solution(name):
            return importlib.import_module(f"submission.{name}")

    for variant in ("vanilla", "perceiver"):
        net = course_params.course_net(variant, stoi, seed=3)
        want = course_params.own_predictions(net, questions, stoi, data)
        state = {k: v.float() for k, v in net.state_dict().items()}
        fitted = params.fit(state, params.reference_model(Judge, variant, len(stoi)), variant, "p",
                                  len(stoi))
        chosen = params.weights(fitted, *gp.choose_pair(fitted, questions, want, stoi))
        assert decoder.greedy_answers(chosen, questions, stoi) == want, variant


def test_projection_names_are_read_as_students_write_them():
    from checks import params as gp

    names = {"key": "k", "query": "q", "value": "v", "proj": "o", "wq": "q", "W_K": "k", "to_v": "v", "out": "o",
             "q_proj": "q", "k_proj": "k", "value_proj": "v", "out_proj": "o", "c_proj": "o", "fc_out": "o",
             "attn.query_layer": "q", "mlp": None, "cross": None}
    assert {n: gp._attention_role(n) for n in names} == names


def test_every_accepted_perceiver_reading_is_one_the_judge_can_load(tmp_path):
    """Each correct perceiver of tests/checks/test_grader.py's OTHER_BLOCKS, at the course's size: the judge maps its
    params onto the course's model (params.fit) and one of its readings gives the student model's
    own logits, so the prediction check can follow whatever reading the student wrote."""
    import torch

    from checks import decoder
    from checks import params as gp

    reference = student_model(copy_src(tmp_path / "reference"))
    vocab = 60
    mconf = reference.GPTConfig(vocab, 128, n_layer=4, n_head=8, n_embd=256)
    mconf.perceiver, mconf.bottleneck_dim = True, 32
    torch.manual_seed(0)
    ref_net = reference.GPT(mconf).eval()
    idx = torch.randint(0, vocab, (2, 45), generator=torch.Generator().manual_seed(4))
    for k, (variant, code) in enumerate(sorted(OTHER_BLOCKS.items())):
        model = student_model(copy_src(tmp_path / f"v{k}", append={"model.py": code}))
        torch.manual_seed(1)
        net = model.GPT(mconf).eval()
        state = {name: v.detach().float() for name, v in net.state_dict().items() if v.is_floating_point()}
        with torch.no_grad():
            want = net(idx)[0].float()
            fitted = gp.fit(state, ref_net, "perceiver", "perceiver.finetune.params", vocab)
            pairs = [(i, j) for i in range(len(fitted[1])) for j in range(len(fitted[2]))]
            assert any(torch.allclose(decoder.logits(gp.weights(fitted, *pair), idx), want, atol=1e-4)
                       for pair in pairs), variant


def test_a_search_over_the_perceivers_readings_computes_each_bottleneck_once(monkeypatch):
    """The judge's search over the readings of a perceiver's blocks (decoder.logits with `shared`, through
    learned.text_record): for every reading the very logits computed without it, each down block's bottleneck
    computed once (8 of them for 64 readings), not once per reading."""
    import torch

    from checks import decoder, learned
    from checks import params as gp

    stoi = course_params.vocab(SRC / "data")
    net = course_params.course_net("perceiver", stoi, seed=2)
    state = {k: v.float() for k, v in net.state_dict().items()}

    class Judge:  # what checks.params asks of a judge's context: the reference and a cache
        cache = {}

        @staticmethod
        def solution(name):
            return importlib.import_module(f"submission.{name}")

    fitted = gp.fit(state, gp.reference_model(Judge, "perceiver", len(stoi)), "perceiver", "p", len(stoi))
    pairs = [(i, j) for i in range(len(fitted[1])) for j in range(len(fitted[2]))]
    assert len(fitted[1]) > 1 and len(fitted[2]) > 1
    seqs = torch.randint(2, len(stoi), (2, 12), generator=torch.Generator().manual_seed(0)).tolist()
    alone = [learned.text_record(gp.weights(fitted, *pair), seqs) for pair in pairs]
    computed = []
    bottleneck = decoder._bottleneck
    monkeypatch.setattr(decoder, "_bottleneck", lambda w, x: computed.append(id(w["down"])) or bottleneck(w, x))
    shared = {}
    assert [learned.text_record(gp.weights(fitted, *pair), seqs, shared) for pair in pairs] == alone
    assert len(computed) == len(set(computed)) == len(fitted[1])


def test_the_question_evidence_is_the_mean_gain_in_standard_errors_of_the_rows_spread():
    """learned.evidence: the mean over sd / sqrt(rows), so that one mean is strong evidence from rows that agree
    and weak from rows that scatter; 0 for params that ignore the question (every row's gain 0), a finite cap where
    every row gains the same, NaN where a gain is (its bar then fails)."""
    from checks import learned

    assert learned.evidence([0.0] * 50) == 0.0
    assert learned.evidence([1.0, 2.0, 3.0]) == 3.46 and learned.evidence([-1.0, -2.0, -3.0]) == -3.46
    assert learned.evidence([0.6, 0.4] * 50) == 49.75 and learned.evidence([10.0, -9.0] * 50) == 0.52
    assert learned.evidence([0.5] * 10) == learned.EVIDENCE_CAP and learned.evidence([-0.5] * 10) == -1000.0
    assert learned.evidence([1.0]) is None and learned.evidence([]) is None
    assert math.isnan(learned.evidence([1.0, float("nan"), 2.0]))


def test_random_models_show_no_evidence_of_knowing_their_training_questions(world):
    """Course-size models that use the question without having learned it (random, sharpened, their weights as
    made and scaled up tenfold) gain or lose a little on each training row: their evidence stays within the
    spread of chance, far below the bar, while their gain in nats grows with the scale."""
    from checks import learned
    from checks import params

    data, *_ = world
    stoi = course_params.vocab(data)
    seen = []
    for variant in ("vanilla", "perceiver"):
        for seed in range(3):
            net = course_params.course_net(variant, stoi, seed=seed)
            for scale in (1.0, 10.0):
                scaled = {k: v.float() * (scale if v.dim() >= 2 else 1.0) for k, v in net.state_dict().items()}
                fitted = params.fit(scaled, net, variant, "p", len(stoi))
                record = learned.training_record(params.weights(fitted, 0, 0), data / "birth_places_train.tsv", stoi)
                seen.append((variant, seed, scale, record["question_gain"], record["question_evidence"]))
    assert all(abs(e) < 3.0 for *_, e in seen), seen
    assert max(abs(g) for *_, g, _ in seen) > 0.05, seen  # they do use the question: not a gain of 0


def test_the_training_statistic_counts_what_greedy_decoding_answers(world, tmp_path):
    """learned.training_record, teacher-forced in one pass, counts a training question exactly when the
    judge's greedy decoding gives its answer: here a training file whose every other answer is the model's own
    (one cut a letter short, which greedy decoding does not stop at), the rest another place."""
    from checks import decoder
    from checks import learned
    from checks import params

    data, _, own, _ = world
    stoi = course_params.vocab(data)
    w = params.own_reading(own / "vanilla.finetune.params", "vanilla", len(stoi), *reference_modules())
    questions = course_params.questions(data, "train")
    greedy = [a.strip() for a in decoder.greedy_answers(w, questions, stoi)]
    rows = [f"{q}\t{a if k % 2 == 0 else 'Atlantis'}" for k, (q, a) in enumerate(zip(questions, greedy))]
    rows[0] = f"{questions[0]}\t{greedy[0][:-1]}"
    train = tmp_path / "birth_places_train.tsv"
    write(train, rows)
    record = learned.training_record(w, train, stoi)
    assert record["asked"] == len(questions) == 60
    assert record["correct"] == len(questions) // 2 - 1, record
    assert record["constant_place"] == "Atlantis" and record["constant_correct"] == 30


def test_the_corpus_statistic_is_zero_for_a_model_that_knows_only_how_often_characters_occur(world, tmp_path):
    """learned.corpus_record's gain is 1 - loss / unigram entropy of the characters it predicts: a model
    whose logits are those characters' log-frequencies, whatever the context, explains none of it (gain 0), and
    a random model less than none."""
    from collections import Counter

    import torch

    from checks import learned
    from checks import params

    data, _, own, _ = world
    stoi = course_params.vocab(data)
    wiki = data / "wiki.txt"
    lines = [line for line in wiki.read_text(encoding="utf-8").split("\n") if len(line.strip()) > 1]
    counts = Counter(stoi[ch] for line in lines for ch in line[1:learned.CORPUS_CHARS])
    total = sum(counts.values())
    net = course_params.course_net("vanilla", stoi)
    with torch.no_grad():
        for name, module in net.named_modules():
            if name.endswith(("attn.proj", "mlp.2")):
                module.weight.zero_()
                module.bias.zero_()
    unigram_head(net, counts)
    path = tmp_path / "unigram.params"
    course_params.save(net, path)
    w = params.own_reading(path, "vanilla", len(stoi), *reference_modules())
    record = learned.corpus_record(w, wiki, stoi)
    assert record["lines"] == len(lines) and record["chars"] == total
    assert record["gain"] == pytest.approx(0.0, abs=1e-3), record
    random_model = learned.corpus_record(
        params.own_reading(own / "vanilla.finetune.params", "vanilla", len(stoi), *reference_modules()),
        wiki, stoi)
    assert random_model["gain"] < 0, random_model


def unigram_head(net, counts):
    """Make net's logits, at every position, the log-frequencies of the ids in counts (a Counter): the final
    LayerNorm gives a constant, the head maps it to them."""
    import math

    import torch

    total = sum(counts.values())
    with torch.no_grad():
        net.ln_f.weight.zero_()  # every position the same: the final bias alone
        net.ln_f.bias.zero_()
        net.ln_f.bias[0] = 1.0
        net.head.weight.fill_(0.0)
        net.head.weight[:, 0] = torch.tensor([math.log(counts[i] / total) if counts[i] else -30.0
                                              for i in range(net.head.weight.shape[0])])


def test_the_pretraining_statistic_corrupts_a_line_as_the_courses_dataset_does(monkeypatch):
    """Each layout the judge draws (learned.layout) is one that CharCorruptionDataset makes (the reference's,
    written to the handout's spec): with the dataset's random draws landing on the layout's choices (a truncation,
    a span's length, its start: the spec's order), each within the range the dataset draws from, its example is
    learned.corrupted's ids, then the closing MASK and the padding."""
    import random

    import torch

    from checks import learned
    from submission import dataset

    line = "Ada Najjar. Ada Najjar was born in Lima and later worked in Oslo, in Bergen, then in Trondheim, then Rome."
    ds = dataset.CharCorruptionDataset(line + "\n", 128)
    ids = ds.encoded[0].tolist()
    assert len(ids) > learned.PRETRAIN_CHARS
    drawn = random.Random(0)
    for _ in range(200):
        cut = learned.layout(len(ids), drawn)
        draws = iter([cut.length, cut.span, cut.start])

        def randint(a, b):
            value = next(draws)
            assert a <= value <= b, (a, value, b)
            return value

        monkeypatch.setattr(random, "randint", randint)
        x, y = ds[0]
        monkeypatch.undo()
        example = torch.cat([x[:1], y]).tolist()
        want = learned.corrupted(ids, ds.mask_id, cut)
        assert example[:len(want)] == want and example[len(want)] == ds.mask_id, cut
        assert set(example[len(want) + 1:]) == {ds.pad_id}, cut
    cut = learned.Layout(24, 10, 6)
    assert "".join(ds.itos[i] for i in learned.corrupted(ids, ds.mask_id, cut)) == (
        line[:10] + "\u2047" + line[16:24] + "\u2047" + line[10:16])


def test_the_judges_layouts_vary_as_the_courses_dataset_draws_them():
    """learned.layout draws what the spec asks a truncation and a span to be: every truncation from 4 to
    int(block_size * 3/4) characters (a line shorter than that whole), a span of random length, 1/4 of the kept text
    on average, at every place; so that no one layout, public or fitted, is what the judge reads."""
    import random
    import statistics

    from checks import learned

    rng = random.Random(1)
    cuts = [learned.layout(200, rng) for _ in range(20000)]
    assert {c.length for c in cuts} == set(range(4, learned.PRETRAIN_CHARS + 1)) and learned.PRETRAIN_CHARS == 96
    assert all(1 <= c.span and c.start + c.span <= c.length for c in cuts)
    assert statistics.mean(c.span / c.length for c in cuts if c.length >= 40) == pytest.approx(0.25, abs=0.01)
    long = [c for c in cuts if c.length == 96]
    assert len({c.span for c in long}) > 20 and {c.start for c in long} >= {0}
    assert max(c.start + c.span for c in long) == 96  # the suffix may be empty too
    assert {learned.layout(10, rng).length for _ in range(500)} == set(range(4, 11))


def test_the_pretraining_statistic_is_zero_for_a_model_that_knows_only_how_often_characters_occur(tmp_path):
    """learned.pretraining_record's gain is 1 - loss / unigram entropy of the corrupted lines' characters: a model
    whose logits are their log-frequencies explains none of it (gain 0), a random model less than none, and a
    perceiver trained on those lines (tests/course_params.pretrained_file, the suite's pretrain file of this
    corpus) more than the bar asks."""
    from collections import Counter

    from checks import learned
    from checks import params

    data = tmp_path / "data"
    data.mkdir()
    make_world(data)
    stoi = course_params.vocab(data)
    seed = data / "birth_dev.tsv"  # any file's seed draws every line of this corpus, shorter than CORPUS_LINES
    seqs = learned.pretraining_sequences(data / "wiki.txt", stoi, seed)
    counts = Counter(t for seq in seqs for t in seq[1:])
    total = sum(counts.values())
    net = course_params.course_net("perceiver", stoi)
    unigram_head(net, counts)
    course_params.save(net, tmp_path / "unigram")
    course_params.save(course_params.course_net("perceiver", stoi), tmp_path / "random")
    gains = {}
    for name, path in (("unigram", tmp_path / "unigram"), ("random", tmp_path / "random"),
                       ("pretrained", course_params.pretrained_file(data))):
        w = params.own_reading(path, "perceiver", len(stoi), *reference_modules())
        record = learned.pretraining_record(w, data / "wiki.txt", stoi, seed)
        assert record["lines"] == len(seqs) and record["chars"] == total
        gains[name] = record["gain"]
    assert gains["unigram"] == pytest.approx(0.0, abs=1e-3), gains
    assert gains["random"] < 0 and gains["pretrained"] >= 0.45, gains


def test_a_table_of_the_previous_character_gains_nothing_over_the_judges_bigram(tmp_path, monkeypatch):
    """The bigram baseline of learned's records is a table of the previous character fitted on the public corpus:
    params whose logits are such a table, written from wiki.txt's lines corrupted as the pretraining corrupts them
    (in the layouts of learned.PUBLIC_LAYOUTS: pretraining_record) or from their plain starts (corpus_record), gain
    nothing over it, though their gain over the unigram entropy is well above 0; a table of character frequencies
    alone gains less than nothing."""
    from collections import Counter

    import torch

    from checks import learned

    data = tmp_path / "data"
    data.mkdir()
    make_world(data)
    stoi = course_params.vocab(data)
    lines = [line for line in (data / "wiki.txt").read_text(encoding="utf-8").split("\n") if len(line.strip()) > 1]

    corrupted = learned.corrupted_corpus(data / "wiki.txt", stoi)  # each line in a layout of the public seed
    starts = [[stoi[ch] for ch in line[:learned.CORPUS_CHARS]] for line in lines]
    seed = data / "birth_dev.tsv"  # any file's seed draws every line of this corpus, shorter than CORPUS_LINES
    for name, fitted, measure in (("pretraining", corrupted, lambda: learned.pretraining_record(
            None, data / "wiki.txt", stoi, seed)), ("corpus", starts, lambda: learned.corpus_record(
                None, data / "wiki.txt", stoi))):
        bigram = course_params.bigram_table(len(stoi), fitted).float()
        monkeypatch.setattr(learned, "logits", lambda w, idx, shared=None, t=bigram: t[idx])
        record = measure()
        assert record["gain"] > 0.2 and record["bigram_gain"] == pytest.approx(0, abs=1e-3), (name, record)
        frequencies = Counter(t for s in fitted for t in s[1:])
        unigram = torch.tensor([math.log(frequencies.get(i, 0) + 0.5) for i in range(len(stoi))])
        monkeypatch.setattr(learned, "logits", lambda w, idx, shared=None, u=unigram: u.expand(*idx.shape, -1))
        record = measure()
        assert record["bigram_gain"] < -0.1, (name, record)


def pretraining_world(tmp_path, variant):
    """(data, stoi, finetuned, rule): the tests' small world, the params file finetuned from the variant's pretrain
    file, and the course row's pretraining bars for it."""
    data = tmp_path / "data"
    data.mkdir()
    make_world(data)
    course = json.loads((SRC / "points.json").read_text(encoding="utf-8"))["thresholds"]["rows"]["course"]
    finetuned = f"{variant}.finetune.params"
    rule = {k: v for k, v in course["learned"][finetuned].items() if k.startswith("min_pretraining")}
    return data, course_params.vocab(data), finetuned, rule


@pytest.mark.parametrize("variant", ["perceiver", "vanilla"])
def test_a_pretrain_file_written_by_hand_as_a_bigram_table_fails_the_bigram_bar_alone(tmp_path, variant):
    """Issue 60's attack on the pretraining check: a table of the previous character, counted on every line of
    wiki.txt corrupted as the pretraining corrupts them and written into the course's model by hand (no gradient
    step, seconds to make), predicts span-corrupted lines far below their unigram entropy and as well as plain
    ones, so it clears the course row's pretraining gain and share; what it knows beyond the judge's own bigram is
    nothing, and the bar on that (min_pretraining_bigram_gain) fails it, naming the file, its loss, the bigram's and
    what to submit.  The suite's pretrained model of that variant, trained on those lines, passes all three."""
    from checks import learned
    from checks import params

    data, stoi, finetuned, rule = pretraining_world(tmp_path, variant)
    wiki, answers = data / "wiki.txt", data / "birth_dev.tsv"
    assert set(rule) == {"min_pretraining_gain", "min_pretraining_share", "min_pretraining_bigram_gain"}, rule
    course_params.save(course_params.bigram_net(variant, stoi, learned.corrupted_corpus(wiki, stoi)),
                       tmp_path / "bigram")
    target = f"{variant}_finetune_with_pretrain"
    paths = (data / "birth_places_train.tsv", wiki, answers)

    def judged(path, rule):
        w = params.own_reading(path, variant, len(stoi), *reference_modules())
        return learned.check(None, rule, finetuned, target, stoi, *paths, pretrained=lambda: w)

    table = params.own_reading(tmp_path / "bigram", variant, len(stoi), *reference_modules())
    record = learned.pretraining_record(table, wiki, stoi, answers)
    assert record["bigram_gain"] == pytest.approx(0, abs=2e-3), record
    without = {k: v for k, v in rule.items() if k != "min_pretraining_bigram_gain"}
    assert judged(tmp_path / "bigram", without)[0] is None  # the gain and the share alone let it through
    problem, facts = judged(tmp_path / "bigram", rule)
    # no place of the span passes: the message reads the one it predicts best, where it is no better than the bigram
    best = max(learned.pretraining_records(table, wiki, stoi, answers).values(), key=learned.fit_score)
    assert best["bigram_gain"] <= 2e-3, best
    assert problem.startswith(f"{variant}.pretrain.params, which {finetuned} was finetuned from, predicts "
                              f"span-corrupted lines of wiki.txt with a loss of {best['loss']} nats, "
                              f"{learned.below_or_above(best['bigram_gain'])} "), problem
    assert f"with the span {learned.PLACE_WORDS[best['place']]} (the place it predicts best" in problem, problem
    assert (f"what a table of the previous character counted on every line of wiki.txt gives ({best['bigram']}), "
            f"where a model pretrained with span corruption gets at least {100 * rule['min_pretraining_bigram_gain']:g}"
            " % below it") in problem, problem
    assert f"./run.sh {variant}_pretrain" in problem, problem
    problem, facts = judged(course_params.pretrained_file(data, variant=variant), rule)
    assert problem is None and "the corpus's bigram on span-corrupted lines" in facts[-1], (problem, facts)


@pytest.mark.parametrize("variant", ["vanilla", "perceiver"])
def test_a_pretrain_file_fitted_to_one_public_layout_fails_the_pretraining_check(tmp_path, variant):
    """Issue 90's construction: a pretrain file trained on the lines the judge reads, each corrupted in the one
    layout the judge once read (cut to 64 characters, the middle quarter masked, public in its code), until that
    judge's statistic passes every pretraining bar of the course's row by far.  The judge draws each line's layout
    from the grading's secret as the course's dataset draws one, and fails the file, naming the bar, the file and
    what to submit; the suite's pretrained file, which learned the task on layouts drawn so, passes.  (On the
    course's data, a fitted model trained 1000 steps: docs/attacks.md.)"""
    import bench_layout_fit
    from checks import learned
    from checks import params

    data, stoi, finetuned, rule = pretraining_world(tmp_path, variant)
    wiki, answers = data / "wiki.txt", data / "birth_dev.tsv"
    course_params.save(course_params.fitted_to_one_layout(variant, stoi, data, answers), tmp_path / "fitted")
    w = params.own_reading(tmp_path / "fitted", variant, len(stoi), *reference_modules())
    former = learned.pretraining_record(w, wiki, stoi, answers, bench_layout_fit.fixed_layout)
    assert all(former[k] >= rule[bar] for k, bar in bench_layout_fit.BARS.items()), former
    paths = (data / "birth_places_train.tsv", wiki, answers)
    target = f"{variant}_finetune_with_pretrain"
    problem, facts = learned.check(None, rule, finetuned, target, stoi, *paths, pretrained=lambda: w)
    assert problem and problem.startswith(f"{variant}.pretrain.params, which {finetuned} was finetuned from, "
                                          "predicts span-corrupted lines of wiki.txt"), problem
    assert f"./run.sh {variant}_pretrain" in problem, problem
    drawn = learned.pretraining_record(w, wiki, stoi, answers)  # worse than a table counted on the public corpus
    assert drawn["bigram_gain"] < 0 < rule["min_pretraining_bigram_gain"] < former["bigram_gain"], (drawn, former)
    honest = params.own_reading(course_params.pretrained_file(data, variant=variant), variant, len(stoi),
                                *reference_modules())
    assert learned.check(None, rule, finetuned, target, stoi, *paths, pretrained=lambda: honest)[0] is None


@pytest.mark.parametrize("place", ["first", "last"])
def test_a_pretraining_in_another_reading_of_where_the_span_starts_passes(tmp_path, monkeypatch, place):
    """The course's spec leaves where the span starts to each reading, and 1e accepts a span that is always first
    or always last.  A pretraining in such a reading learned its task as well as one with the span at a drawn
    place, and its pretrain file is read where the span is in its own reading: the model of that variant trained
    on the judge's secret lines with the span always there, until it predicts them as the suite's pretrained
    file predicts its own, passes the course row's pretraining bars, and the check names that place.  Read with
    the span at drawn places alone (PLACES cut to that one), the very file fails."""
    from checks import learned
    from checks import params

    data, stoi, finetuned, rule = pretraining_world(tmp_path, "vanilla")
    wiki, answers = data / "wiki.txt", data / "birth_dev.tsv"
    there = learned.placed(learned.layout, place)
    start = course_params.agreeing_pair(stoi)[0]
    net = course_params.trained_on(start, "vanilla", stoi, learned.pretraining_sequences(wiki, stoi, answers, there),
                                   learned.corrupted_corpus(wiki, stoi, there))
    course_params.save(net, tmp_path / "own")
    w = params.own_reading(tmp_path / "own", "vanilla", len(stoi), *reference_modules())
    paths = (data / "birth_places_train.tsv", wiki, answers)
    problem, facts = learned.check(None, rule, finetuned, "vanilla_finetune_with_pretrain", stoi, *paths,
                                   pretrained=lambda: w)
    assert problem is None and f"(the span {learned.PLACE_WORDS[place]})" in facts[0], (problem, facts)
    monkeypatch.setattr(learned, "PLACES", {"drawn": learned.PLACES["drawn"]})
    problem, _ = learned.check(None, rule, finetuned, "vanilla_finetune_with_pretrain", stoi, *paths,
                               pretrained=lambda: w)
    assert problem and "with the span at a drawn place" in problem, problem


def test_the_check_reads_the_first_place_of_the_span_that_passes_else_the_best_fit():
    """learned.passing_reading: of the records of each place of the span, the first that clears every bar, the
    places after it not read; where none does, the one with the least loss (a loss that is not a number is the
    worst fit), and a value that is not a number clears no bar."""
    from checks import learned

    def rec(place, loss, gain, share):
        return {"place": place, "loss": loss, "gain": gain, "share": share}

    bars = {"gain": 0.25, "share": 0.7}
    records = {"drawn": rec("drawn", 2.0, 0.3, 0.6), "first": rec("first", 2.2, 0.26, 0.9),
               "last": rec("last", 1.9, 0.4, 0.8)}
    read = []

    def readings():
        for place, record in records.items():
            read.append(place)
            yield record

    assert learned.passing_reading(readings(), bars)["place"] == "first" and read == ["drawn", "first"]
    records["first"]["share"] = None
    assert learned.passing_reading(records.values(), bars)["place"] == "last"
    records["last"]["gain"] = float("nan")
    assert learned.passing_reading(records.values(), bars)["place"] == "last"  # no place passes: the least loss
    records["last"]["loss"] = float("nan")
    assert learned.passing_reading(records.values(), bars)["place"] == "drawn"


def test_a_pretraining_that_predicts_corrupted_lines_far_worse_than_plain_ones_fails_the_share(world, monkeypatch):
    """min_pretraining_share: where the params the perceiver was finetuned from predict the corrupted lines only half
    as well as the same lines as plain text (as plain next-character models of the course's corpus do, 0.47-0.52,
    against 0.88-0.95 for its pretraining, read by the former fixed-layout check: docs/benchmarks_history.md), the
    check fails, naming that file, both gains and what to submit; at 0.9 it passes.  The gain and its share are
    checked on one measure of the file."""
    from checks import learned

    data, _, _, _ = world
    stoi = course_params.vocab(data)
    measured = []

    def records(w, wiki, stoi_, answers, share):
        measured.append(w)
        return iter([{"lines": 40, "chars": 2000, "loss": 2.4, "unigram": 3.4, "gain": 0.3, "plain_gain": 0.3 / share,
                      "share": share, "place": "drawn"}])

    paths = (data / "birth_places_train.tsv", data / "wiki.txt", data / "birth_test.tsv")
    rule = {"min_pretraining_gain": 0.25, "min_pretraining_share": 0.7}
    for share, passes in ((0.5, False), (0.9, True)):
        monkeypatch.setattr(learned, "pretraining_readings", lambda *a, s=share: records(*a, s))
        measured.clear()
        problem, facts = learned.check(None, rule, "perceiver.finetune.params", "perceiver_finetune_with_pretrain",
                                       stoi, *paths, pretrained=lambda: "the pretrained weights")
        assert measured == ["the pretrained weights"], measured
        if passes:
            assert problem is None and "predicted 90 % as well as plain ones" in facts[-1], (problem, facts)
        else:
            assert problem.startswith("perceiver.pretrain.params, which perceiver.finetune.params was finetuned from, "
                                      "predicts span-corrupted lines of wiki.txt only 50 % as well as the same lines "
                                      "as plain text (gains 0.3 and 0.6)"), problem
            assert "learned the corpus as plain text" in problem and "./run.sh perceiver_pretrain" in problem, problem


def test_the_pretraining_statistics_lines_are_drawn_by_the_held_out_answers(tmp_path):
    """The lines the pretraining statistic reads are a secret of the data set: other held-out answers draw other
    lines of the same wiki.txt, the same answers (with Windows line endings too) the same lines, CORPUS_LINES of
    them in the corpus's order; so params trained on the lines of a public sample know too little of them."""
    from checks import learned

    wiki = SRC / "data" / "wiki.txt"
    lines = [line for line in wiki.read_text(encoding="utf-8").split("\n") if len(line.strip()) > 1]
    answers = tmp_path / "birth_test.tsv"
    answers.write_text("Where was Ada Najjar born?\tLima\n", encoding="utf-8")
    drawn = learned.secret_lines(wiki, answers)
    assert len(drawn) == learned.CORPUS_LINES and drawn == sorted(drawn, key=lines.index)
    answers.write_bytes(b"Where was Ada Najjar born?\tLima\r\n")
    assert learned.secret_lines(wiki, answers) == drawn
    answers.write_text("Where was Ada Najjar born?\tOslo\n", encoding="utf-8")
    other = learned.secret_lines(wiki, answers)
    assert len(set(drawn) & set(other)) < learned.CORPUS_LINES // 2
    assert len(set(drawn) & set(learned.corpus_lines(wiki))) < learned.CORPUS_LINES // 2


def test_the_pretraining_statistics_layouts_are_drawn_by_the_held_out_answers(tmp_path):
    """How each line the pretraining statistic reads is corrupted is a secret of the data set too: the same answers
    draw the same layouts, other answers other layouts of the very same lines (a corpus shorter than CORPUS_LINES,
    whose every line any seed draws), and neither is the public layouts' (corrupted_corpus, the bigram's): a model
    fitted to any one layout of the lines is asked about others."""
    from checks import learned

    wiki = tmp_path / "wiki.txt"
    wiki.write_text("".join(line + "\n" for line in (SRC / "data" / "wiki.txt").read_text(
        encoding="utf-8").split("\n")[:60] if line), encoding="utf-8")
    stoi = course_params.vocab(SRC / "data")
    answers = tmp_path / "birth_test.tsv"
    answers.write_text("Where was Ada Najjar born?\tLima\n", encoding="utf-8")
    pairs = learned.pretraining_pairs(wiki, stoi, answers)
    assert pairs == learned.pretraining_pairs(wiki, stoi, answers) and len(pairs) > 50
    assert [seq for _, seq in pairs] == learned.pretraining_sequences(wiki, stoi, answers)
    answers.write_text("Where was Ada Najjar born?\tOslo\n", encoding="utf-8")
    other = learned.pretraining_pairs(wiki, stoi, answers)
    public = learned.corrupted_corpus(wiki, stoi)
    assert len(other) == len(pairs) == len(public)
    assert sum(a[1] == b[1] for a, b in zip(pairs, other)) < len(pairs) // 10
    assert sum(a[1] == b for a, b in zip(pairs, public)) < len(pairs) // 10
    for plain, seq in pairs:  # the kept text, rearranged: prefix MASK suffix MASK span
        assert sorted(seq) == sorted(plain + [stoi[course_params.MASK]] * 2)


def reference_modules():
    from submission import helper, model

    return model, helper


def _breaking(case, variant, stoi, data):
    """Params made by hand that answer "Paris" to every public question, broken as `case` says."""
    import torch

    if case == "NaN where only the learned check looks":
        return course_params.poisoned_net(variant, stoi, "Paris", data)
    net = course_params.constant_answer_net(variant, stoi, "Paris")
    with torch.no_grad():
        if case == "an inf in one weight":
            net.tok_emb.weight[stoi["\u25A1"], 0] = float("inf")
        else:  # finite, but logits beyond float32's range: inf, and NaN after them
            net.head.weight.mul_(1e36)
    return net


@pytest.mark.grader
@pytest.mark.parametrize("case", ["NaN where only the learned check looks", "an inf in one weight",
                                  "finite weights too large for float32 arithmetic"])
def test_params_that_hold_or_compute_nan_or_inf_earn_no_prediction_points(world, tmp_path, case):
    """The fail-closed attack: a constant answer made by hand whose embeddings are NaN for characters that the
    check of learning reads (training names, the corpus's punctuation) and no public question holds.  Its
    prediction files are its own, and every statistic of the check came out NaN, which no `gain < bar` fails:
    it passed every prediction test whose bar a constant clears.  Now the judge refuses params that hold NaN or
    inf, and logits that overflow."""
    data, _, _, solution = world
    stoi = course_params.vocab(data)
    sub = tmp_path / "sub"
    sub.mkdir()
    for variant, names in course_params.PARAMS.items():
        net = _breaking(case, variant, stoi, data)
        for name in names:
            course_params.save(net, sub / name)
    for prefix in course_params.PREDICTIONS:
        for split in ("dev", "test"):
            write(sub / f"{prefix}.{split}.predictions", ["Paris"] * 20)
    tests = ("1d-0-hidden", "1d-1-hidden", "1f-1-hidden", "1f-2-hidden", "1g-1-hidden", "1g-2-hidden")
    t = grade(copy_src(tmp_path / "checked"), data, sub, solution, *tests)
    for tid in tests:
        out = t[tid]["output"]
        assert t[tid]["status"] == "failed" and t[tid]["score"] == 0, out
        assert "earns no accuracy points" in out and "NaN or inf" in out, out


def test_every_statistic_of_the_learned_check_fails_closed(world, monkeypatch):
    """learned.check with a forward pass that gives NaN: each of its bars fails, saying what was not a number,
    where `gain < bar` passed."""
    import torch

    from checks import learned

    data, _, _, _ = world
    stoi = course_params.vocab(data)
    monkeypatch.setattr(learned, "logits",
                        lambda w, idx, shared=None: torch.full((*idx.shape, len(stoi)), float("nan")))
    paths = (data / "birth_places_train.tsv", data / "wiki.txt", data / "birth_test.tsv")
    for rule in ({"min_question_gain": 1.0}, {"min_question_evidence": 4.0}, {"min_corpus_gain": 0.1},
                 {"min_heldout_gain": 0.5},
                 {"min_pretraining_gain": 0.25}, {"min_pretraining_share": 0.7},
                 {"min_pretraining_bigram_gain": 0.2}, {"max_finetune_drift": 0.4}):
        problem, _ = learned.check(None, rule, "perceiver.finetune.params", "perceiver_finetune_with_pretrain", stoi,
                                   *paths, pretrained=lambda: None, descent=lambda: {"drift": float("nan")})
        # a share of NaN gains, or a gain over the bigram of a NaN loss, is no ratio: None
        said = ("is not a number (got NoneType)" if {"min_pretraining_share", "min_pretraining_bigram_gain"} & set(rule)
                else "is not a finite number (got nan)")
        assert problem and said in problem, (rule, problem)
        of = "perceiver.pretrain.params" if any("pretraining" in k for k in rule) else "perceiver.finetune.params"
        assert problem.startswith(f"{of} is not a model that learned its task"), (rule, problem)
    # a bar the check does not know (a misspelt key in points.json) fails closed too, where it was skipped
    problem, facts = learned.check(None, {"min_pretraining_gain": 0.25, "min_pretrain_bigram_gain": 0.2},
                                   "perceiver.finetune.params", "perceiver_finetune_with_pretrain", stoi, *paths,
                                   pretrained=lambda: None)
    assert problem.startswith("the grader's thresholds row gives perceiver.finetune.params bars it does not know "
                              "(min_pretrain_bigram_gain; it knows min_question_gain, ") and not facts, problem


def test_a_model_that_knows_its_training_questions_but_not_the_held_out_people_fails(world, tmp_path):
    """The held-out gain: params that answer every training question (the file made of their own answers) show
    no knowledge of people whose answers are not theirs, and pass where the held-out answers are theirs (a model
    that learned them from the corpus)."""
    from checks import decoder
    from checks import learned
    from checks import params

    data, _, own, _ = world
    stoi = course_params.vocab(data)
    w = params.own_reading(own / "vanilla.finetune.params", "vanilla", len(stoi), *reference_modules())

    def own_file(split, name, shift=0):
        qs = course_params.questions(data, split)
        greedy = [a.strip() for a in decoder.greedy_answers(w, qs, stoi)]
        path = tmp_path / name
        write(path, [f"{q}\t{greedy[(k + shift) % len(qs)]}" for k, q in enumerate(qs)])
        return path

    train = own_file("train", "birth_places_train.tsv")
    rule = {"min_question_gain": 1.0, "min_question_evidence": 4.0, "min_heldout_gain": 0.5}
    args = ("vanilla.finetune.params", "vanilla_finetune_with_pretrain", stoi, train, data / "wiki.txt")
    problem, facts = learned.check(w, rule, *args, own_file("test", "known.tsv"))
    assert problem is None, (problem, facts)
    for shift in (5, 11):  # another person's answer: what a model knows of these people is not these answers
        problem, facts = learned.check(w, rule, *args, own_file("test", f"unknown{shift}.tsv", shift))
        assert problem and "has not learned from the corpus where they were born" in problem, (problem, facts)


def test_the_finetuning_drift_reads_the_weight_matrices_the_model_reads_and_nothing_else(world):
    """checks.lineage.drift_record: |child - parent| / |parent| over the weight matrices that the model reads in
    some reading of its blocks.  Moving every matrix by a tenth is a drift of 0.1, whatever the biases and the
    LayerNorms' gains do (every run starts them at the same constants); a large tensor that no reading reads, copied
    into both files, changes nothing; a matrix the child lacks is named."""
    import torch

    from checks import lineage
    from checks import params

    data, _, _, _ = world
    stoi = course_params.vocab(data)
    for variant, matrices in (("vanilla", 27), ("perceiver", 28)):
        net = course_params.course_net(variant, stoi)
        parent = {k: v.detach().float().clone() for k, v in net.state_dict().items() if v.is_floating_point()}
        junk = 100 * torch.randn(4096, 256)
        parent["junk.weight"] = parent["down_block.extra.weight"] = junk  # no reading of the model reads these
        names = params.read_names(parent, params.fit(parent, net, variant, "p", len(stoi)))
        assert "junk.weight" not in names and "down_block.extra.weight" not in names, names
        child = {k: 1.1 * v if v.dim() >= 2 else v + 1 for k, v in parent.items()}
        child["junk.weight"] = child["down_block.extra.weight"] = junk
        record = lineage.drift_record(child, parent, names)
        assert record == {"compared": matrices, "unmatched": [], "drift": pytest.approx(0.1, abs=1e-4)}, record
        assert lineage.descent_problem(record, "a", "b") == ""

        child["renamed"] = child.pop("tok_emb.weight")
        record = lineage.drift_record(child, parent, names)
        assert record["unmatched"] == ["tok_emb.weight"] and record["compared"] == matrices - 1, record
        problem = lineage.descent_problem(record, f"{variant}.finetune.params", f"{variant}.pretrain.params")
        assert problem.startswith(f"{variant}.finetune.params lacks 1 of the weight matrices of "
                                  f"{variant}.pretrain.params or holds them in another shape (tok_emb.weight first)")


@pytest.mark.grader
def test_a_finetuned_file_that_does_not_descend_from_the_pretrain_file_beside_it_earns_no_prediction_points(world,
                                                                                                            tmp_path):
    """The issue's attack: a finetuned file (its predictions its own) beside a pretrain file it was not finetuned
    from, another model's.  With the drift bar (max_finetune_drift) as the thresholds row's only learned rule, the
    vanilla files, whose pretrain file is an unrelated model, earn no prediction points, the message naming both
    files; the perceiver's, whose pretrain file is its finetuned weights 5 % smaller (a finetuning moves them that
    much), keep theirs."""
    data, _, own, solution = world
    stoi = course_params.vocab(data)
    src = copy_src(tmp_path / "src")
    zero_thresholds(src, learned=True)
    table = json.loads((src / "points.json").read_text(encoding="utf-8"))
    for row in table["thresholds"]["rows"].values():
        if "learned" in row:
            row["learned"] = {f"{v}.finetune.params": {"max_finetune_drift": 0.4} for v in ("vanilla", "perceiver")}
    (src / "points.json").write_text(json.dumps(table), encoding="utf-8")
    sub = tmp_path / "sub"
    shutil.copytree(own, sub)
    course_params.save(course_params.course_net("vanilla", stoi, seed=5), sub / "vanilla.pretrain.params")
    import torch

    finetuned = torch.load(sub / "perceiver.finetune.params", weights_only=True)
    torch.save({k: 0.95 * v for k, v in finetuned.items()}, sub / "perceiver.pretrain.params")
    t = grade(src, data, sub, solution, "1f-1-hidden", "1g-1-hidden")
    out = t["1f-1-hidden"]["output"]
    assert t["1f-1-hidden"]["status"] == "failed" and t["1f-1-hidden"]["score"] == 0, out
    assert "earns no accuracy points" in out and "vanilla.finetune.params is" in out, out
    assert "it was not finetuned from this vanilla.pretrain.params" in out, out
    assert "submit the vanilla.pretrain.params of your run of ./run.sh vanilla_pretrain" in out, out
    assert t["1g-1-hidden"]["status"] == "passed", t["1g-1-hidden"]["output"]
    assert "5 % away from perceiver.pretrain.params" in t["1g-1-hidden"]["output"], t["1g-1-hidden"]["output"]
