#!/usr/bin/env bash
# The assignment's targets.  Usage, as the course's run.sh:
#   ./run.sh <target> [compile|no-compile] [backend] [extra run.py flags, e.g. --max_epochs 2]
# compile trains with torch.compile (backend: inductor unless named), no-compile (the default) without.
# Reads the data from src/data/ (or $DATA_DIR) and writes params and predictions into src/submission/
# (or $OUT_DIR).  Works from any directory (src/run.sh hands over to this file).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="${DATA_DIR:-$ROOT/src/data}"
OUT="${OUT_DIR:-$ROOT/src/submission}"
PYTHON="${PYTHON:-python3}"

WIKI="$DATA/wiki.txt"
TRAIN="$DATA/birth_places_train.tsv"
DEV="$DATA/birth_dev.tsv"
TEST="$DATA/birth_test_inputs.tsv"

TARGETS="vanilla_finetune_without_pretrain vanilla_eval_dev_without_pretrain vanilla_eval_test_without_pretrain
vanilla_pretrain vanilla_finetune_with_pretrain vanilla_eval_dev_with_pretrain vanilla_eval_test_with_pretrain
perceiver_pretrain perceiver_finetune_with_pretrain perceiver_eval_dev_with_pretrain perceiver_eval_test_with_pretrain
london_baseline collect_submission demo"

usage() {
  echo "usage: ./run.sh <target> [compile|no-compile] [backend] [extra flags passed to src/run.py]"
  echo
  echo "targets (in the order of the handout):"
  for t in $TARGETS; do echo "  $t"; done
  echo
  echo "Data: \$DATA_DIR (default src/data). Outputs: \$OUT_DIR (default src/submission)."
}

need_data() {  # need_data FILE...: every data file must exist
  for f in "$@"; do
    if [[ ! -f "$f" ]]; then
      if [[ -n "${DATA_DIR:-}" ]]; then
        echo "error: data file $f is missing: DATA_DIR=$DATA_DIR (from $PWD) has no $(basename "$f"); point" \
             "DATA_DIR at a folder that has it, or unset it to read src/data/" >&2
      else
        echo "error: data file $f is missing; restore it in src/data/ or point DATA_DIR at a folder that has it" >&2
      fi
      exit 1
    fi
  done
}

need_params() {  # need_params FILE TARGET: the params a target reads must have been trained
  if [[ ! -f "$OUT/$1" ]]; then
    echo "error: $OUT/$1 is missing; run './run.sh $2' first" >&2
    exit 1
  fi
}

run_py() {
  need_data "$WIKI"
  "$PYTHON" "$ROOT/src/run.py" ${COMPILE[@]+"${COMPILE[@]}"} --pretrain_corpus_path "$WIKI" "$@"
}

pretrain() {  # pretrain VARIANT
  run_py --function pretrain --variant "$1" --writing_params_path "$OUT/$1.pretrain.params" ${EXTRA[@]+"${EXTRA[@]}"}
}

finetune() {  # finetune VARIANT READ_PARAMS|"" WRITE_PARAMS
  need_data "$TRAIN"
  local read=()
  [[ -n "$2" ]] && read=(--reading_params_path "$OUT/$2")
  run_py --function finetune --variant "$1" ${read[@]+"${read[@]}"} --writing_params_path "$OUT/$3" \
    --finetune_corpus_path "$TRAIN" ${EXTRA[@]+"${EXTRA[@]}"}
}

evaluate() {  # evaluate VARIANT PARAMS EVAL_FILE OUTPUT
  need_data "$3"
  run_py --function evaluate --variant "$1" --reading_params_path "$OUT/$2" \
    --eval_corpus_path "$3" --outputs_path "$OUT/$4" ${EXTRA[@]+"${EXTRA[@]}"}
}

if [[ $# -lt 1 ]]; then usage; exit 2; fi
TARGET="$1"; shift
# The course's optional 2nd and 3rd arguments: compile or no-compile, then the backend (a word, not a flag)
COMPILE=()
if [[ "${1:-}" == compile || "${1:-}" == no-compile ]]; then
  COMPILE=("--$1" --backend "inductor")
  shift
  if [[ $# -gt 0 && "$1" != -* ]]; then
    COMPILE[2]="$1"
    shift
  fi
  case "$TARGET" in
    london_baseline|collect_submission|demo)
      echo "error: '${COMPILE[0]#--}' applies to the training and evaluation targets, not $TARGET; leave it out" >&2
      exit 2 ;;
  esac
fi
EXTRA=("$@")
case "$TARGET" in  # the targets that write into OUT_DIR make it; collect_submission only reads it
  vanilla_*|perceiver_*) mkdir -p "$OUT" ;;
esac

case "$TARGET" in
  vanilla_finetune_without_pretrain)
    finetune vanilla "" vanilla.model.params ;;
  vanilla_eval_dev_without_pretrain)
    need_params vanilla.model.params vanilla_finetune_without_pretrain
    evaluate vanilla vanilla.model.params "$DEV" vanilla.nopretrain.dev.predictions ;;
  vanilla_eval_test_without_pretrain)
    need_params vanilla.model.params vanilla_finetune_without_pretrain
    evaluate vanilla vanilla.model.params "$TEST" vanilla.nopretrain.test.predictions ;;
  vanilla_pretrain)
    pretrain vanilla ;;
  vanilla_finetune_with_pretrain)
    need_params vanilla.pretrain.params vanilla_pretrain
    finetune vanilla vanilla.pretrain.params vanilla.finetune.params ;;
  vanilla_eval_dev_with_pretrain)
    need_params vanilla.finetune.params vanilla_finetune_with_pretrain
    evaluate vanilla vanilla.finetune.params "$DEV" vanilla.pretrain.dev.predictions ;;
  vanilla_eval_test_with_pretrain)
    need_params vanilla.finetune.params vanilla_finetune_with_pretrain
    evaluate vanilla vanilla.finetune.params "$TEST" vanilla.pretrain.test.predictions ;;
  perceiver_pretrain)
    pretrain perceiver ;;
  perceiver_finetune_with_pretrain)
    need_params perceiver.pretrain.params perceiver_pretrain
    finetune perceiver perceiver.pretrain.params perceiver.finetune.params ;;
  perceiver_eval_dev_with_pretrain)
    need_params perceiver.finetune.params perceiver_finetune_with_pretrain
    evaluate perceiver perceiver.finetune.params "$DEV" perceiver.pretrain.dev.predictions ;;
  perceiver_eval_test_with_pretrain)
    need_params perceiver.finetune.params perceiver_finetune_with_pretrain
    evaluate perceiver perceiver.finetune.params "$TEST" perceiver.pretrain.test.predictions ;;
  london_baseline)
    need_data "$TRAIN" "$DEV"
    "$PYTHON" "$ROOT/src/london_baseline.py" --train "$TRAIN" --eval "$DEV" ${EXTRA[@]+"${EXTRA[@]}"} ;;
  demo)
    "$PYTHON" "$ROOT/src/demo.py" ${EXTRA[@]+"${EXTRA[@]}"} ;;
  collect_submission)
    "$PYTHON" "$ROOT/src/collect_submission.py" --submission_dir "$OUT" ${EXTRA[@]+"${EXTRA[@]}"} ;;
  *)
    echo "error: unknown target '$TARGET'" >&2
    usage >&2
    exit 2 ;;
esac
