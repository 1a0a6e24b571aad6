#!/usr/bin/env bash
# Every release artifact of memloop for every target this Linux machine builds, into dist/,
# with SHA256SUMS (verified at the end) and MANIFEST.json (what each artifact is and what it
# needs: the C library, the CPU baseline):
#
#   dist/x86_64-unknown-linux-gnu/    scripts/build-linux.sh x86_64: the static (musl) command,
#                                     the C library (glibc 2.17), the manylinux_2_17 wheel, the
#                                     npm package memloop-linux-x64-gnu
#   dist/aarch64-unknown-linux-gnu/   scripts/build-linux.sh aarch64: the same for 64-bit ARM
#   dist/x86_64-pc-windows-gnu/       scripts/build-windows.sh: memloop.exe, memloop_ffi.dll,
#                                     the win_amd64 wheel, the npm package memloop-win32-x64-msvc
#   dist/npm/                         the main npm package memloop, naming the three platform
#                                     packages as optional dependencies (scripts/pack-node.sh)
#   dist/wasm32-wasip1/               the browser package memloop-wasm with the default model
#                                     (scripts/build-wasm.sh --release --model)
#
# Each step installs what it needs when missing (rustup targets, Debian's cross compilers and
# Wine's, zig and cargo-zigbuild from PyPI, the Node package's dev dependencies, the default
# model); the builds run one after the other (each uses every core). Not part of the test
# command: scripts/test.sh checks the glibc floor of what it builds itself, and
# scripts/test-arm64.sh and scripts/test-windows.sh test these artifacts under qemu and Wine.
# macOS, iOS and Android are not built (no SDK or NDK on Linux).
#
#   bash scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
# dist/ holds this release alone: SHA256SUMS and MANIFEST.json name every file in it.
rm -rf dist
step() { echo "== release: $1 ($(($(date +%s) - start)) s in)"; }

step "Linux x86-64"
bash scripts/build-linux.sh x86_64
# The default model for the browser package is fetched by the command just built (no build of
# the command's test profile for that alone), where it runs.
if [ "$(uname -m)" = x86_64 ] && [ -z "${MEMLOOP_BIN:-}" ]; then
    export MEMLOOP_BIN=$root/dist/x86_64-unknown-linux-gnu/memloop
fi
step "Linux aarch64"
bash scripts/build-linux.sh aarch64
step "Windows x86-64"
bash scripts/build-windows.sh
step "the main npm package"
rm -rf dist/npm
mkdir -p dist/npm
main_tarball=$(bash scripts/pack-node.sh linux-x64-gnu linux-arm64-gnu win32-x64-msvc)
cp "$main_tarball" dist/npm/
step "the browser package"
bash scripts/build-wasm.sh --release --model
rm -rf dist/wasm32-wasip1
mkdir -p dist/wasm32-wasip1
(cd target/wasm-pkg && npm pack --silent --pack-destination "$root/dist/wasm32-wasip1") >/dev/null

step "MANIFEST.json and SHA256SUMS"
python3 - <<'EOF'
import json, pathlib

dist = pathlib.Path("dist")
x64 = "x86-64 (SSE2 baseline; AVX2, AVX-VNNI and AVX-512 kernels chosen at run time)"
arm = "aarch64 (Advanced SIMD baseline; dot product and i8mm kernels chosen at run time)"
glibc = "glibc 2.17 or newer (RHEL/CentOS 7+, Debian 8+, Ubuntu 14.04+, Amazon Linux 2)"


def what(path: pathlib.Path) -> dict:
    """What one artifact is and what it needs of the machine that runs it."""
    target, name = path.parent.name, path.name
    cpu = arm if target.startswith("aarch64") else x64
    linux = "linux" in target
    if target == "npm":
        return {"kind": "npm package (main: loader and types)", "needs": "Node.js 20 or newer and one of the platform packages"}
    if target == "wasm32-wasip1":
        return {"kind": "npm package for the browser (WebAssembly SIMD128, the default model)", "needs": "a browser with WebAssembly SIMD and the Origin Private File System (Chromium 108+, Firefox 111+, Safari 16.4+)"}
    if name in ("memloop", "memloop.exe"):
        kind = "the memloop command"
        needs = "any Linux kernel 3.2+ (statically linked with musl)" if linux else "64-bit Windows 10 or newer"
    elif name.startswith("libmemloop_ffi.so") or name == "memloop_ffi.dll":
        kind, needs = "the C library (shared)", glibc if linux else "64-bit Windows 10 or newer"
    elif name.endswith(".a"):
        kind = "the C library (static archive, no LTO)" if name == "libmemloop_ffi.a" else "the C library's import library"
        needs = f"a C toolchain for {target}; links with -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" if linux else "mingw-w64, clang or MSVC's link.exe"
    elif name == "memloop.h":
        kind, needs = "the C header", "C11"
    elif name.endswith(".whl"):
        kind = "Python wheel (abi3, CPython 3.9+)"
        needs = glibc if linux else "64-bit Windows 10 or newer"
    elif name.endswith(".tgz"):
        kind = "npm platform package (Node-API addon)"
        needs = "Node.js 20 or newer, " + (glibc if linux else "64-bit Windows 10 or newer")
    else:
        kind, needs = "build report", "-"
    return {"kind": kind, "needs": needs, "cpu": cpu}


files = sorted(p for p in dist.rglob("*") if p.is_file() and p.name not in ("SHA256SUMS", "MANIFEST.json"))
manifest = [{"file": str(p.relative_to(dist)), "bytes": p.stat().st_size, **what(p)} for p in files]
(dist / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
print(f"MANIFEST.json: {len(manifest)} files")
EOF
(cd dist && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
(cd dist && sha256sum --check --quiet SHA256SUMS)
echo "release: $(wc -l <dist/SHA256SUMS) files in dist/, SHA256SUMS verified, in $(($(date +%s) - start)) s"
