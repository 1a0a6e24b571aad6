#!/usr/bin/env bash
# memloop's encoder tiers beside onnxruntime with the same instructions: on a machine with
# AVX-512, onnxruntime (which has no switch for its kernels) is shown a CPU with AVX2 alone, or
# with AVX-VNNI and no AVX-512, by benches/cpuid_mask.c (CPUID faulting: nothing emulated), and
# memloop is capped to the same tier (MEMLOOP_SIMD) and run under the same mask. Rounds
# alternate the systems so that a slower minute of the machine falls on each alike. Every JSON
# line goes to OUT, with the mask and the round added.
#
#   cargo build --release -p memloop-benches --bin embed-bench
#   python3 benches/onnx_graph.py fill --graph benches/data/minilm-onnx --model DIR --out target/minilm.onnx
#   python3 benches/make_turns.py --data ../shared/datasets/longmemeval/longmemeval_s_dev.json.gz \
#       --tokenizer DIR/tokenizer.json --out target/turns.json
#   python3 benches/make_chunks.py --out target/chunks.json
#   bash benches/embed_tiers.sh DIR OUT [ROUNDS] [MASKS] [CORPORA]
#
#   python3 benches/tiers_table.py OUT            # the medians and ratios, as a Markdown table
#
# MASKS: space-separated, of `none` (the machine's best), `avxvnni` and `avx2` (default all
# three); CORPORA: of `sentences`, `turns`, `chunks` (default all three). PYTHON names the
# Python with onnxruntime, onnx, safetensors, tokenizers and numpy (default python3); BENCH the
# embed-bench binary (default target/release/embed-bench, or the host triple's folder).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?the model folder}
out=${2:?the JSON lines file to write}
rounds=${3:-2}
masks=${4:-none avxvnni avx2}
corpora=${5:-sentences turns chunks}
python=${PYTHON:-python3}
bench=${BENCH:-}
if [ -z "$bench" ]; then
    for b in target/release/embed-bench target/x86_64-unknown-linux-gnu/release/embed-bench; do
        [ -x "$b" ] && bench=$b && break
    done
fi
[ -x "${bench:-}" ] || { echo "embed-bench not built (see the header)" >&2; exit 1; }
grep -qw cpuid_fault /proc/cpuinfo || { echo "no CPUID faulting here: masks cannot be applied" >&2; exit 1; }
mkdir -p target
mask_lib=target/cpuid_mask.so
cc -O2 -Wall -shared -fPIC -o "$mask_lib" benches/cpuid_mask.c
[ -f target/minilm-int8.onnx ] || "$python" - <<'EOF'
from onnxruntime.quantization import QuantType, quantize_dynamic
quantize_dynamic("target/minilm.onnx", "target/minilm-int8.onnx", per_channel=True,
                 weight_type=QuantType.QInt8)
EOF
corpus_file() {
    case $1 in
        sentences) echo benches/data/bench_sentences.json ;;
        turns) echo target/turns.json ;;
        chunks) echo target/chunks.json ;;
        *) echo "unknown corpus $1" >&2; exit 1 ;;
    esac
}
: > "$out"
# Each line tagged with what ran it.
tag() {
    "$python" -c '
import json, sys
extra = json.loads(sys.argv[1])
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        d = json.loads(line)
        d.update(extra)
        print(json.dumps(d), flush=True)
' "$1" | tee -a "$out"
}
for round in $(seq 1 "$rounds"); do
    for corpus in $corpora; do
        file=$(corpus_file "$corpus")
        for mask in $masks; do
            extra="{\"mask\": \"$mask\", \"round\": $round, \"corpus\": \"$corpus\"}"
            if [ "$mask" = none ]; then env=(); else env=(CPUID_MASK="$mask" LD_PRELOAD="$PWD/$mask_lib" MEMLOOP_SIMD="$mask"); fi
            for precision in int8 f32; do
                env "${env[@]}" "$bench" --threads 2 --runs 3 --precision "$precision" \
                    --model "$model" --sentences "$file" --json | tag "$extra"
            done
            env "${env[@]}" "$python" benches/embed_peers.py --model "$model" --threads 2 --runs 3 \
                --onnx target/minilm.onnx --onnx-int8 target/minilm-int8.onnx --skip-torch \
                --sentences "$file" | tag "$extra"
        done
    done
done
