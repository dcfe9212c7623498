"""tools/params_similarity.py: which submissions' params files descend one from another across a class.

The models are small GPTs of the kit's model.py trained here for a few hundred steps (seconds): each student's
own pretraining from a seed of their own, the finetuning from it, and the copies a class may hold: a classmate's
finetuned file finetuned a few steps further, and a finetuning of a classmate's pretrain file handed in beside
one's own pretraining.
"""

import re
import subprocess
import sys

import pytest

import params_similarity as ps
from conftest import make_world
from checks.lineage import DRIFT_CEILING, drift_record, trainable

pytestmark = pytest.mark.xdist_group("params-similarity")  # the class is trained once, in one worker

VOCAB, BLOCK = 40, 16


def tiny(seed):
    import torch

    from submission import model

    torch.manual_seed(seed)
    return model.GPT(model.GPTConfig(VOCAB, BLOCK, n_layer=2, n_head=4, n_embd=64))


def trained(net, seed, steps, lr):
    """net trained `steps` AdamW steps at lr on random sequences drawn with seed (in place); its state dict."""
    import torch

    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    net.train()
    for _ in range(steps):
        x = torch.randint(1, VOCAB, (8, BLOCK + 1), generator=g)
        x[:, 1::2] = (x[:, :-1:2] * 7 + 3) % (VOCAB - 1) + 1  # something to learn: every other token
        _, loss = net(x[:, :-1], x[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def pretrained(seed):
    """A student's pretraining: 150 steps at the course's pretraining rate, from a seed of their own."""
    net = tiny(seed)
    return net, trained(net, 100 + seed, 150, 6e-3)


def run(seed):
    """A student's pretraining and its finetuning (20 steps at the course's finetuning rate): (pretrain state,
    finetune state)."""
    net, pre = pretrained(seed)
    return pre, trained(net, 200 + seed, 20, 6e-4)


@pytest.fixture(scope="module")
def the_class(tmp_path_factory):
    """{name: folder} of a class's uploads (params files only): alice, bob and carol each ran their own; dave
    handed in alice's finetuned file finetuned 10 steps further; erin her own pretraining beside a finetuning of
    bob's pretrain file; frank alice's vanilla pretrain file as his perceiver's (another variant: never
    compared with a vanilla file); gina files that are no model (not a state dict, NaN, hundreds of matrices);
    hank alice's finetuned file with a tensor beside it that no model reads, larger than all its weights."""
    import torch

    root = tmp_path_factory.mktemp("class")
    files = {}
    for seed, name in enumerate(["alice", "bob", "carol"], 1):
        pre, fine = run(seed)
        files[name] = {"vanilla.pretrain.params": pre, "vanilla.finetune.params": fine, "vanilla.model.params":
                       trained(tiny(seed + 10), 300 + seed, 100, 6e-4)}
    dave_net = tiny(0)
    dave_net.load_state_dict(files["alice"]["vanilla.finetune.params"])
    files["dave"] = {"vanilla.finetune.params": trained(dave_net, 400, 10, 6e-4),
                     "vanilla.pretrain.params": pretrained(4)[1]}
    erin_net = tiny(0)
    erin_net.load_state_dict(files["bob"]["vanilla.pretrain.params"])
    files["erin"] = {"vanilla.pretrain.params": pretrained(5)[1],
                     "vanilla.finetune.params": trained(erin_net, 500, 20, 6e-4)}
    files["frank"] = {"perceiver.pretrain.params": files["alice"]["vanilla.pretrain.params"]}
    padded = dict(files["alice"]["vanilla.finetune.params"], **{"junk.weight": torch.full((2000, 64), 0.25)})
    files["hank"] = {"vanilla.finetune.params": padded}  # more entries of a tensor no model reads than weights
    folders = {}
    for name, states in files.items():
        folders[name] = root / name
        folders[name].mkdir()
        for fname, state in states.items():
            torch.save(state, folders[name] / fname)
    folders["gina"] = root / "gina"
    folders["gina"].mkdir()
    (folders["gina"] / "vanilla.model.params").write_bytes(b"not a state dict")
    broken = {k: v.clone() for k, v in files["carol"]["vanilla.model.params"].items()}
    next(v for k, v in broken.items() if k.endswith("weight") and v.dim() == 2)[0, 0] = float("nan")
    torch.save(broken, folders["gina"] / "vanilla.finetune.params")
    torch.save({f"m{k}": torch.randn(2, 2) for k in range(ps.MAX_MATRICES + 1)},
               folders["gina"] / "vanilla.pretrain.params")
    return files, folders


def test_the_sketch_measures_lineages_drift_within_a_few_percent(the_class):
    """The count sketch's drift is checks.lineage's within a few percent (within 1 % on the course's larger
    matrices: docs/benchmarks.md), over every pair of the class's vanilla files, near (a copy) and far (another
    run), and for a copy whose every weight is moved by one constant; a 0/1 mask buffer counts in neither."""
    import torch

    files, _ = the_class
    mask = torch.tril(torch.ones(BLOCK, BLOCK))  # as the course starter's model saves one with its weights
    states = [dict(s, **{"attn.mask": mask}) for f in files.values() for n, s in f.items() if n.startswith("vanilla.")]
    # a copy with every weight moved by one constant: a difference of one sign everywhere, measured as it is
    states.append({k: v + 0.002 for k, v in states[0].items()})
    distance, measured = ps.drifts([ps.sketch(s) for s in states])
    checked = 0
    for i, a in enumerate(states):
        for j, b in enumerate(states):
            if i < j:
                exact = max(drift_record(a, b, trainable(b))["drift"], drift_record(b, a, trainable(a))["drift"])
                assert bool(measured[i, j]) and float(distance[i, j]) == pytest.approx(exact, rel=0.04, abs=1e-6)
                checked += 1
    assert checked == 105


def test_a_copy_finetuned_further_is_flagged_and_independent_runs_are_not(the_class):
    """Through the process grade_class runs: dave's finetuned file (alice's, 10 steps further) and erin's (bob's
    pretrain file finetuned) are flagged with their sources, each pair's nearest files named; no pair of the
    three honest students, nor frank's perceiver file beside alice's vanilla one, nor erin's own pretraining; gina's
    files are listed with why, and every file's nearest other is measured."""
    _, folders = the_class
    found = ps.compare_class(sorted(folders.items()), 3 * len(folders))
    assert found.failed == "" and found.files == 15
    check_the_classs_comparison(found)


def check_the_classs_comparison(found):
    """What compare_class finds in the_class (test_a_copy_finetuned_further_is_flagged_and_independent_runs_are_not
    says what)."""
    flagged = {(p.a, p.file_a, p.b, p.file_b) for p in found.pairs}
    assert {("alice", "vanilla.finetune.params", "dave", "vanilla.finetune.params"),
            ("alice", "vanilla.finetune.params", "hank", "vanilla.finetune.params"),
            ("bob", "vanilla.pretrain.params", "erin", "vanilla.finetune.params"),
            ("bob", "vanilla.finetune.params", "erin", "vanilla.finetune.params")} <= flagged
    assert {(a, b) for a, _, b, _ in flagged} == {("alice", "dave"), ("alice", "hank"), ("dave", "hank"),
                                                  ("bob", "erin")}, flagged
    assert all(p.drift <= DRIFT_CEILING for p in found.pairs)
    near = min(p.drift for p in found.pairs if (p.a, p.b) == ("alice", "dave"))
    assert near < 0.1
    honest = [n.drift for n in found.nearest if n.name in ("alice", "bob", "carol")
              and n.file == "vanilla.model.params"]
    assert len(honest) == 3 and min(honest) > 2 * DRIFT_CEILING
    assert not any(n.name == "frank" for n in found.nearest)  # the only perceiver file: nothing to compare with
    why = {(n, f): w for n, f, w in found.problems}
    assert set(why) == {("gina", f) for f in ("vanilla.model.params", "vanilla.finetune.params",
                                              "vanilla.pretrain.params")}
    assert all(len(w) < 400 for w in why.values())
    assert "holds 201 weight matrices" in why["gina", "vanilla.pretrain.params"]
    assert "could not be loaded" in why["gina", "vanilla.model.params"]
    assert "NaN" in why["gina", "vanilla.finetune.params"]


def test_relative_folders_compare_as_absolute_ones_and_an_upload_that_cannot_be_read_is_named(the_class, tmp_path,
                                                                                             monkeypatch):
    """The class's folders given relative to the working folder (as docs/instructor.md types them: ../class) are
    read as the absolute ones, though the comparing process runs in src/ (it compared no file and called that
    clean); an upload that cannot be read at all (a broken zip) is listed as not compared, with why."""
    import os

    _, folders = the_class
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 not a zip")
    monkeypatch.chdir(tmp_path)
    relative = [(name, os.path.relpath(path)) for name, path in sorted(folders.items())] + [("broken", "broken.zip")]
    assert relative[0][1].startswith("..")
    found = ps.compare_class(relative, 3 * len(relative))
    assert found.failed == "" and found.files == 15, found
    check_the_classs_comparison(found._replace(problems=[p for p in found.problems if p[0] != "broken"]))
    why = {(n, f): w for n, f, w in found.problems if n == "broken"}
    assert list(why) == [("broken", "")], why
    assert "not a zip file that can be read" in why["broken", ""] and why["broken", ""].endswith("not compared")


def test_a_comparison_that_fails_says_why_in_one_sentence(the_class, monkeypatch):
    """A comparison past its time limit or its memory, or one that prints anything else, is a sentence: the
    class's report says the params files were not compared, and why."""
    _, folders = the_class
    monkeypatch.setattr(ps, "SECONDS", 0.001)
    monkeypatch.setattr(ps, "SECONDS_PER_FILE", 0)
    assert ps.compare_class(sorted(folders.items()), 1).failed.startswith("it did not finish within")
    monkeypatch.undo()
    monkeypatch.setattr(ps, "WORKER_ADDRESS_SPACE", 64 << 20)  # not even Python and torch fit
    failed = ps.compare_class(sorted(folders.items()), 1).failed
    assert failed.startswith("it failed (exit status 1:"), failed


def test_a_deliverable_near_in_most_pairs_is_the_classs_rule_not_copying():
    """Ten students whose vanilla models are one computation (the same start and data: near, 2 % apart) and whose
    pretrainings are their own, one of them copied: the models are the class's rule, stated and not flagged; the
    copied pretraining is flagged."""
    import torch

    g = torch.Generator().manual_seed(0)

    def weights():
        return {"h.0.w": torch.randn(64, 64, generator=g), "h.1.w": torch.randn(128, 32, generator=g)}

    model = weights()
    files = []
    for k in range(10):
        twin = {n: w + 0.02 * torch.randn(w.shape, generator=g) for n, w in model.items()}
        files += [(f"s{k}", "vanilla.model.params", twin), (f"s{k}", "vanilla.pretrain.params", weights())]
    copied = {n: w + 0.05 * torch.randn(w.shape, generator=g) for n, w in files[1][2].items()}
    files[-1] = ("s9", "vanilla.pretrain.params", copied)
    # s8's model is s1's pretraining: a pair of the rule's deliverable with another one is still evidence
    files[-4] = ("s8", "vanilla.model.params", {n: w + 0.01 * torch.randn(w.shape, generator=g)
                                                for n, w in files[3][2].items()})
    pairs, _, common, alone = ps.compare([(n, f, ps.sketch(s)) for n, f, s in files])
    assert common == [ps.Common("vanilla.model.params", 9, 10)] and alone == []
    assert [(p.a, p.file_a, p.b, p.file_b) for p in pairs] == [
        ("s1", "vanilla.pretrain.params", "s8", "vanilla.model.params"),
        ("s0", "vanilla.pretrain.params", "s9", "vanilla.pretrain.params")]
    assert pairs[1].drift == pytest.approx(0.05, rel=0.1)
    few = ps.compare([(n, f, ps.sketch(s)) for n, f, s in files if n in ("s0", "s2", "s9")])
    assert few[2] == [] and len(few[0]) == 4  # 3 models: too few to call a rule; their pairs are flagged


def test_grade_class_reports_copied_params_in_its_csv_roster_groups_and_page(the_class, tmp_path, monkeypatch,
                                                                            capsys):
    """grade_class on the class, its folders typed as docs/instructor.md types them (relative: ../class, --out
    grades.csv; its grading faked: the comparison reads the uploads, not the results): grades.params.csv holds the
    flagged file pairs, the roster flags both sides, the groups join them, and the page's section shows the pairs,
    the class's distribution and the files not compared, with why; each file not compared is a warning on the
    terminal, its submission's."""
    import csv
    import shutil
    import stat

    import grade_class
    import test_grade_class

    _, folders = the_class
    monkeypatch.setattr(grade_class, "grade_one", test_grade_class.fake_graded)
    shutil.copytree(folders["alice"].parent, tmp_path / "class")
    (tmp_path / "class" / "broken.zip").write_bytes(b"PK\x03\x04 not a zip")
    (tmp_path / "kit").mkdir()
    monkeypatch.chdir(tmp_path / "kit")
    out = tmp_path / "kit" / "grades.csv"
    data = tmp_path / "data"
    data.mkdir()
    make_world(data, held_out=True)
    assert grade_class.main(["../class", "--out", "grades.csv", "--data-dir", "../data", "--tests", "1e-0-basic"]) == 0
    said = capsys.readouterr().out
    warned = [line for line in said.splitlines() if line.startswith("warning: ")]
    assert any(w.startswith("warning: broken: ") and "not compared" in w for w in warned), said
    assert any(w.startswith("warning: gina: vanilla.model.params ") for w in warned), said
    assert "15 files compared" in said
    with open(out.with_name("grades.params.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {(r["submission_a"], r["submission_b"]) for r in rows} == {("alice", "dave"), ("alice", "hank"),
                                                                       ("dave", "hank"), ("bob", "erin")}
    assert stat.S_IMODE(out.with_name("grades.params.csv").stat().st_mode) == 0o600
    page = out.with_name("report.html").read_text(encoding="utf-8")
    roster = page.split("<h2>Roster</h2>")[1].split("</table>")[0]
    assert re.search(r">alice</a></td>.*params ~ dave \(\d+\.\d% apart\)", roster)
    assert re.search(r">erin</a></td>.*params ~ bob \(\d+\.\d% apart\)", roster)
    assert re.search(r">gina</a></td>.*params not compared \(vanilla.model.params\)", roster)
    assert "carol" not in page.split("<h2>Possible copying: groups</h2>")[1].split("<h2>Not graded")[0]
    section = page.split('<h2 id="params">Possible copying: params files</h2>')[1].split("<h2>")[0]
    assert "<td>alice</td><td>dave</td><td>vanilla.finetune.params ~ vanilla.finetune.params: " in section
    assert "the cut at 50% marked" in section and "15 files compared" in section
    assert re.search(r"<td>gina</td><td>vanilla.model.params</td><td>vanilla.model.params could not be loaded", section)


def test_a_submission_whose_files_kill_the_comparison_is_left_out_and_named(the_class, tmp_path, monkeypatch):
    """A file that kills the comparing process (here by a signal where its reading would have crashed): the
    comparison runs again without that submission, whose files are listed as not compared with why; the class's
    pairs are found as without it."""
    import torch

    from conftest import ROOT

    _, folders = the_class
    killer = tmp_path / "killer"
    killer.mkdir()
    torch.save({"boom": torch.randn(4, 4)}, killer / "vanilla.model.params")
    wrapper = tmp_path / "crashing.py"
    wrapper.write_text(f"""import os, signal, sys
sys.path.insert(0, {str(ROOT / "tools")!r})
import params_similarity as ps
real = ps.sketch
def sketch(state, fname="the file"):
    if "boom" in state:
        os.kill(os.getpid(), signal.SIGSEGV)
    return real(state, fname)
ps.sketch = sketch
sys.exit(ps.main())
""", encoding="utf-8")
    monkeypatch.setattr(ps, "__file__", str(wrapper))
    found = ps.compare_class(sorted([*folders.items(), ("killer", killer)]), 3 * len(folders))
    assert found.failed == "" and found.files == 15
    assert {(p.a, p.b) for p in found.pairs} == {("alice", "dave"), ("alice", "hank"), ("dave", "hank"),
                                                 ("bob", "erin")}
    why = {(n, f): w for n, f, w in found.problems}
    assert why["killer", ""].startswith("its params files stopped the comparison (it failed (exit status -11")


def test_a_difference_aligned_with_the_sketch_is_measured_as_it_is(monkeypatch):
    """The sketch's draws come from a secret of the run: a copy moved by 4 % of its size along signs computed from
    draws a student could know measures 4 %, where with those draws it measured several times that."""
    import torch

    g = torch.Generator().manual_seed(1)
    source = {f"h.{k}.w": torch.randn(256, 256, generator=g) for k in range(3)}

    def aligned_copy():  # each entry moved by 4 % of the weights' spread, with the sign the draws give it
        return {n: w + 0.04 * ps.draws((n, tuple(w.shape)), w.numel())[1].float().reshape(w.shape)
                for n, w in source.items()}

    def measured(copy):
        ps._draws.clear()
        return float(ps.drifts([ps.sketch(copy), ps.sketch(source)])[0][0, 1])

    monkeypatch.setitem(ps.SALT, "secret", b"")
    copy = aligned_copy()
    assert measured(copy) > 0.2  # a student who knew the draws would pass the cut with a near copy
    monkeypatch.setitem(ps.SALT, "secret", bytes(range(16)))
    assert measured(copy) == pytest.approx(0.04, rel=0.1)
    ps._draws.clear()


def test_a_submission_slower_to_read_than_its_time_is_left_out_and_named(the_class, monkeypatch):
    """read_class gives each submission SECONDS_PER_SUBMISSION: one past it (here every one, with a limit of a
    millisecond) is listed as not compared, and the next is read with its own time; the process's own handler of
    the alarm is back afterwards."""
    import signal

    _, folders = the_class
    monkeypatch.setattr(ps, "SECONDS_PER_SUBMISSION", 0.001)
    mine = signal.getsignal(ps.TIMER_SIGNAL)
    files, problems, _, _ = ps.read_class(sorted(folders.items())[:2])
    assert files == [] and [(n, f) for n, f, _ in problems] == [("alice", ""), ("bob", "")]
    assert "took more than 0.001 s of processor time to read" in problems[0][2]
    assert signal.getsignal(ps.TIMER_SIGNAL) is mine  # the process's own handler is back


def test_a_submissions_time_to_be_read_is_the_processors_not_the_clocks(tmp_path, monkeypatch):
    """Under load (a training on the same cores) a course-size file took more than SECONDS_PER_SUBMISSION of the
    clock to read, and was left out: the limit counts the processor time the reading takes.  A reading that waits
    three times the limit (asleep) is read; one that computes three times the limit is cut."""
    import time

    monkeypatch.setattr(ps, "SECONDS_PER_SUBMISSION", 0.1)

    def waits(name, path, names, read, probe=None):
        time.sleep(0.3)

    def computes(name, path, names, read, probe=None):
        began = time.process_time()
        while time.process_time() - began < 0.3:
            pass

    monkeypatch.setattr(ps, "_read_submission", waits)
    assert ps.read_class([("ann", tmp_path)]) == ([], [], [], [])
    monkeypatch.setattr(ps, "_read_submission", computes)
    files, problems, _, _ = ps.read_class([("ann", tmp_path)])
    assert [(n, f) for n, f, _ in problems] == [("ann", "")]


def test_a_broken_tensors_name_in_a_message_is_cut(tmp_path):
    """A NaN tensor's name, which a student chooses, is cut in load_params' sentence (the judge's, the student's
    grader's and the class comparison's): a name of a million characters is not a message of a million."""
    import torch

    from checks.lineage import load_params
    from graderUtil import Fail

    torch.save({"\x01" * 1_000_000: torch.tensor([[float("nan"), 1.0]])}, tmp_path / "p")
    with pytest.raises(Fail) as e:
        load_params(tmp_path / "p", "vanilla.model.params")
    assert len(str(e.value)) < 1000 and "\\x01\\x01" in str(e.value)


@pytest.mark.parametrize("argv, code", [(["--help"], 0), (["x.params"], 2)])
def test_the_comparison_process_with_arguments_says_how_to_run_it(argv, code):
    """It takes its request on standard input only: with arguments it prints its usage and reads nothing (--help
    ended in a JSONDecodeError traceback)."""
    r = subprocess.run([sys.executable, ps.__file__, *argv], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == code, r.stderr
    assert "usage: python tools/params_similarity.py < request.json" in (r.stdout if code == 0 else r.stderr)
    assert "Traceback" not in r.stderr
