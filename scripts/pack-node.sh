#!/usr/bin/env bash
# Packs the npm packages as a release would, into target/node-pack/:
#   memloop-*.tgz                  the main package (its loader native.js and types generated
#                                  by `napi build` from the Rust), naming the platform package
#                                  given as its optional dependency, as `napi pre-publish` adds it
#   memloop-linux-x64-gnu-*.tgz    the x86-64 addon in napi-rs's layout (node/npm/linux-x64-gnu,
#                                  made by `napi create-npm-dirs`), stripped of debug info
#
#   bash scripts/pack-node.sh linux-x64-gnu     # scripts/test-node.sh
#   bash scripts/pack-node.sh linux-arm64-gnu   # scripts/test-arm64-packages.sh (the arm64
#                                               # addon itself: scripts/build-linux.sh aarch64)
#   bash scripts/pack-node.sh win32-x64-msvc    # scripts/test-windows.sh --npm
#   bash scripts/pack-node.sh linux-x64-gnu linux-arm64-gnu win32-x64-msvc
#                                               # scripts/release.sh: the main package naming
#                                               # every platform package
#
# `npm ci` installs the pinned @napi-rs/cli first. Prints the main tarball's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# What npm and napi print goes to stderr: stdout carries the tarball's path alone.
exec 3>&1 1>&2
[ $# -gt 0 ] || { echo "which platform packages the main one names: linux-x64-gnu, linux-arm64-gnu, win32-x64-msvc" >&2; exit 2; }
for platform in "$@"; do
    [ -f "node/npm/$platform/package.json" ] || { echo "no platform package node/npm/$platform" >&2; exit 2; }
done
(cd node && npm ci --no-audit --no-fund --loglevel=error)
(cd node && npx napi build --platform --js native.js --dts native.d.ts)
# The dev profile's debug info is for the Rust tests; the package carries none.
strip --strip-debug node/memloop.linux-x64-gnu.node
pack=$root/target/node-pack
rm -rf "$pack"
mkdir -p "$pack/main"
cp node/package.json node/index.js node/index.d.ts node/native.js node/native.d.ts \
    node/errors.js node/errors.d.ts node/README.md "$pack/main/"
version=$(node -p 'require("./node/package.json").version')
(cd "$pack/main" && npm pkg delete devDependencies scripts)
for platform in "$@"; do
    (cd "$pack/main" && npm pkg set "optionalDependencies.memloop-$platform=$version")
done
tarball=$(cd "$pack/main" && npm pack --silent --pack-destination "$pack")
platform_tarball=$(bash scripts/pack-node-platform.sh linux-x64-gnu node/memloop.linux-x64-gnu.node "$pack")
for t in "$tarball" "$platform_tarball"; do
    echo "packed $t ($(du -h "$pack/$t" | cut -f1))"
done
if tar tzf "$pack/$tarball" | grep -q '\.node$'; then
    echo "the main package carries an addon; it belongs in $platform_tarball"
    exit 1
fi
echo "$pack/$tarball" >&3
