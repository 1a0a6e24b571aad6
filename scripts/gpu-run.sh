#!/usr/bin/env bash
# The GPU half of scripts/gpu-check.sh, copied beside what `gpu-check.sh build` made: runs the
# golden tests on CUDA device 0 and embed-bench there (micro-batches of 32 and 256), writing
# logs and JSON lines into OUT (default: ./out beside this script).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/out}"
mkdir -p "$out"

# The CUDA 13 libraries: from the system if the loader knows them, else from a Python
# environment's nvidia-* wheels (PyTorch's).
if ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt.so.13'; then
    libs=$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + sys.path
dirs = sorted({os.path.dirname(p) for r in roots if r for p in glob.glob(os.path.join(r, "nvidia", "*", "lib", "lib*.so*"))})
print(":".join(dirs))
PY
)
    [ -n "$libs" ] && export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# The driver's libcuda: where the loader finds it, else wherever the machine keeps it.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
    driver=$(find /usr/local/nvidia /usr/lib /usr/lib64 -maxdepth 3 -name 'libcuda.so.1' 2>/dev/null | head -1)
    [ -n "$driver" ] && export LD_LIBRARY_PATH="$(dirname "$driver")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv | tee "$out/gpu.csv"
export MEMLOOP_MODEL_DIR="${MEMLOOP_MODEL_DIR:-$here/all-MiniLM-L6-v2}"
export MEMLOOP_EMBED_FIXTURES="${MEMLOOP_EMBED_FIXTURES:-$here/fixtures}"
export MEMLOOP_TEST_DEVICE="${MEMLOOP_TEST_DEVICE:-cuda:0}"
echo "== golden tests on $MEMLOOP_TEST_DEVICE"
"$here/embed-golden" --test-threads 1 --nocapture 2>&1 | tee "$out/golden.log"
threads=$(nproc)
echo "== embed-bench on this machine's CPU (native encoder), $threads threads, for comparison"
"$here/embed-bench" --device cpu --threads "$threads" --sentences "$here/bench_sentences.json" \
    --json | tee -a "$out/embed-bench.jsonl"
for micro in 32 256; do
    echo "== embed-bench on $MEMLOOP_TEST_DEVICE, micro-batch $micro, $threads CPU threads"
    "$here/embed-bench" --device "$MEMLOOP_TEST_DEVICE" --kernels candle --threads "$threads" \
        --micro-batch "$micro" --sentences "$here/bench_sentences.json" --json | tee -a "$out/embed-bench.jsonl"
done
