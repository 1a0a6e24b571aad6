//! `crypt-bench`: what encryption at rest costs, the same data on a plain and an encrypted
//! store in one run: batch remember throughput, recall p50 / p99, and open → first recall on
//! a large store (an encrypted store decrypts its index file and catalog on open).
//!
//! ```text
//! cargo build --release -p memloop-benches --bin crypt-bench
//! target/release/crypt-bench --memories 100000 --queries 2000 --json
//! ```
//! Model-free (the 384-d hashing embedder, the default model's dimension), so the figures are
//! the engine's own cost, where encryption weighs most: with the model, embedding dominates
//! both. Synced durability, batches of 1,000 (alternating between the two stores), de-duplication
//! on, k = 5. Each store is compacted and closed (index saved), reopened and timed to its first
//! recall; then recalls alternate between the two stores, query by query.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use memloop::{Encryption, HashingEmbedder, Memory, NewMemory, Options, Query};
use serde_json::{json, Value};

#[derive(Parser, Debug)]
#[command(about = "encryption at rest: write, recall and open cost against a plain store")]
struct Args {
    /// Memories written to each store.
    #[arg(long, default_value_t = 100_000)]
    memories: usize,
    /// Recalls timed on each store.
    #[arg(long, default_value_t = 2_000)]
    queries: usize,
    /// Print one JSON line.
    #[arg(long)]
    json: bool,
    /// Write the two stores (`plain`, `sealed`) and the key file here and keep them
    /// (default: a temporary directory, removed).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

fn sentence(i: usize) -> String {
    const NOUNS: [&str; 12] = [
        "falcon", "compiler", "glacier", "violin", "harbor", "orchid", "reactor", "canyon",
        "lantern", "meadow", "quartz", "tundra",
    ];
    format!(
        "the {} met the {} near station {i} with code k{} for user {}",
        NOUNS[i % 12],
        NOUNS[(i / 12 + 5) % 12],
        (i * 7919) % 10007,
        i % 50
    )
}

fn options(key: Option<&Path>) -> Options {
    Options {
        encryption: key.map(Encryption::key_file),
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(384)))
    }
}

/// Writes `a.memories` memories into new stores at `plain` and `sealed`, a batch to one then
/// the same batch to the other; returns each one's memories per second and database bytes
/// after an explicit compaction (a fresh file's free pages depend on where the sparse-file
/// heuristic falls).
fn write_both(a: &Args, plain: &Path, sealed: &Path, key: &Path) -> Result<[(f64, u64); 2]> {
    let stores = [
        Memory::open(plain, options(None))?,
        Memory::open(sealed, options(Some(key)))?,
    ];
    let mut seconds = [0.0f64; 2];
    for start in (0..a.memories).step_by(1000) {
        for (memory, spent) in stores.iter().zip(seconds.iter_mut()) {
            let batch = (start..(start + 1000).min(a.memories))
                .map(|i| {
                    NewMemory::new(sentence(i))
                        .scope(memloop::Scope::user(format!("user-{}", i % 50)))
                })
                .collect();
            let t = Instant::now();
            memory.remember_batch(batch)?;
            *spent += t.elapsed().as_secs_f64();
        }
    }
    let mut out = [(0.0, 0); 2];
    for ((memory, spent), slot) in stores.into_iter().zip(seconds).zip(out.iter_mut()) {
        memory.admin().compact()?;
        *slot = (
            a.memories as f64 / spent,
            memory.admin().disk_usage()?.database,
        );
        memory.close()?;
    }
    Ok(out)
}

/// Opens the store and answers one recall; returns it and the milliseconds taken.
fn open(store: &Path, key: Option<&Path>) -> Result<(Memory, f64)> {
    let t = Instant::now();
    let memory = Memory::open(store, options(key))?;
    memory.recall(&Query::new(sentence(7)).k(5))?;
    Ok((memory, t.elapsed().as_secs_f64() * 1e3))
}

fn p50_p99(mut micros: Vec<f64>) -> (f64, f64) {
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99))
}

fn main() -> Result<()> {
    let a = Args::parse();
    let scratch = tempfile::tempdir()?;
    let root = a
        .dir
        .clone()
        .unwrap_or_else(|| scratch.path().to_path_buf());
    let key = root.join("bench.key");
    let (plain_dir, sealed_dir) = (root.join("plain"), root.join("sealed"));
    // Writes, batch by batch alternating between the stores; then opens, each timed to its
    // first recall (the encrypted one decrypts its index and catalog); then recalls,
    // alternating query by query, so drift in the machine's speed falls on both alike.
    let [(write_plain, db_plain), (write_sealed, db_sealed)] =
        write_both(&a, &plain_dir, &sealed_dir, &key)?;
    let (plain, open_plain) = open(&plain_dir, None)?;
    let (sealed, open_sealed) = open(&sealed_dir, Some(&key))?;
    // Steady state: right after open a recall does not wait for the catalog (still loading
    // in the background) and reads a few more items; the census waits for it.
    plain.admin().census()?;
    sealed.admin().census()?;
    let query = |i: usize| Query::new(sentence((i * 7) % a.memories)).k(5);
    for i in 0..a.queries.min(200) {
        plain.recall(&query(i))?;
        sealed.recall(&query(i))?;
    }
    let (mut times_plain, mut times_sealed) = (Vec::new(), Vec::new());
    for i in 0..a.queries {
        for (m, times) in [(&plain, &mut times_plain), (&sealed, &mut times_sealed)] {
            let t = Instant::now();
            m.recall(&query(i))?;
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    let figures = |write: f64, db: u64, open: f64, times: Vec<f64>, m: &Memory| -> Result<Value> {
        let (p50, p99) = p50_p99(times);
        Ok(
            json!({"remember_batch_per_s": write, "open_to_first_recall_ms": open,
            "recall_p50_us": p50, "recall_p99_us": p99,
            "database_bytes_compacted": db, "index_bytes": m.admin().disk_usage()?.index}),
        )
    };
    let plain_figures = figures(write_plain, db_plain, open_plain, times_plain, &plain)?;
    let sealed_figures = figures(write_sealed, db_sealed, open_sealed, times_sealed, &sealed)?;
    plain.close()?;
    sealed.close()?;
    let ratio = |k: &str| {
        sealed_figures[k].as_f64().unwrap_or(0.0) / plain_figures[k].as_f64().unwrap_or(1.0)
    };
    let out = json!({"figure": "crypt", "memories": a.memories, "queries": a.queries,
        "plain": plain_figures, "encrypted": sealed_figures,
        "encrypted_over_plain": {"remember_batch_per_s": ratio("remember_batch_per_s"),
                  "database_bytes_compacted": ratio("database_bytes_compacted"),
                  "recall_p50_us": ratio("recall_p50_us"),
                  "recall_p99_us": ratio("recall_p99_us"),
                  "open_to_first_recall_ms": ratio("open_to_first_recall_ms")}});
    if a.json {
        println!("{out}");
    } else {
        println!("{out:#}");
    }
    Ok(())
}
