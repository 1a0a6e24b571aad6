#!/usr/bin/env bash
# memloop-embed beside sentence-transformers (PyTorch) and onnxruntime, in alternating rounds on
# the same machine, so the ratios are taken minutes apart (these machines are noisy).
#
#   bash benches/embed_compare.sh [ROUNDS] [PYTHON]
#
# PYTHON must have torch, sentence-transformers, onnxruntime and onnx (see embed_peers.py).
# Prints JSON lines tagged with their round; benches/summarize.py is not needed: medians are
# printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
python="${2:-python3}"
model="$(cargo run --release --locked -q -p memloop-cli -- model fetch)"
cargo build --release --locked -q -p memloop-benches --bin embed-bench
out="target/embed-compare.jsonl"
: > "$out"
for round in $(seq "$rounds"); do
  target/release/embed-bench --model "$model" --threads 1,2 --runs 3 --json | sed "s/^{/{\"round\":$round,/" | tee -a "$out"
  "$python" benches/embed_peers.py --model "$model" --threads 1,2 --runs 3 --onnx target/minilm.onnx 2>/dev/null \
    | sed "s/^{/{\"round\": $round, /" | tee -a "$out"
done
"$python" - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r["system"], r["threads"]) for r in rows})
print("median over rounds: system, threads, batch 1/s, batch 32/s, latency ms")
for system, threads in keys:
    rs = [r for r in rows if r["system"] == system and r["threads"] == threads]
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"{system:22} {threads}  {med('batch1_per_s'):7.1f} {med('batch32_per_s'):7.1f} {med('latency_ms'):7.2f}")
PY
