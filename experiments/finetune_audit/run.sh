#!/usr/bin/env bash
# The fine-tuning audit (the study's Table 4) with one command:
#   1. the clean baseline (train.py) and its cue lexicon (cue_lexicon.json, attention rollout);
#   2. the evaluation side: the frozen baseline on edited test sets (P, M, P+M, SH) and the
#      random-mask controls of M and P+M (RM, P+RM);
#   3. the training side as one Hydra multirun: retrain on edited train/validation data
#      (P+F, P+S, SH, P+F+SH, P+S+SH), test on the clean test set; each retrained model also
#      gets its representation-shift figure and shift/* metrics (the study's Figure 6 panels)
#      and its own cue lexicon (no faithfulness curves or heatmap: those are the baseline's);
#   4. the report with the table, read from the run directories (markdown and HTML).
# The baseline runs experiment=embedded (or experiment=paper among the overrides), the training
# side its pin experiment=finetune_audit_retrain_embedded (or _paper): the rows and settings.
# Rerunning with the same AUDIT_DIR skips every step whose metrics.json already exists.
#
# Usage: experiments/finetune_audit/run.sh [experiment=embedded|paper] [train.py overrides...]
#   AUDIT_DIR=outputs/finetune_audit/mine experiments/finetune_audit/run.sh
#   experiments/finetune_audit/run.sh experiment=paper data.path=/data/benevdial   # paper scale, GPU
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
AUDIT=${AUDIT_DIR:-outputs/finetune_audit/$(date +%Y-%m-%d_%H-%M-%S)}
# experiment=<scale> picks the training side's pin at that scale; the other arguments go to train.py
SCALE=embedded ARGS=()
for arg in "$@"; do
  case "$arg" in experiment=*) SCALE=${arg#experiment=} ;; *) ARGS+=("$arg") ;; esac
done
case "$SCALE" in
  embedded|paper) ;;
  *) echo "error: experiment=$SCALE; valid: embedded, paper (the audit's pins at that scale)" >&2
     exit 2 ;;
esac
mkdir -p "$AUDIT"
echo "audit directory: $AUDIT"

done_in() { [ -f "$1/metrics.json" ]; }

if ! done_in "$AUDIT/baseline"; then
  "$PY" train.py "$@" hydra.run.dir="$AUDIT/baseline"
fi
LEX="$AUDIT/baseline/cue_lexicon.json"
[ -f "$LEX" ] || { echo "error: the baseline wrote no $LEX" >&2; exit 1; }

for iv in punct mask punct+mask shuffle random_mask punct+random_mask; do
  if ! done_in "$AUDIT/evaluation/$iv"; then
    "$PY" evaluate.py ckpt="$AUDIT/baseline" intervention="$iv" lexicon.path="$LEX" \
      hydra.run.dir="$AUDIT/evaluation/$iv"
  fi
done

# the five retrained rows (the pin's intervention sweep)
if [ "$(ls "$AUDIT"/training/*/metrics.json 2>/dev/null | wc -l)" -lt 5 ]; then
  "$PY" train.py -m experiment="finetune_audit_retrain_$SCALE" "${ARGS[@]}" lexicon.path="$LEX" \
    hydra.sweep.dir="$AUDIT/training"
fi

"$PY" report.py runs="$AUDIT" hydra.run.dir="$AUDIT/report"
# the table itself (Table 4 with the RM and P+RM control rows), from the report's markdown
awk '/^## Fine-tuning audit/{on=1} on && /^## / && !/^## Fine-tuning audit/{exit} on' \
  "$AUDIT/report/report.md"
