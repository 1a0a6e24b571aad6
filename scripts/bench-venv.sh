#!/usr/bin/env bash
# The Python environment of the benchmarks' peers (LanceDB for retrieval-bench --peers):
# target/bench-venv with pinned packages from PyPI. Prints the interpreter's path.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    lancedb==0.40.0 pyarrow==26.0.1 numpy==2.4.6 >&2
echo "$PWD/$venv/bin/python"
