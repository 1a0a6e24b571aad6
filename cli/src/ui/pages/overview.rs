//! `/`: the overview.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::share::AdminCall;

use super::super::html::{esc, page, time};
use super::super::Ui;
use super::{bytes, counts_table, now_ms, refused, Notice, DAY_MS, DEFAULT_DAYS};

/// `/`: counts by tier, kind and scope, size on disk, model, the last sweeps, and erasing a
/// scope.
pub(crate) async fn overview(State(ui): State<Arc<Ui>>, Query(n): Query<Notice>) -> Response {
    let census = match ui.admin(AdminCall::Census).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let since = now_ms() - i64::from(DEFAULT_DAYS) * DAY_MS as i64;
    let events = match ui.admin(AdminCall::Forgotten { since }).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let (c, s, d) = (&census["census"], &census["stats"], &census["disk"]);
    let mut body = String::from("<h1>Overview</h1><div class=\"cards\" id=\"counts\">");
    for (label, value) in [
        ("memories", c["current"].to_string()),
        ("working", c["by_tier"]["working"].to_string()),
        ("long-term", c["by_tier"]["long_term"].to_string()),
        ("superseded versions", c["superseded"].to_string()),
        ("indexed vectors", s["indexed"].to_string()),
        (
            "on disk",
            bytes(d["database"].as_u64().unwrap_or(0) + d["index"].as_u64().unwrap_or(0)),
        ),
    ] {
        let _ = write!(
            body,
            "<div class=\"card\"><b>{}</b>{label}</div>",
            esc(&value)
        );
    }
    let _ = write!(
        body,
        "</div><p class=\"muted\">Model <code id=\"model\">{}</code>; database {}, index {}; change {} (index saved at {}).</p>",
        esc(s["model"].as_str().unwrap_or("")),
        bytes(d["database"].as_u64().unwrap_or(0)),
        bytes(d["index"].as_u64().unwrap_or(0)),
        s["seq"],
        s["checkpoint"],
    );
    body.push_str("<div class=\"grid\"><div><h2>By kind</h2>");
    body.push_str(&counts_table("by-kind", "kind", &c["by_kind"]));
    body.push_str("<h2>By namespace</h2>");
    body.push_str(&counts_table(
        "by-namespace",
        "namespace",
        &c["by_namespace"],
    ));
    body.push_str("</div><div><h2>By user</h2>");
    body.push_str(&counts_table("by-user", "user", &c["by_user"]));
    body.push_str("</div></div>");
    // The last sweeps: the log's events grouped by the time they were applied.
    let mut sweeps: BTreeMap<i64, (usize, usize)> = BTreeMap::new();
    for e in events.as_array().into_iter().flatten() {
        let at = e["at"].as_i64().unwrap_or(0);
        let entry = sweeps.entry(at).or_default();
        if demotion(e) {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
    }
    let _ = write!(
        body,
        "<h2>The last sweeps (past {DEFAULT_DAYS} days)</h2><table id=\"sweeps\"><tr><th>at (UTC)</th><th>demoted</th><th>deleted</th></tr>"
    );
    for (at, (demoted, deleted)) in sweeps.iter().rev().take(10) {
        let _ = write!(
            body,
            "<tr><td>{}</td><td class=\"num\">{demoted}</td><td class=\"num\">{deleted}</td></tr>",
            time(*at)
        );
    }
    if sweeps.is_empty() {
        body.push_str("<tr><td colspan=3 class=\"muted\">none moved anything</td></tr>");
    }
    body.push_str(
        "</table><h2>Erase a scope</h2><p class=\"muted\">Deletes every memory of one user from every file of the store.</p>\
         <form class=\"inline\" method=\"post\" action=\"/erase\" id=\"erase\" data-confirm=\"Erase every memory of this user? This cannot be undone.\">\
         <input name=\"user\" placeholder=\"user\" required> <button class=\"danger\">Erase</button></form>",
    );
    page("overview", n.done.as_deref(), &body).into_response()
}

/// True for a demotion (working → long-term), false for a deletion.
pub(super) fn demotion(event: &Value) -> bool {
    matches!(event["reason"].as_str(), Some("demoted" | "expired"))
}
