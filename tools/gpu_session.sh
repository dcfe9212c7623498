#!/usr/bin/env bash
# Everything the kit needs from a GPU, in one command that ends inside a time budget; the same command again (on
# the same machine, with the work folder still there) continues what is missing.  Run from the repository root:
#
#   tools/gpu_session.sh [--budget SECONDS] [--seeds 0,1,2] [--parallel 3] [--out DIR] [--course-starter DIR]
#
# In parallel, while the experiment trains:
#   - the experiment: tools/experiment.py run at the course's settings on the built-in data, the seeds trained
#     --parallel on the one GPU, the grader on the first seed's deliverables at the end (experiment.json);
#   - the CUDA cases of the test suite: python -m pytest -m cuda (cuda-tests.log);
#   - a student's command as typed: ./run.sh vanilla_pretrain compile --max_epochs 2 (student-run.log).
# Then, alone on the GPU (timings): the course's training loop beside the kit's, with and without compile
# (tools/bench/bench_course_loop.py: speed.json, speed-compiled.json), if --course-starter names the course's
# starter (default .gpu-session/course-starter, where it exists: copy it there before; it is never committed).
#
# Outputs go to --out (default $OUT, the device tool's folder): at most 8 files, as that tool brings back.  The
# work (the experiment's outputs and checkpoints, which step passed) stays in .gpu-session/ (ignored by git).
# The budget (default 570 s) is the command's: the experiment stops in time for the timings, its checkpoints
# kept for the next command.  A CPU rehearsal of the whole script: --small (the experiment's --small, seed 0,
# the speed on 256 lines).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

BUDGET=570 SEEDS=0,1,2 PARALLEL=3 DEST="${OUT:-}" STARTER=.gpu-session/course-starter SMALL=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --parallel) PARALLEL="$2"; shift 2 ;;
    --out) DEST="$2"; shift 2 ;;
    --course-starter) STARTER="$2"; shift 2 ;;
    --small) SMALL=1; shift ;;
    *) echo "error: unknown argument $1; see the comment at the top of $0" >&2; exit 2 ;;
  esac
done
if [[ -z "$DEST" ]]; then
  echo "error: give --out DIR (or set OUT): where the results go" >&2
  exit 2
fi
mkdir -p "$DEST" .gpu-session
WORK=.gpu-session
START=$SECONDS
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
LOG="$DEST/session.log"
left() { echo $((BUDGET - (SECONDS - START))); }
say() { echo "[gpu_session $(date -u +%H:%M:%S), $((SECONDS - START)) s] $*" | tee -a "$LOG"; }
passed() { [[ -f "$WORK/passed-$1" ]]; }

say "budget ${BUDGET} s; results in $DEST; work in $WORK"
{
  if command -v nvidia-smi > /dev/null; then nvidia-smi -L; else echo "no nvidia-smi"; fi
  "$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda",
torch.version.cuda, "gpu", torch.cuda.get_device_name() if torch.cuda.is_available() else None)'
  nproc
} 2>&1 | tee -a "$LOG"

# -- the experiment (background) ---------------------------------------------------------------------------------
# the time kept for the timings after it, each measured once: none left to measure (or no starter), none kept
SPEED_RESERVE=0
for name in speed.json speed-compiled.json; do
  if [[ -f "$STARTER/submission/trainer.py" && ! -f "$WORK/$name" ]]; then
    SPEED_RESERVE=$((SPEED_RESERVE + $([[ -n "$SMALL" ]] && echo 45 || echo 75)))
  fi
done
EXP_NAME=experiment
[[ -n "$SMALL" ]] && EXP_NAME=experiment-small SEEDS=0
EXP=(run --out "$WORK/$EXP_NAME.json" --work "$WORK/$EXP_NAME" --seeds "$SEEDS" --parallel "$PARALLEL" ${SMALL:+--small})
exp_limit=$(( $(left) - SPEED_RESERVE ))
if [[ $exp_limit -lt 30 ]]; then  # (timeout 0 would mean no limit at all)
  say "experiment: skipped: a budget of ${BUDGET} s leaves it ${exp_limit} s"
  EXP_PID=""
else
  say "experiment: tools/experiment.py ${EXP[*]} (at most ${exp_limit} s)"
  timeout --signal=TERM --kill-after=20 "$exp_limit" "$PY" tools/experiment.py "${EXP[@]}" \
    >> "$WORK/experiment.log" 2>&1 &
  EXP_PID=$!
fi

# -- the CUDA tests and a student's command, meanwhile ------------------------------------------------------------
if passed tests; then
  say "CUDA tests: passed in an earlier command"
else
  say "CUDA tests: python -m pytest -m cuda tests/kit"
  timeout 240 "$PY" -m pytest -q -m cuda -p no:cacheprovider -n 4 tests/kit > "$WORK/cuda-tests.log" 2>&1
  code=$?
  [[ $code -eq 0 ]] && touch "$WORK/passed-tests"
  say "CUDA tests: exit status $code: $(tail -n 1 "$WORK/cuda-tests.log")"
fi
cp "$WORK/cuda-tests.log" "$DEST/" 2>/dev/null

STUDENT=(./run.sh vanilla_pretrain compile --max_epochs 2)
if passed student; then
  say "student's command: passed in an earlier command"
elif [[ -n "$SMALL" ]]; then
  say "student's command: not in a rehearsal (a full-size model)"
else
  say "student's command: ${STUDENT[*]}"
  rm -f src/submission/vanilla.pretrain.params.ckpt
  timeout 300 "${STUDENT[@]}" > "$WORK/student-run.log" 2>&1
  code=$?
  [[ $code -eq 0 && -f src/submission/vanilla.pretrain.params ]] && touch "$WORK/passed-student"
  say "student's command: exit status $code: $(tail -n 1 "$WORK/student-run.log")"
fi
cp "$WORK/student-run.log" "$DEST/" 2>/dev/null

if [[ -n "$EXP_PID" ]]; then
  wait "$EXP_PID"
  code=$?
  why=$([[ $code -eq 124 ]] && echo "stopped by its time limit: the same command continues it" || echo "see experiment.log")
  say "experiment: exit status $code ($why): $(tail -n 1 "$WORK/experiment.log")"
  cp "$WORK/$EXP_NAME.json" "$DEST/" 2>/dev/null
fi

# -- the timings, alone on the GPU --------------------------------------------------------------------------------
if [[ ! -f "$STARTER/submission/trainer.py" ]]; then
  say "speed: skipped: $STARTER holds no course starter (copy ../shared/course-starter there and carry it)"
else
  LINES=() EPOCHS=4
  [[ -n "$SMALL" ]] && LINES=(--lines 256) EPOCHS=2
  for variant in plain compiled; do
    name=speed$([[ $variant == compiled ]] && echo -compiled).json
    if [[ -f "$WORK/$name" ]]; then
      say "speed ($variant): measured in an earlier command"
    elif [[ $(left) -lt 30 ]]; then
      say "speed ($variant): skipped: $(left) s left"
    else
      flags=(--course-starter "$STARTER" --epochs "$EPOCHS" ${LINES[@]+"${LINES[@]}"} --json "$WORK/$name")
      [[ $variant == compiled ]] && flags+=(--compile)
      say "speed ($variant): tools/bench/bench_course_loop.py ${flags[*]}"
      timeout $(( $(left) - 10 )) "$PY" tools/bench/bench_course_loop.py "${flags[@]}" > "$WORK/speed-$variant.log" 2>&1
      say "speed ($variant): exit status $?: $(grep -a 'whole pretraining' "$WORK/speed-$variant.log" | tail -n 1)"
    fi
    cp "$WORK/$name" "$DEST/" 2>/dev/null
  done
fi
# every log (the targets' run.py output and loss logs, the grading, the timings) in one file
tar -czf "$DEST/logs.tar.gz" -C "$WORK" --exclude='*.params' --exclude='*.ckpt' --exclude='*.predictions' \
  --exclude='course-starter' --exclude='*.tmp*' . 2>/dev/null
say "done; $(left) s of the budget left"
