#!/usr/bin/env bash
# The Node package's tests, against the packed tarball installed into a clean project whose
# PATH has no cargo: the package and its platform package packed (scripts/pack-node.sh: `npm
# ci` in node/, with the pinned @napi-rs/cli, TypeScript and the MCP SDK for the example;
# `napi build`; `npm pack`), then `npm install` of both tarballs
# into target/node-clean; there `tsc --noEmit`
# checks the typed example against the installed declarations, the MCP-tool example runs on
# the default model, and `node --test` runs node/test (API, bad input, concurrency, a second
# process, kill -9, the cross-door contract, and `memloop mcp --http` through the official
# MCP TypeScript SDK). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
main_tarball=$(bash scripts/pack-node.sh linux-x64-gnu)
platform_tarball=$(ls "$root"/target/node-pack/memloop-linux-x64-gnu-*.tgz)

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
npm install --no-audit --no-fund --loglevel=error "$main_tarball" "$platform_tarball" \
    @modelcontextprotocol/sdk@1.32.2 zod@4.1.13 typescript@5.9.3 @types/node@20.19.43
node_modules/.bin/tsc --noEmit -p examples
node_modules/.bin/tsc -p examples
node examples/dist/agent-tool.js "$project/agent-store"
MEMLOOP_CONTRACT=$root/contract/cases.json MEMLOOP_BIN=${MEMLOOP_BIN:-$root/target/debug/memloop} \
    node --test --test-concurrency=1 test/
