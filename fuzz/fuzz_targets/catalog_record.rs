//! Arbitrary bytes as a catalog record: decoded or refused, never a panic.
//! Run with `scripts/fuzz.sh catalog_record SECONDS`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = memloop::fuzzing::catalog_record(data);
});
