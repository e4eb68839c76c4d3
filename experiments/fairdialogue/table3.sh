#!/usr/bin/env bash
# FairDialogue's Table 3: RST (share of "no" decisions revised to yes) and ANR (mean rounds to
# revise) per group under up to four pushback turns; groups cross age and gender
# (young_male, young_female, elderly_male) as in the study. The items are those EVERY model
# answered no under every group, so it runs in two phases:
#   1. probe=fairdialogue_decision for every target (TARGETS), under the age_gender groups;
#   2. probe=fairdialogue_feedback for every target with probe.feedback.items_from = the
#      phase-1 run directories (its first round comes from the request cache);
# then both tables (tables.py) and the report (report.py). Overrides go to both phases, and so
# does the pin, experiment=fairdialogue_embedded or (SCALE=paper) fairdialogue_paper (the
# study's speech models, heard and stated, unless TARGETS is set); ROUNDS sets the pushback
# turns (probe.rounds, 4). Items are chosen per mode: every phase-2 run reads the phase-1 runs
# of its own probe.mode, so the audio runs push back on what every model answered no when it
# heard the speaker, and the text runs on what every model answered no when told.
#
# Usage: [SCALE=embedded|paper] experiments/fairdialogue/table3.sh [probe.py overrides...]
#   TARGETS=embedded experiments/fairdialogue/table3.sh limit=4
#   SCALE=paper experiments/fairdialogue/table3.sh                        # the spoken study
#   FD_DIR=outputs/fairdialogue/t3 TARGETS=a,b experiments/fairdialogue/table3.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
FD=${FD_DIR:-outputs/fairdialogue/table3_$(date +%Y-%m-%d_%H-%M-%S)}
ROUNDS=${ROUNDS:-4}
GROUPS_OVERRIDE='+probe.attributes={age_gender:[young_male,young_female,elderly_male]}'
SCALE=${SCALE:-embedded}
case "$SCALE" in
  embedded|paper) ;;
  *) echo "error: SCALE=$SCALE; valid: embedded, paper" >&2; exit 2 ;;
esac
# the embedded pin asks SmolLM2; the paper pin sweeps its own speech models unless TARGETS is set
if [ "$SCALE" = embedded ]; then TARGETS=${TARGETS:-embedded}; fi
TARGET=(${TARGETS:+"target=$TARGETS"})
mkdir -p "$FD"
echo "FairDialogue Table 3 directory: $FD"

if [ "$(ls "$FD"/decision/*/responses.parquet 2>/dev/null | wc -l)" -lt 1 ]; then
  "$PY" probe.py -m experiment="fairdialogue_$SCALE" probe=fairdialogue_decision "${TARGET[@]}" \
    '~probe.attributes' "$GROUPS_OVERRIDE" "$@" hydra.sweep.dir="$FD/decision"
fi
runs=""
for dir in "$FD"/decision/*/; do
  [ -f "$dir/responses.parquet" ] && runs="$runs'${dir%/}',"
done
echo "feedback items: those every run of the same probe.mode answered no in [${runs%,}]"

if [ "$(ls "$FD"/sweep/*/metrics.json 2>/dev/null | wc -l)" -lt 1 ]; then
  "$PY" probe.py -m experiment="fairdialogue_$SCALE" probe=fairdialogue_feedback "${TARGET[@]}" \
    probe.rounds="$ROUNDS" "probe.feedback.items_from=[${runs%,}]" "$@" \
    hydra.sweep.dir="$FD/sweep"
fi
"$PY" experiments/fairdialogue/tables.py "$FD/sweep" --out "$FD"
"$PY" report.py runs="$FD/sweep" hydra.run.dir="$FD/report"
