#!/usr/bin/env bash
# The index crate on aarch64, cross-built here and run under qemu-aarch64: its whole test suite
# with the NEON kernels (f32, bf16, int8 and the int8 codes' 4-bit planes; each tested equal to
# the portable kernel), then its kernel tests again with MEMLOOP_SIMD=scalar (the portable
# path). Installs what it needs when missing: rustup's aarch64-unknown-linux-gnu target and
# Debian's gcc-aarch64-linux-gnu and qemu-user (as root, or through sudo). The engine, the
# encoder and the packages do not build for aarch64 here yet (issue 61); figures measured under
# emulation are not speed figures. `--smoke` (what scripts/test.sh runs) keeps to the unit
# tests, the kernels' equality tests among them (seconds under emulation, after a build of
# about two minutes); the whole suite takes about 15 minutes under emulation on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
rustup target list --installed | grep -qx "$target" || rustup target add "$target"
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get install -y -q gcc-aarch64-linux-gnu qemu-user >/dev/null \
        || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q gcc-aarch64-linux-gnu qemu-user >/dev/null; }
fi
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
# A target directory of its own: the host build's stays as it is.
export CARGO_TARGET_DIR=target/cross
if [ "${1:-}" = "--smoke" ]; then
    cargo test -p memloop-index --locked --target "$target" --lib
else
    cargo test -p memloop-index --locked --target "$target"
fi
MEMLOOP_SIMD=scalar cargo test -p memloop-index --locked --target "$target" --lib -- simd
