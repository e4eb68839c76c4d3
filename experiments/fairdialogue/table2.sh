#!/usr/bin/env bash
# FairDialogue's Table 2: GUS (award, interview, assignment) and SNSR, SNSV (course,
# entertainment, occupation) per model × attribute, with averages over tasks.
#   1. one Hydra multirun of probe.py over both probes and every target (TARGETS):
#      experiment=fairdialogue_embedded, or at SCALE=paper fairdialogue_paper: the study's speech
#      models (GPT-4o Audio, Gemini 2.5 Flash-Lite, Qwen2.5-Omni, Qwen2-Audio) heard and stated,
#      spoken replies transcribed by Whisper large-v3, replies up to 512 tokens; TARGETS there
#      replaces the pin's models (text models need probe.mode=text);
#   2. the table printed from the run directories (tables.py), then the report (report.py).
# Requests go through the LLM cache, so rerunning with the same FD_DIR is free up to where it
# stopped; a finished run directory (metrics.json) is simply re-read.
#
# Usage: [SCALE=embedded|paper] experiments/fairdialogue/table2.sh [probe.py overrides...]
#   TARGETS=embedded experiments/fairdialogue/table2.sh limit=2          # CPU smoke run
#   SCALE=paper experiments/fairdialogue/table2.sh                        # the spoken study
#   SCALE=paper TARGETS=vllm_llama31_8b experiments/fairdialogue/table2.sh probe.mode=text
#   TARGETS=a,b experiments/fairdialogue/table2.sh probe.mode=audio       # audio-capable targets
#   FD_DIR=outputs/fairdialogue/t2 experiments/fairdialogue/table2.sh probe.prag.normalise=pairs
#   DEFINITION=released experiments/fairdialogue/table2.sh   # the authors' released scoring
#     (every run writes both; DEFINITION picks the one the table and report show, paper by
#     default; SIMILARITY=serp for the released SERP instead of PRAG)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
FD=${FD_DIR:-outputs/fairdialogue/table2_$(date +%Y-%m-%d_%H-%M-%S)}
DEFINITION=${DEFINITION:-paper}
SIMILARITY=${SIMILARITY:-prag}
SCALE=${SCALE:-embedded}
case "$SCALE" in
  embedded|paper) ;;
  *) echo "error: SCALE=$SCALE; valid: embedded, paper" >&2; exit 2 ;;
esac
# the embedded pin asks SmolLM2; the paper pin sweeps its own speech models unless TARGETS is set
if [ "$SCALE" = embedded ]; then TARGETS=${TARGETS:-embedded}; fi
TARGET=(${TARGETS:+"target=$TARGETS"})
mkdir -p "$FD"
echo "FairDialogue Table 2 directory: $FD"

if [ "$(ls "$FD"/sweep/*/metrics.json 2>/dev/null | wc -l)" -lt 2 ]; then
  "$PY" probe.py -m experiment="fairdialogue_$SCALE" "${TARGET[@]}" "$@" \
    hydra.sweep.dir="$FD/sweep"
fi
"$PY" experiments/fairdialogue/tables.py "$FD/sweep" --out "$FD" --definition "$DEFINITION" \
  --similarity "$SIMILARITY"
"$PY" report.py runs="$FD/sweep" hydra.run.dir="$FD/report" \
  fairdialogue.definition="$DEFINITION" fairdialogue.similarity="$SIMILARITY"
