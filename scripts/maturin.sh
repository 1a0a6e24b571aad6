#!/usr/bin/env bash
# Runs maturin, pinned, from a virtual environment in target/py-build (installed from PyPI on
# first use): `bash scripts/maturin.sh build ...`. Used by build-wheel.sh and test-python.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=target/py-build
if [ ! -x "$build/bin/maturin" ]; then
    python3 -m venv "$build"
    "$build/bin/python" -m pip install -q --disable-pip-version-check maturin==1.16.0
fi
exec "$build/bin/maturin" "$@"
