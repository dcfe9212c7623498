"""Part (a)'s notebook, src/submission/mingpt-demo/play_char.ipynb: valid, stripped, shipped, and it runs.

CI has no Jupyter, so the code cells are read from the .ipynb JSON and run in order as one script, in a
fresh Python process, from the notebook's folder (as Jupyter would), at the notebook's quick setting."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "src" / "submission" / "mingpt-demo" / "play_char.ipynb"

RUN_CELLS = r"""
import json, sys
notebook = json.load(open(sys.argv[1], encoding="utf-8"))
scope = {"__name__": "__main__"}
for cell in notebook["cells"]:
    if cell["cell_type"] == "code":
        exec(compile("".join(cell["source"]), "play_char.ipynb", "exec"), scope)
losses, prompt, completion = scope["losses"], scope["prompt"], scope["completion"]
print("RESULT " + json.dumps(dict(losses=losses, prompt=prompt, completion=completion)))
"""


def load():
    with open(NOTEBOOK, encoding="utf-8") as f:
        return json.load(f)


def test_notebook_is_valid_nbformat_4_with_outputs_stripped():
    nb = load()
    assert nb["nbformat"] == 4 and isinstance(nb["nbformat_minor"], int)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert set(kinds) <= {"markdown", "code"} and kinds.count("code") >= 4
    for cell in nb["cells"]:
        assert isinstance(cell["source"], (list, str)) and isinstance(cell["metadata"], dict)
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, "commit the notebook without outputs"
    # it teaches with the kit's own code, not a copy of it
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    for name in ("from submission.model import GPT", "from submission.trainer import Trainer",
                 "from submission.utils import sample", "wiki.txt"):
        assert name in code


def test_notebook_ships_in_the_starter_but_not_in_the_submission_zip():
    import release

    rel = NOTEBOOK.relative_to(ROOT).as_posix()
    assert not release.is_excluded(rel, release.exclude_patterns())
    # collect_submission zips the .py files of src/submission itself; the notebook is one folder down
    assert NOTEBOOK.suffix == ".ipynb" and NOTEBOOK.parent.parent.name == "submission"


@pytest.mark.slow  # the notebook trains in a process of its own
def test_notebook_cells_run_in_order_and_learn():
    env = {**os.environ, "PLAY_CHAR_QUICK": "1", "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-c", RUN_CELLS, str(NOTEBOOK)], cwd=NOTEBOOK.parent, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    losses = result["losses"]
    assert len(losses) >= 20
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < first - 0.5, f"the loss went from {first:.2f} to {last:.2f} only"
    completion = result["completion"]
    assert completion.startswith(result["prompt"]) and len(completion) == len(result["prompt"]) + 200
