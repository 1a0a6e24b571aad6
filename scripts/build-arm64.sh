#!/usr/bin/env bash
# Release builds of memloop for 64-bit ARM Linux (aarch64-unknown-linux-gnu), cross-built on
# an x86-64 Debian machine, into dist/aarch64-unknown-linux-gnu/:
#
#   memloop                          the command
#   libmemloop_ffi.so, .a, memloop.h the C library and its header
#   memloop-*-manylinux_2_17_aarch64.manylinux2014_aarch64.whl
#                                    the abi3 wheel (CPython >= 3.9), linked by zig against
#                                    glibc 2.17's symbols, its tag checked by maturin's audit
#                                    and by auditwheel
#   memloop-linux-arm64-gnu-*.tgz    the npm platform package in napi-rs's layout (beside
#                                    memloop-linux-x64-gnu; the main package loads it on arm64)
#
# Installs what it needs when missing: rustup's target, Debian's gcc/g++-aarch64-linux-gnu,
# maturin with ziglang and auditwheel (PyPI, pinned, in target/py-build), and the Node
# package's pinned dev dependencies (npm ci). macOS, iOS and Android cannot be built here (no
# SDK or NDK on Linux). scripts/test-arm64.sh tests these artifacts under qemu.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=scripts/arm64-env.sh
source scripts/arm64-env.sh
out=$root/dist/$target
export CARGO_TARGET_DIR=$root/target/cross
rm -rf "$out"
mkdir -p "$out"

echo "== the command and the C library"
cargo build --release --locked --target "$target" -p memloop-cli -p memloop-ffi
rel=$CARGO_TARGET_DIR/$target/release
cp "$rel/memloop" "$rel/libmemloop_ffi.so" "$rel/libmemloop_ffi.a" ffi/include/memloop.h "$out/"
aarch64-linux-gnu-strip "$out/memloop" "$out/libmemloop_ffi.so"
# The static library keeps its symbols (a C program links against them), not its debug info.
aarch64-linux-gnu-strip --strip-debug "$out/libmemloop_ffi.a"

echo "== the wheel (manylinux2014 aarch64)"
bash scripts/maturin.sh --version >/dev/null
target/py-build/bin/python -m pip install -q --disable-pip-version-check \
    ziglang==0.13.0.post1 auditwheel==6.8.2
# zig links the wheel, against glibc 2.17's symbols: the cross toolchain's linker and compilers
# exported above would link against Debian's glibc (2.36) instead.
env -u CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER -u CC_aarch64_unknown_linux_gnu \
    -u CXX_aarch64_unknown_linux_gnu -u AR_aarch64_unknown_linux_gnu \
    PATH="$root/target/py-build/bin:$PATH" bash scripts/maturin.sh build --locked --release --strip \
    --manifest-path python/Cargo.toml --target "$target" --zig --compatibility manylinux2014 \
    --out "$out"
wheel=$(ls "$out"/memloop-*-manylinux*_aarch64.whl)
target/py-build/bin/auditwheel show "$wheel" | tee "$out/auditwheel.txt"
grep -q 'manylinux_2_17_aarch64' "$out/auditwheel.txt"

echo "== the npm platform package memloop-linux-arm64-gnu"
(cd node && npm ci --no-audit --no-fund --loglevel=error)
stage=$root/target/node-pack-arm64
rm -rf "$stage"
mkdir -p "$stage/build" "$stage/package"
# The addon alone, built where nothing of node/ is overwritten: napi's generated types are the
# main package's (scripts/pack-node.sh makes them from the x86-64 build, the same on every
# platform), so they are written beside the addon here and left out.
(cd node && npx napi build --platform --release --target "$target" --output-dir "$stage/build" \
    --no-js --dts native.d.ts)
aarch64-linux-gnu-strip "$stage/build/memloop.linux-arm64-gnu.node"
cp node/npm/linux-arm64-gnu/package.json node/npm/linux-arm64-gnu/README.md \
    "$stage/build/memloop.linux-arm64-gnu.node" "$stage/package/"
(cd "$stage/package" && npm pack --silent --pack-destination "$out") >/dev/null
# What the binaries need of glibc: the newest symbol version each references.
for f in "$out/memloop" "$out/libmemloop_ffi.so" "$stage/package/memloop.linux-arm64-gnu.node"; do
    echo "$(basename "$f"): $(aarch64-linux-gnu-objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
done | tee "$out/glibc.txt"
file "$out/memloop" "$out/libmemloop_ffi.so"
ls -l "$out"
