# The WebAssembly test build's flags, sourced by scripts/test-wasm.sh and scripts/build-wasm.sh
# (one target folder, target/wasm-smoke, so the two share their dependencies): the
# dependencies unoptimised but the f32 matrix products (gemm), the workspace's test crates at
# opt-level 1, no debug information (the index and the encoder keep their own opt-level 3).
# It builds beside the host's suites in CI, and the tests use the test embedder but for the
# browser's golden-vector and example tests, whose f32 products would crawl unoptimised.
# shellcheck disable=SC2034
wasm_light=(--config 'profile.dev.package."*".opt-level=0' --config profile.test.opt-level=1
    --config profile.test.debug=false --config profile.dev.debug=false
    --config 'profile.dev.package.gemm.opt-level=3' --config 'profile.dev.package.gemm-common.opt-level=3'
    --config 'profile.dev.package.gemm-f32.opt-level=3')
