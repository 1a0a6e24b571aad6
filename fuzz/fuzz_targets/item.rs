//! Arbitrary bytes as an item record (the items table, export records): decoded within the record's bounds.
//! Run with `scripts/fuzz.sh item SECONDS`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = memloop::fuzzing::item(data);
});
