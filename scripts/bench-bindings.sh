#!/usr/bin/env bash
# The bindings' overhead, measured in one run on one store: lexical recalls (no embedding)
# from Rust, from Node (the npm tarball as scripts/test-node.sh installs it) and from Python
# (the wheel as scripts/test-python.sh installs it), then Rust again; each line is one door's
# p50 and mean in microseconds. Run scripts/test-node.sh and scripts/test-python.sh first (they
# build and install the packages).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# The dev profile, as the packages the other doors load are built (the engine at opt-level 1;
# `--profile test` would compile it at 3 and flatter Rust).
cargo build --locked --workspace --bin binding-overhead
store=$(mktemp -d)/store
memories=${MEMORIES:-5000}
queries=${QUERIES:-3000}
target/debug/binding-overhead --store "$store" --seed "$memories" --memories "$memories" --queries "$queries"
(cd target/node-clean && cp "$root/node/bench/overhead.mjs" . && node overhead.mjs "$store" "$memories" "$queries")
target/py-wheel-env/bin/python python/bench/door_overhead.py "$store" "$memories" "$queries"
target/debug/binding-overhead --store "$store" --memories "$memories" --queries "$queries"
grep -m1 -o 'avx512[a-z_]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
