#!/usr/bin/env bash
# `memloop mcp` driven by the official MCP Python SDK (`mcp` from PyPI, pinned) over stdio,
# with the real default model: every tool, bad arguments, the CLI beside a server, two and
# four clients sharing one store, and `kill -9` of the serving process. Uses the virtual
# environment of scripts/test-python.sh (target/py-venv) and the binary `cargo test` built
# (MEMLOOP_BIN overrides). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check pytest==8.3.4 mcp==2.3.0
export MEMLOOP_BIN="${MEMLOOP_BIN:-$PWD/target/debug/memloop}"
if [ ! -x "$MEMLOOP_BIN" ]; then
    cargo build --locked -p memloop-cli
    MEMLOOP_BIN="$PWD/target/debug/memloop"
fi
"$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir cli/tests/mcp_clients cli/tests/mcp_clients "$@"
