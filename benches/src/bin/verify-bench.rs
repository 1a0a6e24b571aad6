//! `verify-bench`: what the full check of an index file costs (every section's checksum, every
//! link in range), the check the engine runs after open and before the first search.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin verify-bench -- --sizes 10000,100000 --json
//! ```
//! Random unit vectors (seeded) of `--dim` dimensions: the check's cost depends on the file's
//! size, not on what the vectors mean. Each figure is the median of 5 runs on a freshly opened
//! file (its pages in the page cache, as right after a close).

use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use memloop_benches::median;
use memloop_index::{Index, Params, UnitVectors};
use rand::{Rng, SeedableRng};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "cost of the full index check (Index::verify)")]
struct Args {
    /// Index sizes.
    #[arg(long, default_value = "10000,100000", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Vector dimension (MiniLM: 384).
    #[arg(long, default_value_t = 384)]
    dim: usize,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let dir = tempfile::tempdir()?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for &n in &args.sizes {
        let mut flat = Vec::with_capacity(n * args.dim);
        for _ in 0..n {
            flat.extend((0..args.dim).map(|_| rng.gen_range(-1.0f32..1.0)));
        }
        let index = Index::new(Params::builder(args.dim).build()?)?;
        let ids: Vec<u64> = (0..n as u64).collect();
        index.insert_batch(&ids, &UnitVectors::new(flat, args.dim)?)?;
        let path = dir.path().join(format!("{n}.mlx"));
        index.save(&path, 1)?;
        let file_mb = std::fs::metadata(&path)?.len() as f64 / 1e6;
        let (mut open, mut verify) = (Vec::new(), Vec::new());
        for _ in 0..5 {
            let t = Instant::now();
            let opened = Index::open(&path)?;
            open.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            opened.verify()?;
            verify.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let (open, verify) = (median(open), median(verify));
        if args.json {
            println!(
                "{}",
                json!({"n": n, "dim": args.dim, "file_mb": (file_mb * 10.0).round() / 10.0,
                       "open_ms": (open * 1000.0).round() / 1000.0, "verify_ms": (verify * 100.0).round() / 100.0})
            );
        } else {
            println!("{n} vectors ({file_mb:.1} MB): open {open:.3} ms, verify {verify:.2} ms");
        }
    }
    Ok(())
}
