#!/usr/bin/env bash
# Everything the kit needs from a GPU, in one command that ends inside a time budget; the same command again (on
# the same machine, with the work folder still there) continues what is missing.  Run from the repository root:
#
#   tools/gpu_session.sh [--budget SECONDS] [--seeds 0,1,2] [--parallel 3] [--out DIR] [--course-starter DIR]
#                        [--data-dir DIR] [--data-seeds 0,1] [--experiments-first]
#
# First, together (about 90 s on an H200): the decisive experiment, tools/bench/bench_learning.py (the perceiver's
# first 20 epochs in arms that each change one thing of the fast path, and the attention's gradients with each
# scaled_dot_product_attention backend forced: learning.json), and the CUDA cases of the kit's tests, python -m
# pytest -m cuda tests/kit (cuda-tests.log).
# Then, only if the CUDA tests passed and the default arm (the course's numerics) left the plateau, in parallel:
#   - the experiment: tools/experiment.py run at the course's settings on the built-in data, the seeds trained
#     --parallel on the one GPU, the grader on the first seed's deliverables at the end (experiment.json);
#   - the same on another data folder, if --data-dir names one (default .gpu-session/course-data, where it exists:
#     the course's files are copied there, never committed), its --data-seeds all at once (data-experiment.json);
#   - a student's command as typed: ./run.sh vanilla_pretrain compile --max_epochs 2 (student-run.log).
# Then, alone on the GPU (timings): the course's training loop beside the kit's, with and without compile
# (tools/bench/bench_course_loop.py: speed.json, speed-compiled.json), if --course-starter names the course's
# starter (default .gpu-session/course-starter, where it exists: copy it there before; it is never committed).  The
# experiments stop in time for the timings, unless --experiments-first: then they may take the whole budget, and the
# timings run in what is left of it (or in the next command).
#
# Outputs go to --out (default $OUT, the device tool's folder): at most 8 files, as that tool brings back.  The
# work (the experiment's outputs and checkpoints, which step passed) stays in .gpu-session/ (ignored by git).
# The budget (default 570 s) is the command's: the experiment stops in time for the timings, its checkpoints
# kept for the next command.  A CPU rehearsal of the whole script: --small (the experiment's --small, seed 0,
# the speed on 256 lines).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

BUDGET=570 SEEDS=0,1,2 PARALLEL=3 DEST="${OUT:-}" STARTER=.gpu-session/course-starter SMALL=""
DATA=.gpu-session/course-data DATA_SEEDS=0,1 RESERVE=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --parallel) PARALLEL="$2"; shift 2 ;;
    --out) DEST="$2"; shift 2 ;;
    --course-starter) STARTER="$2"; shift 2 ;;
    --small) SMALL=1; shift ;;
    --data-dir) DATA="$2"; shift 2 ;;
    --data-seeds) DATA_SEEDS="$2"; shift 2 ;;
    --experiments-first) RESERVE=""; shift ;;
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

# -- first, the checks that say whether training here is sound: the learning arms, and the CUDA tests beside them --
# Training runs only where the CUDA tests passed and the default path learned: on an H200 with torch 2.11 the fast
# path's pretrainings learned next to nothing.
if passed tests; then
  say "CUDA tests: passed in an earlier command"
else
  say "learning arms: tools/bench/bench_learning.py; meanwhile the CUDA tests: python -m pytest -m cuda tests/kit"
  LEARN=(--arms all)  # the faults and the slower correct reading too: what the learning watch sees, at full size
  [[ -n "$SMALL" ]] && LEARN=(--epochs 1 --lines 64)
  if [[ ! -f "$WORK/learning.json" ]]; then
    timeout 240 "$PY" tools/bench/bench_learning.py ${LEARN[@]+"${LEARN[@]}"} --json "$WORK/learning.json" \
      > "$WORK/learning.log" 2>&1 &
    LEARN_PID=$!
  fi
  timeout 240 "$PY" -m pytest -q -m cuda -p no:cacheprovider -n 4 -rf tests/kit > "$WORK/cuda-tests.log" 2>&1
  code=$?
  [[ $code -eq 0 ]] && touch "$WORK/passed-tests"
  say "CUDA tests: exit status $code: $(tail -n 1 "$WORK/cuda-tests.log")"
  if [[ -n "${LEARN_PID:-}" ]]; then
    wait "$LEARN_PID"
    say "learning arms (each epoch's mean loss): exit status $?"
    tee -a "$LOG" < "$WORK/learning.log"
  fi
fi
cp "$WORK/cuda-tests.log" "$DEST/" 2>/dev/null  # learning.json travels in logs.tar.gz
# the path the experiments train on must have learned: the default arm off the plateau at the watch's check epoch
# (a rehearsal's single epoch cannot say: it goes on)
if [[ -n "$SMALL" ]]; then
  LEARNED=1
elif "$PY" tools/bench/bench_learning.py --learned default "$WORK/learning.json" >> "$LOG" 2>&1; then
  LEARNED=1
else
  LEARNED=""
fi

# -- the experiments (background) --------------------------------------------------------------------------------
# the time kept for the timings after them, each measured once: none left to measure (or no starter), none kept
SPEED_RESERVE=0
for name in speed.json speed-compiled.json; do
  if [[ -n "$RESERVE" && -f "$STARTER/submission/trainer.py" && ! -f "$WORK/$name" ]]; then
    SPEED_RESERVE=$((SPEED_RESERVE + $([[ -n "$SMALL" ]] && echo 45 || echo 75)))
  fi
done
[[ -n "$SMALL" ]] && SEEDS=0 DATA_SEEDS=0
# experiment NAME DATA-FOLDER SEEDS PARALLEL: start tools/experiment.py run in the background (its pid in EXP_PIDS),
# unless an earlier command finished it
EXP_NAMES=() EXP_PIDS=()
experiment() {
  local name=$1 data=$2 seeds=$3 parallel=$4
  [[ -n "$SMALL" ]] && name=$name-small
  if passed "$name"; then
    say "$name: finished in an earlier command"
    return
  fi
  local argv=(run --out "$WORK/$name.json" --work "$WORK/$name" --seeds "$seeds" --parallel "$parallel"
              ${data:+--data-dir "$data"} ${SMALL:+--small})
  local limit=$(( $(left) - SPEED_RESERVE ))
  if [[ $limit -lt 30 ]]; then  # (timeout 0 would mean no limit at all)
    say "$name: skipped: a budget of ${BUDGET} s leaves it ${limit} s"
    return
  fi
  say "$name: tools/experiment.py ${argv[*]} (at most ${limit} s)"
  timeout --signal=TERM --kill-after=20 "$limit" "$PY" tools/experiment.py "${argv[@]}" >> "$WORK/$name.log" 2>&1 &
  EXP_NAMES+=("$name") EXP_PIDS+=($!)
}
# the other data folder first: the course's data is what students train on
if ! passed tests; then
  say "experiments: not started: the CUDA tests failed (cuda-tests.log); training here would measure a fault"
elif [[ -z "$LEARNED" ]]; then
  say "experiments: not started: the default arm did not leave the plateau (learning.json); see docs/instructor.md"
elif [[ -f "$DATA/birth_dev.tsv" ]]; then
  experiment data-experiment "$(cd "$DATA" && pwd)" "$DATA_SEEDS" "$(tr ',' '\n' <<< "$DATA_SEEDS" | wc -l)"
else
  say "data-experiment: skipped: $DATA holds no birth_dev.tsv (copy the course's data files there first)"
fi
if passed tests && [[ -n "$LEARNED" ]]; then
  experiment experiment "" "$SEEDS" "$PARALLEL"
fi

# -- a student's command, meanwhile ------------------------------------------------------------------------------
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

for k in "${!EXP_PIDS[@]}"; do
  name=${EXP_NAMES[$k]}
  wait "${EXP_PIDS[$k]}"
  code=$?
  [[ $code -eq 0 ]] && touch "$WORK/passed-$name"
  why=$([[ $code -eq 124 ]] && echo "stopped by its time limit: the same command continues it" || echo "see $name.log")
  say "$name: exit status $code ($why): $(tail -n 1 "$WORK/$name.log")"
done
for name in experiment data-experiment; do
  [[ -n "$SMALL" ]] && name=$name-small
  cp "$WORK/$name.json" "$DEST/" 2>/dev/null
done

# -- the timings, alone on the GPU --------------------------------------------------------------------------------
if [[ ! -f "$STARTER/submission/trainer.py" ]]; then
  say "speed: skipped: $STARTER holds no submission/trainer.py (copy the course starter's src/ there first)"
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
  --exclude='course-starter' --exclude='course-data' --exclude='*.tmp*' . 2>/dev/null
say "done; $(left) s of the budget left"
