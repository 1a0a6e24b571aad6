#!/usr/bin/env bash
# Builds the browser package, memloop-wasm, into target/wasm-pkg (an npm package folder):
# memloop's C ABI built for WebAssembly with WASI (the `wasm/` crate, wasm32-wasip1 with
# SIMD128) as memloop.wasm, the JavaScript of wasm/js (the page's API, the Worker, the WASI
# layer over the Origin Private File System) and, with --model, a model's files and their
# manifest (model.json: each file's sha256, which the Worker checks before it uses a file): by
# default the default model's int8 copy (`memloop model quantize`: 35 MB of weights where the
# f32 file has 91 MB; it runs at either precision, at int8's fidelity), or the folder named.
#
#   bash scripts/build-wasm.sh                  # the test build: what the Chromium tests run
#                                               # (dependencies unoptimised, as the wasm smoke
#                                               # set builds them, sharing its target/wasm-smoke)
#   bash scripts/build-wasm.sh --release        # optimised (opt-level 3, thin LTO): the one to
#                                               # ship and to measure
#   bash scripts/build-wasm.sh [--release] --model [DIR]   # with a model's files (default:
#                                               # the default model's int8 copy, made from the
#                                               # fetched model, scripts/fetch-model.sh; the f32
#                                               # one: --model "$(bash scripts/fetch-model.sh)")
#   npm pack target/wasm-pkg                    # the npm tarball
#
# Installs rustup's wasm32-wasip1 target when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
release=false
model=""
while [ $# -gt 0 ]; do
    case "$1" in
        --release) release=true ;;
        --model)
            model=default
            if [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; then model="$2"; shift; fi
            ;;
        *) echo "usage: bash scripts/build-wasm.sh [--release] [--model [DIR]]" >&2; exit 2 ;;
    esac
    shift
done
bash scripts/rustup-target.sh wasm32-wasip1
if $release; then
    export CARGO_TARGET_DIR=target/wasm-release
    # Without symbols or line tables: 14.6 MB instead of 120 MB (3.5 MB gzipped).
    cargo build --locked --release --target wasm32-wasip1 -p memloop-wasm --config profile.release.strip=true
    wasm=target/wasm-release/wasm32-wasip1/release/memloop_wasm.wasm
else
    # The flags of scripts/test-wasm.sh's build, so the two share their dependencies.
    source scripts/wasm-profile.sh
    export CARGO_TARGET_DIR=target/wasm-smoke
    cargo build --locked --target wasm32-wasip1 -p memloop-wasm "${wasm_light[@]}"
    wasm=target/wasm-smoke/wasm32-wasip1/debug/memloop_wasm.wasm
fi
out=target/wasm-pkg
rm -rf "$out"
mkdir -p "$out"
cp wasm/js/*.js wasm/js/*.d.ts wasm/js/package.json wasm/js/README.md "$out/"
cp "$wasm" "$out/memloop.wasm"
if [ -n "$model" ]; then
    if [ "$model" = default ]; then
        # The command's own build (or $MEMLOOP_BIN), not one in this script's target directory.
        f32=$(env -u CARGO_TARGET_DIR bash scripts/fetch-model.sh)
        # Made anew each time (a second), so it is never older than the quantizer.
        model=target/models/$(basename "$f32")-int8
        rm -rf "$model"
        mkdir -p target/models
        if [ -n "${MEMLOOP_BIN:-}" ]; then
            "$MEMLOOP_BIN" model quantize --from "$f32" --to "$model" >&2
        else
            env -u CARGO_TARGET_DIR cargo run --locked --profile test -p memloop-cli -- \
                model quantize --from "$f32" --to "$model" >&2
        fi
    fi
    mkdir -p "$out/model"
    python3 - "$model" "$out/model" <<'PY'
import hashlib, json, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
# What the engine reads of a model folder.
names = ["config.json", "tokenizer.json", "model.safetensors", "sentence_bert_config.json"]
files = {}
for n in names:
    p = os.path.join(src, n)
    if not os.path.exists(p):
        continue
    shutil.copyfile(p, os.path.join(dst, n))
    files[n] = hashlib.sha256(open(p, "rb").read()).hexdigest()
name = os.path.basename(os.path.normpath(src))
json.dump({"name": name, "files": files}, open(os.path.join(dst, "model.json"), "w"), indent=1)
PY
fi
gz=$(gzip -9 -c "$out/memloop.wasm" | wc -c)
if [ -n "$model" ]; then
    # What a page downloads the first time: the module (served compressed, as every web server
    # and CDN does) and the model's files as they are.
    files=$(cat "$out"/model/* | wc -c)
    echo "target/wasm-pkg: memloop.wasm $(stat -c %s "$out/memloop.wasm") bytes ($gz gzipped), model from $model $files bytes; first load $((gz + files)) bytes"
else
    echo "target/wasm-pkg: memloop.wasm $(stat -c %s "$out/memloop.wasm") bytes ($gz gzipped)"
fi
