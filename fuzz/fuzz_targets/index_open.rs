//! Arbitrary bytes as an index file: open, search, verify must return, never panic.
//! Run with `cargo +nightly fuzz run index_open` from `fuzz/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("memloop-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("f.idx");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(index) = memloop_index::Index::open(&path) {
        let q = vec![1.0f32; index.dim()];
        let _ = index.search(&q, 10, 32);
        let _ = index.search_filtered(&q, 10, 32, &|id: u64| id % 3 == 0);
        let _ = index.verify();
        let _ = index.insert(u64::MAX, &q);
        let _ = index.delete(0);
    }
});
