//! `memloop ui`: a local web inspector of a store, served by the CLI.
//!
//! It listens on loopback only (another address needs `--allow-remote`) and prints its URL,
//! with a random token in it, on stdout, like Jupyter: a request without the token gets 401
//! and nothing else (`auth.rs`). Every asset is in the binary: the pages are HTML rendered here
//! (`pages.rs`), the charts SVG drawn here with plotters (`charts.rs`), one small stylesheet
//! and one small script (`assets/`); nothing is fetched from another site.
//!
//! The store is reached as `memloop mcp` reaches it (`crate::share`): when an agent's
//! `memloop mcp` holds it, the inspector forwards its calls there, so it runs beside the
//! agents; otherwise it serves the store itself, and they forward to it. Every action (pin,
//! forget, rate, edit, erase a scope) is one of the engine's normal calls (`actions.rs`).

mod actions;
mod auth;
mod charts;
mod html;
mod pages;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use axum::routing::{get, post};
use axum::Router;
use clap::Args;

use crate::mcp::tools::{Reply, ToolError};
use crate::share::{AdminCall, Asked, Shared};
use crate::store_args::StoreArgs;

/// `memloop ui`.
#[derive(Args, Debug)]
pub struct UiArgs {
    /// The port to listen on (0: any free port).
    #[arg(long, default_value_t = 7734)]
    port: u16,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// Allow a non-loopback --bind address (other machines can then reach the inspector; the
    /// token is still required).
    #[arg(long)]
    allow_remote: bool,
}

/// What every handler shares: the store and the token.
pub(crate) struct Ui {
    shared: Arc<Shared>,
    token: String,
    /// The token's digest, what a presented token's digest is compared with.
    token_digest: [u8; 32],
    /// The `Host` values a request may name (this server's own address by its loopback
    /// names); `None` with `--allow-remote`.
    hosts: Option<Vec<String>>,
    /// The port, which names the cookie.
    port: u16,
}

impl Ui {
    /// Runs one call on the store (here or in the process serving it) off the async threads.
    pub(crate) async fn run(self: &Arc<Self>, asked: Asked) -> Result<Reply, ToolError> {
        let ui = self.clone();
        tokio::task::spawn_blocking(move || ui.shared.run(&asked))
            .await
            .unwrap_or_else(|e| Err(ToolError(format!("the call failed: {e}"))))
    }

    /// Runs operation `request` ([`Ui::run`]).
    pub(crate) async fn operation(
        self: &Arc<Self>,
        request: memloop::Request,
    ) -> Result<Reply, ToolError> {
        self.run(Asked::Operation(Box::new(request))).await
    }

    /// Runs one of the socket's own requests ([`Ui::run`]).
    pub(crate) async fn admin(self: &Arc<Self>, call: AdminCall) -> Result<Reply, ToolError> {
        self.run(Asked::Admin(call)).await
    }
}

/// The inspector's routes.
fn router(ui: Arc<Ui>) -> Router {
    Router::new()
        .route("/", get(pages::overview))
        .route("/search", get(pages::search))
        .route("/memory/{id}", get(pages::memory))
        .route("/forgetting", get(pages::forgetting))
        .route("/assets/ui.css", get(html::stylesheet))
        .route("/assets/ui.js", get(html::script))
        .route("/memory/{id}/pin", post(actions::pin))
        .route("/memory/{id}/forget", post(actions::forget))
        .route("/memory/{id}/rate", post(actions::rate))
        .route("/memory/{id}/edit", post(actions::edit))
        .route("/erase", post(actions::erase))
        .layer(axum::middleware::from_fn_with_state(ui.clone(), auth::gate))
        .with_state(ui)
}

/// Serves the inspector until the process is stopped.
///
/// # Errors
/// A non-loopback address without `--allow-remote`; the store unreachable; the port taken.
pub fn run(store: &StoreArgs, args: &UiArgs) -> Result<()> {
    if !args.bind.is_loopback() && !args.allow_remote {
        bail!(
            "{} is not a loopback address: pass --allow-remote to let other machines reach the inspector (the token is still required)",
            args.bind
        );
    }
    let (_, shared) = crate::mcp::share_store(store, "ui")?;
    let token = crate::mcp::tokens::new_token();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(async move {
        let addr = SocketAddr::new(args.bind, args.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listen on {addr}"))?;
        let bound = listener.local_addr()?;
        let host = match bound {
            SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
            SocketAddr::V4(a) => a.to_string(),
        };
        let port = bound.port();
        let hosts = (!args.allow_remote).then(|| {
            vec![
                host.clone(),
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
            ]
        });
        let ui = Arc::new(Ui {
            shared: Arc::new(shared),
            token_digest: crate::mcp::tokens::digest(&token),
            token,
            hosts,
            port,
        });
        let app = router(ui.clone());
        // The one line on stdout: what a user (or a test) opens.
        println!("http://{host}/?token={}", ui.token);
        use std::io::Write;
        std::io::stdout().flush().ok();
        tokio::select! {
            r = crate::mcp::http::accept(listener, app, None) => r,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}
