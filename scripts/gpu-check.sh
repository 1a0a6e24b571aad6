#!/usr/bin/env bash
# Builds memloop-embed with `--features cuda`, runs the golden tests on the GPU (every reference
# text at cosine >= 0.9999 to sentence-transformers / nomic's PyTorch code) and embed-bench
# there (batch 1 / 32 / 256). Not part of the test command: it needs an NVIDIA GPU.
#
#   scripts/gpu-check.sh                # build and run on this machine (GPU + cargo)
#   scripts/gpu-check.sh build DIR      # build only, into DIR: the test binary, embed-bench,
#                                       # the fixtures, the model and DIR/run.sh
#   DIR/run.sh [OUT]                    # on the GPU machine (no Rust or toolkit needed there)
#
# The CUDA toolkit is taken from CUDA_HOME or nvcc on PATH; without either, scripts/cuda-toolkit.sh
# makes one from NVIDIA's PyPI wheels. At run time the binaries need the driver (libcuda) and
# the CUDA 13 libraries (cudart, cublas, cublasLt, curand, nvrtc): from the system, or from a
# Python environment's nvidia-* packages (PyTorch's), which run.sh finds.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
mode="${1:-all}"
dir="${2:-$root/target/gpu-check}"

build() {
    if [ -z "${CUDA_HOME:-}" ] && ! command -v nvcc >/dev/null; then
        CUDA_HOME=$(bash scripts/cuda-toolkit.sh)
    fi
    if [ -n "${CUDA_HOME:-}" ]; then
        export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
        export LIBRARY_PATH="$CUDA_HOME/lib:$CUDA_HOME/lib/stubs${LIBRARY_PATH:+:$LIBRARY_PATH}"
    fi
    # Without a GPU on the build machine, the kernels' target comes from here (9.0: Hopper;
    # the PTX also runs on newer GPUs).
    export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"
    local model
    model=$(bash scripts/fetch-model.sh | tail -1)
    local tests
    tests=$(cargo test --locked -p memloop-embed --features cuda --no-run --message-format=json |
        python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "integration":
        print(m["executable"])')
    cargo build --locked --profile test -p memloop-benches --features cuda --bin embed-bench
    rm -rf "$dir" && mkdir -p "$dir/all-MiniLM-L6-v2"
    cp "$tests" "$dir/embed-golden"
    cp target/debug/embed-bench "$dir/embed-bench"
    strip "$dir/embed-golden" "$dir/embed-bench"
    cp -r embed/tests/fixtures "$dir/fixtures"
    cp benches/data/bench_sentences.json "$dir/"
    cp "$model"/*.json "$model/model.safetensors" "$dir/all-MiniLM-L6-v2/"
    cp scripts/gpu-run.sh "$dir/run.sh"
    echo "gpu-check: built into $dir" >&2
}

case "$mode" in
build) build ;;
all)
    build
    bash "$dir/run.sh" "$dir/out"
    ;;
*)
    echo "usage: scripts/gpu-check.sh [build [DIR]]" >&2
    exit 2
    ;;
esac
