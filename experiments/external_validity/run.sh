#!/usr/bin/env bash
# External validity with one command: does what the synthetic corpus shows hold on human-labelled
# data nobody on the project wrote? Three parts, then one report:
#   1. transfer: the classifier trained on the corpus (train.py; the embedded recipe on a CPU,
#      experiment=paper with CORPUS on a GPU) scored after its test pass on the balanced EDOS
#      items (159 per class) and on DiaSafety's "Biased Opinion" pairs (external=[edos,diasafety]),
#      then on every EDOS post, the descriptive strata (3.1, 3.2, 4.1, 4.2) included
#      (evaluate.py data=edos data.strata=true);
#   2. the in-domain reference: the same recipe trained on EDOS's own train/dev split and
#      tested on its test split (split.strategy=existing): what a classifier of this size reaches
#      when it does see human posts;
#   3. the detection gap on human data: every detector of the Table 3 sweep on the same balanced
#      EDOS items (the judge without demographics: a post states none), TR_N, TR_OB, TR_BB and
#      delta(OB-BB) with intervals; on DiaSafety the guards' precision, recall and F1 of Unsafe,
#      on the utterance unit against the exchange unit. On a CPU (SCALE=embedded) the guards'
#      8B checkpoints are out of reach: they are sized with dry_run=true (requests and tokens)
#      while the fine-tuned classifier and the embedded LLM as a judge run for real; SCALE=paper
#      runs all of it.
# Rerunning with the same EV_DIR skips every finished step. ECHO_ONLY=1 prints the commands.
#
# Usage: EDOS=<clone of rewire-online/edos> DIASAFETY=<clone of thu-coai/DiaSafety> \
#          [SCALE=embedded|paper] [CORPUS=<corpus>] [CLASSIFIER=<train run>] [LIMIT=477] \
#          experiments/external_validity/run.sh [train.py overrides...]
set -euo pipefail
EDOS=${EDOS:+$(realpath -m "$EDOS")}
DIASAFETY=${DIASAFETY:+$(realpath -m "$DIASAFETY")}
GIVEN_DIR=${EV_DIR:+$(realpath -m "$EV_DIR")}
CLASSIFIER=${CLASSIFIER:+$(realpath -m "$CLASSIFIER")}
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${GIVEN_DIR:-outputs/external_validity/$(date +%Y-%m-%d_%H-%M-%S)}
SCALE=${SCALE:-embedded}
LIMIT=${LIMIT:-477}
for need in EDOS DIASAFETY; do
  if [ -z "${!need:-}" ]; then
    echo "error: $need=<a clone of the release> is required (see experiments/external_validity/README.md)" >&2
    exit 2
  fi
done
case "$SCALE" in
  embedded) TRAIN=() GUARD_MODE=(dry_run=true) ;;
  paper)
    if [ -z "${CORPUS:-}" ]; then echo "error: SCALE=paper needs CORPUS=<the generated corpus>" >&2; exit 2; fi
    TRAIN=(experiment=paper "data.path=$(realpath -m "$CORPUS")") GUARD_MODE=() ;;
  *) echo "error: SCALE=$SCALE; valid: embedded, paper" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
echo "external validity directory: $OUT (SCALE=$SCALE)"

run() {  # a command, or with ECHO_ONLY=1 its shell-quoted words on one line
  if [ -n "${ECHO_ONLY:-}" ]; then printf '%q ' "$@"; echo; else "$@"; fi
}
done_in() { ls "$1"/*/metrics.json >/dev/null 2>&1 || [ -f "$1/metrics.json" ]; }
ON_EDOS=(data=edos "data.path=$EDOS" eval.fraction=1 eval.limit="$LIMIT")
ON_DIA=(data=diasafety "data.path=$DIASAFETY" eval.fraction=1 eval.limit=null)
EXTERNAL=("external=[edos,diasafety]" "external.edos.data.path=$EDOS"
          "external.diasafety.data.path=$DIASAFETY" external.edos.limit="$LIMIT")

# 1. transfer
MODEL=${CLASSIFIER:-$OUT/transfer/classifier}
if [ -z "${CLASSIFIER:-}" ] && ! done_in "$OUT/transfer/classifier"; then
  run "$PY" train.py "${TRAIN[@]}" "${EXTERNAL[@]}" "$@" hydra.run.dir="$OUT/transfer/classifier"
fi
if ! done_in "$OUT/transfer/edos_all"; then
  run "$PY" evaluate.py ckpt="$MODEL" data=edos "data.path=$EDOS" data.strata=true \
    hydra.run.dir="$OUT/transfer/edos_all"
fi
# a classifier trained elsewhere (CLASSIFIER) meets the balanced items and DiaSafety here
if [ -n "${CLASSIFIER:-}" ] && ! done_in "$OUT/transfer/edos_balanced"; then
  run "$PY" evaluate.py ckpt="$MODEL" data=edos "data.path=$EDOS" eval.limit="$LIMIT" \
    hydra.run.dir="$OUT/transfer/edos_balanced"
fi
if [ -n "${CLASSIFIER:-}" ] && ! done_in "$OUT/transfer/diasafety"; then
  run "$PY" evaluate.py ckpt="$MODEL" data=diasafety "data.path=$DIASAFETY" \
    hydra.run.dir="$OUT/transfer/diasafety"
fi

# 2. the in-domain reference (no attribution: the cue lexicon of a post classifier is not asked)
if ! done_in "$OUT/in_domain/edos"; then
  run "$PY" train.py "${TRAIN[@]}" data=edos "data.path=$EDOS" split.strategy=existing \
    attribution.enabled=false "$@" hydra.run.dir="$OUT/in_domain/edos"
fi

# 3. the detection gap on human data
if ! done_in "$OUT/detection/finetuned"; then
  run "$PY" detect.py detector=finetuned ckpt="$MODEL" "${ON_EDOS[@]}" \
    hydra.run.dir="$OUT/detection/finetuned"
fi
if ! done_in "$OUT/detection/judge"; then
  run "$PY" detect.py experiment="detection_judges_$SCALE" detector=judge_operational \
    detector.demographics=false "${ON_EDOS[@]}" hydra.run.dir="$OUT/detection/judge"
fi
if ! done_in "$OUT/detection/guards"; then
  run "$PY" detect.py -m experiment="detection_$SCALE" "${GUARD_MODE[@]}" "${ON_EDOS[@]}" \
    hydra.sweep.dir="$OUT/detection/guards"
fi
for unit in utterance exchange; do
  if ! done_in "$OUT/diasafety/$unit"; then
    run "$PY" detect.py -m experiment="detection_$SCALE" "${GUARD_MODE[@]}" "${ON_DIA[@]}" \
      detector.unit="$unit" hydra.sweep.dir="$OUT/diasafety/$unit"
  fi
done

run "$PY" report.py "runs=$OUT" hydra.run.dir="$OUT/report" "title='External validity, SCALE=$SCALE'"
echo "report: $OUT/report/report.html"
