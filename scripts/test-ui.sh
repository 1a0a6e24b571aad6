#!/usr/bin/env bash
# `memloop ui` in headless Chromium: Debian's `chromium` (installed here when missing, with
# apt-get as root or through sudo) driven by Playwright for Python (pinned, in target/py-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
export MEMLOOP_CHROMIUM="$(command -v chromium)"
bash scripts/pytest-cli.sh cli/tests/ui playwright==1.65.2
