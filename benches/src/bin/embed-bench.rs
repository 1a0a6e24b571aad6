//! `embed-bench`: MiniLM embedding throughput and latency, on the CPU or a CUDA GPU.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin embed-bench -- [--model DIR] \
//!     [--sentences benches/data/bench_sentences.json] [--threads 1,2] [--kernels native|candle] \
//!     [--device cpu|cuda[:N]] [--precision f32|int8] [--pooling whole|sentences] --json
//! ```
//! Same protocol as the reference figures (`research/embedding.md`, `benches/embed_peers.py`):
//! 256 fixed sentences of 20–60 tokens; batch 1 over the first 128, batch 32 over all 256,
//! batch 256 (all of them in one call); latency of one 58-token sentence (median of 50); each
//! rate the median of 5 runs after a warm-up; tokenisation, forward pass, pooling and
//! normalisation all included (on a GPU: the copies to and from it too). With `--precision
//! int8`, each line also gives the cosine of every sentence's int8 vector to its f32 vector
//! (mean and minimum). Each line records the CPU (model, SIMD flags) and the encoder's kernels
//! (`simd`, `int8_kernel`); `MEMLOOP_SIMD=scalar|avx2|avxvnni` caps them, so an older CPU's
//! path is measured on a newer one (`simd_cap`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use memloop_benches::{cpu, median};
use memloop_embed::{
    default_model_dir, CpuKernels, DeviceChoice, DocumentPooling, Embedder, EmbedderOptions,
    Kernels, Precision,
};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "Embedding throughput of memloop-embed")]
struct Args {
    /// Model directory (default: the fetched all-MiniLM-L6-v2).
    #[arg(long)]
    model: Option<PathBuf>,
    /// JSON array of sentences.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/data/bench_sentences.json"))]
    sentences: PathBuf,
    /// Thread counts to measure.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Inputs per forward pass inside the embedder (`EmbedderOptions::batch_size`).
    #[arg(long, default_value_t = 32)]
    micro_batch: usize,
    /// Encoder for BERT models on the CPU: `native` (memloop's own, the default) or `candle`
    /// (candle-transformers' `bert`).
    #[arg(long, default_value = "native", value_parser = ["native", "candle"])]
    kernels: String,
    /// Where the model runs: `cpu` or `cuda[:N]` (a build with the `cuda` feature).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// The native encoder's matrix products: `f32` (default) or `int8`.
    #[arg(long, default_value = "f32", value_parser = ["f32", "int8"])]
    precision: String,
    /// How a text's vector is made: `whole` (default, the protocol's) or `sentences` (the
    /// mean of its sentences' vectors, a new store's default).
    #[arg(long, default_value = "whole", value_parser = ["whole", "sentences"])]
    pooling: String,
    /// Timed runs per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    // candle sizes its compute pools once per process from these variables, so each thread
    // count runs in its own child process.
    if std::env::var_os("MEMLOOP_EMBED_BENCH_CHILD").is_none() {
        for &threads in &args.threads {
            let mut cmd = std::process::Command::new(std::env::current_exe()?);
            let mut rest = Vec::new();
            let mut skip_value = false;
            for a in std::env::args().skip(1) {
                if std::mem::take(&mut skip_value) {
                    continue;
                }
                if a == "--threads" {
                    skip_value = true;
                } else if !a.starts_with("--threads=") {
                    rest.push(a);
                }
            }
            cmd.args(rest)
                .arg(format!("--threads={threads}"))
                .env("MEMLOOP_EMBED_BENCH_CHILD", "1")
                .env("RAYON_NUM_THREADS", threads.to_string())
                .env("CANDLE_NUM_THREADS", threads.to_string());
            let status = cmd.status()?;
            anyhow::ensure!(status.success(), "child for {threads} thread(s) failed");
        }
        return Ok(());
    }
    let text = std::fs::read_to_string(&args.sentences)
        .with_context(|| format!("read {}", args.sentences.display()))?;
    let sentences: Vec<String> = serde_json::from_str(&text)?;
    let all: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let model = args.model.clone().unwrap_or_else(default_model_dir);
    let device: DeviceChoice = args.device.parse()?;
    let (kernels, cpu) = (CpuKernels::detect(), cpu());
    for &threads in &args.threads {
        let e = Embedder::load(
            &model,
            EmbedderOptions {
                threads: Some(threads),
                batch_size: args.micro_batch,
                kernels: if args.kernels == "candle" {
                    Kernels::Candle
                } else {
                    Kernels::Native
                },
                device,
                precision: Precision::parse(&args.precision).unwrap_or_default(),
                pooling: DocumentPooling::parse(&args.pooling).unwrap_or_default(),
                ..Default::default()
            },
        )?;
        let fidelity = if args.precision == "int8" && args.pooling == "whole" {
            let exact = Embedder::load(
                &model,
                EmbedderOptions {
                    threads: Some(threads),
                    device,
                    ..Default::default()
                },
            )?;
            let (a, b) = (e.embed_documents(&all)?, exact.embed_documents(&all)?);
            let cos: Vec<f64> = a
                .iter()
                .zip(&b)
                .map(|(a, b)| a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum())
                .collect();
            let mean = cos.iter().sum::<f64>() / cos.len() as f64;
            let min = cos.iter().copied().fold(f64::INFINITY, f64::min);
            json!({"mean_cosine_to_f32": mean, "min_cosine_to_f32": min})
        } else {
            json!(null)
        };
        let tokens: usize = all.iter().map(|s| e.count_tokens(s) + 2).sum();
        let _ = e.embed_documents(&all)?; // warm-up
        let b1 = median(
            (0..args.runs)
                .map(|_| {
                    let t0 = Instant::now();
                    for s in &all[..128] {
                        e.embed_documents(&[s]).expect("embedding failed");
                    }
                    128.0 / t0.elapsed().as_secs_f64()
                })
                .collect(),
        );
        let b32 = median(
            (0..args.runs)
                .map(|_| {
                    let t0 = Instant::now();
                    for chunk in all.chunks(32) {
                        e.embed_documents(chunk).expect("embedding failed");
                    }
                    all.len() as f64 / t0.elapsed().as_secs_f64()
                })
                .collect(),
        );
        let b256 = median(
            (0..args.runs)
                .map(|_| {
                    let t0 = Instant::now();
                    e.embed_documents(&all).expect("embedding failed");
                    all.len() as f64 / t0.elapsed().as_secs_f64()
                })
                .collect(),
        );
        let probe = all
            .iter()
            .copied()
            .find(|s| e.count_tokens(s) + 2 == 58)
            .unwrap_or(all[0]);
        let latency = median(
            (0..50)
                .map(|_| {
                    let t0 = Instant::now();
                    e.embed_query(probe).expect("embedding failed");
                    t0.elapsed().as_secs_f64() * 1e3
                })
                .collect(),
        );
        let line = json!({
            "system": "memloop", "threads": threads, "batch1_per_s": (b1 * 10.0).round() / 10.0,
            "batch32_per_s": (b32 * 10.0).round() / 10.0, "batch256_per_s": (b256 * 10.0).round() / 10.0, "latency_ms": (latency * 100.0).round() / 100.0,
            "mean_tokens": (tokens as f64 / all.len() as f64 * 10.0).round() / 10.0, "micro_batch": args.micro_batch, "kernels": args.kernels, "device": device.to_string(),
            "precision": args.precision, "pooling": args.pooling, "fidelity": fidelity,
            "simd": kernels.tier, "int8_kernel": kernels.int8, "simd_cap": std::env::var("MEMLOOP_SIMD").unwrap_or_default(), "cpu": cpu,
        });
        if args.json {
            println!("{line}");
        } else {
            println!("memloop on {device} ({}, kernels {}/{}), {threads} thread(s): batch 1 {b1:.1}/s, batch 32 {b32:.1}/s, batch 256 {b256:.1}/s, one sentence {latency:.2} ms {fidelity}", args.precision, kernels.tier, kernels.int8);
        }
    }
    Ok(())
}
