//! `recall-latency`: how long recalls take when the engine is called from Rust, the baseline of
//! the Python binding's overhead (`python/bench/overhead.py` runs it beside the same recalls
//! made from Python on the same store).
//!
//! ```text
//! recall-latency --store DIR --queries queries.txt [--hashing 64] [--k 5] [--repeat 3]
//! ```
//! Prints one JSON object: calls, mean / p50 / p99 microseconds per recall (model load and open
//! excluded; query embedding included, as in every recall).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use memloop::{HashingEmbedder, Memory, Options, Query, Strategy};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "recall latency of the engine called from Rust")]
struct Args {
    /// An existing store.
    #[arg(long)]
    store: PathBuf,
    /// Query texts, one per line.
    #[arg(long)]
    queries: PathBuf,
    /// Open with the model-free hashing embedder of this dimension (as the store was built).
    #[arg(long)]
    hashing: Option<usize>,
    /// Hits per recall.
    #[arg(long, default_value_t = 5)]
    k: usize,
    /// Times each query is recalled.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let queries: Vec<String> = std::fs::read_to_string(&args.queries)
        .with_context(|| format!("reading {}", args.queries.display()))?
        .lines()
        .map(str::to_string)
        .collect();
    let options = match args.hashing {
        Some(dim) => Options::with_embedder(Arc::new(HashingEmbedder::new(dim))),
        None => Options::default(),
    };
    let memory = Memory::open(&args.store, options)?;
    // One untimed pass warms the caches, as the Python side does.
    for q in &queries {
        memory.retrieve(&Query::new(q.as_str()).k(args.k), Strategy::Single)?;
    }
    let mut times = Vec::with_capacity(queries.len() * args.repeat);
    for _ in 0..args.repeat {
        for q in &queries {
            let t = Instant::now();
            let hits = memory.retrieve(&Query::new(q.as_str()).k(args.k), Strategy::Single)?;
            times.push(t.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(hits);
        }
    }
    memory.close()?;
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    println!(
        "{}",
        json!({"calls": times.len(), "mean_us": mean, "p50_us": pct(0.5), "p99_us": pct(0.99)})
    );
    Ok(())
}
