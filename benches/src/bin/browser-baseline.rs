//! `browser-baseline`: the native side of the browser's measurements (`benches/browser_bench.py`
//! runs both): the same registry requests the browser door sends, through `Memory::call` on a
//! native store: the texts remembered as conversations of `--batch` turns, then each query
//! recalled.
//!
//! ```text
//! RAYON_NUM_THREADS=1 browser-baseline --texts texts.json --queries queries.json \
//!     [--precision int8] [--batch 500] [--k 10]
//! ```
//! Prints one JSON object: the ingest's texts per second, and the recalls' p50 and p99 in
//! milliseconds (query embedding included; one untimed pass first).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use memloop::{requests::OpenRequest, Memory, Options, Request};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "the browser door's requests on a native store")]
struct Args {
    /// A JSON array of texts to remember.
    #[arg(long)]
    texts: PathBuf,
    /// A JSON array of queries.
    #[arg(long)]
    queries: PathBuf,
    /// The encoder's precision (as the browser opens: int8 where a vector kernel exists).
    #[arg(long, default_value = "int8")]
    precision: String,
    /// Turns per `remember_conversation` request.
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// Hits per recall.
    #[arg(long, default_value_t = 10)]
    k: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let read = |p: &PathBuf| -> Result<Vec<String>> {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        Ok(serde_json::from_str(&text)?)
    };
    let (texts, queries) = (read(&args.texts)?, read(&args.queries)?);
    let dir = tempfile::tempdir()?;
    let request: OpenRequest = serde_json::from_value(json!({"precision": args.precision}))?;
    let options = Options::from_request(request).map_err(|e| anyhow::anyhow!("{e}"))?;
    let memory = Memory::open(dir.path(), options)?;
    let call = |op: &str, fields: serde_json::Value| -> Result<serde_json::Value> {
        let answer = memory.call(Request::parse(op, fields).map_err(memloop::Error::from)?)?;
        Ok(serde_json::to_value(answer)?)
    };
    let start = Instant::now();
    for (b, chunk) in texts.chunks(args.batch.max(1)).enumerate() {
        let turns: Vec<_> = chunk
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let n = (b * args.batch + i) as i64;
                json!({"speaker": "user", "text": t, "time": 1_767_225_600_000i64 + n * 1000})
            })
            .collect();
        call(
            "remember_conversation",
            json!({"session": format!("s{b}"), "turns": turns}),
        )?;
    }
    let ingest = texts.len() as f64 / start.elapsed().as_secs_f64();
    for q in &queries {
        call("recall", json!({"query": q, "k": args.k}))?;
    }
    let mut times = Vec::with_capacity(queries.len());
    for q in &queries {
        let t = Instant::now();
        std::hint::black_box(call("recall", json!({"query": q, "k": args.k}))?);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    memory.close()?;
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    println!(
        "{}",
        json!({"texts": texts.len(), "ingest_per_s": ingest, "recalls": times.len(),
               "p50_ms": pct(0.5), "p99_ms": pct(0.99), "precision": args.precision})
    );
    Ok(())
}
