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
//! both. Synced durability, batches of 1,000, de-duplication on, k = 5. Each store is written,
//! closed (index saved), reopened and timed to its first recall, then its recalls timed.

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

fn options(key: Option<&std::path::Path>) -> Options {
    Options {
        encryption: key.map(Encryption::key_file),
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(384)))
    }
}

/// One store's figures.
fn run(a: &Args, key: Option<&std::path::Path>) -> Result<Value> {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let memory = Memory::open(&store, options(key))?;
    let t = Instant::now();
    for start in (0..a.memories).step_by(1000) {
        let batch = (start..(start + 1000).min(a.memories))
            .map(|i| {
                NewMemory::new(sentence(i)).scope(memloop::Scope::user(format!("user-{}", i % 50)))
            })
            .collect();
        memory.remember_batch(batch)?;
    }
    let write_rate = a.memories as f64 / t.elapsed().as_secs_f64();
    memory.close()?;
    let t = Instant::now();
    let memory = Memory::open(&store, options(key))?;
    memory.recall(&Query::new(sentence(7)).k(5))?;
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let query = |i: usize| Query::new(sentence((i * 7) % a.memories)).k(5);
    for i in 0..a.queries.min(200) {
        memory.recall(&query(i))?;
    }
    let mut micros = Vec::with_capacity(a.queries);
    for i in 0..a.queries {
        let t = Instant::now();
        memory.recall(&query(i))?;
        micros.push(t.elapsed().as_secs_f64() * 1e6);
    }
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() - 1) as f64 * q) as usize];
    let usage = memory.disk_usage()?;
    memory.close()?;
    Ok(
        json!({"remember_batch_per_s": write_rate, "open_to_first_recall_ms": open_ms,
        "recall_p50_us": at(0.5), "recall_p99_us": at(0.99),
        "database_bytes": usage.database, "index_bytes": usage.index}),
    )
}

fn main() -> Result<()> {
    let a = Args::parse();
    let keys = tempfile::tempdir()?;
    let key = keys.path().join("bench.key");
    let plain = run(&a, None)?;
    let sealed = run(&a, Some(&key))?;
    let ratio = |k: &str| sealed[k].as_f64().unwrap_or(0.0) / plain[k].as_f64().unwrap_or(1.0);
    let out = json!({"figure": "crypt", "memories": a.memories, "queries": a.queries,
        "plain": plain, "encrypted": sealed,
        "ratio": {"remember_batch_per_s": ratio("remember_batch_per_s"),
                  "recall_p50_us": ratio("recall_p50_us"),
                  "open_to_first_recall_ms": ratio("open_to_first_recall_ms")}});
    if a.json {
        println!("{out}");
    } else {
        println!("{out:#}");
    }
    Ok(())
}
