//! `memloop check`: verifies a store: the index file's checksums and links (rebuilding the
//! index from the database when they fail), every record of the database, and that the two
//! agree.

use anyhow::{bail, Result};
use clap::Args;
use memloop::Durability;

use crate::store_args::StoreArgs;

/// Arguments of `memloop check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `memloop check`; fails (exit status 1) when problems remain.
pub fn check(store: &StoreArgs, a: &CheckArgs) -> Result<()> {
    let memory = store.open_existing(Durability::Synced)?;
    let report = memory.check()?;
    crate::store_args::close(memory);
    if a.json {
        println!("{}", serde_json::to_value(&report)?);
    } else {
        println!(
            "{} memories, {} indexed",
            report.memories, report.indexed
        );
        match &report.index_rebuilt {
            Some(why) => println!("index rebuilt from the database: {why}"),
            None => println!("index file verified"),
        }
        for p in &report.problems {
            println!("problem: {p}");
        }
    }
    if !report.is_sound() {
        bail!("{} problem(s) found", report.problems.len());
    }
    Ok(())
}
