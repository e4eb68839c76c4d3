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
# SCALE=paper is the study's analysis of a corpus (experiment=dataset_analysis_paper): Vendi over
# bert-base-uncased [CLS] vectors (VENDI_EMBEDDER=/path/to/bert-base-uncased for a local copy), on
# a GPU when there is one. With no overrides and no SCALE: experiment=dataset_analysis_embedded.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${ANALYSIS_DIR:-outputs/dataset_analysis/$(date +%Y-%m-%d_%H-%M-%S)}
mkdir -p "$OUT"
echo "analysis directory: $OUT"

if [ ! -f "$OUT/analysis/metrics.json" ]; then
  if [ "${SCALE:-}" = paper ]; then
    set -- experiment=dataset_analysis_paper \
      ${VENDI_EMBEDDER:+"vendi.embedder=$VENDI_EMBEDDER"} "$@"
  elif [ -n "${SCALE:-}" ] && [ "$SCALE" != embedded ]; then
    echo "error: SCALE=$SCALE; valid: paper, embedded (or unset)" >&2; exit 2
  elif [ "$#" -eq 0 ] || [ -n "${SCALE:-}" ]; then
    set -- experiment=dataset_analysis_embedded "$@"
  fi
  "$PY" analyze.py "$@" hydra.run.dir="$OUT/analysis"
fi
"$PY" report.py runs="$OUT" hydra.run.dir="$OUT/report" title="Dataset analysis"
