#!/usr/bin/env bash
# Runs a pytest suite that drives the `memloop` command, in the virtual environment of
# scripts/test-python.sh (target/py-venv), after installing the pinned packages it needs:
#   bash scripts/pytest-cli.sh TEST_DIR PACKAGE==VERSION... [-- PYTEST_ARGS...]
# The binary is the one `cargo test` built (target/debug/memloop; MEMLOOP_BIN overrides),
# built first if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$1"
shift
packages=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    packages+=("$1")
    shift
done
[ $# -gt 0 ] && shift
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check pytest==8.3.4 "${packages[@]}"
export MEMLOOP_BIN="${MEMLOOP_BIN:-$PWD/target/debug/memloop}"
if [ ! -x "$MEMLOOP_BIN" ]; then
    cargo build --locked -p memloop-cli
    MEMLOOP_BIN="$PWD/target/debug/memloop"
fi
"$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$dir" "$dir" "$@"
