//! The sentence splitter's cost on hostile shapes: one 512 KiB text of each shape the round-4
//! audit found quadratic (`". "` repeated, line breaks, `"?\n"`), and the shapes it found
//! linear, embedded as a document by sentences (the default pooling), each timed against
//! 512 KiB of prose: the ratio must stay near 1 (before the fix, `". "` × 256k took 79 s).
//!
//! cargo run --release -p memloop-benches --bin splitter-bench -- [--model DIR] [--rounds 3]

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use memloop_benches::median;
use memloop_embed::{default_model_dir, DocumentPooling, Embedder, EmbedderOptions, Precision};

#[derive(Parser)]
struct Args {
    /// The model directory (default: the fetched all-MiniLM-L6-v2).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Timed rounds per shape (the median is reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// `f32` or `int8`.
    #[arg(long, default_value = "int8")]
    precision: String,
}

/// 512 KiB.
const SIZE: usize = 512 * 1024;

/// `unit` repeated to 512 KiB, then a closing word (so the text has one).
fn repeated(unit: &str) -> String {
    let mut s = unit.repeat(SIZE / unit.len());
    s.push_str("final word");
    s
}

fn main() -> Result<()> {
    let args = Args::parse();
    let dir = args.model.clone().unwrap_or_else(default_model_dir);
    let embedder = Embedder::load(
        &dir,
        EmbedderOptions {
            precision: Precision::parse(&args.precision).unwrap_or_default(),
            pooling: DocumentPooling::Sentences,
            ..Default::default()
        },
    )?;
    let prose_unit =
        "The committee met on Tuesday to discuss the harbour budget, and most members agreed. ";
    let shapes: Vec<(&str, String)> = vec![
        ("prose (the reference)", repeated(prose_unit)),
        ("\". \" repeated", repeated(". ")),
        ("\"\\n\" repeated", repeated("\n")),
        ("\"?\\n\" repeated", repeated("?\n")),
        ("\"...\" without spaces", repeated("...")),
        ("one word, no punctuation", repeated("word ")),
        ("\"Hi.\" repeated", repeated("Hi. ")),
    ];
    println!("| text (512 KiB) | median ms | vs prose |");
    println!("|---|---:|---:|");
    let mut reference = None;
    for (name, text) in &shapes {
        let mut times = Vec::new();
        for _ in 0..args.rounds.max(1) {
            let t = Instant::now();
            let v = embedder.embed_documents(&[text.as_str()])?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(v.len(), 1);
        }
        let ms = median(times);
        let base = *reference.get_or_insert(ms);
        println!("| {name} | {ms:.1} | {:.2}x |", ms / base);
    }
    Ok(())
}
