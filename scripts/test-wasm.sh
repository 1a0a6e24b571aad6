#!/usr/bin/env bash
# memloop's WebAssembly kernels (the browser build's), run in V8, the engine Chromium runs
# them in, under Node's WASI (scripts/wasi-run.sh, cargo's runner for wasm32-wasip1).
#
#   bash scripts/test-wasm.sh --smoke         # what scripts/test.sh (CI) runs: build, then run
#   bash scripts/test-wasm.sh --smoke-build   # its build alone (test.sh runs it early, aside)
#
# The tests: the index's distance kernels (SIMD128's f32 inner product, whose multiply-adds
# are computed exactly in f64 lanes, against the portable one bit for bit; its int8 and 4-bit
# kernels against the scalar ones) and that exact multiply-add against libm's `fmaf` on
# 200,000 triples, the halfway cases among them; the encoder's int8 products (SIMD128 against
# the scalar reference, bit for bit) and its other int8 unit tests. The same programs are
# checked to build for the browser's target, wasm32-unknown-unknown (clippy, every warning
# an error): the index and the encoder crates.
#
# Installs what it needs when missing: rustup's wasm32-wasip1 and wasm32-unknown-unknown
# targets. Node 18 or later runs the programs (scripts/test-node.sh needs it too).
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
case "${1:-}" in
    --smoke) ;;
    --smoke-build) build_only=true ;;
    *) echo "usage: bash scripts/test-wasm.sh --smoke | --smoke-build" >&2; exit 2 ;;
esac
# Its own target folder: test.sh runs the build beside the host's suites, whose cargo would
# otherwise wait on this one's lock of target/.
export CARGO_TARGET_DIR=target/wasm-smoke
installed=$(rustup target list --installed)
for t in wasm32-wasip1 wasm32-unknown-unknown; do
    grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
wasi=(--locked --target wasm32-wasip1 -p memloop-index -p memloop-embed --lib)
cargo clippy --locked --target wasm32-unknown-unknown -p memloop-index -p memloop-embed -- -D warnings
cargo test "${wasi[@]}" --no-run
$build_only && exit 0
# The index's kernels, then the encoder's int8 ones (the rest of their suites maps files,
# which WASI cannot).
cargo test "${wasi[@]}" -- simd::
cargo test "${wasi[@]}" -- int8::
