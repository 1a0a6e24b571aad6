#!/usr/bin/env bash
# memloop on aarch64 (64-bit ARM Linux), cross-built here and run under qemu-aarch64.
#
#   bash scripts/test-arm64.sh --smoke   # what scripts/test.sh (CI) runs: 10 minutes cold, 2 warm
#   bash scripts/test-arm64.sh --smoke-build   # its build alone (test.sh runs it early, aside)
#   bash scripts/test-arm64.sh           # the full emulated suites: a few hours on two cores
#
# --smoke: the index's unit tests (its NEON distance kernels against the portable ones, and
# again with MEMLOOP_SIMD=scalar), the encoder's unit tests (the int8 kernels: Advanced SIMD,
# `sdot` and `smmla` against the scalar reference, bit for bit, on qemu's `max` CPU, then on a
# Cortex-A72, which has no dot product, so the plain NEON kernel is the one chosen), the
# `memloop` command built for aarch64, and file portability (scripts/portability.py:
# stores with f32, bf16 and int8 indexes, an encrypted store and an export written on x86-64
# recall the same ids in the same order with the same scores on aarch64, and the other way
# round).
#
# Full: the smoke set, then under emulation the index's, the encoder's (the golden embedding
# tests against sentence-transformers on the default model) and the engine's whole suites, the
# C programs against the aarch64 library, and 100 rounds of the kill -9 soak
# (cli/tests/crash.rs); then the release builds (`scripts/build-linux.sh aarch64`) and the packages'
# suites in Debian's arm64 Python and Node (scripts/test-arm64-packages.sh). Child processes
# the tests start (the engine's crash child, `memloop`, the C programs) are aarch64 programs
# too: the script registers qemu-aarch64 with the kernel's binfmt_misc when it is not
# registered yet (root, or sudo; it stays registered until reboot). Figures measured under emulation are not speed figures.
#
# Installs what it needs when missing: rustup's aarch64-unknown-linux-gnu target, Debian's
# gcc/g++-aarch64-linux-gnu (the cross linker and C compiler) and qemu-user; the default
# model (scripts/fetch-model.sh) for the full run. Builds into target/cross (the host's
# target directory stays as it is); the smoke set builds the dependencies at opt-level 0 (gemm
# at 1: its fp16 assembly fails to assemble for aarch64 at 0) and the workspace's tests at 1
# (the index and the encoder keep their own 3) in target/cross-smoke, and the full run at the
# workspace's own levels in target/cross.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=false
build_only=false
case "${1:-}" in
    --smoke) smoke=true ;;
    # The smoke set's build alone: scripts/test.sh starts it beside the host's package suites.
    --smoke-build) smoke=true build_only=true ;;
esac
# shellcheck source=scripts/arm64-env.sh
source scripts/arm64-env.sh
cross=(--locked --target "$target")
cargo_test=(cargo test)
if $smoke; then
    export CARGO_TARGET_DIR=target/cross-smoke
    # Linked by zig against glibc 2.17's symbols, as the released aarch64 binaries are
    # (scripts/build-linux.sh): a dependency that needs a newer glibc fails this build in CI.
    # shellcheck source=scripts/zig-env.sh
    source scripts/zig-env.sh
    cargo_test=(cargo-zigbuild test)
    cross=(--locked --target "$target.2.17")
    # The dependencies unoptimised but gemm's (its fp16 assembly does not assemble for aarch64
    # at opt-level 0), the workspace's tests at 1; the index and the encoder keep their own 3.
    cross+=(--config 'profile.dev.package."*".opt-level=0' --config 'profile.test.opt-level=1')
    for gemm in gemm gemm-common gemm-f16 gemm-f32 gemm-f64 gemm-c32 gemm-c64; do
        cross+=(--config "profile.dev.package.$gemm.opt-level=1")
    done
else
    export CARGO_TARGET_DIR=target/cross
fi
bin="$CARGO_TARGET_DIR/$target/debug"

# Runs the aarch64 test binaries' children under qemu: registers qemu-aarch64 with
# binfmt_misc (with the F flag: the interpreter is opened now, so it works in containers too).
binfmt() {
    local dir=/proc/sys/fs/binfmt_misc
    [ -e "$dir/qemu-aarch64" ] && return 0
    [ -e "$dir/register" ] || $sudo mount -t binfmt_misc binfmt_misc "$dir"
    local magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    local mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    echo ":qemu-aarch64:M::$magic:$mask:$(command -v qemu-aarch64):F" | $sudo tee "$dir/register" >/dev/null
}

# One selection of packages for every smoke build: cargo resolves the dependencies' features
# from the packages it is given, so `-p memloop-embed` alone and the command would each compile
# candle, gemm and the tokenizers once more. The command's smallest test (`embed`) is named
# only so that cargo builds the `memloop` binary in the same pass; it does not run here.
smoke_set=(-p memloop-index -p memloop-embed -p memloop-cli --lib)
echo "== aarch64: the index, the encoder and the memloop command, cross-built"
"${cargo_test[@]}" "${cross[@]}" "${smoke_set[@]}" --test embed --no-run
if $smoke; then
    bash scripts/glibc-floor.sh "$bin/memloop"
fi
$build_only && exit 0
echo "== aarch64: the index's and the encoder's unit tests on qemu's max CPU (NEON, sdot, smmla)"
"${cargo_test[@]}" "${cross[@]}" "${smoke_set[@]}" -- --nocapture
echo "== aarch64: the portable distance kernels forced, then the encoder on a Cortex-A72 (no sdot)"
MEMLOOP_SIMD=scalar "${cargo_test[@]}" "${cross[@]}" "${smoke_set[@]}" -- simd
QEMU_CPU=cortex-a72 "${cargo_test[@]}" "${cross[@]}" "${smoke_set[@]}" -- --nocapture int8
echo "== aarch64: files written on one machine read on the other"
host_bin=${MEMLOOP_BIN:-target/debug/memloop}
[ -x "$host_bin" ] || cargo build --workspace --locked
python3 scripts/portability.py "$host_bin" aarch64 qemu-aarch64 -L "$sysroot" "$bin/memloop"
$smoke && exit 0

binfmt
MEMLOOP_BIN=$host_bin bash scripts/fetch-model.sh >/dev/null
echo "== aarch64: clippy on the index and the encoder (their NEON code), every warning an error"
cargo clippy "${cross[@]}" -p memloop-index -p memloop-embed --all-targets -- -D warnings
echo "== aarch64: the index's whole suite"
cargo test "${cross[@]}" -p memloop-index
echo "== aarch64: the encoder's whole suite (golden embeddings on the default model)"
cargo test "${cross[@]}" -p memloop-embed
echo "== aarch64: the engine's whole suite"
cargo test "${cross[@]}" -p memloop --lib --test integration
echo "== aarch64: the C programs against the aarch64 library"
CC=aarch64-linux-gnu-gcc cargo test "${cross[@]}" -p memloop-ffi --test c_programs
echo "== aarch64: 100 rounds of kill -9 during synced ingest"
MEMLOOP_CRASH_ROUNDS=100 cargo test "${cross[@]}" -p memloop-cli --test crash -- --nocapture
echo "== aarch64: the release builds, and the wheel and the npm package in arm64 Python and Node"
bash scripts/build-linux.sh aarch64
bash scripts/test-arm64-packages.sh
echo "aarch64: every emulated suite passed"
