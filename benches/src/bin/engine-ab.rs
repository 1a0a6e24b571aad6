//! `engine-ab`: the engine's own cost, model-free, for comparing two builds in one run (a
//! refactor before and after): batch writes and recalls on the deterministic hashing embedder,
//! so the encoder's time does not hide the engine's.
//!
//! ```text
//! cargo build --profile test -p memloop-benches --bin engine-ab
//! target/debug/engine-ab --memories 20000 --queries 2000 --json
//! ```
//! Figures: `remember_batch` (memories/s, batches of 1,000, grouped durability, de-duplication
//! on) and `recall` p50 / p99 microseconds for the single (vector) and lexical strategies,
//! k = 5, after a warm-up pass.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use memloop::{Durability, HashingEmbedder, Memory, NewMemory, Options, Query, Strategy};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "the engine's batch-write and recall cost, model-free")]
struct Args {
    /// Memories written.
    #[arg(long, default_value_t = 20_000)]
    memories: usize,
    /// Recalls timed per strategy.
    #[arg(long, default_value_t = 2_000)]
    queries: usize,
    /// Print one JSON line.
    #[arg(long)]
    json: bool,
}

/// Distinct sentences about numbered topics (no two near-duplicates).
fn sentence(i: usize) -> String {
    const NOUNS: [&str; 12] = [
        "falcon", "compiler", "glacier", "violin", "harbor", "orchid", "reactor", "canyon",
        "lantern", "meadow", "quartz", "tundra",
    ];
    const VERBS: [&str; 8] = [
        "watches", "repairs", "paints", "measures", "crosses", "guards", "sells", "studies",
    ];
    format!(
        "the {} {} the {} near station {} code k{}",
        NOUNS[i % 12],
        VERBS[(i / 12) % 8],
        NOUNS[(i / 96 + 5) % 12],
        i,
        (i * 7919) % 10007
    )
}

/// p50 and p99 of `micros`, sorted in place.
fn percentiles(micros: &mut [f64]) -> (f64, f64) {
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99))
}

fn main() -> Result<()> {
    let a = Args::parse();
    let dir = tempfile::tempdir()?;
    let memory = Memory::open(
        dir.path(),
        Options {
            durability: Durability::Grouped,
            ..Options::with_embedder(Arc::new(HashingEmbedder::new(384)))
        },
    )?;
    let t = Instant::now();
    for start in (0..a.memories).step_by(1000) {
        let batch = (start..(start + 1000).min(a.memories))
            .map(|i| NewMemory::new(sentence(i)))
            .collect();
        memory.remember_batch(batch)?;
    }
    let write_rate = a.memories as f64 / t.elapsed().as_secs_f64();
    let mut recalls = Vec::new();
    for (name, strategy) in [("single", Strategy::Single), ("lexical", Strategy::Lexical)] {
        let query = |i: usize| Query::new(sentence((i * 7) % a.memories)).k(5);
        for i in 0..a.queries.min(200) {
            memory.retrieve(&query(i), strategy)?; // warm-up (the lexical index is built here)
        }
        let mut micros = Vec::with_capacity(a.queries);
        for i in 0..a.queries {
            let t = Instant::now();
            memory.retrieve(&query(i), strategy)?;
            micros.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let (p50, p99) = percentiles(&mut micros);
        recalls.push(json!({"strategy": name, "p50_us": p50, "p99_us": p99}));
    }
    memory.close()?;
    let out = json!({"figure": "engine_ab", "memories": a.memories,
        "remember_batch_per_s": write_rate, "recall": recalls});
    if a.json {
        println!("{out}");
    } else {
        println!("{out:#}");
    }
    Ok(())
}
