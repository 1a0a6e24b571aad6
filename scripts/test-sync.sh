#!/usr/bin/env bash
# Sync against a real S3-compatible server: builds s3s-fs (crates.io, pinned) into
# target/tools/, then runs the command's sync tests with it, the ones that need it included
# (two devices through the server; the server stalled and killed; a copy of the bucket read
# after an erasure). scripts/test.sh runs this.
#
# `--full` also runs what CI runs a little of: the merge model's property test with 10,000
# cases, the adversarial-remote property test with 10,000 seeds (MEMLOOP_SYNC_SEEDS overrides;
# about a third of a second a seed with its stores in /dev/shm) and the kill -9 test (forgets
# among the writes) with 100 rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_BUILD_TARGET=$host
version=0.14.1 # the last s3s-fs that builds with the workspace's Rust (1.95)
tools=$PWD/target/tools
if ! "$tools/bin/s3s-fs" --version 2>/dev/null | grep -qx "s3s-fs $version"; then
    echo "building s3s-fs $version (an S3-compatible server) into $tools" >&2
    CARGO_TARGET_DIR=$PWD/target/tools-build cargo install --locked --quiet \
        "s3s-fs@$version" --features binary --root "$tools"
fi
export MEMLOOP_S3S_FS=$tools/bin/s3s-fs
# The workspace's features (the command alone would compile the engine again without some).
cargo test --locked --workspace --test sync -- --include-ignored
if [ "${1:-}" = --full ]; then
    # The long runs' stores in memory where the system has a tmpfs: the property runs fsync
    # every write, and on a disk that is most of their time (a seed on a 2-core EPYC: 0.3-0.4 s
    # in /dev/shm, 0.7-1.4 s on disk).
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then
        export TMPDIR=/dev/shm
    fi
    PROPTEST_CASES=10000 cargo test --locked -p memloop --lib merge::
    MEMLOOP_SYNC_SEEDS=${MEMLOOP_SYNC_SEEDS:-10000} cargo test --locked -p memloop --test integration \
        sync_property -- --nocapture
    MEMLOOP_SYNC_KILL_ROUNDS=100 cargo test --locked -p memloop-cli --test sync kill_9 -- --nocapture
fi
