#!/usr/bin/env bash
# memloop in the browser, in headless Chromium (Debian's `chromium`, installed here when
# missing, driven by Playwright for Python, pinned, in target/py-venv): the package built by
# scripts/build-wasm.sh (its test build, sharing scripts/test-wasm.sh's target/wasm-smoke) and
# served from one local origin; wasm/test/test_browser.py: the cross-door contract and the
# registry's whole answers on the browser door, a store surviving a reload and a closed tab, a
# second tab's locked error, 10,000 memories ingested and recalled, the origin's quota used up
# mid-write (a typed error, no acknowledged write lost), export and import, bad input, no
# request leaving the origin, and, when the package holds the model, the golden vectors (f32
# and int8 against sentence-transformers') and the example page, offline after its first load and
# online on a quota that keeps nothing.
#
#   bash scripts/test-browser.sh            # with the model when it is fetched (CI: it is)
#   bash scripts/test-browser.sh --no-model # the test embedder only
set -euo pipefail
cd "$(dirname "$0")/.."
with_model=true
[ "${1:-}" = "--no-model" ] && with_model=false
command -v chromium >/dev/null || bash scripts/apt-install.sh chromium
export MEMLOOP_CHROMIUM="$(command -v chromium)"
if $with_model; then
    bash scripts/build-wasm.sh --model
else
    bash scripts/build-wasm.sh
fi
bash scripts/pytest-cli.sh wasm/test playwright==1.65.2
# The TypeScript declarations, checked against a typed use (TypeScript from node/'s lockfile).
[ -x node/node_modules/.bin/tsc ] || (cd node && npm ci --no-audit --no-fund >/dev/null)
node/node_modules/.bin/tsc -p wasm/example
