#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (tools/release.py puts it in the
# bundle; Gradescope unpacks the bundle into /autograder/source/).  It makes the grader's Python:
#   1. a Python 3.10 or newer: the image's python3 (Ubuntu 22.04: 3.10, 24.04: 3.12), else one installed here;
#   2. a virtual environment, /autograder/venv, with that Python: Ubuntu 24.04 and Debian 12+ refuse pip
#      installs into the system Python (PEP 668), and a venv keeps the grader's packages apart from the image's;
#   3. the CPU build of the torch that requirements.txt pins (Gradescope has no GPU, and the default build
#      brings GBs of CUDA libraries), then the rest of requirements.txt.
# No user is made: the grader runs student code as a free user id of each grading run's own (src/grading/users.py).
# Every step stops the build on failure (set -e; no failure is ignored): an image that half built would grade every
# submission 0 later, where nobody sees why.
set -euo pipefail

ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="$ROOT/venv"  # run_autograder runs the grader with this venv's python
CPU_INDEX="https://download.pytorch.org/whl/cpu"
export DEBIAN_FRONTEND=noninteractive
# pip's cache would only make the image larger: every package is installed once
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "setup.sh: $*"; }

apt_updated=""
apt_install() {  # apt_install PACKAGE...: from the image's distribution, updating the package lists once
  if [[ -z "$apt_updated" ]]; then
    apt-get update -qq
    apt_updated=1
  fi
  apt-get install -y -qq --no-install-recommends "$@" > /dev/null
}

recent_enough() {  # recent_enough PYTHON: it runs, and is 3.10 or newer (the oldest the kit is tested on)
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 10))' > /dev/null 2>&1
}

find_python() {  # prints the newest python3.X (X >= 10) or python3 on PATH that is recent enough
  local candidate
  for candidate in python3.13 python3.12 python3.11 python3.10 python3; do
    if command -v "$candidate" > /dev/null && recent_enough "$candidate"; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# 1. A recent enough Python.
if ! command -v python3 > /dev/null; then
  say "the image has no python3; installing the distribution's"
  apt_install python3
fi
if ! PYTHON="$(find_python)"; then
  # An older image (Ubuntu 20.04: Python 3.8).  Its distribution may package a newer Python beside the
  # default one; if not, uv (from PyPI) installs a standalone CPython build.
  say "the image's python3 is $(python3 -V 2>&1 | cut -d' ' -f2), older than 3.10; installing a newer one"
  for version in 3.12 3.11 3.10; do
    if apt-cache show "python$version-venv" > /dev/null 2>&1; then
      apt_install "python$version" "python$version-venv"
      break
    fi
  done
  if ! PYTHON="$(find_python)"; then
    apt_install python3-pip python3-venv
    python3 -m venv "$ROOT/uv-env"
    "$ROOT/uv-env/bin/python" -m pip install --quiet uv
    export UV_PYTHON_INSTALL_DIR="$ROOT/python"  # readable by the grader user, unlike root's home
    "$ROOT/uv-env/bin/uv" python install 3.11
    PYTHON="$("$ROOT/uv-env/bin/uv" python find --managed-python 3.11)"
  fi
fi
say "using $PYTHON ($("$PYTHON" -V 2>&1))"

# 2. The virtual environment.  Debian and Ubuntu split venv's pip bootstrap (ensurepip) into python3.X-venv.
if ! "$PYTHON" -c 'import ensurepip, venv' > /dev/null 2>&1; then
  minor="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
  say "installing python$minor-venv (venv's pip bootstrap)"
  apt_install "python$minor-venv"
fi
rm -rf "$VENV"  # a rebuilt image starts afresh
"$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --quiet)

# 3. The packages: torch's CPU build first, from PyTorch's CPU wheel index; if that index cannot be reached
# (or lacks the pin), the same version from the default index, whose Linux build runs on a CPU as well.
# The pin is read from requirements.txt, so the version is written in one place.
TORCH_PIN="$(sed -n 's/^\(torch==[^[:space:];#]*\).*/\1/p' "$SOURCE/requirements.txt" | head -n 1)"
if [[ -z "$TORCH_PIN" ]]; then
  say "error: $SOURCE/requirements.txt pins no torch version (a line torch==X.Y.Z); restore it and rebuild" >&2
  exit 1
fi
say "installing $TORCH_PIN (CPU build) into $VENV"
if ! "${PIP[@]}" "$TORCH_PIN" --index-url "$CPU_INDEX"; then
  say "the CPU wheel index $CPU_INDEX gave no $TORCH_PIN; installing it from the default index instead"
  "${PIP[@]}" "$TORCH_PIN"
fi
# torch is installed at the pinned version now (a local label such as +cpu still satisfies the ==pin), so this
# adds the rest
"${PIP[@]}" -r "$SOURCE/requirements.txt"
"$VENV/bin/python" -c 'import numpy, torch, tqdm; print(f"setup.sh: torch {torch.__version__}, numpy {numpy.__version__}")'

say "done"
