#!/usr/bin/env bash
# cargo's runner for wasm32-wasip1 (.cargo/config.toml): the test program in Node's V8.
# --single-threaded: Node 20's V8 (11.3), compiling the model's functions on its background
# threads while they ran, crashed (SIGSEGV, "Invalid bytecode") in 4 of 5 runs of the contract
# tests, in 0 of 5 with its compilers on the main thread alone (and in none of the test
# programs it crashed in before).
exec node --no-warnings --single-threaded "$(dirname "$0")/wasi-run.mjs" "$@"
