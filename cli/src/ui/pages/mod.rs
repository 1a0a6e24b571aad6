//! The inspector's pages: overview, search, one memory, forgetting, one file each. Each reads
//! the store through the same calls the MCP tools make (or the socket's own reads: the census,
//! the forgetting log, a memory's feedback) and renders HTML with its charts inline. What they
//! share is here.

mod forgetting;
mod memory;
mod overview;
mod search;

use std::fmt::Write as _;

use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;

use super::html::{esc, failure};
use crate::mcp::tools::ToolError;

pub(crate) use forgetting::forgetting;
pub(crate) use memory::memory;
pub(crate) use overview::overview;
pub(crate) use search::search;

/// A day in milliseconds.
const DAY_MS: f64 = 86_400_000.0;

/// How many days of the forgetting log the overview and the forgetting page read by default.
const DEFAULT_DAYS: u32 = 30;

/// The most days the forgetting page reads.
const MAX_DAYS: u32 = 3_650;

/// The most rows of a table.
const MAX_ROWS: usize = 200;

/// The notice a page shows after an action (`?done=…`).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Notice {
    done: Option<String>,
}

/// A failed call as an error page: not found as 404, the rest as 400.
fn refused(e: &ToolError) -> Response {
    let status = if e.0.contains("not_found") || e.0.contains("no memory with id") {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::BAD_REQUEST
    };
    failure(status, &e.0)
}

/// A chart, or the reason it could not be drawn.
fn chart(id: &str, svg: Result<String, String>) -> String {
    match svg {
        Ok(svg) => format!("<div class=\"chart\" id=\"{id}\">{svg}</div>"),
        Err(e) => format!("<p class=\"error\">{}</p>", esc(&e)),
    }
}

/// A table of counts, largest first.
fn counts_table(id: &str, what: &str, counts: &Value) -> String {
    let mut rows: Vec<(String, u64)> = counts
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out = format!("<table id=\"{id}\"><tr><th>{what}</th><th>memories</th></tr>");
    for (name, n) in rows.iter().take(MAX_ROWS) {
        let name = if name.is_empty() { "(none)" } else { name };
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"num\">{n}</td></tr>",
            esc(name)
        );
    }
    if rows.len() > MAX_ROWS {
        let _ = write!(
            out,
            "<tr><td colspan=2 class=\"muted\">and {} more</td></tr>",
            rows.len() - MAX_ROWS
        );
    }
    out.push_str("</table>");
    out
}

/// Bytes as KiB / MiB / GiB.
fn bytes(n: u64) -> String {
    let n = n as f64;
    match n {
        n if n >= 1024.0 * 1024.0 * 1024.0 => format!("{:.2} GiB", n / 1024.0 / 1024.0 / 1024.0),
        n if n >= 1024.0 * 1024.0 => format!("{:.1} MiB", n / 1024.0 / 1024.0),
        n => format!("{:.1} KiB", n / 1024.0),
    }
}

/// Now, in ms since the epoch.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
