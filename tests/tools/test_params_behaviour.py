"""tools/params_similarity.py against a classmate's files disguised so that every weight moves as far as another run's
(tests/disguise.py): they still compute what they computed, and are flagged by it; finetuned a few steps further they
compute a little apart, and their invariants (what the weights compute up to the disguise's symmetries) stay as near
their source's as a plain copy's weights do.  Independent runs are flagged by neither, and a class that computed a
deliverable as one computation is said to be one where a copy cannot be told.

The models are the course's (n_layer 4, n_head 8, n_embd 256, the test world's vocabulary: the judge's forward pass
reads only that configuration), each student's trained here from a seed of their own for a few dozen steps on the
test world's corpus lines and questions (seconds).
"""

import csv
import re

import pytest

import params_similarity as ps
from conftest import make_world
from disguise import disguise
from checks.lineage import DRIFT_CEILING

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("params-behaviour")]  # trained once, in one worker

HONEST = ["alice", "bob", "carol", "erin"]


def encoded(data):
    """(corpus lines, questions with their answers) of the data folder as id lists of its course vocabulary."""
    from checks.params import course_vocab
    from kit import course

    stoi = course_vocab(data / "wiki.txt")
    lines = [[stoi[c] for c in line[:64] if c in stoi] for line in (data / "wiki.txt").read_text().splitlines()]
    questions = []
    for row in (data / "birth_places_train.tsv").read_text().splitlines():
        q, a = row.split("\t")
        questions.append([stoi[c] for c in q + course.MASK_CHAR + a + course.MASK_CHAR if c in stoi])
    return len(stoi), [s for s in lines if len(s) > 1], questions


def course_net(kind, vocab_size, seed):
    import torch

    from kit import course
    from submission import helper, model

    torch.manual_seed(seed)
    conf = model.GPTConfig(vocab_size, course.MODEL["block_size"], n_layer=course.MODEL["n_layer"],
                           n_head=course.MODEL["n_head"], n_embd=course.MODEL["n_embd"])
    return (helper.initialize_vanilla_model(conf) if kind == "vanilla"
            else helper.initialize_perceiver_model(conf, course.BOTTLENECK_DIM))


def trained(net, seqs, seed, steps, lr):
    """net trained `steps` AdamW steps at lr on batches of 8 of seqs (next-character prediction), in place; its
    state dict (a copy)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    net.train()
    for _ in range(steps):
        batch = [seqs[int(k)] for k in torch.randint(len(seqs), (8,), generator=g)]
        longest = max(len(s) for s in batch)
        x = torch.tensor([s + [0] * (longest - len(s)) for s in batch])
        _, loss = net(x[:, :-1], x[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def own_run(vocab_size, lines, questions, seed):
    """A student's three vanilla files: a pretraining, its finetuning, a model finetuned without pretraining."""
    net = course_net("vanilla", vocab_size, seed)
    pre = trained(net, lines, 100 + seed, 20, 1e-3)
    fine = trained(net, questions, 200 + seed, 5, 6e-4)
    alone = trained(course_net("vanilla", vocab_size, seed + 10), questions, 300 + seed, 10, 6e-4)
    return {"vanilla.pretrain.params": pre, "vanilla.finetune.params": fine, "vanilla.model.params": alone}


@pytest.fixture(scope="module")
def computing_class(tmp_path_factory):
    """(data folder, {name: folder}): alice, bob, carol and erin each ran their own; dave handed in alice's pretrain
    and finetune files disguised (one disguise for both: his finetuned file still descends from his pretrain file)
    beside a model of his own; frank alice's finetuned file disguised otherwise and finetuned 3 steps further (the
    course's finetuning rate, a fresh optimizer) beside his own pretraining and model."""
    import torch

    root = tmp_path_factory.mktemp("computing")
    data = root / "data"
    data.mkdir()
    make_world(data, held_out=True)
    vocab_size, lines, questions = encoded(data)
    files = {name: own_run(vocab_size, lines, questions, seed) for seed, name in enumerate(HONEST, 1)}
    files["dave"] = {"vanilla.pretrain.params": disguise(files["alice"]["vanilla.pretrain.params"]),
                     "vanilla.finetune.params": disguise(files["alice"]["vanilla.finetune.params"]),
                     "vanilla.model.params": own_run(vocab_size, lines, questions, 5)["vanilla.model.params"]}
    net = course_net("vanilla", vocab_size, 0)
    net.load_state_dict(disguise(files["alice"]["vanilla.finetune.params"], seed=11))
    files["frank"] = dict(own_run(vocab_size, lines, questions, 6),
                          **{"vanilla.finetune.params": trained(net, questions, 400, 3, 6e-4)})
    folders = {}
    for name, own in files.items():
        folders[name] = root / "class" / name
        folders[name].mkdir(parents=True)
        for fname, state in own.items():
            torch.save(state, folders[name] / fname)
    return data, folders


def test_a_disguised_copy_computes_as_its_source_where_its_weights_are_another_runs():
    """The disguise is function-preserving and moves every weight matrix as far as an independent run is
    (drift 1.41, the ceiling 0.5): the weights cannot see it."""
    import torch

    from checks.lineage import drift_record, trainable

    for kind in ("vanilla", "perceiver"):
        net = course_net(kind, 60, 1)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(0.05 * torch.randn_like(p))  # off the initialisation's constants: every tensor matters
        source = {k: v.detach().clone() for k, v in net.state_dict().items()}
        x = torch.randint(60, (3, 90))
        with torch.no_grad():
            want = net.eval()(x)[0]
            net.load_state_dict(disguise(source))
            got = net(x)[0]
        assert float((got - want).abs().max()) < 1e-4 * float(want.abs().max())
        copy = {k: v.detach().clone() for k, v in net.state_dict().items()}
        names = [k for k in trainable(source) if source[k].dim() >= 2 and k != "pos_emb"]
        assert drift_record(copy, source, names)["drift"] > 2 * DRIFT_CEILING


COPIERS = {"alice", "dave", "frank"}  # alice's files and the two disguises of them


def test_disguised_copies_are_flagged_by_what_they_compute_and_by_their_invariants(computing_class):
    """Through the process grade_class runs: dave's disguised files compute as alice's, each deliverable flagged with
    its own by behaviour, and both by their invariants (0 apart); frank's, finetuned 3 steps further, by its
    invariants (within the ceiling, as a plain copy's weights); no pair of the honest students by either, and every
    comparison by behaviour can tell."""
    data, folders = computing_class
    found = ps.compare_class(sorted(folders.items()), 3 * len(folders), data)
    assert found.failed == "" and found.unprobed == "" and found.computed == 18, found
    flagged = {(p.a, p.file_a, p.b, p.file_b) for p in found.behaviour}
    assert {("alice", "vanilla.pretrain.params", "dave", "vanilla.pretrain.params"),
            ("alice", "vanilla.finetune.params", "dave", "vanilla.finetune.params")} <= flagged, found.behaviour
    assert all({p.a, p.b} <= COPIERS for p in found.behaviour), found.behaviour
    assert all(p.spreads >= ps.BEHAVIOUR_Z and p.distance < p.typical for p in found.behaviour)
    near = {(p.a, p.file_a, p.b, p.file_b): p.drift for p in found.pairs}
    assert near["alice", "vanilla.pretrain.params", "dave", "vanilla.pretrain.params"] < 1e-3
    assert near["alice", "vanilla.finetune.params", "frank", "vanilla.finetune.params"] < DRIFT_CEILING
    assert all({p.a, p.b} <= COPIERS for p in found.pairs), found.pairs
    spreads = {(s.file_a, s.file_b): s for s in found.spreads}
    assert set(spreads) == {(f, f) for f in ("vanilla.model.params", "vanilla.pretrain.params",
                                             "vanilla.finetune.params")} | {
        ("vanilla.finetune.params", "vanilla.pretrain.params")}
    assert all(s.cannot_tell == "" and s.noise < s.cut < s.median for s in spreads.values()), spreads
    assert spreads["vanilla.model.params", "vanilla.model.params"].pairs == 15
    assert spreads["vanilla.finetune.params", "vanilla.pretrain.params"].pairs == 30


def test_a_class_of_one_computation_says_it_cannot_tell(computing_class, tmp_path):
    """Four submissions holding one and the same vanilla.model.params (the default seed's run, the same code and
    data) and a fifth of its own: nothing is flagged, and the comparison says it cannot tell a copy there."""
    import shutil

    _, folders = computing_class
    same = folders["alice"] / "vanilla.model.params"
    subs = []
    for name in ["ann", "ben", "cat", "dan", "eve"]:
        (tmp_path / name).mkdir()
        shutil.copy(same if name != "eve" else folders["bob"] / "vanilla.model.params", tmp_path / name)
        subs.append((name, tmp_path / name))
    found = ps.compare_class(subs, 5, folders["alice"].parent.parent / "data")
    assert found.behaviour == []
    (spread,) = found.spreads
    assert spread.pairs == 10 and spread.least == 0 and "cannot be told" in spread.cannot_tell


@pytest.mark.parametrize("distances, noise, tells", [
    ([0.4, 0.41, 0.39, 0.42, 0.38, 0.001], 0.002, True),  # independent runs and one copy: the cut between them
    ([0.0, 0.0, 0.0, 0.0, 0.0, 0.4], 0.002, False),  # most pairs one computation: the cut at the noise
    ([0.4, 0.001], 0.002, False),  # two pairs: no distribution
])
def test_the_cut_is_the_classs_own(distances, noise, tells):
    """told: the cut lies BEHAVIOUR_Z robust spreads below the median pair, never above half of it, and a class
    whose cut falls within the noise, or of too few pairs, cannot tell."""
    cut, why, median = ps.told(distances, noise)
    assert (why == "") == tells
    if tells:
        assert min(distances) < cut < median / 1.8 and cut < sorted(distances)[1]


def test_grade_class_reports_files_that_compute_alike(computing_class, tmp_path, monkeypatch, capsys):
    """grade_class on the class (its grading faked: the comparison reads the uploads): grades.behaviour.csv holds
    the flagged file pairs, the roster flags both sides, the groups join them, and the page's section shows each
    comparison's distribution and whether it can tell."""
    import shutil

    import grade_class
    import test_grade_class

    data, folders = computing_class
    monkeypatch.setattr(grade_class, "grade_one", test_grade_class.fake_graded)
    shutil.copytree(folders["alice"].parent, tmp_path / "class")
    out = tmp_path / "grades.csv"
    assert grade_class.main([str(tmp_path / "class"), "--out", str(out), "--data-dir", str(data),
                             "--tests", "1e-0-basic"]) == 0
    said = capsys.readouterr().out
    assert "compute alike, far beyond the class's pairs; 18 files compared)" in said, said
    with open(out.with_name("grades.behaviour.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert frozenset(("alice", "dave")) in {frozenset((r["submission_a"], r["submission_b"])) for r in rows}
    assert all({r["submission_a"], r["submission_b"]} <= COPIERS for r in rows)
    page = out.with_name("report.html").read_text(encoding="utf-8")
    roster = page.split("<h2>Roster</h2>")[1].split("</table>")[0]
    assert re.search(r">alice</a></td>.*params compute alike ~ dave \(0 apart\)", roster)
    assert re.search(r">dave</a></td>.*params compute alike ~ alice \(0 apart\)", roster)
    assert "carol" not in page.split("<h2>Possible copying: groups</h2>")[1].split("<h2>Not graded")[0]
    section = page.split('<h2 id="params">Possible copying: params files</h2>')[1].split("<h2>")[0]
    assert "By what they compute" in section and "18 files" in section
    assert "<td>vanilla.finetune.params ~ vanilla.pretrain.params</td><td>30</td>" in section
    assert "no: " not in section
