#!/usr/bin/env bash
# The detection study (Table 3, Figures 3-5) with one command:
#   1. one detect.py run per detector (a Hydra multirun: one run directory and one W&B run
#      each), on the same seeded, class-balanced evaluation set; every guard in its own mode
#      (experiment=detection_<scale>);
#   2. the three LLM judges as their own multirun (experiment=detection_judges_<scale>; at paper
#      scale in the study's mode: sampled replies, temperature 0.6, top-p 0.9, up to 2,000
#      tokens, the study's three judges);
#   3. the operational judge again without demographics, then its demographic-context flips
#      (Figure 4); every run also writes its bootstrap stability figure;
#   4. Figure 5 as the study draws it: one Granite Guardian 4.1 run on a 20% pool
#      (eval.fraction=0.2, figure5_pool/), its evaluation sizes of 0.5%-20% resampled from that
#      pool; at embedded scale on the scripted corpus at the recipe's size (LIMIT, else the
#      pin's eval.limit), like every other run, and scored there (see below);
#   5. the fine-tuned classifier in the same table when FINETUNED=<train run dir> is set;
#   6. Table 3 printed from its own runs' directories (markdown; CSV beside it).
# The settings live in conf/experiment/detection_*.yaml; DETECTORS=a,b and JUDGES=a,b replace
# the pins' lists, LIMIT=N their evaluation set, JUDGE_MODE=score|generate the judges' mode.
# Rerunning with the same DETECT_DIR skips finished runs; the LLM request cache makes the
# rest of an interrupted sweep cheap. ECHO_ONLY=1 prints every command instead of running it.
#
# Usage: [SCALE=embedded|paper] experiments/detection/run.sh [detect.py overrides...]
#   experiments/detection/run.sh                      # embedded: guards and judge on SmolLM2 (CPU)
#   SCALE=paper experiments/detection/run.sh data=corpus data.path=/data/benevdial \
#       hydra/launcher=submitit_slurm                 # the study: every detector, GPUs
#   JUDGE_MODE=score SCALE=paper ...                  # the judges' fast alternative (scored labels)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${DETECT_DIR:-outputs/detection/$(date +%Y-%m-%d_%H-%M-%S)}
SCALE=${SCALE:-embedded}
mkdir -p "$OUT"
echo "detection directory: $OUT"

case "$SCALE" in
  embedded|paper) ;;
  *) echo "error: SCALE=$SCALE; valid: embedded, paper" >&2; exit 2 ;;
esac
GUARDS=(experiment="detection_$SCALE")
JUDGE=(experiment="detection_judges_$SCALE")
if [ -n "${DETECTORS:-}" ]; then GUARDS+=(detector="$DETECTORS"); fi
if [ -n "${JUDGE_MODE:-}" ]; then JUDGE+=(detector.mode="$JUDGE_MODE"); fi
JUDGE_LIST=()
if [ -n "${JUDGES:-}" ]; then JUDGE_LIST=(detector="$JUDGES"); fi
# the same evaluation set for every run; the fine-tuned classifier takes no pin (it is no LLM),
# so it gets the pins' corpus and eval.limit here
EVAL=()
if [ -n "${LIMIT:-}" ]; then EVAL=(eval.limit="$LIMIT"); fi
if [ "$SCALE" = paper ]; then FINETUNED_EVAL=(data=corpus "${EVAL[@]}")
else FINETUNED_EVAL=(eval.limit="${LIMIT:-12}"); fi

run() {  # a command, or with ECHO_ONLY=1 its shell-quoted words on one line
  if [ -n "${ECHO_ONLY:-}" ]; then printf '%q ' "$@"; echo; else "$@"; fi
}
done_in() { ls "$1"/*/metrics.json >/dev/null 2>&1 || [ -f "$1/metrics.json" ]; }

if ! done_in "$OUT/sweep"; then
  run "$PY" detect.py -m "${GUARDS[@]}" "${EVAL[@]}" "$@" hydra.sweep.dir="$OUT/sweep"
fi
if ! done_in "$OUT/judges"; then
  run "$PY" detect.py -m "${JUDGE[@]}" "${JUDGE_LIST[@]}" "${EVAL[@]}" "$@" \
    hydra.sweep.dir="$OUT/judges"
fi
if ! done_in "$OUT/judge_no_demographics"; then
  run "$PY" detect.py "${JUDGE[@]}" detector=judge_operational detector.demographics=false \
    "${EVAL[@]}" "$@" hydra.run.dir="$OUT/judge_no_demographics"
fi
WITH=$(grep -l "name: judge_operational" "$OUT"/judges/*/.hydra/config.yaml 2>/dev/null | head -1 || true)
if [ -n "$WITH" ]; then
  run "$PY" detect.py flips.with="$(dirname "$(dirname "$WITH")")" \
    flips.without="$OUT/judge_no_demographics" hydra.run.dir="$OUT/flips"
else
  echo "flips skipped: no finished judge_operational run in $OUT/judges"
fi
# on SmolLM2 (embedded) the guard's generated reply never holds a <score>, so every verdict
# would be invalid and no figure drawn: there it is scored (P(yes) vs P(no)) instead
POOL=()
if [ "$SCALE" = embedded ]; then POOL=(detector.mode=score); fi
if ! done_in "$OUT/figure5_pool"; then
  run "$PY" detect.py experiment="detection_$SCALE" detector=granite_guardian_4_1 \
    "${POOL[@]}" eval.fraction=0.2 "${EVAL[@]}" "$@" hydra.run.dir="$OUT/figure5_pool"
fi
if [ -n "${FINETUNED:-}" ] && ! done_in "$OUT/finetuned"; then
  run "$PY" detect.py detector=finetuned ckpt="$FINETUNED" "${FINETUNED_EVAL[@]}" "$@" \
    hydra.run.dir="$OUT/finetuned"
fi

# Table 3's rows: the 10% evaluation set's runs (the 20% pool run is Figure 5's alone)
TABLE3=("$OUT/sweep" "$OUT/judges" "$OUT/judge_no_demographics" "$OUT/finetuned")
if [ -n "${ECHO_ONLY:-}" ]; then
  run "$PY" experiments/detection/table3.py "${TABLE3[@]}" --csv "$OUT/table3.csv"
else
  "$PY" experiments/detection/table3.py "${TABLE3[@]}" --csv "$OUT/table3.csv" | tee "$OUT/table3.md"
fi
if [ -f conf/report.yaml ]; then
  run "$PY" report.py runs="$OUT" hydra.run.dir="$OUT/report"
fi
