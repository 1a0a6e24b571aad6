#!/usr/bin/env bash
# The Node package's tests, against the packed tarball installed into a clean project whose
# PATH has no cargo: `npm ci` in node/ (pinned @napi-rs/cli, TypeScript, the MCP SDK for the
# example), `napi build` (the addon, `native.js` and `native.d.ts` generated from the Rust),
# `npm pack` of the package and of its platform package, then `npm install` of both tarballs
# into target/node-clean; there `tsc --noEmit`
# checks the typed example against the installed declarations, the MCP-tool example runs on
# the default model, and `node --test` runs node/test (API, bad input, concurrency, a second
# process, kill -9, the cross-door contract, and `memloop mcp --http` through the official
# MCP TypeScript SDK). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
(cd node && npm ci --no-audit --no-fund --loglevel=error)
(cd node && npx napi build --platform --js native.js --dts native.d.ts)
# The dev profile's debug info is for the Rust tests; the package carries none.
strip --strip-debug node/memloop.linux-x64-gnu.node
# napi-rs's layout: the addon in its own package per platform (`memloop-linux-x64-gnu`, from
# node/npm/linux-x64-gnu, made by `napi create-npm-dirs`), which the main package names as an
# optional dependency, added as `napi pre-publish` adds it: only to what is packed.
pack=$root/target/node-pack
rm -rf "$pack"
mkdir -p "$pack/main" "$pack/platform"
cp node/package.json node/index.js node/index.d.ts node/native.js node/native.d.ts \
    node/errors.js node/errors.d.ts node/README.md "$pack/main/"
cp node/npm/linux-x64-gnu/package.json node/npm/linux-x64-gnu/README.md \
    node/memloop.linux-x64-gnu.node "$pack/platform/"
version=$(node -p 'require("./node/package.json").version')
(cd "$pack/main" && npm pkg delete devDependencies scripts \
    && npm pkg set "optionalDependencies.memloop-linux-x64-gnu=$version")
tarball=$(cd "$pack/main" && npm pack --silent --pack-destination "$pack")
platform_tarball=$(cd "$pack/platform" && npm pack --silent --pack-destination "$pack")
for t in "$tarball" "$platform_tarball"; do
    echo "packed $t ($(du -h "$pack/$t" | cut -f1))"
done
if tar tzf "$pack/$tarball" | grep -q '\.node$'; then
    echo "the main package carries an addon; it belongs in $platform_tarball" >&2
    exit 1
fi

clean_path=$(python3 -c '
import os
print(os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                      if d and not os.path.exists(os.path.join(d, "cargo"))))')
project=$root/target/node-clean
rm -rf "$project"
mkdir -p "$project"
cp -r node/test node/examples "$project/"
cd "$project"
export PATH="$clean_path"
if command -v cargo >/dev/null; then
    echo "cargo is still on the test project's PATH" >&2
    exit 1
fi
npm init -y >/dev/null
npm pkg set type=module
# The package, and what the examples import (from the npm cache `npm ci` filled).
npm install --no-audit --no-fund --loglevel=error "$pack/$tarball" "$pack/$platform_tarball" \
    @modelcontextprotocol/sdk@1.32.2 zod@4.1.13 typescript@5.9.3 @types/node@20.19.43
node_modules/.bin/tsc --noEmit -p examples
node_modules/.bin/tsc -p examples
node examples/dist/agent-tool.js "$project/agent-store"
MEMLOOP_CONTRACT=$root/contract/cases.json MEMLOOP_BIN=${MEMLOOP_BIN:-$root/target/debug/memloop} \
    node --test --test-concurrency=1 test/
