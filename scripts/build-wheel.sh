#!/usr/bin/env bash
# Builds the release wheel of the Python package into dist/: one abi3 wheel (CPython >= 3.9)
# for this platform, tagged manylinux as far as its symbol versions allow (maturin audits it).
# Needs Rust and Python 3; maturin comes pinned from PyPI (scripts/maturin.sh).
#   bash scripts/build-wheel.sh && pip install dist/memloop-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/maturin.sh build --locked --release --strip --manifest-path python/Cargo.toml --out dist "$@"
