//! `memloop scan`: the memories a filter admits, by id, without a query.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use memloop::Durability;

use crate::filter_args::FilterArgs;
use crate::output::{item_json, shorten};
use crate::store_args::StoreArgs;

/// `memloop scan`.
#[derive(Args, Debug)]
pub struct ScanArgs {
    #[command(flatten)]
    filter: FilterArgs,
    /// At most this many memories.
    #[arg(long, default_value_t = 100)]
    limit: usize,
    /// One JSON object per memory and line.
    #[arg(long)]
    json: bool,
}

pub fn scan(store: &StoreArgs, a: &ScanArgs) -> Result<()> {
    let memory = store.open_existing(Durability::Synced)?;
    let filter = a.filter.filter()?;
    let items = memory.scan(&filter, a.limit)?;
    crate::store_args::close(memory);
    let mut out = std::io::stdout().lock();
    for item in &items {
        if a.json {
            writeln!(out, "{}", item_json(item))?;
        } else {
            writeln!(
                out,
                "#{:<6} {:<10} {}",
                item.id,
                item.kind,
                shorten(&item.text, 90)
            )?;
        }
    }
    Ok(())
}
