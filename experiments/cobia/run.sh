#!/usr/bin/env bash
# CoBia's score table (target × method × judge, per category) from one Hydra multirun:
#   1. probe.py experiment=cobia_$SCALE (embedded: probe=cobia, HCC, SCC, zero-shot, role-play,
#      and DAN where the target names its maker; paper: probe=cobia_paper, the same as released,
#      at paper scale) for every target in TARGETS, judged by every judge in probe.judges
#      (PROBE=<option> replaces the pin's probe);
#   2. the table printed from the run directories (score_table.py), then report.py.
# Every request goes through the LLM cache, so rerunning with the same COBIA_DIR costs nothing
# up to where it stopped.
#
# COBIA_DATA is the CoBia release: a clone of github.com/nafisenik/CoBia, or a folder holding its
# three JSON files. Unset, the probe runs on benevaudit's stand-in (invented groups, marked
# ran.stand_in in run.json): it tries the pipeline, it measures nothing.
#
# Usage: [SCALE=embedded|paper] experiments/cobia/run.sh [probe.py overrides...]
#   experiments/cobia/run.sh limit=3 probe.max_tokens=48                     # stand-in, CPU smoke
#   COBIA_DATA=/data/CoBia experiments/cobia/run.sh limit=6 probe.max_tokens=48      # CPU smoke
#   SCALE=paper COBIA_DATA=/data/CoBia TARGETS=vllm_llama31_8b,openai \
#     experiments/cobia/run.sh                                                  # paper scale
set -euo pipefail
DATA=()
if [ -n "${COBIA_DATA:-}" ]; then
  DATA=("probe.data.path=$(realpath -m "$COBIA_DATA")")     # as given from the caller's folder
else
  echo "COBIA_DATA is not set: running on the stand-in (invented groups, not the CoBia release;" \
       "its rates say nothing about a model). For the study: COBIA_DATA=<a clone of" \
       "github.com/nafisenik/CoBia, or a folder with its three JSON files>" >&2
fi
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${COBIA_DIR:-outputs/cobia/$(date +%Y-%m-%d_%H-%M-%S)}
TARGETS=${TARGETS:-embedded}
SCALE=${SCALE:-embedded}
case "$SCALE" in
  embedded|paper) ;;
  *) echo "error: SCALE=$SCALE; valid: embedded, paper" >&2; exit 2 ;;
esac
PIN=(experiment="cobia_$SCALE")
if [ -n "${PROBE:-}" ]; then PIN+=(probe="$PROBE"); fi
mkdir -p "$OUT"
echo "CoBia directory: $OUT"

"$PY" probe.py -m "${PIN[@]}" target="$TARGETS" ${DATA[@]+"${DATA[@]}"} "$@" \
  hydra.sweep.dir="$OUT/sweep"
"$PY" experiments/cobia/score_table.py "$OUT/sweep" --out "$OUT"
if [ -f conf/report.yaml ]; then
  "$PY" report.py runs="$OUT/sweep" hydra.run.dir="$OUT/report"
fi
