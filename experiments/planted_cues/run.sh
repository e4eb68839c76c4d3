#!/usr/bin/env bash
# The attribution positive control as an experiment: plant known cue tokens in each class's
# agent turns (scripted corpus, no other class signal), fine-tune, and check that the audit
# finds them:
#   1. train.py on the planted corpus; attention rollout writes cue_lexicon.json;
#   2. the planted cues' ranks in their class's lexicon (each should be in the top 10);
#   3. evaluate.py with the cues masked (M) and the random-mask control (RM): masking what the
#      audit found must hurt more than masking as many random words;
#   4. report.py over the directory: the table, the heatmap and the deletion curves.
# The corpus and training settings are the pin experiment=planted_cues_embedded, or with
# experiment=paper among the overrides planted_cues_paper (the same control on bert-base-uncased).
# Rerunning with the same CONTROL_DIR skips finished steps.
#
# Usage: experiments/planted_cues/run.sh [experiment=embedded|paper] [train.py overrides...]
#   CONTROL_DIR=outputs/planted_cues/c1 experiments/planted_cues/run.sh seed=1
#   experiments/planted_cues/run.sh experiment=paper trainer=gpu data.size=3000   # paper scale, GPU
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${CONTROL_DIR:-outputs/planted_cues/$(date +%Y-%m-%d_%H-%M-%S)}
# experiment=<scale> picks the pin at that scale; every other argument goes to train.py
SCALE=embedded ARGS=()
for arg in "$@"; do
  case "$arg" in experiment=*) SCALE=${arg#experiment=} ;; *) ARGS+=("$arg") ;; esac
done
case "$SCALE" in
  embedded|paper) ;;
  *) echo "error: experiment=$SCALE; valid: embedded, paper (the control's pin at that scale)" >&2
     exit 2 ;;
esac
mkdir -p "$OUT"
echo "control directory: $OUT"

done_in() { [ -f "$1/metrics.json" ]; }

if ! done_in "$OUT/baseline"; then
  "$PY" train.py experiment="planted_cues_$SCALE" "${ARGS[@]}" hydra.run.dir="$OUT/baseline"
fi
LEX="$OUT/baseline/cue_lexicon.json"
"$PY" - "$LEX" <<'PY'
import json, sys
lexicon = json.load(open(sys.argv[1]))
planted = {"N": ["certainly", "surely"], "OB": ["precisely", "basically"], "BB": ["kiddo", "~"]}
found = 0
for cls, cues in planted.items():
    words = [e["word"] for e in lexicon[cls]]
    for cue in cues:
        rank = words.index(cue) + 1 if cue in words else None
        found += rank is not None and rank <= 10
        print(f"{cls:>2} {cue:<10} rank {rank if rank else 'not in the lexicon'}")
print(f"{found} of 6 planted cues in their class's top 10")
PY

# evaluate.py takes the planted corpus, its split and seed from the baseline (reuse_run_data)
for iv in mask random_mask; do
  if ! done_in "$OUT/evaluation/$iv"; then
    "$PY" evaluate.py ckpt="$OUT/baseline" intervention="$iv" lexicon.path="$LEX" \
      hydra.run.dir="$OUT/evaluation/$iv"
  fi
done

"$PY" report.py runs="$OUT" hydra.run.dir="$OUT/report" title="Planted-cue positive control"
