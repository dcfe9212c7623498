"""The submissions that tools/rehearse_gradescope.sh uploads, and the scores it expects of them.

  python tools/rehearsal.py submissions OUT_DIR --starter BUNDLE/starter   # OUT_DIR/<name>/: what a student uploads
  python tools/rehearsal.py check NAME results.json

The submissions, laid out as Gradescope unpacks them (the flat zip of ./run.sh collect_submission):
  reference    the reference's 18 deliverables: its 7 code files, the 6 prediction files and the 5 params
               files.  Models that reach the accuracy bars take hours of GPU training, so the data is made to
               fit the models instead (tests/course_params.py): the bundle's dev and held-out answers (cut to 30
               questions, its corpus to 32 lines) are rewritten as the answers of course-sized models that the
               params hold, the predictions are those models' own, and each pretrain file is a model of its
               variant pretrained on the corrupted lines the grader reads: every point, 64 + 10 extra credit.
  untrusted    the reference's code with the answer key as predictions and untrained course-sized params: the
               judge decodes the questions with the params, finds other answers, and every prediction test
               scores 0; the code earns the rest.
  empty        the student starter's files as released: 0.
  misbehaving  the reference's code, but helper.py prints 20,000 lines when imported and leaves a child
               process behind that ignores SIGTERM, and no predictions: its code's points, and no process of
               the worker user left once the grader is done.
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

import srcpath
from srcpath import SRC, TESTS

NAMES = ("reference", "untrusted", "empty", "misbehaving")

# Where the misbehaving submission's children leave their marks, in the rehearsal's root filesystem:
# rehearse_gradescope.sh makes it writable for everyone (`rehearsal.py marks` tells it the path).  Not /tmp: the
# grader removes everything its worker user made there before it finishes, marks included.
MARKS = "/rehearsal-marks"
MISBEHAVIOUR = '''
# --- rehearsal: a submission that misbehaves when imported --------------------------------------------------
import os as _os
import subprocess as _subprocess
import sys as _sys

for _i in range(20000):
    print(f"helper.py says hello, line {_i}: " + "x" * 60)
# a child in a session of its own that ignores SIGTERM, and leaves a mark in @MARKS@ (the rehearsal counts them)
_subprocess.Popen([_sys.executable, "-c", "import os, signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
                   "open(f'@MARKS@/child.{os.getpid()}', 'w').close()\\ntime.sleep(3600)"],
                  start_new_session=True, stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL)
'''


def answers(path):
    return "".join(line.split("\t")[1] + "\n" for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def write_params(out, data):
    """The five params files: course-sized models built by the reference's own code, untrained, for the vocabulary
    of the data folder's corpus."""
    srcpath.use(SRC)
    import torch

    from kit import course
    from submission import dataset, helper, model

    torch.manual_seed(0)
    corpus = (Path(data) / course.DATA_FILES["corpus"]).read_text(encoding="utf-8")
    vocab = dataset.CharCorruptionDataset(corpus, course.MODEL["block_size"]).vocab_size
    for name in course.PARAMS_FILES:
        mconf = model.GPTConfig(vocab, **course.MODEL)
        if name.startswith("vanilla"):
            net = helper.initialize_vanilla_model(mconf)
        else:
            net = helper.initialize_perceiver_model(mconf, course.BOTTLENECK_DIM)
        torch.save(net.state_dict(), out / name)


def write_submissions(out_dir, starter):
    """OUT_DIR/<name>/ for each of NAMES; `starter` is the released starter's root, whose src/data/ is the data set
    the submissions are made for.  When it is an unpacked bundle's starter/ (beside answers/), the answer key is
    the bundle's held-out answers, and the bundle's data is made to fit the reference's models; beside a plain
    starter it is the built-in world's."""
    srcpath.use(SRC, TESTS)
    from kit import course

    out_dir = Path(out_dir)
    data = Path(starter) / "src" / "data"
    bundle = Path(starter).parent
    held_out = bundle / "answers" / "birth_test.tsv"
    untrusted = out_dir / "untrusted"
    untrusted.mkdir(parents=True)
    for name in course.CODE_FILES + course.OPTIONAL_FILES:
        shutil.copy2(SRC / "submission" / name, untrusted / name)
    dev = answers(data / course.DATA_FILES["dev"])
    test = answers(held_out if held_out.is_file() else SRC / "data" / "birth_test.tsv")
    for name in course.PREDICTION_FILES:
        (untrusted / name).write_text(dev if ".dev." in name else test, encoding="utf-8")
    write_params(untrusted, data)
    assert sorted(p.name for p in untrusted.iterdir()) == sorted(course.DELIVERABLES + course.OPTIONAL_FILES)
    shutil.copytree(untrusted, out_dir / "reference")
    print(f"submission 'reference': the reference's files, in {out_dir / 'reference'}", flush=True)
    if held_out.is_file():
        import course_params

        print("  its params fitted to the bundle's data set (under a minute on 2 cores)...", flush=True)
        for name, data in course_params.fit_bundle(bundle).items():  # every params file and prediction file
            (out_dir / "reference" / name).write_bytes(data)
    empty = out_dir / "empty"
    empty.mkdir()
    for path in sorted((Path(starter) / "src" / "submission").glob("*.py")):
        shutil.copy2(path, empty / path.name)
    bad = out_dir / "misbehaving"
    bad.mkdir()
    for name in course.CODE_FILES + course.OPTIONAL_FILES:
        shutil.copy2(SRC / "submission" / name, bad / name)
    with open(bad / "helper.py", "a", encoding="utf-8") as f:
        f.write(MISBEHAVIOUR.replace("@MARKS@", MARKS))


def prediction_tests():
    """The ids of the grader's prediction tests: those that need the held-out answers (their Spec's `needs`)."""
    srcpath.use(SRC)
    import grader  # noqa: F401  (registers the tests)
    from grading.registry import REGISTRY

    return {tid for tid, spec in REGISTRY.items() if "answers" in spec.needs}


def expected_score(name, results):
    """The score `name` must get, from its results.json (whose max_score values come from points.json)."""
    tests = results["tests"]
    if name == "reference":
        return sum(t["max_score"] for t in tests)
    if name == "empty":
        return 0
    predictions = prediction_tests()
    return sum(t["max_score"] for t in tests if t["number"] not in predictions)  # the code's points


def check(name, results_path):
    """(ok, one line): whether results.json holds the score expected of submission `name`."""
    results = json.loads(Path(results_path).read_text(encoding="utf-8"))
    score, total = results["score"], sum(t["max_score"] for t in results["tests"])
    want = expected_score(name, results)
    failed = [t["name"] for t in results["tests"] if t["score"] < t["max_score"]]
    line = f"{name}: {score:g} of {total:g} points (expected {want:g}); {len(results['tests'])} tests"
    if failed and name in ("reference", "untrusted", "misbehaving"):
        line += f", below full marks: {'; '.join(failed)[:600]}"
    return abs(score - want) < 1e-9, line


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("submissions", help="write the rehearsal's submissions into OUT_DIR")
    s.add_argument("out_dir")
    s.add_argument("--starter", required=True, help="the released starter (the bundle's starter/ folder)")
    sub.add_parser("marks", help="print the folder where the misbehaving submission's children leave marks")
    c = sub.add_parser("check", help="check one results.json")
    c.add_argument("name", choices=NAMES)
    c.add_argument("results")
    args = p.parse_args(argv)
    if args.command == "submissions":
        write_submissions(args.out_dir, args.starter)
        return 0
    if args.command == "marks":
        print(MARKS)
        return 0
    ok, line = check(args.name, args.results)
    print(("ok    " if ok else "WRONG ") + line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
