//! Arbitrary bytes as an export file: parsed and checked as import does, never a panic, an abort or an allocation past the file's size (a length field of 2^62 was one).
//! Run with `scripts/fuzz.sh export_file SECONDS`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = memloop::fuzzing::export_file(data);
});
