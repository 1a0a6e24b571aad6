#!/usr/bin/env bash
# Sourced by the release builds that link with zig: installs, pinned from PyPI into
# target/py-build (beside maturin, scripts/maturin.sh), zig (ziglang), cargo-zigbuild and
# auditwheel, and puts them on PATH. zig links Linux binaries against an old glibc's symbols
# (`--target x86_64-unknown-linux-gnu.2.17`) or statically against musl, for either
# architecture, with no cross toolchain or sysroot of Debian's.
#
#   source scripts/zig-env.sh
bash scripts/maturin.sh --version >/dev/null
if ! target/py-build/bin/python -m pip show cargo-zigbuild 2>/dev/null | grep -qx 'Version: 0.24.1'; then
    target/py-build/bin/python -m pip install -q --disable-pip-version-check \
        ziglang==0.13.0.post1 cargo-zigbuild==0.24.1 auditwheel==6.8.2
fi
PATH="$PWD/target/py-build/bin:$PATH"
export PATH
# What scripts/arm64-env.sh exports for Debian's cross toolchain would override zig's linker and
# C compiler for aarch64.
unset CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER CC_aarch64_unknown_linux_gnu \
    CXX_aarch64_unknown_linux_gnu AR_aarch64_unknown_linux_gnu
