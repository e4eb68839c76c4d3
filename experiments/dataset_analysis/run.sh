#!/usr/bin/env bash
# Dataset analysis of a corpus, then its report:
#   1. analyze.py: patronising-language markers and Cohen's d vs N, MTLD, Self-BLEU and Vendi
#      per generator × class, a blind annotation subset;
#   2. report.py over the analysis run(s): the effects table with bootstrap intervals over the
#      dialogues, the diversity table and the figures.
# Several corpora or settings compare in one report: pass a sweep (-m) as the overrides.
#
# Usage: [SCALE=paper] experiments/dataset_analysis/run.sh [analyze.py overrides...]
#   experiments/dataset_analysis/run.sh                          # the scripted stand-in (data=embedded)
#   SCALE=paper experiments/dataset_analysis/run.sh data.path=/data/benevdial
# SCALE=paper is the study's analysis of a corpus: Vendi over bert-base-uncased [CLS] vectors
# (VENDI_EMBEDDER=/path/to/bert-base-uncased for a local copy), on a GPU when there is one.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${ANALYSIS_DIR:-outputs/dataset_analysis/$(date +%Y-%m-%d_%H-%M-%S)}
mkdir -p "$OUT"
echo "analysis directory: $OUT"

if [ ! -f "$OUT/analysis/metrics.json" ]; then
  if [ "${SCALE:-}" = paper ]; then
    set -- data=corpus "vendi.embedder=${VENDI_EMBEDDER:-bert-base-uncased}" "$@"
  elif [ -n "${SCALE:-}" ]; then
    echo "error: SCALE=$SCALE; valid: paper (or unset)" >&2; exit 2
  elif [ "$#" -eq 0 ]; then set -- data=embedded; fi
  "$PY" analyze.py "$@" hydra.run.dir="$OUT/analysis"
fi
"$PY" report.py runs="$OUT" hydra.run.dir="$OUT/report" title="Dataset analysis"
