//! `binding-overhead`: what a call costs through each door, measured against the same store
//! in one run. This binary seeds a store (model-free: the hashing embedder, 384 dimensions)
//! and times lexical recalls from Rust; `node/bench/overhead.mjs` and
//! `python/bench/door_overhead.py` time the same recalls, in the same order, through the Node and
//! Python packages. The lexical strategy embeds nothing, so what differs is the door.
//!
//! ```text
//! bash scripts/bench-bindings.sh     # builds all three, runs Rust, Node, Python, Rust again
//! ```

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use memloop::{Durability, HashingEmbedder, Memory, NewMemory, Options, Query, Strategy};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "lexical recall latency from Rust, the baseline of the bindings' overhead")]
struct Args {
    /// The store (kept: the other doors time the same one).
    #[arg(long)]
    store: std::path::PathBuf,
    /// Seed the store with this many memories first.
    #[arg(long)]
    seed: Option<usize>,
    /// Memories in the store (the queries cycle through them).
    #[arg(long, default_value_t = 5_000)]
    memories: usize,
    /// Recalls timed.
    #[arg(long, default_value_t = 3_000)]
    queries: usize,
}

/// The i-th memory's text; the Node and Python scripts write the same function.
fn sentence(i: usize) -> String {
    const NOUNS: [&str; 12] = [
        "falcon", "compiler", "glacier", "violin", "harbor", "orchid", "reactor", "canyon",
        "lantern", "meadow", "quartz", "tundra",
    ];
    format!(
        "the {} near station {} code k{}",
        NOUNS[i % 12],
        i,
        (i * 7919) % 10007
    )
}

fn main() -> Result<()> {
    let a = Args::parse();
    let options = Options {
        durability: Durability::Grouped,
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(384)))
    };
    let memory = Memory::open(&a.store, options)?;
    if let Some(n) = a.seed {
        for start in (0..n).step_by(1000) {
            let batch = (start..(start + 1000).min(n))
                .map(|i| NewMemory::new(sentence(i)))
                .collect();
            memory.remember_batch(batch)?;
        }
    }
    let query = |i: usize| Query::new(sentence((i * 7) % a.memories)).k(5);
    for i in 0..200 {
        memory.retrieve(&query(i), Strategy::Lexical)?; // warm-up
    }
    let mut micros = Vec::with_capacity(a.queries);
    for i in 0..a.queries {
        let t = Instant::now();
        memory.retrieve(&query(i), Strategy::Lexical)?;
        micros.push(t.elapsed().as_secs_f64() * 1e6);
    }
    if std::env::var_os("HOP").is_some() {
        // Each recall on another thread (HOP=N: a pool of N; 4 is libuv's pool, which runs a
        // Node call): what a Promise's thread hop costs in Rust itself.
        let threads = std::env::var("HOP")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(4);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        micros.clear();
        for i in 0..a.queries {
            let t = Instant::now();
            pool.install(|| memory.retrieve(&query(i), Strategy::Lexical))?;
            micros.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    memory.close()?;
    micros.sort_by(f64::total_cmp);
    let p50 = micros[micros.len() / 2];
    let mean = micros.iter().sum::<f64>() / micros.len() as f64;
    println!(
        "{}",
        json!({"door": "rust", "queries": a.queries, "p50_us": p50, "mean_us": mean})
    );
    Ok(())
}
