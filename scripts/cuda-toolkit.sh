#!/usr/bin/env bash
# Makes a CUDA toolkit that can build memloop's `cuda` feature on a machine that has none:
# NVIDIA's compiler and libraries from their PyPI wheels (no NVIDIA account, no installer),
# unpacked into target/cuda-toolkit in the layout of /usr/local/cuda. Prints the directory;
# use it as CUDA_HOME with its bin/ on PATH (scripts/gpu-check.sh does).
#
#   scripts/cuda-toolkit.sh                 # CUDA 13.0 (the version of driver 580)
#   CUDA_WHEELS_VERSION=13.0 scripts/cuda-toolkit.sh
#
# Pick the CUDA version of the driver that will run the build (`nvidia-smi` prints it): PTX
# made by a newer compiler does not load on an older driver. The wheels hold no libcuda.so (the
# driver's own library, linked against at build time only), so a stub exporting the driver
# functions cudarc declares is compiled here, as the toolkit's lib/stubs/libcuda.so would be;
# the real driver is what runs.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${CUDA_WHEELS_VERSION:-13.0}"
case "$version" in
13.0)
    wheels=(nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88
        nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 nvidia-cuda-nvrtc==13.0.88
        nvidia-curand==10.4.0.35 nvidia-cublas==13.0.0.19)
    ;;
*)
    echo "cuda-toolkit.sh: no wheel set for CUDA $version (known: 13.0)" >&2
    exit 2
    ;;
esac

dest="$PWD/target/cuda-toolkit/$version"
home="$dest/nvidia/cu13"
if [ -x "$home/bin/nvcc" ] && [ -f "$home/lib/stubs/libcuda.so" ]; then
    echo "$home"
    exit 0
fi

downloads="$PWD/target/cuda-toolkit/wheels"
mkdir -p "$downloads" "$dest"
echo "cuda-toolkit.sh: fetching CUDA $version wheels from PyPI (about 650 MB)" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64 \
    -d "$downloads" "${wheels[@]}" >&2
for w in "${wheels[@]}"; do
    name="${w%%==*}"
    file=$(ls "$downloads"/"${name//-/_}"-"${w##*==}"-*.whl)
    python3 -m zipfile -e "$file" "$dest"
done
chmod +x "$home"/bin/* "$home"/nvvm/bin/*

# Unversioned names for the linker, and lib64 as the toolkit has it.
(
    cd "$home/lib"
    for l in cublas cublasLt cudart nvrtc; do ln -sf "lib$l.so.13" "lib$l.so"; done
    ln -sf libcurand.so.10 libcurand.so
)
ln -sfn lib "$home/lib64"

# The driver stub: every cu* function cudarc's driver bindings declare.
cudarc=$(cargo metadata --format-version 1 --locked 2>/dev/null |
    python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"]=="cudarc"))' 2>/dev/null || true)
if [ -z "$cudarc" ]; then
    cudarc=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-*/Cargo.toml | tail -1)
fi
sys="$(dirname "$cudarc")/src/driver/sys/mod.rs"
mkdir -p "$home/lib/stubs"
grep -hoE '^\s+fn (cu[A-Za-z0-9_]+)\(' "$sys" | sed -E 's/^\s+fn (cu[A-Za-z0-9_]+)\(/\1/' |
    sort -u | awk '{print "void " $1 "(void) {}"}' >"$home/lib/stubs/cuda_stub.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$home/lib/stubs/libcuda.so" "$home/lib/stubs/cuda_stub.c"
"$home/bin/nvcc" --version >&2
echo "$home"
