//! `forget-sim`: a store under a capacity bound, fed far more memories than it may keep.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin forget-sim -- --memories 1000000 --capacity 100000 --days 100 --json
//! ```
//! Memories (distinct texts, importance uniform in [0.05, 1], kinds cycling) arrive in batches
//! of 1,000 over simulated days on a manual clock, embedded by the model-free hashing embedder
//! (32-d: this measures forgetting, not embedding). Before each day's first batch the clock moves
//! and `sweep()` runs (time-based demotions and deletions); capacity evictions run inside the
//! writes that exceed the bound. Reported: sweep and batch latency percentiles, live memories,
//! and the store's files on disk as it goes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;
use memloop::{
    forget::ForgetPolicy, Clock, Durability, HashingEmbedder, Kind, Memory, NewMemory, Options,
};
use rand::{Rng, SeedableRng};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "forgetting under a capacity bound, simulated")]
struct Args {
    /// Memories inserted in total.
    #[arg(long, default_value_t = 1_000_000)]
    memories: usize,
    /// Store-wide capacity.
    #[arg(long, default_value_t = 100_000)]
    capacity: usize,
    /// Simulated days the inserts are spread over.
    #[arg(long, default_value_t = 100)]
    days: usize,
    /// Instead of the simulation: store this many memories, forget every other one, checkpoint,
    /// and report the files' sizes before and after (space follows live data).
    #[arg(long)]
    halve: Option<usize>,
    /// Embedding dimension of the hashing embedder.
    #[arg(long, default_value_t = 32)]
    dim: usize,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
}

const DAY: i64 = 86_400_000;
const T0: i64 = 1_795_000_000_000;

/// Megabytes of the database and of the index file.
fn disk_mb(m: &Memory) -> Result<(f64, f64)> {
    let d = m.admin().disk_usage()?;
    Ok((d.database as f64 / 1e6, d.index as f64 / 1e6))
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
}

/// Stores `n` memories, checkpoints, forgets every other one, checkpoints again, and reports
/// the files' sizes at both points.
fn halve(n: usize, dim: usize, emit: &dyn Fn(serde_json::Value)) -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let options = Options {
        durability: Durability::Grouped,
        dedup_threshold: None,
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(dim)))
    };
    let m = Memory::open(tmp.path(), options)?;
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(1000) {
        let batch = (start..(start + 1000).min(n))
            .map(|i| {
                NewMemory::new(format!(
                    "note {i} about area {} and topic t{}",
                    i % 977,
                    i % 131
                ))
            })
            .collect();
        ids.extend(m.remember_batch(batch)?);
    }
    m.admin().checkpoint()?;
    let (store_full, index_full) = disk_mb(&m)?;
    let t = Instant::now();
    for id in ids.iter().step_by(2) {
        m.forget(*id)?;
    }
    let forget_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    m.admin().checkpoint()?;
    let checkpoint_s = t.elapsed().as_secs_f64();
    let (store_half, index_half) = disk_mb(&m)?;
    emit(json!({"halve": n, "dim": dim, "live": m.stats()?.memories,
        "store_mb_full": store_full, "store_mb_half": store_half,
        "store_ratio": store_half / store_full,
        "index_mb_full": index_full, "index_mb_half": index_half,
        "index_ratio": index_half / index_full,
        "forget_s": forget_s, "checkpoint_s": checkpoint_s}));
    Ok(())
}

fn main() -> Result<()> {
    let a = Args::parse();
    let emit = |v: serde_json::Value| {
        if a.json {
            println!("{v}");
        } else {
            eprintln!("{v}");
        }
    };
    if let Some(n) = a.halve {
        return halve(n, a.dim, &emit);
    }
    let tmp = tempfile::tempdir()?;
    let clock = Clock::manual(T0);
    let options = Options {
        clock: clock.clone(),
        durability: Durability::Grouped,
        dedup_threshold: None,
        forgetting: ForgetPolicy {
            capacity: Some(a.capacity),
            ..ForgetPolicy::default()
        },
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(a.dim)))
    };
    let m = Memory::open(tmp.path(), options)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let batches = a.memories.div_ceil(1000);
    let per_day = batches.div_ceil(a.days).max(1);
    let (mut sweeps, mut writes) = (Vec::new(), Vec::new());
    let (mut demoted, mut forgotten, mut evicted) = (0, 0, 0usize);
    let started = Instant::now();
    for b in 0..batches {
        if b % per_day == 0 {
            clock
                .set(T0 + (b / per_day) as i64 * DAY)
                .map_err(anyhow::Error::msg)?;
            let t = Instant::now();
            let r = m.admin().sweep()?;
            sweeps.push(t.elapsed());
            demoted += r.demoted;
            forgotten += r.forgotten;
        }
        let batch: Vec<NewMemory> = (b * 1000..(b + 1) * 1000)
            .map(|i| {
                NewMemory::new(format!(
                    "event {i} in area {} with tag t{}",
                    i % 977,
                    i % 131
                ))
                .kind(Kind::ALL[i % 5])
                .importance(rng.gen_range(0.05..1.0))
            })
            .collect();
        let t = Instant::now();
        m.remember_batch(batch)?;
        writes.push(t.elapsed());
        if (b + 1) % 100 == 0 {
            let s = m.stats()?;
            let (store_mb, index_mb) = disk_mb(&m)?;
            emit(
                json!({"inserted": (b + 1) * 1000, "live": s.memories, "working": s.working,
                "long_term": s.long_term, "store_mb": store_mb, "index_mb": index_mb,
                "elapsed_s": started.elapsed().as_secs_f64()}),
            );
        }
    }
    m.admin().checkpoint()?;
    let s = m.stats()?;
    // The forgetting log is bounded, so evictions are counted from what is left.
    evicted += a.memories - s.memories - forgotten;
    let (store_mb, index_mb) = disk_mb(&m)?;
    emit(
        json!({"summary": true, "inserted": a.memories, "capacity": a.capacity, "live": s.memories,
        "demoted": demoted, "forgotten": forgotten, "evicted": evicted,
        "sweep_p50_ms": pct(&mut sweeps, 0.5), "sweep_p99_ms": pct(&mut sweeps, 0.99),
        "sweep_max_ms": pct(&mut sweeps, 1.0),
        "batch_p50_ms": pct(&mut writes, 0.5), "batch_p99_ms": pct(&mut writes, 0.99),
        "store_mb": store_mb, "index_mb": index_mb, "seconds": started.elapsed().as_secs_f64()}),
    );
    Ok(())
}
