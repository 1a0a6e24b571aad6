#!/usr/bin/env bash
# The bindings' overhead, measured in one run on one store: lexical recalls (no embedding)
# from Rust, from Node and from Python, then Rust again; each line is one door's p50 and mean
# in microseconds. Every door is a release build, as a user gets it: the Rust baseline
# (`binding-overhead`), the Node addon (`napi build --release`, loaded through the package's
# own index.js) and the Python wheel (`maturin build --release`, in its own environment).
# Rust is also timed with each recall handed to another thread (HOP=1: one worker, HOP=4: a
# pool of four, as libuv's), the cost a Promise's thread hop adds in Rust itself.
#
#   bash scripts/bench-bindings.sh            # MEMORIES=5000 QUERIES=3000 by default
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
memories=${MEMORIES:-5000}
queries=${QUERIES:-3000}

cargo build --locked --release -p memloop-benches --bin binding-overhead
# Node: the addon in release, beside the package's own JavaScript, as `memloop` in a project.
(cd node && npm ci --no-audit --no-fund --loglevel=error \
    && npx napi build --platform --release --output-dir ../target/node-release --js native.js --dts native.d.ts)
bench=target/node-bench
rm -rf "$bench"
mkdir -p "$bench/node_modules/memloop"
cp node/index.js node/index.d.ts node/errors.js node/errors.d.ts node/package.json \
    target/node-release/native.js target/node-release/memloop.linux-x64-gnu.node \
    "$bench/node_modules/memloop/"
cp node/bench/overhead.mjs "$bench/"
echo '{"type":"module"}' >"$bench/package.json"
# Python: the release wheel in a fresh environment.
rm -rf target/wheels-bench
bash scripts/maturin.sh build --quiet --locked --release --strip \
    --manifest-path python/Cargo.toml --out target/wheels-bench
python3 -m venv target/py-bench-env
target/py-bench-env/bin/python -m pip install -q --disable-pip-version-check --force-reinstall \
    target/wheels-bench/memloop-*.whl

store=$(mktemp -d)/store
trap 'rm -rf "$(dirname "$store")"' EXIT
target/release/binding-overhead --store "$store" --seed "$memories" --memories "$memories" --queries "$queries"
(cd "$bench" && node overhead.mjs "$store" "$memories" "$queries")
target/py-bench-env/bin/python python/bench/door_overhead.py "$store" "$memories" "$queries"
for hop in 1 4; do
    HOP=$hop target/release/binding-overhead --store "$store" --memories "$memories" --queries "$queries" \
        | sed "s/\"door\":\"rust\"/\"door\":\"rust-hop-$hop\"/"
done
target/release/binding-overhead --store "$store" --memories "$memories" --queries "$queries"
grep -m1 -o 'avx512[a-z_]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
