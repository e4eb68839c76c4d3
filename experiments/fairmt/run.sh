#!/usr/bin/env bash
# FairMT-Bench's bias rates (task × type × dimension, by turn where every reply is judged) from
# one Hydra multirun:
#   1. probe.py experiment=fairmt_$SCALE (embedded: probe=fairmt, the embedded SmolLM2 as target
#      and judge; paper: probe=fairmt_paper, gpt-4-turbo as judge, sent what the release sends)
#      for every target in TARGETS (PROBE=<option> replaces the pin's probe);
#   2. each run's table.md printed, then report.py over the sweep (the FairMT section).
# Every request goes through the LLM cache, so rerunning with the same FAIRMT_DIR costs nothing
# up to where it stopped; each run's inputs.json names the release files it read, with sha256.
#
# FAIRMT_DATA is a clone of github.com/FanZT6/FairMT-bench (it has no licence: benevaudit reads
# it where it is and copies nothing). Unset, the probe runs on benevaudit's stand-in (invented
# groups, marked ran.stand_in in run.json): it tries the pipeline, it measures nothing.
#
# Usage: [SCALE=embedded|paper] experiments/fairmt/run.sh [probe.py overrides...]
#   experiments/fairmt/run.sh limit=1 probe.sampling.max_tokens=32                # stand-in
#   FAIRMT_DATA=/data/FairMT-bench experiments/fairmt/run.sh limit=1 \
#     probe.sampling.max_tokens=32                                              # CPU smoke
#   SCALE=paper FAIRMT_DATA=/data/FairMT-bench TARGETS=vllm_llama31_8b,openai \
#     experiments/fairmt/run.sh                                                 # paper scale
set -euo pipefail
DATA=()
if [ -n "${FAIRMT_DATA:-}" ]; then
  DATA=("probe.data.path=$(realpath -m "$FAIRMT_DATA")")     # as given from the caller's folder
else
  echo "FAIRMT_DATA is not set: running on the stand-in (invented groups, not the FairMT-Bench" \
       "release; its rates say nothing about a model). For the study: FAIRMT_DATA=<a clone of" \
       "github.com/FanZT6/FairMT-bench>" >&2
fi
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${FAIRMT_DIR:-outputs/fairmt/$(date +%Y-%m-%d_%H-%M-%S)}
TARGETS=${TARGETS:-embedded}
SCALE=${SCALE:-embedded}
case "$SCALE" in
  embedded|paper) ;;
  *) echo "error: SCALE=$SCALE; valid: embedded, paper" >&2; exit 2 ;;
esac
PIN=(experiment="fairmt_$SCALE")
if [ -n "${PROBE:-}" ]; then PIN+=(probe="$PROBE"); fi
mkdir -p "$OUT"
echo "FairMT-Bench directory: $OUT"

"$PY" probe.py -m "${PIN[@]}" target="$TARGETS" ${DATA[@]+"${DATA[@]}"} "$@" \
  hydra.sweep.dir="$OUT/sweep"
for table in "$OUT"/sweep/*/table.md; do
  if [ -f "$table" ]; then echo; cat "$table"; fi
done
if [ -f conf/report.yaml ]; then
  "$PY" report.py runs="$OUT/sweep" hydra.run.dir="$OUT/report"
fi
