//! `memloop mcp`: the store as a Model Context Protocol server over stdio, built on the official
//! Rust SDK (rmcp). Several clients (each starts its own `memloop mcp`) share one store: the
//! first serves it to the others (`crate::share`). Logs go to stderr; stdout carries only the
//! protocol.

mod handler;
mod stdio;
pub mod tool_args;
pub mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use memloop::Durability;
use rmcp::ServiceExt;

use crate::share::Shared;
use crate::store_args::StoreArgs;

/// `memloop mcp`.
#[derive(Args, Debug)]
pub struct McpArgs {}

/// The store `memloop mcp` uses without `--store`: `$XDG_DATA_HOME/memloop/default` (or
/// `~/.local/share/memloop/default`), created on first use.
pub fn default_store() -> Result<PathBuf> {
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .context("neither XDG_DATA_HOME nor HOME is set; pass --store")?;
            PathBuf::from(home).join(".local").join("share")
        }
    };
    Ok(data.join("memloop").join("default"))
}

/// Serves the store over MCP on stdin / stdout until the client closes stdin.
pub fn run(store: &StoreArgs, _args: &McpArgs) -> Result<ExitCode> {
    let dir = match &store.store {
        Some(dir) => dir.clone(),
        None => default_store()?,
    };
    // Created by the first open, private to this user (0700).
    let settings = store.clone();
    let opened_dir = dir.clone();
    let shared = Shared::start(
        &dir,
        Box::new(move || settings.open_dir(&opened_dir, Durability::Synced)),
    )?;
    eprintln!(
        "memloop mcp: store {} ({})",
        dir.display(),
        if shared.is_serving() {
            "serving it"
        } else {
            "shared by another memloop process"
        }
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    let shared = Arc::new(shared);
    runtime.block_on(async move {
        let service = handler::Server::new(shared.clone())
            .serve(stdio::guarded())
            .await
            .context("start the MCP session")?;
        service.waiting().await.context("MCP session")?;
        Ok::<(), anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}
