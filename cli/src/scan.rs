//! `memloop scan`: the memories a filter admits, by id, without a query.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use memloop::{Durability, Kind, MemoryFilter};

use crate::output::{item_json, shorten};
use crate::scope_args::ScopeArgs;
use crate::store_args::StoreArgs;
use crate::time_arg::parse_time;

/// `memloop scan`.
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Only this namespace.
    #[arg(long)]
    namespace: Option<String>,
    /// Only these kinds (repeat for several).
    #[arg(long = "kind", value_parser = crate::commands::parse_kind)]
    kinds: Vec<Kind>,
    /// Only memories with every one of these tags.
    #[arg(long = "tag")]
    tags: Vec<String>,
    #[command(flatten)]
    scope: ScopeArgs,
    /// What held at this time (RFC 3339 or Unix seconds), superseded versions included.
    #[arg(long, value_parser = parse_time)]
    as_of: Option<i64>,
    /// Also superseded versions.
    #[arg(long)]
    history: bool,
    /// At most this many memories.
    #[arg(long, default_value_t = 100)]
    limit: usize,
    /// One JSON object per memory and line.
    #[arg(long)]
    json: bool,
}

pub fn scan(store: &StoreArgs, a: &ScanArgs) -> Result<()> {
    let memory = store.open_existing(Durability::Synced)?;
    let filter = MemoryFilter {
        namespace: a.namespace.clone(),
        kinds: a.kinds.clone(),
        tags: a.tags.clone(),
        include_superseded: a.history,
        as_of: a.as_of,
        ..MemoryFilter::default()
    }
    .scope(a.scope.scope());
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
