//! The inspector's gate: every request needs the token printed at start.
//!
//! A page is opened with `?token=…` in its URL (what `memloop ui` prints); that answer sets a
//! cookie holding it (`HttpOnly`, `SameSite=Strict`, named after the port), so links need not
//! repeat it. A request with neither a valid token in its query nor the cookie gets 401 and
//! nothing else. Browsers send a host's cookies to every port of it, so a page another local
//! user serves on a sibling loopback port receives the cookie: what keeps it from being used
//! is that the server serves a loopback connection only from its own user's processes
//! (`crate::loopback_peer`, checked as each connection is accepted), and that a request must
//! name this server in `Host` (a DNS-rebinding page names another host: 421). A change
//! (any POST) must also come from the inspector's own page: a browser names the page's origin,
//! and one that is not this host's is refused (403), so another site cannot make the browser
//! act on the store. Every answer forbids framing and sniffing, and sends no referrer to another site
//! (`same-origin`: with none at all, a browser names its own page's origin `null`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::Ui;

/// The cookie that carries the token after the first page, and the port it is for.
fn cookie_name(ui: &Ui) -> String {
    format!("memloop_ui_{}", ui.port)
}

/// The pages' content policy: only this host's script and style (SVG attributes are inline).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// True when `presented` is the inspector's token (compared in constant time).
fn matches(ui: &Ui, presented: &str) -> bool {
    crate::mcp::tokens::digest(presented)
        .ct_eq(&ui.token_digest)
        .into()
}

/// The token in the query string, if any.
fn query_token(request: &Request) -> Option<String> {
    let query = request.uri().query()?;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
}

/// The token in the request's cookie, if any.
fn cookie_token(ui: &Ui, request: &Request) -> Option<String> {
    let name = cookie_name(ui);
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// True when a POST comes from this host's own page (or names no origin, as non-browser
/// clients do).
fn same_origin(request: &Request) -> bool {
    let Some(origin) = request.headers().get(header::ORIGIN) else {
        return true;
    };
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    let origin = origin.to_str().ok().and_then(|o| o.strip_prefix("http://"));
    matches!((origin, host), (Some(o), Some(h)) if o == h)
}

/// True when the request names this server in `Host` (any host with `--allow-remote`).
fn host_ok(ui: &Ui, request: &Request) -> bool {
    let Some(hosts) = &ui.hosts else {
        return true;
    };
    request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| hosts.iter().any(|k| k.eq_ignore_ascii_case(h)))
}

/// Lets a request through with the token, or answers 401 (403 for a change from elsewhere,
/// 421 for a request naming another host).
pub(crate) async fn gate(State(ui): State<Arc<Ui>>, request: Request, next: Next) -> Response {
    let from_query = query_token(&request).filter(|t| matches(&ui, t));
    let from_cookie = cookie_token(&ui, &request).filter(|t| matches(&ui, t));
    let mut response = if !host_ok(&ui, &request) {
        (
            StatusCode::MISDIRECTED_REQUEST,
            "memloop ui: this server is not the host the request names\n",
        )
            .into_response()
    } else if from_query.is_none() && from_cookie.is_none() {
        (
            StatusCode::UNAUTHORIZED,
            "memloop ui: open the URL `memloop ui` printed (it holds the token)\n",
        )
            .into_response()
    } else if request.method() == Method::POST && !same_origin(&request) {
        (
            StatusCode::FORBIDDEN,
            "memloop ui: a change must come from the inspector's own page\n",
        )
            .into_response()
    } else {
        let mut r = next.run(request).await;
        if from_query.is_some() {
            let cookie = format!(
                "{}={}; HttpOnly; SameSite=Strict; Path=/",
                cookie_name(&ui),
                ui.token
            );
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
        }
        r
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
