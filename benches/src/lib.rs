//! # memloop-benches
//!
//! Benchmark binaries that put memloop beside its peers on the same data in the same run:
//! - `ann-bench`: the index against hnsw_rs (and, through `benches/peers.py`, hnswlib, faiss and
//!   usearch) on texmex `.fvecs` files: build time, open time, RSS after open, recall and QPS
//!   per `ef`.
//!
//! Shared pieces live here: texmex I/O, process memory readings, the clustered-data generator,
//! the plain BM25 baseline of `retrieval-bench`
//! and the [`AnnSystem`] trait every engine implements.

pub mod clustered;
pub mod embed_cache;
pub mod judged;
pub mod lancedb_peer;
pub mod longmemeval;
pub mod plain_bm25;
pub mod rss;
pub mod systems;
pub mod texmex;

pub use systems::AnnSystem;

/// The median of `v` (the upper one for an even count); `v` must not be empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Copies the files of store `from` into `to` (created), leaving out its lock: a copy a
/// benchmark may open while the original is held, or change without touching the original.
pub fn copy_store(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_file() && e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// The README's Rust examples, compiled and run as doctests (this crate sees every other crate).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust page's examples (docs/rust.md), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rust.md")]
pub struct RustPageDoctests;

/// The CPU a figure was measured on: its model name and the SIMD flags memloop's kernels
/// choose by (`/proc/cpuinfo`'s, on Linux; "unknown" and none elsewhere).
pub fn cpu() -> serde_json::Value {
    const FLAGS: [&str; 10] = [
        "sse4_2",
        "avx",
        "avx2",
        "fma",
        "avx512f",
        "avx512bw",
        "avx512vl",
        "avx512_vnni",
        "avx_vnni",
        "asimddp",
    ];
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let model = field("model name").unwrap_or_else(|| "unknown".into());
    let have = field("flags")
        .or_else(|| field("Features"))
        .unwrap_or_default();
    let flags: Vec<&str> = FLAGS
        .iter()
        .copied()
        .filter(|f| have.split_whitespace().any(|h| h == *f))
        .collect();
    serde_json::json!({ "model": model, "flags": flags.join(" ") })
}
