#!/usr/bin/env bash
# The checks that need a GPU, as one short run on a machine that has PyTorch, transformers and
# a GPU but no network. Prepare here first (fills .device/, ignored by git):
#
#     make device-prep
#
# then run on the GPU machine from the repository root, with .device/ beside the code:
#
#     bash benchmarks/device_check.sh            # results in $OUT (default outputs/device_check)
#
# It times the attribution benchmark (batched rollout vs one dialogue at a time vs Captum
# integrated gradients) on the MiniLM at 256 and 512 tokens and on a bert-base-shaped model at
# 512 tokens, the study's setting. BENCH_ARGS adds arguments to every benchmark (for a quick
# trial: BENCH_ARGS="--dialogues 8 --ig-dialogues 1 --n-steps 4").
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
OUT=${OUT:-outputs/device_check}
SITE=${SITE:-/tmp/benevaudit-site}
BENCH_ARGS=${BENCH_ARGS:-}
mkdir -p "$OUT"
[ -d .device/minilm ] || { echo "error: .device/minilm missing: run 'make device-prep' first" >&2; exit 2; }

$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" .device/wheels/*.whl || exit 2
export PYTHONPATH="$SITE:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null \
    || echo "no nvidia-smi"
  $PY -c "import torch, transformers, captum; print('torch', torch.__version__, '| cuda',
torch.cuda.is_available(), '| transformers', transformers.__version__, '| captum',
captum.__version__)"
} 2>&1 | tee "$OUT/environment.txt"

status=0
bench() {  # name, then benchmark arguments
  local name=$1; shift
  echo "== $name"
  $PY benchmarks/bench_attribution.py "$@" $BENCH_ARGS 2>&1 | tee "$OUT/$name.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}
bench attribution_minilm_256 --model .device/minilm --max-length 256
bench attribution_minilm_512 --model .device/minilm --max-length 512
bench attribution_bertbase_512 --model random:bert-base --tokenizer .device/minilm \
    --max-length 512 --dialogues 128
exit $status
