#!/usr/bin/env bash
# memloop built for WebAssembly (wasm32-wasip1, the browser build: its files through the host's
# WASI layer) and tested in V8, the engine Chromium runs it in, under Node's WASI
# (scripts/wasi-run.sh, cargo's runner for the target).
#
#   bash scripts/test-wasm.sh --smoke         # what scripts/test.sh (CI) runs, beside the
#                                             # package suites
#   bash scripts/test-wasm.sh --smoke-build   # its build alone
#   bash scripts/test-wasm.sh                 # every suite that runs there (3 more minutes)
#
# --smoke: the kernels. The full run adds the engine's unit and integration tests below; in CI
# the browser package's Chromium tests (scripts/test-browser.sh) run the engine's WebAssembly
# build whole instead, through the browser door: the cross-door contract, persistence, the
# quota, the golden vectors.
#
# The index's distance kernels (SIMD128's f32 inner product, whose multiply-adds are computed
# exactly in f64 lanes, against the portable one bit for bit; its int8, 4-bit and bf16 kernels
# against the scalar ones) and that exact multiply-add against libm's `fmaf` on 200,000
# triples, the halfway cases among them; the encoder's int8 products (SIMD128 against the
# scalar reference, bit for bit); then the engine's unit and integration suites on real files
# (in the system's temporary folder), with the test embedder: the cross-door contract,
# reopening, encryption and erasure, forgetting, filters, scopes, transfer. Left out, each for
# a reason of the platform:
# - panics caught, threads, a second process, `kill -9`, the process lock: the build has one
#   thread and no processes, and a panic ends the instance (WebAssembly cannot unwind);
# - Parquet change streams (the reader clones a file handle: WASI cannot) and sync to a shared
#   folder (object_store has no local file system for WebAssembly);
# - the engine's unit tests of native file handling (they ask the standard library for a
#   temporary directory, which WASI does not have), and an index trusted by its file stamp
#   (WASI reports no inode);
# - the tests on the default model and the cross-encoder: they pass one by one, but Node 20's
#   V8 (11.3) crashes in most runs of some of them (SIGSEGV or a failed check, whatever its
#   compiler flags), and two of them read the weights file as missing at a store's second open
#   under Node's WASI (not understood yet). The browser's V8 is the one that counts.
#
# Installs what it needs when missing: rustup's wasm32-wasip1 target. Node 18 or later runs the
# programs (scripts/test-node.sh needs it too).
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
smoke=false
case "${1:-}" in
    --smoke) smoke=true ;;
    --smoke-build) build_only=true; smoke=true ;;
    "") ;;
    *) echo "usage: bash scripts/test-wasm.sh [--smoke | --smoke-build]" >&2; exit 2 ;;
esac
# Its own target folder: test.sh runs the build beside the host's suites, whose cargo would
# otherwise wait on this one's lock of target/.
export CARGO_TARGET_DIR=target/wasm-smoke
bash scripts/rustup-target.sh wasm32-wasip1
# The test build's flags (shared with scripts/build-wasm.sh): wasm_light.
source scripts/wasm-profile.sh
wasi=(--locked --target wasm32-wasip1 "${wasm_light[@]}")
kernels=(-p memloop-index -p memloop-embed --lib)
cargo test "${wasi[@]}" "${kernels[@]}" --no-run
$smoke || cargo test "${wasi[@]}" -p memloop --lib --test integration --no-run
$build_only && exit 0
# The index's kernels and the encoder's int8 products (the rest of their suites reads the
# model's files or native file stamps).
cargo test "${wasi[@]}" "${kernels[@]}" -- simd:: int8::
$smoke && exit 0
cargo test "${wasi[@]}" -p memloop --lib -- \
    --skip contained::tests --skip in_call::tests --skip index_ahead::tests \
    --skip store::lock::tests --skip store::read_view::tests --skip crypt::ring::tests
cargo test "${wasi[@]}" -p memloop --test integration -- --test-threads=1 \
    --skip contained::tests --skip in_call::tests --skip index_ahead::tests \
    --skip store::lock::tests --skip store::read_view::tests --skip crypt::ring::tests \
    --skip columnar:: --skip concurrent:: --skip sync:: \
    --skip faults::a_failed_background_checkpoint_is_reported_by_flush \
    --skip hostile_files::an_unchanged_index_is_trusted_by_its_stamp \
    --skip persist::a_second_writer_gets_a_clear_locked_error_at_once \
    --skip persist::changes_after_a_crash_are_replayed \
    --skip trust::an_export_to_a_bare_file_name_succeeds \
    --skip trust::an_imported_id_near_the_top_never_makes_writes_overwrite \
    --skip trust::first_lexical_recall_during_writes_never_hangs \
    --skip trust::imported_rows_are_checked_like_remembered_ones \
    --skip model:: --skip embedder_contract::the_default_model \
    --skip memory_loop::context_fits_the_real_tokenizer_budget --skip cross_encoder::
