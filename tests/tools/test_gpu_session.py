"""tools/gpu_session.sh, the GPU session in one command: it parses, passes shellcheck where installed, and refuses a
call it cannot serve in one sentence before it starts anything.  Its whole run is rehearsed by hand on a CPU
(`tools/gpu_session.sh --small --out DIR`, docs/benchmarks.md): it trains for minutes."""

import os
import subprocess

import pytest

from conftest import ROOT, check_shell_script

SCRIPT = ROOT / "tools" / "gpu_session.sh"


def test_the_gpu_session_script_parses_and_passes_shellcheck():
    check_shell_script(SCRIPT)


@pytest.mark.parametrize("args, message", [(["--out", "x", "--seed", "0"], "unknown argument --seed"),
                                           ([], "give --out DIR (or set OUT)")])
def test_the_gpu_session_refuses_a_call_it_cannot_serve_in_one_sentence(tmp_path, args, message):
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    r = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert r.stdout == "" and not (ROOT / "x").exists() and list(tmp_path.iterdir()) == []
