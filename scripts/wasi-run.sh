#!/usr/bin/env bash
# cargo's runner for wasm32-wasip1 (.cargo/config.toml): the test program in Node's V8.
exec node --no-warnings "$(dirname "$0")/wasi-run.mjs" "$@"
