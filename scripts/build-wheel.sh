#!/usr/bin/env bash
# Builds the release wheel of the Python package into dist/: one abi3 wheel (CPython >= 3.9)
# for this platform. On Linux (x86-64 and aarch64) zig links it against glibc 2.17's symbols
# (maturin --zig --compatibility manylinux2014, as scripts/build-linux.sh does for both
# architectures), so pip installs it on Debian 10+, Ubuntu 18.04+, RHEL/Alma 8+ and Amazon Linux 2, and
# auditwheel checks the tag; elsewhere it is tagged as far as its symbol versions allow.
# Needs Rust and Python 3; maturin, ziglang and auditwheel come pinned from PyPI
# (scripts/maturin.sh, target/py-build).
#   bash scripts/build-wheel.sh && pip install dist/memloop-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
case "$host" in
    x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu) ;;
    *)
        exec bash scripts/maturin.sh build --locked --release --strip --manifest-path python/Cargo.toml --out dist "$@"
        ;;
esac
bash scripts/maturin.sh --version >/dev/null
target/py-build/bin/python -m pip install -q --disable-pip-version-check \
    ziglang==0.13.0.post1 auditwheel==6.8.2
mkdir -p dist
PATH="$PWD/target/py-build/bin:$PATH" bash scripts/maturin.sh build --locked --release --strip \
    --manifest-path python/Cargo.toml --target "$host" --zig --compatibility manylinux2014 \
    --out dist "$@"
arch=${host%%-*}
wheel=$(ls -t dist/memloop-*-manylinux*_"$arch".whl | head -1)
target/py-build/bin/auditwheel show "$wheel" | tee target/auditwheel-"$arch".txt
grep -q "manylinux_2_17_$arch" target/auditwheel-"$arch".txt
echo "$wheel: manylinux_2_17 ($arch)"
