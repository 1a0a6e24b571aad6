#!/usr/bin/env bash
# Builds the release wheel of the Python package into dist/: one abi3 wheel (CPython >= 3.9)
# for this platform, tagged manylinux as far as its symbol versions allow (maturin audits it).
# Needs Rust and Python 3; maturin comes pinned from PyPI into target/py-build.
#   bash scripts/build-wheel.sh && pip install dist/memloop-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
build=target/py-build
if [ ! -x "$build/bin/maturin" ]; then
    python3 -m venv "$build"
    "$build/bin/python" -m pip install -q --disable-pip-version-check maturin==1.16.0
fi
"$build/bin/maturin" build --locked --release --strip --manifest-path python/Cargo.toml --out dist "$@"
