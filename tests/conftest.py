"""Shared fixtures: a tiny, self-made biography world (never the course data), small model configs, a user id per
xdist worker for the graders run as root, and what the graders grade: data, the reference solution, a copy of
src/, the student starter and the Gradescope bundle (made by tests/gradings.py and tools/release.py)."""

import os
import random
import subprocess
from pathlib import Path

import pytest

# One intra-op thread per process, for the tests and every process they start (run.py, run.sh, the demo; the
# grader's workers set their own): the models here are tiny, and two threads on a 2-core machine that is also
# running something else wait on each other (a test of 1.5 s took 35 s that way).  Set before torch loads.  And one
# OpenBLAS thread: numpy, which torch imports, otherwise starts one per core, which spin as it loads (0.09 CPU-s
# of every process that imports torch: docs/benchmarks_history.md, the test suite's earlier runs).
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

COURSE_DATA = ROOT.parent / "shared" / "course-data"


def xdist_worker_index(config=None):
    """0, 1, ... for pytest-xdist's workers gw0, gw1, ... (0 without xdist)."""
    name = getattr(config, "workerinput", {}).get("workerid") or os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name[2:]) if name[2:].isdigit() else 0


def free_uid(first, config=None):
    """As root: a user id that no user has and no process runs as, from a block of 10 that belongs to this
    xdist worker alone (first + 10 * its index ...), so that graders running at the same time in different
    workers never drop to the same user: each kills its user's processes before its summary."""
    from grading import users

    # GRADER_TEST_UID_SHIFT moves every block, for two test runs on one machine at once (two checkouts)
    start = first + int(os.environ.get("GRADER_TEST_UID_SHIFT", "0")) + 10 * xdist_worker_index(config)
    found = users.unused_uids(range(start, start + 10), 1)
    if found:
        return found[0]
    raise RuntimeError(f"no unused user id in {start}..{start + 9}")


@pytest.fixture(scope="session", autouse=True)
def tensorboard_logs_elsewhere(tmp_path_factory):
    """run.py writes TensorBoard logs (where tensorboard is installed) under src/expt/ unless TB_DIR says
    otherwise: the runs the tests start write theirs into a temporary folder, not into the checkout."""
    if "TB_DIR" in os.environ:
        yield os.environ["TB_DIR"]
        return
    os.environ["TB_DIR"] = str(tmp_path_factory.mktemp("expt"))
    yield os.environ["TB_DIR"]
    del os.environ["TB_DIR"]


@pytest.fixture(scope="session", autouse=True)
def course_params_shared(tmp_path_factory):
    """tests/course_params.py builds its trained params once per test run, in a folder that every xdist worker of
    the run shares (the parent of the workers' own temporary folders; pytest removes old runs' folders)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "course-params"
    os.environ["COURSE_PARAMS_SHARED"] = str(folder)
    yield folder
    del os.environ["COURSE_PARAMS_SHARED"]


@pytest.fixture(scope="session", autouse=True)
def grader_worker_user(request):
    """As root the grader runs student code as an unprivileged user id (by default the first free one of
    59000-59999, held by a lock) and kills that id's processes before its summary: every grader these tests start
    uses a free uid of this worker's own instead, so that two running at the same time (xdist workers, or another
    test run on the machine) never kill each other's workers.  A test that needs another user sets GRADER_WORKER_USER itself."""
    if os.name != "posix" or os.geteuid() != 0 or "GRADER_WORKER_USER" in os.environ:
        yield None
        return
    uid = free_uid(60000, request.config)
    os.environ["GRADER_WORKER_USER"] = str(uid)
    yield uid
    del os.environ["GRADER_WORKER_USER"]


@pytest.fixture
def deep_tree():
    """make(top, levels=1500): a chain of `levels` folders under top, deeper than any recursive walk of Python
    3.10-3.12 can go; every tree made is removed afterwards (GNU rm walks by descriptors: pytest's own clean-up
    of old temporary folders, shutil.rmtree, would raise RecursionError on it)."""
    made = []

    def make(top, levels=1500):
        made.append(top)
        make_deep_tree(top, levels)

    yield make
    for top in made:
        subprocess.run(["rm", "-rf", "--one-file-system", str(top)], check=False)


def make_deep_tree(top, levels):
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = below
    os.close(fd)


def on_each_device():
    """The devices of a test of the student's path: the CPU, and CUDA (marked `cuda`, skipped where there is no
    GPU).  The CPU case runs the same assertions on every machine, CI's included, so each can fail there; a lent
    GPU runs the CUDA cases with `python -m pytest -m cuda` (tools/gpu_session.sh)."""
    import torch

    no_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
    return ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, no_gpu])]


class cuda_settings_as_they_were:
    """training.place() sets TF32 for the whole process on CUDA (off, or on for --precision fast), and the learning
    arms turn scaled_dot_product_attention's kernels on and off; a test that does either gives the settings back."""

    def __enter__(self):
        import torch

        cuda = torch.backends.cuda
        self.saved = (cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32, cuda.cudnn_sdp_enabled(),
                      cuda.mem_efficient_sdp_enabled())

    def __exit__(self, *exc):
        import torch

        cuda = torch.backends.cuda
        cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32, cudnn_sdp, mem_efficient_sdp = self.saved
        cuda.enable_cudnn_sdp(cudnn_sdp)
        cuda.enable_mem_efficient_sdp(mem_efficient_sdp)


def check_shell_script(path):
    """An executable bash script that parses, and passes shellcheck where it is installed (the test skips there)."""
    import shutil

    assert os.access(path, os.X_OK), f"{path} must be executable"
    r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    r = subprocess.run(["shellcheck", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


FIRST = ["Ana", "Bo", "Cara", "Dev", "Eli", "Finn", "Gus", "Hana"]
LAST = ["Smith", "Lopez", "Novak", "Ito", "Berg", "Rossi", "Khan", "Ng", "Moreau", "Silva"]
PLACES = ["Paris", "Rome", "Oslo", "Lima", "Tokyo", "Cairo", "Quito", "Berlin"]


def make_world(directory, n_people=40, seed=0, held_out=False):
    """Write wiki.txt and the three birthplace TSVs (3/4 of the people train, 1/4 dev and test) into directory;
    held_out: birth_test.tsv too, the test questions with their answers (a data folder that grades)."""
    rng = random.Random(seed)
    names = [f"{f} {l}" for l in LAST for f in FIRST][:n_people]
    people = [(n, rng.choice(PLACES)) for n in names]
    directory = Path(directory)
    with open(directory / "wiki.txt", "w", encoding="utf-8") as w:
        for n, p in people:
            w.write(f"{n}. {n} was born in {p} and later worked in {rng.choice(PLACES)}.\n")
        w.write("Where was the first person born? Nobody knows.\n")
    cut = 3 * n_people // 4
    with open(directory / "birth_places_train.tsv", "w", encoding="utf-8") as w:
        for n, p in people[:cut]:
            w.write(f"Where was {n} born?\t{p}\n")
    with open(directory / "birth_dev.tsv", "w", encoding="utf-8") as w:
        for n, p in people[cut:]:
            w.write(f"Where was {n} born?\t{p}\n")
    with open(directory / "birth_test_inputs.tsv", "w", encoding="utf-8") as w:
        for n, _ in people[cut:]:
            w.write(f"Where was {n} born?\n")
    if held_out:
        with open(directory / "birth_test.tsv", "w", encoding="utf-8") as w:
            for n, p in people[cut:]:
                w.write(f"Where was {n} born?\t{p}\n")
    return people


@pytest.fixture
def world(tmp_path):
    people = make_world(tmp_path)
    return tmp_path, people


SMALL = dict(n_layer=2, n_head=2, n_embd=32)


def small_config(vocab_size, block_size=64, perceiver=False, bottleneck_dim=8, dropout=0.0):
    from submission.model import GPTConfig

    cfg = GPTConfig(vocab_size, block_size, embd_pdrop=dropout, resid_pdrop=dropout, attn_pdrop=dropout, **SMALL)
    if perceiver:
        cfg.perceiver, cfg.bottleneck_dim = True, bottleneck_dim
    return cfg


# -- what the graders grade (tests/gradings.py), made once per test module that asks --------------------------


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The tiny world with the held-out answers, fitted to the course-size params of tests/course_params.py."""
    from gradings import make_data

    return make_data(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def public_data(tmp_path_factory):
    """The same world without the held-out answers, as on a student's machine."""
    from gradings import make_data

    return make_data(tmp_path_factory.mktemp("public"), answers=False)


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    from gradings import make_solution

    return make_solution(tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="module")
def reference_src(tmp_path_factory):
    """A grading copy of src/ with the reference's own submission."""
    from gradings import copy_src

    return copy_src(tmp_path_factory.mktemp("ref-src"))


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    """The student starter, as tools/release.py writes it."""
    import release

    out = tmp_path_factory.mktemp("release") / "starter"
    release.build_student(out)
    return out


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The Gradescope bundle, as tools/release.py writes it (run it with gradings.rehearse)."""
    import zipfile

    import release

    zip_path = release.build_autograder(tmp_path_factory.mktemp("bundle") / "autograder.zip")
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        assert {"setup.sh", "run_autograder", "answers/birth_test.tsv", "solution/model.py",
                "starter/src/grader.py"} <= set(names)
        assert not any(n.startswith("starter/") and n.endswith("birth_test.tsv") for n in names)
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    return zip_path
