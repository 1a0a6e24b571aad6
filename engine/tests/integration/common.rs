//! Helpers shared by the engine tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memloop::{Clock, HashingEmbedder, Memory, Options};

/// A new temporary directory. Under WebAssembly (the browser build's tests, run by Node's WASI)
/// the standard library has no temporary directory, so it is made in the `/tmp` the runner
/// gives (scripts/wasi-run.mjs).
pub fn tempdir() -> tempfile::TempDir {
    #[cfg(target_family = "wasm")]
    let _ = tempfile::env::override_temp_dir(Path::new("/tmp"));
    tempfile::tempdir().expect("temporary directory")
}

/// Options with the model-free test embedder of dimension `dim` and a manual clock at `t0`.
pub fn hashing(dim: usize, clock: &Clock) -> Options {
    Options {
        clock: clock.clone(),
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(dim)))
    }
}

/// Opens `dir` with the 256-d hashing embedder.
pub fn open(dir: &Path, clock: &Clock) -> Memory {
    Memory::open(dir, hashing(256, clock)).expect("open store")
}

/// The store's current index file: `index.mlx`, or where a mapped file cannot be renamed over
/// (Windows) the newest generation, `index-<n>.mlx` (older ones are deleted by the next save or
/// open).
pub fn index_file(dir: &Path) -> PathBuf {
    let newest = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().ok()?;
            let n: u64 = name
                .strip_prefix("index-")?
                .strip_suffix(".mlx")?
                .parse()
                .ok()?;
            Some((n, name))
        })
        .max();
    dir.join(newest.map_or_else(|| "index.mlx".to_string(), |(_, name)| name))
}

/// A corpus of distinct sentences about numbered topics.
pub fn sentences(n: usize) -> Vec<String> {
    const NOUNS: [&str; 12] = [
        "falcon", "compiler", "glacier", "violin", "harbor", "orchid", "reactor", "canyon",
        "lantern", "meadow", "quartz", "tundra",
    ];
    const VERBS: [&str; 8] = [
        "watches", "repairs", "paints", "measures", "crosses", "guards", "sells", "studies",
    ];
    (0..n)
        .map(|i| {
            format!(
                "the {} {} the {} near station {} code k{}",
                NOUNS[i % 12],
                VERBS[(i / 12) % 8],
                NOUNS[(i / 96 + 5) % 12],
                i,
                (i * 7919) % 10007
            )
        })
        .collect()
}
