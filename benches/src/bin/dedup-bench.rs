//! `dedup-bench`: how surely de-duplication finds a near copy, in large batches (the inserts
//! that index the batch ahead of its write report it) and one memory at a time (a beam-32
//! search of the index each).
//!
//! ```text
//! cargo run --release -p memloop-benches --bin dedup-bench -- --vectors base.fvecs --json
//! ```
//! The first `--base` rows of `--vectors` (real-text embeddings) are stored as facts, in
//! batches of 1,000. Then `--copies` near copies of random stored rows (Gaussian noise of norm
//! `--noise`, renormalised; seeded) are remembered as facts with texts of their own, so every
//! copy whose most similar current fact reaches the 0.95 threshold (by exact scan, replayed in
//! order) must supersede it: in batches of 1,000 into one store, one at a time into a second store
//! holding the same facts. Texts are not embedded (`remember_embedded`), so no model is needed.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use memloop::{Durability, HashingEmbedder, Kind, Memory, NewMemory, Options};
use memloop_benches::texmex::read_fvecs;
use memloop_index::simd;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "near copies found by de-duplication, in batches and one at a time")]
struct Args {
    /// Real-text embeddings (fvecs).
    #[arg(long)]
    vectors: std::path::PathBuf,
    /// Rows stored first.
    #[arg(long, default_value_t = 100_000)]
    base: usize,
    /// Near copies remembered after them.
    #[arg(long, default_value_t = 5_000)]
    copies: usize,
    /// Norm of the noise added to a copy's source (0.25: cosine ≈ 0.97).
    #[arg(long, default_value_t = 0.25)]
    noise: f64,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
}

const THRESHOLD: f32 = 0.95;

fn main() -> Result<()> {
    let a = Args::parse();
    let base = read_fvecs(&a.vectors, Some(a.base))?;
    let (dim, n) = (base.dim, base.rows());
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let sigma = a.noise / (dim as f64).sqrt();
    let copies: Vec<(usize, Vec<f32>)> = (0..a.copies)
        .map(|_| {
            let src = rng.gen_range(0..n);
            let mut v: Vec<f32> = base
                .row(src)
                .iter()
                .map(|&x| {
                    let (u, w): (f64, f64) = (rng.gen_range(1e-300..1.0), rng.gen());
                    x + ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * w).cos() * sigma) as f32
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            (src, v)
        })
        .collect();
    let mut expected = None;
    let dir = tempfile::tempdir()?;
    let options = || Options {
        durability: Durability::Grouped,
        ..Options::with_embedder(Arc::new(HashingEmbedder::new(dim)))
    };
    let fact = |text: String| NewMemory::new(text).kind(Kind::Fact);
    let mut runs = Vec::new();
    for (name, batch) in [("batches_of_1000", 1000), ("one_at_a_time", 1)] {
        let m = Memory::open(dir.path().join(name), options())?;
        let mut stored_ids = Vec::with_capacity(n);
        for start in (0..n).step_by(1000) {
            let rows = (start..(start + 1000).min(n))
                .map(|i| (fact(format!("stored fact {i}")), base.row(i).to_vec()))
                .collect();
            stored_ids.extend(m.advanced().remember_embedded(rows)?);
        }
        if expected.is_none() {
            // Real text has near-equal rows: some stored facts superseded others already.
            let current = stored_ids
                .iter()
                .map(|&id| Ok(m.get(id)?.is_some_and(|i| i.superseded_by.is_none())))
                .collect::<Result<Vec<bool>>>()?;
            expected = Some(should_supersede(&base, &copies, current));
        }
        let t = Instant::now();
        let mut superseded = 0;
        for (c, chunk) in copies.chunks(batch).enumerate() {
            let rows = chunk
                .iter()
                .enumerate()
                .map(|(i, (src, v))| {
                    let text = format!("copy {} of stored fact {src}", c * batch + i);
                    (fact(text), v.clone())
                })
                .collect();
            let ids = m.advanced().remember_embedded(rows)?;
            for id in ids {
                let item = m.get(id)?.expect("just remembered");
                superseded += usize::from(item.supersedes.is_some());
            }
        }
        let seconds = t.elapsed().as_secs_f64();
        let stats = m.stats()?;
        runs.push(
            json!({"way": name, "superseded": superseded, "seconds": seconds,
            "memories": stats.memories, "indexed": stats.indexed}),
        );
        m.close()?;
    }
    let out = json!({"figure": "dedup_near_copies", "base": n, "copies": a.copies,
        "noise": a.noise, "should_supersede": expected.unwrap_or(0), "runs": runs});
    if a.json {
        println!("{out}");
    } else {
        eprintln!("{out:#}");
    }
    Ok(())
}

/// How many copies must supersede a fact: replayed in order by exact scan from the stored
/// facts `stored_current` says are current, each copy supersedes the most similar current
/// fact (stored, or an earlier copy) at or above the threshold, which is then no longer
/// current. (Two copies of one source are about 0.94 apart: the second finds no current fact
/// once the first superseded their source.)
fn should_supersede(
    base: &memloop_benches::texmex::Matrix<f32>,
    copies: &[(usize, Vec<f32>)],
    mut stored_current: Vec<bool>,
) -> usize {
    let close_stored: Vec<Vec<(f32, usize)>> = copies
        .par_iter()
        .map(|(_, v)| {
            (0..base.rows())
                .map(|j| (simd::dot(base.row(j), v), j))
                .filter(|&(s, _)| s >= THRESHOLD)
                .collect()
        })
        .collect();
    let mut copy_current = vec![false; copies.len()];
    let mut count = 0;
    for (i, (_, v)) in copies.iter().enumerate() {
        let stored = close_stored[i]
            .iter()
            .filter(|&&(_, j)| stored_current[j])
            .map(|&(s, j)| (s, Some(j), None));
        let earlier = (0..i)
            .filter(|&e| copy_current[e])
            .map(|e| (simd::dot(&copies[e].1, v), None, Some(e)))
            .filter(|&(s, _, _)| s >= THRESHOLD);
        if let Some((_, j, e)) = stored.chain(earlier).max_by(|a, b| a.0.total_cmp(&b.0)) {
            count += 1;
            if let Some(j) = j {
                stored_current[j] = false;
            }
            if let Some(e) = e {
                copy_current[e] = false;
            }
        }
        copy_current[i] = true;
    }
    count
}
