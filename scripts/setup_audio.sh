#!/usr/bin/env bash
# The audio tier's one system dependency: espeak-ng, which FairDialogue's audio mode uses to
# speak each utterance in a voice per group (Debian/Ubuntu package; needs root or sudo).
set -euo pipefail
if command -v espeak-ng >/dev/null 2>&1; then
  echo "espeak-ng already installed: $(espeak-ng --version | head -1)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
# the version locks/audio.txt holds (make lock); a release Debian has since replaced fails here
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $(grep -v '^#' "$(dirname "$0")/../locks/audio.txt")
echo "installed: $(espeak-ng --version | head -1)"
