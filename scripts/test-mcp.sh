#!/usr/bin/env bash
# `memloop mcp` driven by the official MCP Python SDK (`mcp` from PyPI, pinned) over stdio
# and Streamable HTTP (`--http`: tokens, scopes, Origin, limits),
# with the real default model: every tool, bad arguments, the CLI beside a server, two and
# four clients sharing one store, and `kill -9` of the serving process. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pytest-cli.sh cli/tests/mcp_clients mcp==2.3.0 -- "$@"
