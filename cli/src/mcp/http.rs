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

/// Sessions one token holds at once: its `initialize` past it closes its own oldest session,
/// so one token (a scoped one included) cannot take the sessions every other client needs.
/// When all [`MAX_SESSIONS`] are open, a new one closes the oldest session of the token that
/// holds the most: every token keeps its fair share. (Many agents may share one token: 64 is
/// `benches/mcp_load.py`'s client count.)
const MAX_SESSIONS_PER_TOKEN: usize = 64;

/// Requests one token has in flight at once (from its headers until its answer's headers:
/// the body's reading included); past it, 429 and the connection closed. One token cannot
/// hold the connections every other client needs with bodies it never finishes.
const MAX_IN_FLIGHT_PER_TOKEN: usize = 64;

/// A request's body must have arrived this long after its headers (a body sent byte by byte,
/// or not at all, holds no connection longer): 408 and the connection closed.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest answer a tool call sends over MCP by default (its text and its structured
/// content together, `--max-reply-bytes`): a larger one is replaced by an error saying so
/// (ask for fewer hits). With
/// [`MAX_IN_FLIGHT_PER_TOKEN`] it bounds what one token can make the server hold.
pub const MAX_REPLY_BYTES: usize = 16 << 20;

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
    /// The largest answer of one tool call, in bytes ([`MAX_REPLY_BYTES`] by default).
    pub max_reply_bytes: usize,
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
    /// The tokens the file holds now. A file that is gone, unreadable or malformed revokes
    /// every token (an operator who deletes or breaks it means to cut everyone off): nothing
    /// is served until a valid file is back.
    fn current(&self) -> Arc<Tokens> {
        let modified = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        let mut loaded = self.loaded.lock();
        if modified != loaded.0 || modified.is_none() && !loaded.1.is_empty() {
            let tokens = match modified.map(|_| Tokens::load(&self.path)) {
                Some(Ok(t)) => t,
                Some(Err(e)) => {
                    eprintln!(
                        "memloop mcp: every token is revoked until the tokens file is valid: {e:#}"
                    );
                    Tokens::none()
                }
                None => {
                    eprintln!(
                        "memloop mcp: {} is gone: every token is revoked until it is back",
                        self.path.display()
                    );
                    Tokens::none()
                }
            };
            *loaded = (modified, Arc::new(tokens));
        }
        loaded.1.clone()
    }
}

/// Requests each token made in the current minute.
#[derive(Default)]
struct RateWindow {
    started: Option<Instant>,
    counts: HashMap<[u8; 32], u32>,
}

struct Gate {
    tokens: TokenFile,
    rate_limit: u32,
    window: Mutex<RateWindow>,
    metadata_url: String,
    resource: String,
    max_body_bytes: usize,
    /// Requests in flight per token digest.
    in_flight: Mutex<HashMap<[u8; 32], usize>>,
    /// The token digest that opened each session, and when.
    session_owners: Mutex<HashMap<String, ([u8; 32], Instant)>>,
    /// The events sent, to bind their resumption to whoever received them.
    replay: Arc<super::replay::ReplayLog>,
}

/// A request of one token in flight; counted down when dropped.
struct InFlight {
    gate: Arc<Gate>,
    token: [u8; 32],
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut m = self.gate.in_flight.lock();
        if let Some(n) = m.get_mut(&self.token) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.token);
            }
        }
    }
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
    let replay = Arc::new(super::replay::ReplayLog::default());
    let gate = Arc::new(Gate {
        max_body_bytes: o.max_body_bytes,
        in_flight: Mutex::default(),
        session_owners: Mutex::default(),
        replay: replay.clone(),
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
    let mut sessions = LocalSessionManager::default().with_event_store(replay);
    sessions.session_config.keep_alive = Some(IDLE_SESSION);
    let sessions = Arc::new(sessions);
    let max_reply = o.max_reply_bytes;
    let mcp = StreamableHttpService::new(
        move || Ok(Server::new(shared.clone(), max_reply)),
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
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("memloop mcp: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // A loopback peer of another user is refused before anything is read: a token it
        // holds (leaked in a log, or a cookie a browser sent to its port) opens nothing.
        let local = stream.local_addr();
        if local.is_ok_and(|local| !crate::loopback_peer::may_serve(local, peer)) {
            tokio::spawn(refuse_other_user(stream, slot));
            continue;
        }
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

/// Answers a loopback peer of another user 403 and closes the connection.
async fn refuse_other_user(
    mut stream: tokio::net::TcpStream,
    slot: tokio::sync::OwnedSemaphorePermit,
) {
    use tokio::io::AsyncWriteExt;
    const BODY: &str = "memloop: this server serves only its own user's processes on loopback\n";
    let answer = format!(
        "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(HEADER_TIMEOUT, stream.write_all(answer.as_bytes())).await;
    let _ = stream.shutdown().await;
    drop(slot);
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
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    if !path.starts_with("/mcp") {
        return next.run(request).await;
    }
    // One digest a request: the grant, the rate window, the in-flight count, the sessions
    // and the events it owns are all keyed by it.
    let digest = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| super::tokens::digest(t.trim()));
    let grant = digest.and_then(|d| gate.tokens.current().grant_of_digest(&d));
    let (Some(digest), Some(grant)) = (digest, grant) else {
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
        log(&method, &path, r.status(), started, "-");
        return r;
    };
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let refused = if !gate.admit(&digest) {
        let mut r = refusal(
            StatusCode::TOO_MANY_REQUESTS,
            -32000,
            "rate limit: too many requests with this token this minute",
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        Some(r)
    } else {
        gate.refuse_foreign_session(session.as_deref(), &digest)
            .or_else(|| gate.refuse_foreign_resumption(&request, &session, &digest))
    };
    if let Some(r) = refused {
        log(&method, &path, r.status(), started, "-");
        return r;
    }
    let Some(_in_flight) = gate.enter(&digest) else {
        let r = closing_refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests of this token at once; finish one first",
        );
        log(&method, &path, r.status(), started, "-");
        return r;
    };
    if session.is_none() && method == axum::http::Method::POST {
        gate.make_room_for_session(&sessions, &digest).await;
        if sessions.sessions.read().await.len() >= MAX_SESSIONS {
            let r = refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                -32000,
                "too many open sessions; close one or retry later",
            );
            log(&method, &path, r.status(), started, "-");
            return r;
        }
    }
    let mut request = match gate.read_body(request).await {
        Ok(r) => r,
        Err(r) => {
            log(&method, &path, r.status(), started, "-");
            return r;
        }
    };
    let scope = scope_label(&grant);
    request.extensions_mut().insert(grant);
    let r = next.run(request).await;
    let r = gate.after(r, session, digest);
    log(&method, &path, r.status(), started, &scope);
    r
}

/// A refusal after which the connection is closed (its body may still be on the way).
fn closing_refusal(status: StatusCode, message: &str) -> Response {
    let mut r = refusal(status, -32600, message);
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

impl Gate {
    /// Counts a request of token `digest` in flight; `None` past [`MAX_IN_FLIGHT_PER_TOKEN`].
    fn enter(self: &Arc<Self>, digest: &[u8; 32]) -> Option<InFlight> {
        let mut m = self.in_flight.lock();
        let n = m.entry(*digest).or_insert(0);
        if *n >= MAX_IN_FLIGHT_PER_TOKEN {
            return None;
        }
        *n += 1;
        Some(InFlight {
            gate: self.clone(),
            token: *digest,
        })
    }

    /// A request naming a session another token opened is answered as if the session did not
    /// exist (404): a session id, once seen, lets no other token end or use it.
    fn refuse_foreign_session(&self, session: Option<&str>, digest: &[u8; 32]) -> Option<Response> {
        let owners = self.session_owners.lock();
        match owners.get(session?) {
            Some((owner, _)) if owner != digest => {
                Some(refusal(StatusCode::NOT_FOUND, -32600, "session not found"))
            }
            _ => None,
        }
    }

    /// A resumption (`Last-Event-ID`) is let through only for the token and session its
    /// event was sent to; any other gets 404, as an unknown event.
    fn refuse_foreign_resumption(
        &self,
        request: &Request,
        session: &Option<String>,
        digest: &[u8; 32],
    ) -> Option<Response> {
        let id = request.headers().get("last-event-id")?;
        let owner = super::replay::Owner {
            token: *digest,
            session: session.clone(),
        };
        let ok = id.to_str().is_ok_and(|id| self.replay.owned_by(id, &owner));
        (!ok).then(|| {
            refusal(
                StatusCode::NOT_FOUND,
                -32600,
                "that event is unknown, no longer kept, or was not sent to this token and session",
            )
        })
    }

    /// Before token `digest` opens a session: sessions that ended are forgotten; at
    /// [`MAX_SESSIONS_PER_TOKEN`] its own oldest is closed; with every session of the server
    /// open, the oldest of the token holding the most (this one, or one holding more).
    async fn make_room_for_session(&self, sessions: &LocalSessionManager, digest: &[u8; 32]) {
        let live: std::collections::HashSet<String> = sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect();
        let close = {
            let mut owners = self.session_owners.lock();
            owners.retain(|id, _| live.contains(id));
            let mut held: HashMap<[u8; 32], usize> = HashMap::new();
            for (owner, _) in owners.values() {
                *held.entry(*owner).or_default() += 1;
            }
            let mine = held.get(digest).copied().unwrap_or(0);
            let victim = if mine >= MAX_SESSIONS_PER_TOKEN {
                Some(*digest)
            } else if live.len() >= MAX_SESSIONS {
                held.iter()
                    .max_by_key(|(_, n)| **n)
                    .filter(|(_, n)| **n > mine)
                    .map(|(d, _)| *d)
                    .or(Some(*digest).filter(|_| mine > 0))
            } else {
                None
            };
            let Some(victim) = victim else { return };
            let oldest = owners
                .iter()
                .filter(|(_, (o, _))| *o == victim)
                .min_by_key(|(_, (_, at))| *at)
                .map(|(id, _)| id.clone());
            let Some(id) = oldest else { return };
            owners.remove(&id);
            id
        };
        use rmcp::transport::streamable_http_server::SessionManager;
        let _ = sessions.close_session(&close.into()).await;
    }

    /// The request with its body read whole within [`BODY_TIMEOUT`] and [`Gate::max_body_bytes`]
    /// (408 or 413 otherwise, and the connection closed).
    async fn read_body(&self, request: Request) -> Result<Request, Response> {
        let (parts, body) = request.into_parts();
        let limit = self.max_body_bytes;
        let read = tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, limit)).await;
        match read {
            Ok(Ok(bytes)) => Ok(Request::from_parts(parts, axum::body::Body::from(bytes))),
            Ok(Err(_)) => Err(closing_refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is over the server's limit (or broke off)",
            )),
            Err(_) => Err(closing_refusal(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            )),
        }
    }

    /// The answer, with what it hands out recorded: a session it opens belongs to the token,
    /// and each event id its stream carries to the token and session that received it.
    fn after(&self, response: Response, session: Option<String>, digest: [u8; 32]) -> Response {
        let opened = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let session = match (session, opened) {
            (None, Some(id)) => {
                self.session_owners
                    .lock()
                    .insert(id.clone(), (digest, Instant::now()));
                Some(id)
            }
            (s, _) => s,
        };
        let is_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            return response;
        }
        let owner = Arc::new(super::replay::Owner {
            token: digest,
            session,
        });
        let replay = self.replay.clone();
        let (parts, body) = response.into_parts();
        let mut ids = super::replay::IdScanner::default();
        let stream = futures::StreamExt::map(body.into_data_stream(), move |chunk| {
            if let Ok(bytes) = &chunk {
                ids.feed(bytes, |id| replay.claim(id, &owner));
            }
            chunk
        });
        Response::from_parts(parts, axum::body::Body::from_stream(stream))
    }

    /// Counts a request of the token whose digest is `digest`; false past the rate limit of
    /// the current minute.
    fn admit(&self, digest: &[u8; 32]) -> bool {
        let mut w = self.window.lock();
        if w.started
            .is_none_or(|s| s.elapsed() >= Duration::from_secs(60))
        {
            w.started = Some(Instant::now());
            w.counts.clear();
        }
        let n = w.counts.entry(*digest).or_insert(0);
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
