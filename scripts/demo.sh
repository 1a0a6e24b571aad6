#!/usr/bin/env bash
# The main job, as far as it is built: memloop's HNSW index beside hnsw_rs on a clustered
# 20k x 384 set (build, open, recall and QPS per ef). Will become `memloop demo` with the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
data="${MEMLOOP_DEMO_DIR:-${TMPDIR:-/tmp}/memloop-demo}"
cargo build --release --locked -p memloop-benches --bin ann-bench
bench=target/release/ann-bench
[ -f "$data/base.fvecs" ] || "$bench" --make-data "$data" --n 20000 --queries 1000 --dim 384
"$bench" --base "$data/base.fvecs" --query "$data/query.fvecs" --k 10 --m 16 --ef-construction 200 \
  --ef 16,32,64,128 --threads 2 --peer hnsw_rs
