#!/usr/bin/env bash
# Release builds of memloop for Linux on one architecture, x86-64 or aarch64 (both built on an
# x86-64 Debian machine), into dist/<arch>-unknown-linux-gnu/:
#
#   memloop                          the command, linked statically against musl: it runs on
#                                    any Linux of that architecture, whatever its C library
#   libmemloop_ffi.so, .a, memloop.h the C library (glibc 2.17 or newer) and its header; both
#                                    built without LTO (the release-c profile: with LTO the
#                                    archive holds LLVM bitcode and no `memloop_*` symbol)
#   memloop-*-manylinux_2_17_<arch>.manylinux2014_<arch>.whl
#                                    the abi3 wheel (CPython >= 3.9), tag checked by auditwheel
#   memloop-linux-<x64|arm64>-gnu-*.tgz
#                                    the npm platform package in napi-rs's layout (glibc 2.17)
#   glibc.txt                        the newest glibc symbol version each binary references
#                                    (the build fails above 2.17) and the command's linkage
#   c-static.txt                     ffi/examples/basic.c linked against libmemloop_ffi.a by the
#                                    architecture's C compiler, and its run on the default model
#                                    (natively on x86-64, under qemu-aarch64 on aarch64)
#
# zig links every binary (cargo-zigbuild, maturin --zig, napi build -x): against glibc 2.17's
# symbols, or statically against musl, with no sysroot of Debian's (scripts/zig-env.sh: zig,
# cargo-zigbuild and auditwheel pinned from PyPI). Installs what else it needs when missing:
# rustup's targets (scripts/rustup-target.sh), the Node package's pinned dev dependencies
# (npm ci), and for aarch64 Debian's cross C compiler and qemu-user (the static link's check).
# scripts/release.sh runs it for both architectures; scripts/test-arm64.sh tests the aarch64
# artifacts under qemu.
#
#   bash scripts/build-linux.sh x86_64
#   bash scripts/build-linux.sh aarch64
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
arch=${1:-}
case "$arch" in
    x86_64) npm=linux-x64-gnu ;;
    aarch64) npm=linux-arm64-gnu ;;
    *) echo "usage: bash scripts/build-linux.sh x86_64|aarch64" >&2; exit 2 ;;
esac
gnu=$arch-unknown-linux-gnu
musl=$arch-unknown-linux-musl
bash scripts/rustup-target.sh "$gnu" "$musl"
# shellcheck source=scripts/zig-env.sh
source scripts/zig-env.sh
export CARGO_TARGET_DIR=$root/target/zig
out=$root/dist/$gnu
rm -rf "$out"
mkdir -p "$out"

echo "== the command (static, musl)"
cargo zigbuild --release --locked --target "$musl" -p memloop-cli
# zig's linker keeps the debug information rustc's strip setting asks it to drop: zig's objcopy
# (either architecture) takes it out afterwards.
python3 -m ziglang objcopy --strip-all "$CARGO_TARGET_DIR/$musl/release/memloop" "$out/memloop"

echo "== the C library (glibc 2.17, no LTO)"
cargo zigbuild --profile release-c --locked --target "$gnu.2.17" -p memloop-ffi
rel=$CARGO_TARGET_DIR/$gnu/release-c
cp "$rel/libmemloop_ffi.a" ffi/include/memloop.h "$out/"
# The symbol table out, the exported functions (the dynamic symbol table) kept.
python3 -m ziglang objcopy --strip-all "$rel/libmemloop_ffi.so" "$out/libmemloop_ffi.so"

echo "== the wheel (manylinux2014 $arch)"
# In a target directory of its own: maturin's zig wrappers differ from cargo-zigbuild's, and
# cargo rebuilds everything whose linker or C compiler changed, so sharing one directory would
# rebuild the wheel's and the addon's dependencies on every run.
CARGO_TARGET_DIR=$root/target/zig-wheel bash scripts/maturin.sh build --locked --release --strip \
    --manifest-path python/Cargo.toml --target "$gnu" --zig --compatibility manylinux2014 --out "$out"
wheel=$(ls "$out"/memloop-*-manylinux*_"$arch".whl)
auditwheel show "$wheel" | tee "$out/auditwheel.txt"
grep -q "manylinux_2_17_$arch" "$out/auditwheel.txt"

echo "== the npm platform package memloop-$npm (glibc 2.17)"
(cd node && npm ci --no-audit --no-fund --loglevel=error)
stage=$root/target/node-pack-$npm
rm -rf "$stage"
mkdir -p "$stage"
# The addon alone, built where nothing of node/ is overwritten: napi's generated types are the
# main package's (scripts/pack-node.sh makes them, the same on every platform).
(cd node && npx napi build --platform --release --cross-compile --target "$gnu.2.17" \
    --output-dir "$stage" --no-js --dts native.d.ts)
addon=$stage/memloop.$npm.stripped.node
python3 -m ziglang objcopy --strip-all "$stage/memloop.$npm.node" "$addon"
bash scripts/pack-node-platform.sh "$npm" "$addon" "$out" >/dev/null

echo "== what each binary needs of the C library"
python3 -m zipfile -e "$wheel" "$stage/wheel"
{
    # A static program asks for no program interpreter and no shared library.
    if readelf --program-headers --dynamic "$out/memloop" | grep -q 'INTERP\|(NEEDED)'; then
        echo "memloop: dynamically linked"
    else
        echo "memloop: statically linked"
    fi
    bash scripts/glibc-floor.sh "$out/libmemloop_ffi.so" "$addon" "$stage"/wheel/memloop/*.so
} | tee "$out/glibc.txt"
grep -q '^memloop: statically linked' "$out/glibc.txt" \
    || { echo "the command is not linked statically" >&2; exit 1; }
echo "== the C example linked against the static library"
# What rustc names for a static library on Linux (`--print native-static-libs`).
libs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ "$arch" = x86_64 ]; then
    cc -std=c11 -Wall -Wextra -Werror -Iffi/include ffi/examples/basic.c "$out/libmemloop_ffi.a" \
        "${libs[@]}" -o "$scratch/basic"
    run=()
else
    command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null \
        || bash scripts/apt-install.sh gcc-aarch64-linux-gnu qemu-user
    aarch64-linux-gnu-gcc -std=c11 -Wall -Wextra -Werror -Iffi/include ffi/examples/basic.c \
        "$out/libmemloop_ffi.a" "${libs[@]}" -o "$scratch/basic"
    run=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
fi
# The default model, fetched by the command just built (cached: a verified copy is kept).
"${run[@]}" "$out/memloop" model fetch >/dev/null
{
    echo "linked: $(readelf --dyn-syms --wide "$scratch/basic" | grep -c ' memloop_') memloop_* symbols imported (0: all linked in)"
    "${run[@]}" "$scratch/basic" "$scratch/store"
} | tee "$out/c-static.txt"
grep -q '^linked: 0 ' "$out/c-static.txt"
grep -q '^closed$' "$out/c-static.txt"
ls -l "$out"
