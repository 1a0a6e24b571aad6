#!/usr/bin/env bash
# Packs an npm platform package in napi-rs's layout: node/npm/PLATFORM's package.json and README
# beside ADDON, named memloop.PLATFORM.node, into the folder OUT (npm pack). Used by
# scripts/pack-node.sh (the host's test build), scripts/build-linux.sh and
# scripts/build-windows.sh (the release addons).
#
#   bash scripts/pack-node-platform.sh PLATFORM ADDON OUT
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: bash scripts/pack-node-platform.sh PLATFORM ADDON OUT" >&2; exit 2; }
platform=$1
addon=$(realpath "$2")
mkdir -p "$3"
out=$(cd "$3" && pwd)
cd "$(dirname "$0")/.."
[ -f "node/npm/$platform/package.json" ] || { echo "no platform package node/npm/$platform" >&2; exit 2; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "node/npm/$platform/package.json" "node/npm/$platform/README.md" "$stage/"
cp "$addon" "$stage/memloop.$platform.node"
(cd "$stage" && npm pack --silent --pack-destination "$out")
