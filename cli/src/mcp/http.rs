//! `memloop mcp --http ADDR`: the same tools over MCP's Streamable HTTP transport (rmcp's
//! server, axum under it), for clients that reach memory by URL.
//!
//! Every request to `/mcp` needs `Authorization: Bearer TOKEN` (`tokens.rs`); without one, or
//! with a wrong one, it is answered 401 with a `WWW-Authenticate` challenge naming the OAuth
//! protected-resource metadata (`/.well-known/oauth-protected-resource`), and nothing is read
//! or written. A token bound to a scope makes every call act as that scope in the engine
//! (`handler.rs`). rmcp checks `Host` (loopback only unless `--allow-remote`) and `Origin`
//! (loopback pages and `--allow-origin` ones; a foreign page gets 403), bounds request bodies,
//! and expires idle sessions; here each token also has a rate limit (429 past it), the
//! number of sessions and connections is capped, and a request's headers must arrive within
//! 10 s (a slow-loris is cut off). A client whose stream broke resumes it with `Last-Event-ID`
//! (`replay.rs`). The access log on stderr names method, path, status,
//! duration and the token's scope, never a memory's text.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use parking_lot::Mutex;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use sha2::Digest;

use super::handler::Server;
use super::tokens::{Grant, Tokens};
use crate::share::Shared;

/// The default address of `--http`.
pub const DEFAULT_ADDR: &str = "127.0.0.1:7733";

/// The largest request body by default: a remember of the default largest text (512 KiB)
/// with its shorter versions and JSON escapes fits many times over.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

/// Sessions open at once; an `initialize` past it is refused (503).
const MAX_SESSIONS: usize = 256;

/// A session without a request for this long is closed.
const IDLE_SESSION: Duration = Duration::from_secs(15 * 60);

/// A request whose headers have not all arrived this long after it began is cut off (a
/// slow-loris holds no connection longer).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections open at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 1024;

/// How `--http` serves.
pub struct HttpOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// A non-loopback address was allowed explicitly.
    pub allow_remote: bool,
    /// The tokens file.
    pub tokens: PathBuf,
    /// Browser origins allowed besides loopback pages.
    pub allowed_origins: Vec<String>,
    /// Requests per minute per token.
    pub rate_limit: u32,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// A certificate chain and its private key (PEM files) to serve HTTPS with.
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// The TLS acceptor of `--tls-cert` / `--tls-key`.
fn tls_acceptor(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<tokio_rustls::TlsAcceptor> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("read {}", cert.display()))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .with_context(|| format!("{}: not a PEM certificate chain", cert.display()))?;
    if chain.is_empty() {
        bail!("{} holds no certificate", cert.display());
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("{}: not a PEM private key", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("TLS versions")?
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .context("the certificate and the key do not go together")?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// The tokens, reloaded when their file changes (`memloop token rotate` takes effect at once).
struct TokenFile {
    path: PathBuf,
    loaded: Mutex<(Option<SystemTime>, Arc<Tokens>)>,
}

impl TokenFile {
    fn current(&self) -> Arc<Tokens> {
        let modified = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        let mut loaded = self.loaded.lock();
        if modified.is_some() && modified != loaded.0 {
            match Tokens::load(&self.path) {
                Ok(t) => *loaded = (modified, Arc::new(t)),
                Err(e) => eprintln!("memloop mcp: keeping the tokens loaded before: {e:#}"),
            }
        }
        loaded.1.clone()
    }
}

/// Requests each token made in the current minute.
#[derive(Default)]
struct RateWindow {
    started: Option<Instant>,
    counts: HashMap<String, u32>,
}

struct Gate {
    tokens: TokenFile,
    rate_limit: u32,
    window: Mutex<RateWindow>,
    metadata_url: String,
    resource: String,
}

/// Serves `shared` over Streamable HTTP until the process is stopped.
///
/// # Errors
/// A non-loopback address without `allow_remote`; the tokens file unreadable; the address in
/// use.
pub fn serve(shared: Arc<Shared>, o: HttpOptions) -> Result<()> {
    if !o.addr.ip().is_loopback() && !o.allow_remote {
        bail!(
            "{} is not a loopback address: pass --allow-remote to serve other machines (every request still needs a token)",
            o.addr
        );
    }
    let tokens = Tokens::load(&o.tokens)?;
    let tls = match &o.tls {
        Some((cert, key)) => Some(tls_acceptor(cert, key)?),
        None => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let resource = format!("{scheme}://{}/mcp", o.addr);
    let gate = Arc::new(Gate {
        tokens: TokenFile {
            path: o.tokens.clone(),
            loaded: Mutex::new((
                std::fs::metadata(&o.tokens).and_then(|m| m.modified()).ok(),
                Arc::new(tokens),
            )),
        },
        rate_limit: o.rate_limit,
        window: Mutex::new(RateWindow::default()),
        metadata_url: format!("{scheme}://{}/.well-known/oauth-protected-resource", o.addr),
        resource,
    });
    let mut origins = vec![
        "http://localhost:*".to_string(),
        "http://127.0.0.1:*".to_string(),
        "http://[::1]:*".to_string(),
    ];
    origins.extend(o.allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(o.max_body_bytes);
    if o.allow_remote {
        config = config.disable_allowed_hosts();
    }
    let mut sessions = LocalSessionManager::default()
        .with_event_store(Arc::new(super::replay::ReplayLog::default()));
    sessions.session_config.keep_alive = Some(IDLE_SESSION);
    let sessions = Arc::new(sessions);
    let mcp = StreamableHttpService::new(
        move || Ok(Server::new(shared.clone())),
        sessions.clone(),
        config,
    );
    let app = Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(
            (gate.clone(), sessions),
            authorize,
        ))
        .with_state(gate);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(o.addr)
            .await
            .with_context(|| format!("listen on {}", o.addr))?;
        eprintln!(
            "memloop mcp: serving {scheme}://{}/mcp",
            listener.local_addr()?
        );
        tokio::select! {
            r = accept(listener, app, tls) => r,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}

/// Serves each connection of `listener` with `app`: HTTP/1.1, the headers of every request
/// due within [`HEADER_TIMEOUT`], at most [`MAX_CONNECTIONS`] at once.
pub(crate) async fn accept(
    listener: tokio::net::TcpListener,
    app: Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> Result<()> {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let slot = slots.clone().acquire_owned().await?;
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("memloop mcp: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let tls = tls.clone();
        tokio::spawn(async move {
            let http = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .clone();
            let served = match tls {
                None => {
                    http.serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await
                }
                Some(acceptor) => {
                    // The handshake has the headers' time limit too.
                    match tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            http.serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                                .await
                        }
                        _ => return drop(slot),
                    }
                }
            };
            if let Err(e) = served {
                if !e.is_incomplete_message() {
                    eprintln!("memloop mcp: a connection ended: {e}");
                }
            }
            drop(slot);
        });
    }
}

/// The OAuth 2.1 protected-resource metadata (RFC 9728): bearer tokens in the header, no
/// authorization server yet (tokens come from `memloop token`).
async fn protected_resource(State(gate): State<Arc<Gate>>) -> Json<serde_json::Value> {
    Json(json!({
        "resource": gate.resource,
        "authorization_servers": [],
        "bearer_methods_supported": ["header"],
        "resource_name": "memloop",
        "resource_documentation": "https://example.invalid/memloop#mcp-over-http",
    }))
}

/// A JSON-RPC error as the body of a refused HTTP request.
fn refusal(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, Json(body)).into_response()
}

/// Lets a request to `/mcp` through with its grant, or refuses it: 401 without a valid token,
/// 429 past the token's rate, 503 past the session cap.
async fn authorize(
    State((gate, sessions)): State<(Arc<Gate>, Arc<LocalSessionManager>)>,
    mut request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    if !path.starts_with("/mcp") {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .map(String::from);
    let grant = presented
        .as_deref()
        .and_then(|t| gate.tokens.current().grant(t));
    let response = match (presented, grant) {
        (Some(token), Some(grant)) => {
            if !gate.admit(&token) {
                let mut r = refusal(
                    StatusCode::TOO_MANY_REQUESTS,
                    -32000,
                    "rate limit: too many requests with this token this minute",
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
                r
            } else if request.headers().get("mcp-session-id").is_none()
                && method == axum::http::Method::POST
                && sessions.sessions.read().await.len() >= MAX_SESSIONS
            {
                refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    -32000,
                    "too many open sessions; close one or retry later",
                )
            } else {
                let scope = scope_label(&grant);
                request.extensions_mut().insert(grant);
                let r = next.run(request).await;
                log(&method, &path, r.status(), started, &scope);
                return r;
            }
        }
        _ => {
            let mut r = refusal(
                StatusCode::UNAUTHORIZED,
                -32001,
                "a valid bearer token is required (see `memloop token`)",
            );
            let challenge = format!(
                "Bearer resource_metadata=\"{}\", error=\"invalid_token\"",
                gate.metadata_url
            );
            if let Ok(v) = HeaderValue::from_str(&challenge) {
                r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
            }
            r
        }
    };
    log(&method, &path, response.status(), started, "-");
    response
}

impl Gate {
    /// Counts a request of `token`; false past the rate limit of the current minute.
    fn admit(&self, token: &str) -> bool {
        let mut w = self.window.lock();
        if w.started
            .is_none_or(|s| s.elapsed() >= Duration::from_secs(60))
        {
            w.started = Some(Instant::now());
            w.counts.clear();
        }
        let key = format!("{:x}", sha2::Sha256::digest(token.as_bytes()));
        let n = w.counts.entry(key).or_insert(0);
        *n += 1;
        *n <= self.rate_limit
    }
}

/// The scope a grant acts in, for the access log.
fn scope_label(g: &Grant) -> String {
    match (&g.scope.user, &g.scope.agent) {
        (None, None) => "store".into(),
        (u, a) => format!(
            "{}{}",
            u.as_deref()
                .map(|u| format!("user:{u} "))
                .unwrap_or_default(),
            a.as_deref()
                .map(|a| format!("agent:{a}"))
                .unwrap_or_default()
        )
        .trim()
        .to_string(),
    }
}

/// One access-log line on stderr: no header values, no bodies.
fn log(method: &axum::http::Method, path: &str, status: StatusCode, started: Instant, scope: &str) {
    eprintln!(
        "memloop mcp: {method} {path} {} {:.1} ms scope={scope}",
        status.as_u16(),
        started.elapsed().as_secs_f64() * 1e3
    );
}
