"""The kit's layout: src/ by reader (the scripts at its top, the internals in packages), one place that edits
sys.path, and the conda environment at both of its paths."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, SRC


def requirement_pins(python="3.11"):
    """requirements.txt's pins for one Python version: its lines, each environment marker decided for it (the
    markers there compare python_version with >= or < only)."""
    pins = []
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        pin, _, marker = (part.strip() for part in line.partition(";"))
        if marker:
            op, version = re.fullmatch(r'python_version (>=|<) "([\d.]+)"', marker).groups()
            newer = tuple(map(int, python.split("."))) >= tuple(map(int, version.split(".")))
            if newer != (op == ">="):
                continue
        pins.append(pin)
    return pins


def test_the_conda_environment_is_at_both_paths_and_pins_the_requirements(starter):
    """environment.yml sits at the top level and at src/environment.yml (the handout's path), the same file at
    both: its pip section writes out requirements.txt's pins for its Python (a relative -r path, which conda
    reads from the file's folder, could not be right from both)."""
    env = (ROOT / "environment.yml").read_text(encoding="utf-8")
    for root in (ROOT, starter):
        assert (root / "src" / "environment.yml").read_text(encoding="utf-8") == env
        assert (root / "environment.yml").read_text(encoding="utf-8") == env
    python = re.search(r"^\s*- python=([\d.]+)$", env, re.MULTILINE).group(1)
    pins = re.findall(r"^ {6}- (\S+)$", env, re.MULTILINE)
    assert pins == requirement_pins(python)
    for readme in (ROOT / "README.md", starter / "README.md"):
        conda = re.findall(r"conda env create -f ([\w./-]+)", readme.read_text(encoding="utf-8"))
        assert conda and all(f in ("environment.yml", "src/environment.yml") for f in conda)


def edits_sys_path(source):
    """Whether Python source changes sys.path: assigns it or a slice of it (`sys.path = ...`, `sys.path[:] = ...`,
    `sys.path[:0] = ...`, `+=`, del), or calls one of its list methods that change it (insert, append, extend, ...),
    however it is spelt (read from the syntax tree, not by a pattern over the text)."""
    def is_sys_path(node):
        return (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
                and node.value.id == "sys")

    def target(node):
        return is_sys_path(node) or isinstance(node, ast.Subscript) and is_sys_path(node.value)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(target(t) for t in targets):
                return True
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_sys_path(node.func.value)
              and node.func.attr in ("insert", "append", "extend", "remove", "pop", "clear", "reverse", "sort")):
            return True
    return False


@pytest.mark.parametrize("line", ["sys.path.insert(0, 'x')", "sys.path.append('x')", "sys.path.extend(['x'])",
                                  "sys.path[:0] = ['x']", "sys.path[:] = ['x']", "sys.path = ['x']",
                                  "sys.path += ['x']", "sys.path[0] = 'x'", "del sys.path[0]"])
def test_every_spelling_of_a_sys_path_edit_is_found(line):
    assert edits_sys_path(f"import sys\n{line}\n")
    assert not edits_sys_path(f"import sys\nprint(sys.path, sys.path[0], 'x' in sys.path)\n")


def test_src_is_put_on_sys_path_in_one_place():
    """tools/srcpath.py is the one module that puts src/ on sys.path: the tools import it; src/'s scripts and the
    tests need none (Python puts a script's folder first; pytest.ini's pythonpath); tools/bench/bench.py, a script
    one folder below tools/, loads srcpath.py by its path.  The other places: the student's dataset.py, whose
    `python dataset.py charcorruption` (the handout's command, run in src/submission/) prints examples with
    src/examples.py, and the grader's worker, which puts nothing there but rewrites the entries it has as paths
    through descriptors it opened as root (grading/worker.py)."""
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    editing = sorted(name for name in tracked if edits_sys_path((ROOT / name).read_text(encoding="utf-8")))
    assert editing == ["src/grading/worker.py", "src/submission/dataset.py", "tools/srcpath.py"]


# The scripts of src/ that people run (docs/architecture.md, "Layout, by reader"): each with a __main__.
SRC_SCRIPTS = {"run.py", "grader.py", "london_baseline.py", "plot_losses.py", "collect_submission.py", "examples.py",
               "demo.py", "attention_simulation.py"}
# The top of src/: the scripts, what they read (the grader's harness under the course's name, the points table,
# the handout's environment file, run.sh), the student's package and the data; every internal in a package.
SRC_TOP = SRC_SCRIPTS | {"run.sh", "graderUtil.py", "points.json", "environment.yml", "submission", "data"}
SRC_PACKAGES = {"kit", "grading", "checks"}


def top_level(src, names):
    """The names directly under src/ of the given repository-relative paths."""
    return {Path(name).relative_to(src).parts[0] for name in names if Path(name).is_relative_to(src)}


def test_the_top_of_src_holds_only_what_people_run_and_read(starter):
    """src/ shows its architecture: at its top the scripts and what they read, then the student's package, the data
    and the three packages of internals: the scripts' (kit/), the grader's harness (grading/) and its checks
    (checks/).  The starter's src/ is the same."""
    tracked = subprocess.run(["git", "ls-files", "src"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert top_level("src", tracked) == SRC_TOP | SRC_PACKAGES
    shipped = [p.relative_to(starter).as_posix() for p in (starter / "src").rglob("*") if p.is_file()]
    assert top_level("src", shipped) == SRC_TOP | SRC_PACKAGES
    for package in SRC_PACKAGES:
        assert (SRC / package / "__init__.py").is_file()


def test_src_keeps_the_scripts_people_run_apart_from_the_internals_they_use():
    """Only the scripts have a __main__, and a usage line (`python ...` or `./run.sh ...`) in their docstring; an
    internal module that grew a main, or a new script, shows up here (and belongs in the README's list)."""
    scripts = {p.name for p in (ROOT / "src").glob("*.py")
               if re.search(r'^if __name__ == "__main__":', p.read_text(encoding="utf-8"), re.M)}
    assert scripts == SRC_SCRIPTS
    for name in sorted(scripts):
        doc = (ROOT / "src" / name).read_text(encoding="utf-8")[:3000]
        usage = rf"python3? (src/)?{re.escape(name)}|\./run\.sh {re.escape(name[:-3])}"
        assert re.search(usage, doc), f"{name} has no usage line"
