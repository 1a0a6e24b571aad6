//! `export-bench`: exporting a store, as memloop's `.mlx` file and as change streams (Parquet,
//! Arrow IPC), full and as a delta.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin export-bench -- --store DIR [--changes 1000]
//! ```
//! On a copy of `--store` (an existing store, e.g. one `engine-bench --dir` filled): each full
//! export timed (median of `--runs`), rows/s, MB/s and bytes per memory; then `--changes`
//! memories forgotten and as many updated, and the delta since the full export timed. One JSON
//! line per figure.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use memloop::{answers::ColumnarFormat, requests::Update, Memory, MemoryFilter, MemoryId, Options};
use memloop_benches::{copy_store, median};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "export rates: .mlx, Parquet and Arrow, full and delta")]
struct Args {
    /// An existing store (copied first; the copy is changed).
    #[arg(long)]
    store: PathBuf,
    /// Model directory (default: the fetched all-MiniLM-L6-v2).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Memories forgotten, and as many updated, before the delta.
    #[arg(long, default_value_t = 1_000)]
    changes: usize,
    /// Runs per full export (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    copy_store(&args.store, &store).context("copy the store")?;
    let options = Options {
        model_dir: args.model.clone(),
        ..Options::default()
    };
    let memory = Memory::open(&store, options)?;
    let all = MemoryFilter::new();
    let memories = memory.stats()?.memories;
    let out = dir.path().join("out");
    let mut through = 0;
    for way in ["mlx", "parquet", "arrow"] {
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..args.runs {
            let t = Instant::now();
            match ColumnarFormat::parse(way) {
                None => {
                    memory.transfer().export(&out, &all)?;
                }
                Some(format) => {
                    let r = memory.transfer().export_changes(&out, None, &all, format)?;
                    through = r.through;
                }
            }
            times.push(t.elapsed().as_secs_f64());
            bytes = std::fs::metadata(&out)?.len();
        }
        let s = median(times);
        println!(
            "{}",
            json!({"figure": "export_full", "format": way, "memories": memories, "seconds": s,
                   "rows_per_s": memories as f64 / s, "mb_per_s": bytes as f64 / 1e6 / s,
                   "bytes": bytes, "bytes_per_memory": bytes as f64 / memories as f64})
        );
    }
    let ids: Vec<MemoryId> = memory
        .advanced()
        .scan(&all, 2 * args.changes)?
        .iter()
        .map(|i| i.id)
        .collect();
    let (gone, changed) = ids.split_at(ids.len().min(args.changes));
    for &id in gone {
        memory.forget(id)?;
    }
    for &id in changed {
        memory.update(
            id,
            Update {
                tags: Some(vec!["changed".into()]),
                ..Default::default()
            },
        )?;
    }
    for (way, format) in [
        ("parquet", ColumnarFormat::Parquet),
        ("arrow", ColumnarFormat::Arrow),
    ] {
        let t = Instant::now();
        let r = memory
            .transfer()
            .export_changes(&out, Some(through), &all, format)?;
        let s = t.elapsed().as_secs_f64();
        let rows = r.upserts + r.deletes;
        println!(
            "{}",
            json!({"figure": "export_delta", "format": way, "memories": memories,
                   "upserts": r.upserts, "deletes": r.deletes, "seconds": s,
                   "rows_per_s": rows as f64 / s, "bytes": r.bytes,
                   "mb_per_s": r.bytes as f64 / 1e6 / s})
        );
    }
    memory.close()?;
    Ok(())
}
