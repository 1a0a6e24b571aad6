//! Arbitrary bytes as a change stream (seeded with Parquet files), read and checked as `import_columnar` does: never a
//! panic that escapes the importer, an abort, or an allocation past the file's bounds.
//! Run with `scripts/fuzz.sh SECONDS columnar_parquet`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(init: {
    // Arrow's readers assert on some malformed input; the importer fences each decoder call
    // and turns such a panic into an error. Silence the hook so that a caught panic is not
    // taken for a crash: a panic that escapes the importer still aborts the run.
    std::panic::set_hook(Box::new(|_| {}));
}, |data: &[u8]| {
    let _ = memloop::fuzzing::columnar(data);
});
