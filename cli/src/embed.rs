//! `memloop embed`.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::Args;
use memloop_embed::{default_model_dir, DeviceChoice, Embedder, EmbedderOptions, Precision};

/// Arguments of `memloop embed`.
#[derive(Args, Debug)]
pub struct EmbedArgs {
    /// Embed as search queries (nomic-style models get the query prefix).
    #[arg(long)]
    query: bool,
    /// Inference threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Lines embedded per batch.
    #[arg(long, default_value_t = 64)]
    batch: usize,
}

/// Runs `memloop embed` with the model in `model` (the default model when `None`) on `device`,
/// its matrix products at `precision`.
pub fn run(
    model: Option<&Path>,
    device: DeviceChoice,
    precision: Precision,
    args: &EmbedArgs,
) -> Result<()> {
    let dir = model.map_or_else(default_model_dir, Path::to_path_buf);
    let embedder = Embedder::load(
        &dir,
        EmbedderOptions {
            threads: args.threads,
            device,
            precision,
            ..Default::default()
        },
    )
    .with_context(|| format!("loading the model in {}", dir.display()))?;
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut batch: Vec<String> = Vec::with_capacity(args.batch.max(1));
    let lines = crate::lines::BoundedLines::new(stdin, crate::lines::MAX_LINE_BYTES);
    for (n, line) in lines.enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            bail!(
                "line {}: empty line; every line must be a JSON string (use \"\" for empty text)",
                n + 1
            );
        }
        let text: String = serde_json::from_str(&line).with_context(|| {
            format!("line {}: expected a JSON string like \"some text\"", n + 1)
        })?;
        batch.push(text);
        if batch.len() >= args.batch.max(1) {
            flush(&embedder, &mut batch, args.query, &mut out)?;
        }
    }
    flush(&embedder, &mut batch, args.query, &mut out)?;
    out.flush()?;
    Ok(())
}

fn flush(e: &Embedder, batch: &mut Vec<String>, query: bool, out: &mut impl Write) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let texts: Vec<&str> = batch.iter().map(String::as_str).collect();
    let vectors = if query {
        e.embed_queries(&texts)?
    } else {
        e.embed_documents(&texts)?
    };
    for v in vectors {
        serde_json::to_writer(&mut *out, &v)?;
        out.write_all(b"\n")?;
    }
    batch.clear();
    Ok(())
}
