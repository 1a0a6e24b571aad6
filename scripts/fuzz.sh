#!/usr/bin/env bash
# Runs the fuzz targets in fuzz/ with cargo fuzz (libFuzzer + AddressSanitizer), each for
# SECONDS, and prints each one's last statistics line (executions, coverage, corpus size).
# Not part of the test command. Installs cargo-fuzz (crates.io) when missing and runs on the
# stable toolchain (RUSTC_BOOTSTRAP=1 lets it pass the sanitizer flags cargo fuzz needs).
# Seeds are in fuzz/seeds/TARGET (committed); the growing corpus in fuzz/corpus/TARGET and
# crashes in fuzz/artifacts/TARGET (both ignored by git).
#
#   scripts/fuzz.sh 600                      # every target, 10 minutes each
#   scripts/fuzz.sh 60 export_file item      # the named targets, a minute each
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(index_open export_file item catalog_record manifest ingest_line ffi_json columnar_parquet columnar_arrow)
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz@0.13.2
fi
export RUSTC_BOOTSTRAP=1
mkdir -p ../target/fuzz-logs
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t"
    log="../target/fuzz-logs/$t.log"
    echo "== $t for ${seconds}s" >&2
    # -rss_limit_mb: an input that makes a decoder allocate beyond its bounds fails the run.
    cargo fuzz run --release "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
        >"$log" 2>&1 || { tail -40 "$log" >&2; echo "fuzz.sh: $t FAILED (log: fuzz/$log)" >&2; exit 1; }
    stats=$(grep -E '^#[0-9]+' "$log" | tail -1)
    echo "$t: ${stats:-no statistics line} (corpus $(ls "corpus/$t" | wc -l) files)"
done
