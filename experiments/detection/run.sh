#!/usr/bin/env bash
# The detection study (Table 3, Figures 3-5) with one command:
#   1. one detect.py run per detector (a Hydra multirun: one run directory and one W&B run
#      each), on the same seeded, class-balanced evaluation set; every guard in its own mode;
#   2. the three LLM judges as their own multirun (at paper scale in the study's mode: sampled
#      replies, temperature 0.6, top-p 0.9, up to 2,000 tokens, the study's three judges);
#   3. the operational judge again without demographics, then its demographic-context flips
#      (Figure 4); every run also writes its bootstrap stability figure (Figure 5);
#   4. the fine-tuned classifier in the same table when FINETUNED=<train run dir> is set;
#   5. Table 3 printed from the run directories only (markdown; CSV beside it).
# Rerunning with the same DETECT_DIR skips finished runs; the LLM request cache makes the
# rest of an interrupted sweep cheap. ECHO_ONLY=1 prints every command instead of running it.
#
# Usage: experiments/detection/run.sh [detect.py overrides...]
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

if [ "$SCALE" = paper ]; then
  DETECTORS=${DETECTORS:-regard,toxigen,beavertails,wildguard,llama_guard3,qwen3guard,granite_guardian_3_3,granite_guardian_4_1}
  JUDGES=${JUDGES:-judge_plain,judge_conceptual,judge_operational}
  # the study's judges sample and are parsed; JUDGE_MODE=score is the fast alternative
  JUDGE=(detector.mode="${JUDGE_MODE:-generate}" judges=study)
  LLM=()
else
  # no hub on this machine: the generative guards and the judge run on the embedded SmolLM2
  # (their real prompts and parsers); the sequence classifiers need their checkpoints
  DETECTORS=${DETECTORS:-llama_guard3,granite_guardian_4_1,qwen3guard}
  JUDGES=${JUDGES:-judge_operational}
  JUDGE=(detector.mode="${JUDGE_MODE:-score}")
  LLM=(detector.llm.backend=hf detector.llm.model=embedded:smollm2)
fi
# the same evaluation set for every run, the fine-tuned classifier's included
EVAL=()
if [ -n "${LIMIT:-}" ] || [ "$SCALE" != paper ]; then EVAL=(eval.limit=${LIMIT:-12}); fi

run() {  # a command, or with ECHO_ONLY=1 its shell-quoted words on one line
  if [ -n "${ECHO_ONLY:-}" ]; then printf '%q ' "$@"; echo; else "$@"; fi
}
done_in() { ls "$1"/*/metrics.json >/dev/null 2>&1 || [ -f "$1/metrics.json" ]; }

if [ -n "$DETECTORS" ] && ! done_in "$OUT/sweep"; then
  run "$PY" detect.py -m detector="$DETECTORS" "${LLM[@]}" "${EVAL[@]}" "$@" hydra.sweep.dir="$OUT/sweep"
fi
if [ -n "$JUDGES" ] && ! done_in "$OUT/judges"; then
  run "$PY" detect.py -m detector="$JUDGES" "${JUDGE[@]}" "${LLM[@]}" "${EVAL[@]}" "$@" \
    hydra.sweep.dir="$OUT/judges"
fi
if ! done_in "$OUT/judge_no_demographics"; then
  run "$PY" detect.py detector=judge_operational detector.demographics=false "${JUDGE[@]}" \
    "${LLM[@]}" "${EVAL[@]}" "$@" hydra.run.dir="$OUT/judge_no_demographics"
fi
WITH=$(grep -l "name: judge_operational" "$OUT"/judges/*/.hydra/config.yaml 2>/dev/null | head -1 || true)
if [ -n "$WITH" ]; then
  run "$PY" detect.py flips.with="$(dirname "$(dirname "$WITH")")" \
    flips.without="$OUT/judge_no_demographics" hydra.run.dir="$OUT/flips"
else
  echo "flips skipped: no finished judge_operational run in $OUT/judges"
fi
if [ -n "${FINETUNED:-}" ] && ! done_in "$OUT/finetuned"; then
  run "$PY" detect.py detector=finetuned ckpt="$FINETUNED" "${EVAL[@]}" "$@" hydra.run.dir="$OUT/finetuned"
fi

if [ -n "${ECHO_ONLY:-}" ]; then
  run "$PY" experiments/detection/table3.py "$OUT" --csv "$OUT/table3.csv"
else
  "$PY" experiments/detection/table3.py "$OUT" --csv "$OUT/table3.csv" | tee "$OUT/table3.md"
fi
if [ -f conf/report.yaml ]; then
  run "$PY" report.py runs="$OUT" hydra.run.dir="$OUT/report"
fi
