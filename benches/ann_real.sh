#!/usr/bin/env bash
# The real-text ANN benchmark of BENCHMARKS.md: 100k WordNet 3.0 glosses ("lemma: definition")
# as base vectors and 10k WordNet usage examples as queries, embedded with all-MiniLM-L6-v2;
# memloop (f32, bf16, int8 vectors; int8 also re-scored on the caller's f32 vectors) and
# hnsw_rs from ann-bench; hnswlib, faiss (HNSWFlat, HNSWSQ8) and usearch (f32, bf16, i8) from
# peers.py; same files, M=16, efConstruction=200, 2 build threads, 1 search thread.
#
#   bash benches/ann_real.sh [DATA_DIR]      (default ~/.cache/memloop/ann-wordnet)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/memloop/ann-wordnet}"
VENV="${VENV:-$DATA/venv}"
EF="${EF:-16,24,32,48,64,96,128,256}"
mkdir -p "$DATA"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet numpy tokenizers safetensors hnswlib==0.8.0 faiss-cpu usearch
MODEL="$(bash scripts/fetch-model.sh)"
if [ ! -d "$DATA/wordnet" ]; then
  (cd "$DATA" && apt-get download wordnet-base && dpkg -x wordnet-base_*.deb wn-pkg &&
    mv wn-pkg/usr/share/wordnet wordnet && rm -rf wn-pkg wordnet-base_*.deb)
fi
[ -f "$DATA/vectors/base.fvecs" ] ||
  "$VENV/bin/python" benches/make_text_vectors.py --model "$MODEL" --wordnet "$DATA/wordnet" --out "$DATA/vectors"
cargo build --release --locked -p memloop-benches --bin ann-bench
V="$DATA/vectors"
PEER="${PEER---peer hnsw_rs}"
: > "$DATA/ann-rust.jsonl"
for vectors in ${VECTORS:-f32 bf16 int8}; do
  # int8 also runs re-scored on the caller's f32 vectors (as the engine re-scores on its store's).
  [ "$vectors" = int8 ] && PEER="--peer memloop-rescored"
  target/release/ann-bench --base "$V/base.fvecs" --query "$V/query.fvecs" --write-truth "$V/truth.ivecs" \
    --k 10 --m 16 --ef-construction 200 --ef "$EF" --threads 2 --json --vectors "$vectors" $PEER |
    tee -a "$DATA/ann-rust.jsonl"
  PEER=""
done
"$VENV/bin/python" benches/peers.py --base "$V/base.fvecs" --query "$V/query.fvecs" --truth "$V/truth.ivecs" \
  --k 10 --m 16 --ef-construction 200 --ef "$EF" --threads 2 ${SYSTEMS:+--systems "$SYSTEMS"} |
  tee "$DATA/ann-peers.jsonl"
python3 benches/summarize.py "$DATA/ann-rust.jsonl" "$DATA/ann-peers.jsonl"
