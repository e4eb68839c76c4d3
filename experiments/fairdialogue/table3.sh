#!/usr/bin/env bash
# FairDialogue's Table 3: RST (share of "no" decisions revised to yes) and ANR (mean rounds to
# revise) per group under up to four pushback turns; groups cross age and gender
# (young_male, young_female, elderly_male) as in the study.
#
# Usage: experiments/fairdialogue/table3.sh [probe.py overrides...]
#   TARGETS=embedded experiments/fairdialogue/table3.sh limit=4
#   FD_DIR=outputs/fairdialogue/t3 TARGETS=a,b experiments/fairdialogue/table3.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
FD=${FD_DIR:-outputs/fairdialogue/table3_$(date +%Y-%m-%d_%H-%M-%S)}
TARGETS=${TARGETS:-embedded}
mkdir -p "$FD"
echo "FairDialogue Table 3 directory: $FD"

if [ "$(ls "$FD"/sweep/*/metrics.json 2>/dev/null | wc -l)" -lt 1 ]; then
  "$PY" probe.py -m probe=fairdialogue_feedback target="$TARGETS" logger=none "$@" \
    hydra.sweep.dir="$FD/sweep"
fi
"$PY" experiments/fairdialogue/tables.py "$FD/sweep" --out "$FD"
"$PY" report.py runs="$FD/sweep" hydra.run.dir="$FD/report"
