#!/usr/bin/env bash
# Every study's recipe in turn, then one report over all of them (`make reproduce`):
#   1. the fine-tuning audit, Table 4 (experiments/finetune_audit/run.sh);
#   2. detection, Table 3 and Figures 3-5, the audit's baseline among the detectors, and
#      Figure 5's Granite Guardian 4.1 run on a 20% pool (experiments/detection/run.sh with
#      FINETUNED);
#   3. CoBia's score table (experiments/cobia/run.sh): the stand-in unless COBIA_DATA is set;
#      then FairMT-Bench's bias rates (experiments/fairmt/run.sh) when FAIRMT=<a clone of
#      FanZT6/FairMT-bench> is given;
#   4. FairDialogue's Tables 2 and 3 (experiments/fairdialogue/table2.sh, table3.sh): at
#      SCALE=paper the spoken study, its pin's speech models heard and stated (FD_TARGETS and
#      FD_MODE narrow it), spoken replies transcribed by Whisper;
#   5. the dataset analysis (experiments/dataset_analysis/run.sh);
#   6. external validity (experiments/external_validity/run.sh) when EDOS=<clone of
#      rewire-online/edos> and DIASAFETY=<clone of thu-coai/DiaSafety> are given: the audit's
#      baseline classifier and the detectors on human-labelled data;
#   7. report.py over the runs each recipe reports on: one report.html with every table and figure.
# Each recipe runs with its experiment= pins at SCALE, in its own folder under REPRO_DIR. Rerunning
# with the same REPRO_DIR skips every study whose report exists and resumes the one that stopped,
# as its recipe does. ECHO_ONLY=1 prints the commands instead of running them.
#
# Usage: [SCALE=embedded|paper] [REPRO_DIR=<dir>] scripts/reproduce.sh
#   scripts/reproduce.sh                     # 2 CPU cores: embedded models, the scripted stand-in
#   FAIRMT=/data/FairMT-bench scripts/reproduce.sh   # the same, with FairMT-Bench's release
#   SCALE=paper CORPUS=/data/benevdial COBIA_DATA=/data/CoBia TARGETS=vllm_llama31_8b,openai \
#     scripts/reproduce.sh                   # on a GPU node of a SLURM cluster
# At paper scale every multirun goes out through LAUNCHER (hydra/launcher=submitit_slurm; set
# hydra/launcher=submitit_local for one machine) and the single runs (the audit's baseline and
# evaluations, the analysis) run where the script runs.
set -euo pipefail
GIVEN_DIR=${REPRO_DIR:+$(realpath -m "$REPRO_DIR")}   # as given from the caller's folder
EDOS=${EDOS:+$(realpath -m "$EDOS")}
DIASAFETY=${DIASAFETY:+$(realpath -m "$DIASAFETY")}
FAIRMT=${FAIRMT:+$(realpath -m "$FAIRMT")}
cd "$(dirname "$0")/.."
export PY=${PY:-.venv/bin/python}
OUT=${GIVEN_DIR:-outputs/reproduce/$(date +%Y-%m-%d_%H-%M-%S)}
SCALE=${SCALE:-embedded}

case "$SCALE" in
  embedded)
    # what keeps the whole run under an hour on 2 CPU cores (see README): detection on 6
    # dialogues (LIMIT; its pins take 12: Qwen3Guard's and Granite Guardian 4.1's generated
    # verdicts on SmolLM2 cost minutes a dialogue), the recipes' own CPU smoke sizes for the
    # probes; the audit and the analysis at their embedded pins
    AUDIT=() DETECT=() COBIA=(limit=3 probe.max_tokens=48) TABLE2=(limit=2) TABLE3=(limit=4)
    DETECT_LIMIT=${LIMIT:-6}
    ANALYSIS=() TARGETS=${TARGETS:-embedded} FD_TARGETS=${FD_TARGETS:-$TARGETS} ;;
  paper)
    if [ -z "${CORPUS:-}" ]; then
      echo "error: SCALE=paper needs CORPUS=<the generated corpus: a .parquet, .jsonl or shard" \
           "directory> (python generate.py -m experiment=generation_paper writes one)" >&2
      exit 2
    fi
    CORPUS=$(realpath -m "$CORPUS")
    LAUNCHER=${LAUNCHER:-hydra/launcher=submitit_slurm}
    AUDIT=(experiment=paper "data.path=$CORPUS" "$LAUNCHER")
    DETECT=("data.path=$CORPUS" "$LAUNCHER")
    # FairDialogue is the spoken study: its pin sweeps the study's speech models, heard (audio)
    # and stated (text), unless FD_TARGETS names others (text models need FD_MODE=text)
    FD_TARGETS=${FD_TARGETS:-}
    COBIA=("$LAUNCHER") TABLE2=("$LAUNCHER" ${FD_MODE:+"probe.mode=$FD_MODE"})
    TABLE3=("$LAUNCHER" ${FD_MODE:+"probe.mode=$FD_MODE"})
    ANALYSIS=("data.path=$CORPUS") DETECT_LIMIT=${LIMIT:-}
    TARGETS=${TARGETS:-vllm_llama31_8b} ;;
  *) echo "error: SCALE=$SCALE; valid: embedded, paper" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
echo "reproduction directory: $OUT (SCALE=$SCALE)"

run() {  # a command, or with ECHO_ONLY=1 its shell-quoted words on one line
  if [ -n "${ECHO_ONLY:-}" ]; then printf '%q ' "$@"; echo; else "$@"; fi
}
study() {  # study <folder> <recipe> <env...> -- <overrides...>: skipped once its report exists
  local dir=$OUT/$1 recipe=$2; shift 2
  if [ -f "$dir/report/report.html" ]; then echo "done: $dir"; return; fi
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  run env "${env[@]}" bash "$recipe" "$@"
}

study finetune_audit experiments/finetune_audit/run.sh AUDIT_DIR="$OUT/finetune_audit" -- \
  "${AUDIT[@]}"
study detection experiments/detection/run.sh DETECT_DIR="$OUT/detection" SCALE="$SCALE" \
  FINETUNED="$OUT/finetune_audit/baseline" LIMIT="$DETECT_LIMIT" -- "${DETECT[@]}"
study cobia experiments/cobia/run.sh COBIA_DIR="$OUT/cobia" SCALE="$SCALE" TARGETS="$TARGETS" \
  -- "${COBIA[@]}"
if [ -n "${FAIRMT:-}" ]; then
  # embedded: one dialogue per task, 32-token replies (the recipe's CPU smoke size)
  if [ "$SCALE" = paper ]; then FAIRMT_ARGS=("$LAUNCHER")
  else FAIRMT_ARGS=(limit=1 probe.sampling.max_tokens=32); fi
  study fairmt experiments/fairmt/run.sh FAIRMT_DIR="$OUT/fairmt" SCALE="$SCALE" \
    TARGETS="$TARGETS" FAIRMT_DATA="$FAIRMT" -- "${FAIRMT_ARGS[@]}"
else
  echo "FairMT-Bench skipped: set FAIRMT=<a clone of FanZT6/FairMT-bench> to run it"
fi
study fairdialogue/table2 experiments/fairdialogue/table2.sh FD_DIR="$OUT/fairdialogue/table2" \
  SCALE="$SCALE" TARGETS="$FD_TARGETS" -- "${TABLE2[@]}"
study fairdialogue/table3 experiments/fairdialogue/table3.sh FD_DIR="$OUT/fairdialogue/table3" \
  SCALE="$SCALE" TARGETS="$FD_TARGETS" -- "${TABLE3[@]}"
study dataset_analysis experiments/dataset_analysis/run.sh ANALYSIS_DIR="$OUT/dataset_analysis" \
  SCALE="$SCALE" -- "${ANALYSIS[@]}"

# the runs each recipe's own report covers (Table 3's first phase, the decision runs, is not one)
RUNS="['$OUT/finetune_audit','$OUT/detection','$OUT/cobia/sweep','$OUT/fairdialogue/table2/sweep'"
RUNS+=",'$OUT/fairdialogue/table3/sweep','$OUT/dataset_analysis/analysis'"
if [ -n "${FAIRMT:-}" ]; then RUNS+=",'$OUT/fairmt/sweep'"; fi
if [ -n "${EDOS:-}" ] && [ -n "${DIASAFETY:-}" ]; then
  EV=(EV_DIR="$OUT/external_validity" SCALE="$SCALE" EDOS="$EDOS" DIASAFETY="$DIASAFETY"
      CLASSIFIER="$OUT/finetune_audit/baseline")
  if [ "$SCALE" = paper ]; then EV+=(CORPUS="$CORPUS"); fi
  study external_validity experiments/external_validity/run.sh "${EV[@]}" --
  RUNS+=",'$OUT/external_validity'"
else
  echo "external validity skipped: set EDOS=<a clone of rewire-online/edos> and" \
       "DIASAFETY=<a clone of thu-coai/DiaSafety> to test transfer to human-labelled data"
fi
RUNS+="]"
run "$PY" report.py "runs=$RUNS" hydra.run.dir="$OUT/report" \
  "title='Every study, SCALE=$SCALE'"
echo "report: $OUT/report/report.html"
