#!/usr/bin/env bash
# A memloop change stream loaded into LanceDB (`lancedb`, `pyarrow`, `numpy` from PyPI,
# pinned, in the virtual environment of scripts/test-python.sh): a real store through the
# `memloop` command `cargo test` built (MEMLOOP_BIN overrides), exported to Parquet, searched
# in LanceDB, then kept in step by a --since delta. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    pytest==8.3.4 lancedb==0.40.0 pyarrow==26.0.1 numpy==2.4.6
export MEMLOOP_BIN="${MEMLOOP_BIN:-$PWD/target/debug/memloop}"
if [ ! -x "$MEMLOOP_BIN" ]; then
    cargo build --locked -p memloop-cli
    MEMLOOP_BIN="$PWD/target/debug/memloop"
fi
"$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir engine/tests/lancedb engine/tests/lancedb "$@"
