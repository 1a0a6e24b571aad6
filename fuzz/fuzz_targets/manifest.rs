//! Arbitrary bytes as a store's manifest.json.
//! Run with `scripts/fuzz.sh manifest SECONDS`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = memloop::fuzzing::manifest(data);
});
