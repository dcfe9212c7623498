#!/usr/bin/env bash
# Rehearse the Gradescope bundle in a clean Debian root filesystem, as Gradescope would run it.  As root:
#
#   sudo tools/rehearse_gradescope.sh [--data-dir DIR] [bookworm|trixie] [WORK_DIR]
#
# --data-dir: the data set the bundle is released on (tools/release.py's --data-dir; default src/data).
# bookworm's python3 is 3.11; trixie's is 3.13 and refuses pip installs into itself (PEP 668).  Steps:
#   1. the bundle (tools/release.py autograder) and the submissions (tools/rehearsal.py);
#   2. a minimal Debian root filesystem with python3 (mmdebstrap, from the Debian package registry);
#   3. the bundle unpacked as /autograder/source, and its setup.sh run inside the root filesystem (chroot,
#      in mount and PID namespaces of its own, with an empty environment): that is the image's build;
#   4. for each submission, /autograder/submission filled as Gradescope fills it, and run_autograder run from
#      /autograder, where Gradescope copies it; its results.json checked against the expected score.
# It prints the time of each step and ends with status 0 only if every score is the one expected.  It needs
# mmdebstrap (apt-get install mmdebstrap), network access to Debian's mirror and to PyPI, about 6 GB of disk
# in WORK_DIR (default: a new folder under /var/tmp; it stays, for its logs: remove it afterwards), and takes
# minutes: docs/benchmarks.md says how many.
set -euo pipefail

fail() { echo "error: $*" >&2; exit 1; }
now() { date +%s; }

DATA=()
if [[ "${1:-}" == --data-dir ]]; then
  [[ -d "${2:-}" ]] || fail "--data-dir ${2:-} is not a folder; give the data set's folder"
  DATA=(--data-dir "$(cd "$2" && pwd)")  # absolute: the release runs from anywhere
  shift 2
fi
DIST="${1:-bookworm}"
WORK="${2:-}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

[[ "$DIST" == bookworm || "$DIST" == trixie ]] || fail "unknown distribution '$DIST'; use bookworm or trixie"
[[ "$(id -u)" == 0 ]] || fail "the rehearsal builds a root filesystem and chroots into it; run it as root"
for tool in mmdebstrap unshare chroot python3; do
  command -v "$tool" > /dev/null || fail "$tool is missing; install it (apt-get install mmdebstrap util-linux)"
done
# the kit's requirements, in the python3 this root's PATH finds (plain sudo resets PATH): before any folder
python3 -c 'import numpy, torch, tqdm' 2> /dev/null \
  || fail "$(command -v python3) cannot import torch, numpy and tqdm; run the rehearsal with the Python that has the kit's requirements: sudo env \"PATH=\$PATH\" $0 ..."
python3 "$REPO/tools/release.py" check "${DATA[@]}" > /dev/null || exit 1  # a data folder it refuses: before any folder
if [[ -z "$WORK" ]]; then
  WORK="$(mktemp -d "/var/tmp/rehearse-$DIST.XXXXXX")"
elif [[ -e "$WORK" ]] && [[ -n "$(ls -A "$WORK")" ]]; then
  fail "$WORK is not empty; name a new folder (an earlier rehearsal's files stay as they are)"
fi
mkdir -p "$WORK"
ROOTFS="$WORK/rootfs"
echo "rehearsal of the Gradescope bundle on Debian $DIST in $WORK"

# 1. The bundle and the submissions, from this checkout.
start=$(now)
echo "python: $(command -v python3)"
python3 "$REPO/tools/release.py" autograder "$WORK/autograder.zip" "${DATA[@]}"
python3 - "$WORK/autograder.zip" "$WORK/bundle" <<'PY'
import sys, zipfile
from pathlib import Path
with zipfile.ZipFile(sys.argv[1]) as zf:
    for info in zf.infolist():  # as Gradescope unpacks it: with the modes the zip records (setup.sh's +x)
        path = Path(zf.extract(info, sys.argv[2]))
        if info.external_attr >> 16:
            path.chmod(info.external_attr >> 16 & 0o777)
PY
python3 "$REPO/tools/rehearsal.py" submissions "$WORK/submissions" --starter "$WORK/bundle/starter"
echo "bundle and submissions: $(( $(now) - start )) s"

# 2. The root filesystem: Debian's minimal base and python3, as on a bare image.  Its apt can reach the mirror
# (setup.sh installs python3-venv with it).
start=$(now)
mmdebstrap --variant=minbase --include=python3 "$DIST" "$ROOTFS" "$MIRROR"
echo "root filesystem ($DIST): $(( $(now) - start )) s"
# what a network-enabled image has: name resolution and this machine's CA bundle (pip verifies PyPI with it;
# it includes any proxy's certificate, which Debian's own ca-certificates would not)
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/rehearsal-ca.crt"
mkdir -p "$ROOTFS/autograder"
cp -a "$WORK/bundle" "$ROOTFS/autograder/source"

# The folder where graders on this machine hold their worker user ids (grading.users.claims_folder): shared with
# the grader in the root filesystem, which cannot see this machine's processes.  Without it, a grader here (a
# class, the test suite) could hold the same user id and kill the rehearsal's workers when it ends.
CLAIMS=/run/cs224n-grader-worker-uids
install -d -m 700 -o root -g root "$CLAIMS"

inside() {  # inside COMMAND...: run COMMAND in the root filesystem, in new mount and PID namespaces
  # /proc shows only the namespace's processes (the grader finds its worker user's processes there); /dev/shm
  # is the tmpfs that Python's multiprocessing needs; /dev/pts a terminal's (apt logs through one); the claims
  # folder is this machine's.  env -i: nothing of this machine's environment leaks in.
  # shellcheck disable=SC2016  # $0, $1 and $@ are the inner shell's: the root filesystem, the claims, the command
  unshare --mount --pid --fork --propagation private -- bash -c '
    set -e
    mount -t proc proc "$0/proc"
    mkdir -p "$0/dev/shm" && mount -t tmpfs -o mode=1777 tmpfs "$0/dev/shm"
    mkdir -p "$0/dev/pts" && mount -t devpts -o newinstance,ptmxmode=0666 devpts "$0/dev/pts"
    install -d -m 700 "$0$1" && mount --bind "$1" "$0$1"
    shift
    exec chroot "$0" "$@"' "$ROOTFS" "$CLAIMS" env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    PIP_CERT=/etc/rehearsal-ca.crt "$@"
}

# 3. The image's build: Gradescope copies setup.sh to /autograder and runs it there.
cp "$ROOTFS/autograder/source/setup.sh" "$ROOTFS/autograder/setup.sh"
start=$(now)
inside bash -c 'cd /autograder && ./setup.sh' 2>&1 | tee "$WORK/setup.log"
echo "setup.sh ($DIST): $(( $(now) - start )) s"
cp "$ROOTFS/autograder/source/run_autograder" "$ROOTFS/autograder/run_autograder"

# 4. The submissions.  After run_autograder, the same namespace lists what still runs as the worker user.  The
# misbehaving submission's children leave marks in a folder that everyone may write to, and that the grader
# does not empty (it removes what its worker user made in /tmp and the like).
MARKS="$(python3 "$REPO/tools/rehearsal.py" marks)"
mkdir -p "$ROOTFS$MARKS" && chmod 1733 "$ROOTFS$MARKS"
status=0
for name in reference untrusted empty misbehaving; do
  rm -rf "$ROOTFS/autograder/submission" "$ROOTFS/autograder/results"
  cp -a "$WORK/submissions/$name" "$ROOTFS/autograder/submission"
  rm -f "$ROOTFS$MARKS"/*
  start=$(now)
  # shellcheck disable=SC2016  # expanded by the shell inside the root filesystem
  inside bash -c '
    /autograder/run_autograder
    left=0
    for p in /proc/[0-9]*; do  # the grader runs student code as a user id of 59000..59999 (grading.users.WORKER_UIDS)
      owner=$(stat -c %u "$p" 2> /dev/null || echo 0)
      if (( owner >= 59000 && owner < 60000 )); then
        echo "left running as uid $owner: $(tr "\0" " " < "$p/cmdline")"; left=1
      fi
    done
    exit $left' \
    > "$WORK/$name.log" 2>&1 || { echo "$name: run_autograder failed (see $WORK/$name.log)"; status=1; }
  echo "rehearsal: child processes the submission started: $(find "$ROOTFS$MARKS" -name "child.*" | wc -l)" \
    >> "$WORK/$name.log"
  secs=$(( $(now) - start ))
  if [[ "$name" == misbehaving ]]; then  # its children did start, and none outlived the grading (above)
    grep "^rehearsal: child processes" "$WORK/$name.log"
    grep -q "^rehearsal: child processes the submission started: [1-9]" "$WORK/$name.log" || status=1
  fi
  if [[ -f "$ROOTFS/autograder/results/results.json" ]]; then
    cp "$ROOTFS/autograder/results/results.json" "$WORK/$name.results.json"
    python3 "$REPO/tools/rehearsal.py" check "$name" "$WORK/$name.results.json" || status=1
  else
    echo "$name: no results.json (see $WORK/$name.log)"
    status=1
  fi
  echo "$name graded in $secs s"
done
[[ $status == 0 ]] && echo "rehearsal on $DIST: every score as expected" || echo "rehearsal on $DIST: FAILED"
echo "$WORK holds the root filesystem, the bundle, the submissions and every log ($(du -sh "$WORK" | cut -f1));"
echo "remove it when you are done: rm -rf $WORK"
exit $status
