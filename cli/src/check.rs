//! `memloop check`: verifies a store: the index file's checksums and links (rebuilding the
//! index from the database when they fail), every record of the database, and that the two
//! agree. `--salvage OUT` instead writes every readable memory of a damaged database to an
//! export file, without opening the store.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use memloop::Durability;

use crate::store_args::StoreArgs;

/// Arguments of `memloop check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Do not open the store: write every readable memory of its database to this export
    /// file (import it into a new store), skipping what is damaged.
    #[arg(long, value_name = "OUT")]
    salvage: Option<PathBuf>,
}

/// Runs `memloop check`; fails (exit status 1) when problems remain.
pub fn check(store: &StoreArgs, a: &CheckArgs) -> Result<()> {
    if let Some(out) = &a.salvage {
        let report = memloop::salvage(&store.dir(), out)
            .with_context(|| format!("salvaging {}", store.dir().display()))?;
        if a.json {
            println!("{}", serde_json::to_value(&report)?);
        } else {
            println!(
                "salvaged {} memories into {} ({} skipped)",
                report.saved,
                out.display(),
                report.skipped
            );
            for p in &report.problems {
                println!("skipped: {p}");
            }
        }
        return Ok(());
    }
    let memory = store.open_existing(Durability::Synced)?;
    let checked = crate::share::check_on(&memory);
    crate::store_args::close(memory);
    let checked = checked?;
    if a.json {
        println!("{}", checked.json);
    } else {
        println!("{}", checked.text);
    }
    if let Some(problems) = checked.problems {
        bail!("{problems}");
    }
    Ok(())
}

impl CheckArgs {
    /// This command for the process serving the store; `None` for `--salvage`, which reads
    /// the database file without opening the store and cannot run beside its holder.
    pub fn as_tool(&self) -> Option<crate::tool_call::ToolCall> {
        self.salvage
            .is_none()
            .then_some(crate::tool_call::ToolCall {
                asked: crate::tool_call::Asked::Admin(crate::share::AdminCall::Check),
                json: self.json,
            })
    }
}
