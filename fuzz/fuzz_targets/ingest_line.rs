//! Arbitrary text as one line of `memloop ingest --jsonl`: parsed and validated as a memory.
//! Run with `scripts/fuzz.sh ingest_line SECONDS`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        let _ = memloop::fuzzing::ingest_line(line);
    }
});
