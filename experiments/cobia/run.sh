#!/usr/bin/env bash
# CoBia's score table (target × method × judge, per category) from one Hydra multirun:
#   1. probe.py probe=$PROBE (cobia: HCC, SCC, zero-shot, role-play, and DAN where the target
#      names its maker; cobia_paper: the same as released, at paper scale) for every target in
#      TARGETS, judged by every judge in probe.judges;
#   2. the table printed from the run directories (score_table.py), then report.py.
# Every request goes through the LLM cache, so rerunning with the same COBIA_DIR costs nothing
# up to where it stopped.
#
# Usage: experiments/cobia/run.sh [probe.py overrides...]
#   COBIA_DATA=../shared/data/cobia experiments/cobia/run.sh limit=6 probe.max_tokens=48   # CPU smoke
#   PROBE=cobia_paper TARGETS=vllm_llama31_8b,openai experiments/cobia/run.sh             # paper scale
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
DATA=${COBIA_DATA:-../shared/data/cobia}
OUT=${COBIA_DIR:-outputs/cobia/$(date +%Y-%m-%d_%H-%M-%S)}
TARGETS=${TARGETS:-embedded}
PROBE=${PROBE:-cobia}
mkdir -p "$OUT"
echo "CoBia directory: $OUT"

"$PY" probe.py -m probe="$PROBE" target="$TARGETS" probe.data.path="$DATA" logger=none "$@" \
  hydra.sweep.dir="$OUT/sweep"
"$PY" experiments/cobia/score_table.py "$OUT/sweep" --out "$OUT"
if [ -f conf/report.yaml ]; then
  "$PY" report.py runs="$OUT/sweep" hydra.run.dir="$OUT/report"
fi
