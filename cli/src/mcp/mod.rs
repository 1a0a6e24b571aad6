//! `memloop mcp`: the store as a Model Context Protocol server over stdio (or Streamable HTTP
//! with `--http`, `http.rs`), built on the official Rust SDK (rmcp). Several clients (each starts its own `memloop mcp`) share one store: the
//! first serves it to the others (`crate::share`). Logs go to stderr; stdout carries only the
//! protocol.

mod grant_scope;
mod handler;
pub(crate) mod http;
mod replay;
mod stdio;
pub mod tokens;
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
pub struct McpArgs {
    /// Serve over MCP's Streamable HTTP transport on ADDR instead of stdio (ADDR defaults to
    /// 127.0.0.1:7733). Every request needs a bearer token (`memloop token`).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = http::DEFAULT_ADDR)]
    http: Option<std::net::SocketAddr>,
    /// Allow a non-loopback --http address (other machines; tokens still required).
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// The tokens file (default: STORE/mcp-tokens, made with one token, printed once, at the
    /// first start).
    #[arg(long, requires = "http")]
    token_file: Option<PathBuf>,
    /// A browser origin allowed to call (besides loopback pages), e.g. https://app.example.com:443.
    #[arg(long = "allow-origin", requires = "http")]
    allow_origins: Vec<String>,
    /// Requests per minute one token may make.
    #[arg(long, default_value_t = 600, requires = "http")]
    rate_limit: u32,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, requires_all = ["http", "tls_key"], value_name = "PEM")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, requires = "tls_cert", value_name = "PEM")]
    tls_key: Option<PathBuf>,
    /// The largest request body over HTTP, in bytes (a larger one is refused, 413).
    #[arg(long, default_value_t = http::DEFAULT_MAX_BODY_BYTES, requires = "http")]
    max_body_bytes: usize,
    /// The largest answer of one tool call, in bytes (its text and structured content
    /// together; a larger one is replaced by an error: ask for fewer hits).
    #[arg(long, default_value_t = http::MAX_REPLY_BYTES)]
    max_reply_bytes: usize,
}

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

/// The store of `--store` (or the default one) shared with the other memloop processes on it:
/// served here, or reached through the one that serves it. `command` names the caller in the
/// line it prints on stderr.
pub fn share_store(store: &StoreArgs, command: &str) -> Result<(PathBuf, Shared)> {
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
    if !shared.is_serving() && store.reranker_model.is_some() {
        anyhow::bail!(
            "store {}: another memloop process serves it with its own reranker; give \
             --reranker-model to that process, or stop it first",
            dir.display()
        );
    }
    eprintln!(
        "memloop {command}: store {} ({})",
        dir.display(),
        if shared.is_serving() {
            "serving it"
        } else {
            "shared by another memloop process"
        }
    );
    Ok((dir, shared))
}

/// Serves the store over MCP on stdin / stdout until the client closes stdin.
pub fn run(store: &StoreArgs, args: &McpArgs) -> Result<ExitCode> {
    let (dir, shared) = share_store(store, "mcp")?;
    let shared = Arc::new(shared);
    if let Some(addr) = args.http {
        let (tokens, created) = tokens::ensure(&dir, args.token_file.as_deref())?;
        if let Some(token) = created {
            eprintln!(
                "memloop mcp: a bearer token was made in {} (shown once):\n{token}",
                tokens.display()
            );
        }
        http::serve(
            shared,
            http::HttpOptions {
                addr,
                allow_remote: args.allow_remote,
                tokens,
                allowed_origins: args.allow_origins.clone(),
                rate_limit: args.rate_limit,
                max_body_bytes: args.max_body_bytes,
                max_reply_bytes: args.max_reply_bytes,
                tls: args.tls_cert.clone().zip(args.tls_key.clone()),
            },
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(async move {
        let service = handler::Server::new(shared.clone(), args.max_reply_bytes)
            .serve(stdio::guarded())
            .await
            .context("start the MCP session")?;
        service.waiting().await.context("MCP session")?;
        Ok::<(), anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}
