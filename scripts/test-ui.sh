#!/usr/bin/env bash
# `memloop ui` in headless Chromium: Debian's `chromium` (installed here when missing, with
# apt-get as root or through sudo) driven by Playwright for Python (pinned, in target/py-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || bash scripts/apt-install.sh chromium
export MEMLOOP_CHROMIUM="$(command -v chromium)"
bash scripts/pytest-cli.sh cli/tests/ui playwright==1.65.2
