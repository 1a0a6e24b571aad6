#!/usr/bin/env bash
# Installs, once and one at a time, everything the test command needs beyond a Rust toolchain,
# python3, npm and a C compiler: rustup's cross targets (aarch64 Linux, Windows, WebAssembly;
# repaired when present but unlisted, scripts/rustup-target.sh) and Debian's packages (the
# aarch64 and mingw cross compilers, qemu-user, wine64, Chromium; scripts/apt-install.sh), and
# zig with cargo-zigbuild (PyPI, scripts/zig-env.sh).
# scripts/test.sh runs it before any build starts in the background, so no two rustup or apt
# runs ever overlap; each build-*.sh and test-*.sh also installs what it needs when run alone.
#
#   bash scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/rustup-target.sh aarch64-unknown-linux-gnu x86_64-pc-windows-gnu wasm32-wasip1
packages=()
command -v aarch64-linux-gnu-g++ >/dev/null || packages+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || packages+=(qemu-user)
command -v x86_64-w64-mingw32-g++ >/dev/null || packages+=(gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64)
[ -x /usr/lib/wine/wine64 ] || packages+=(wine64)
command -v chromium >/dev/null || packages+=(chromium)
if [ ${#packages[@]} -gt 0 ]; then
    bash scripts/apt-install.sh "${packages[@]}"
fi
# zig, cargo-zigbuild and auditwheel (PyPI, pinned, beside maturin in target/py-build): the
# aarch64 smoke build links with them, against glibc 2.17 (scripts/zig-env.sh).
bash -c 'source scripts/zig-env.sh'
