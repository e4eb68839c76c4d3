#!/usr/bin/env bash
# The browser test tier's setup: Debian's headless-capable Chromium, driven by the tests through
# its own command line (--headless --dump-dom, --screenshot); no browser download from elsewhere.
# Needs root (or sudo) and a reachable Debian mirror. Idempotent: does nothing when it is there.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium already installed: $(command -v chromium)"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
command -v chromium
