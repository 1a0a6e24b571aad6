//! The inspector's pages: overview, search, one memory, forgetting. Each reads the store
//! through the same calls the MCP tools make (or the socket's own reads: the census and the
//! forgetting log) and renders HTML with its charts inline.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{json, Value};

use super::charts::{self, Retention};
use super::html::{day, esc, failure, page, time};
use super::Ui;
use crate::mcp::tools::ToolError;

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

/// `/`: counts by tier, kind and scope, size on disk, model, the last sweeps, and erasing a
/// scope.
pub(crate) async fn overview(State(ui): State<Arc<Ui>>, Query(n): Query<Notice>) -> Response {
    let census = match ui.call(crate::share::CENSUS, Value::Null).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let since = now_ms() - i64::from(DEFAULT_DAYS) * DAY_MS as i64;
    let events = match ui
        .call(crate::share::FORGOTTEN, json!({ "since": since }))
        .await
    {
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
fn demotion(event: &Value) -> bool {
    matches!(event["reason"].as_str(), Some("demoted" | "expired"))
}

/// The search form's fields.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SearchForm {
    #[serde(default)]
    q: String,
    #[serde(default)]
    strategy: Option<String>,
    #[serde(default)]
    k: Option<usize>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    budget: Option<usize>,
}

/// A hit's score parts: what its explanation holds, by name.
fn score_parts(explain: &Value) -> Vec<(String, f64)> {
    let mut parts = Vec::new();
    let mut add = |name: &str, v: Option<f64>| {
        if let Some(v) = v {
            parts.push((name.to_string(), v));
        }
    };
    add("BM25", explain["lexical"].as_f64());
    add("cosine", explain["vector"].as_f64());
    add("reranker", explain["fused"].as_f64());
    add("time boost", explain["time"]["boost"].as_f64());
    add("retention", explain["retention"].as_f64());
    let feedback = &explain["feedback"];
    if let (Some(sum), Some(count)) = (feedback["sum"].as_f64(), feedback["count"].as_f64()) {
        if count > 0.0 {
            add("feedback (mean / 5)", Some(sum / count / 5.0));
        }
    }
    add("importance", explain["importance"].as_f64());
    parts
}

/// `/search`: a query with strategy and filters; each hit with its score parts, and the
/// context `context` builds at a budget.
pub(crate) async fn search(State(ui): State<Arc<Ui>>, Query(f): Query<SearchForm>) -> Response {
    let strategy = f.strategy.clone().filter(|s| !s.is_empty());
    let user = f.user.clone().filter(|s| !s.is_empty());
    let k = f.k.unwrap_or(5);
    let budget = f.budget.unwrap_or(400);
    let mut body =
        String::from("<h1>Search</h1><form method=\"get\" action=\"/search\" id=\"search\">");
    let _ = write!(
        body,
        "<input name=\"q\" size=\"50\" placeholder=\"what to recall\" value=\"{}\" autofocus> \
         <select name=\"strategy\">{}</select> \
         k <input name=\"k\" type=\"number\" min=\"1\" max=\"100\" value=\"{k}\" style=\"width:4em\"> \
         user <input name=\"user\" value=\"{}\" style=\"width:8em\"> \
         context budget <input name=\"budget\" type=\"number\" min=\"1\" value=\"{budget}\" style=\"width:5em\"> \
         <button>Search</button></form>",
        esc(&f.q),
        ["", "exact", "hybrid", "lexical", "rerank", "iterative"]
            .iter()
            .map(|s| {
                let selected = if strategy.as_deref().unwrap_or("") == *s { " selected" } else { "" };
                let label = if s.is_empty() { "default strategy" } else { s };
                format!("<option value=\"{s}\"{selected}>{label}</option>")
            })
            .collect::<String>(),
        esc(user.as_deref().unwrap_or("")),
    );
    if f.q.trim().is_empty() {
        return page("search", None, &body).into_response();
    }
    let mut request = json!({ "query": f.q, "k": k, "explain": true });
    if let Some(s) = &strategy {
        request["strategy"] = json!(s);
    }
    if let Some(u) = &user {
        request["user"] = json!(u);
    }
    let hits = match ui.call("recall", request.clone()).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let hits = hits["hits"].as_array().cloned().unwrap_or_default();
    let _ = write!(body, "<h2>{} hits</h2>", hits.len());
    for h in &hits {
        let id = h["id"].as_u64().unwrap_or(0);
        let parts = score_parts(&h["explain"]);
        let _ = write!(
            body,
            "<div class=\"hit\" data-id=\"{id}\"><div><b>#{}</b> <a href=\"/memory/{id}\">memory {id}</a> \
             <span class=\"muted\">{} · {} · score <span class=\"score\">{:.4}</span></span></div>\
             <div class=\"text\">{}</div><table class=\"parts\"><tr>{}</tr><tr>{}</tr></table>{}\
             <details><summary>explain</summary><pre>{}</pre></details></div>",
            h["rank"].as_u64().unwrap_or(0) + 1,
            esc(h["kind"].as_str().unwrap_or("")),
            esc(h["tier"].as_str().unwrap_or("")),
            h["score"].as_f64().unwrap_or(0.0),
            esc(h["text"].as_str().unwrap_or("")),
            parts.iter().map(|p| format!("<th>{}</th>", esc(&p.0))).collect::<String>(),
            parts
                .iter()
                .map(|p| format!("<td class=\"num\" data-part=\"{}\">{:.4}</td>", esc(&p.0), p.1))
                .collect::<String>(),
            chart(&format!("parts-{id}"), charts::score_parts(&parts)),
            esc(&serde_json::to_string_pretty(&h["explain"]).unwrap_or_default()),
        );
    }
    // The context `context` builds from the same request at the budget.
    request["budget"] = json!(budget);
    request.as_object_mut().map(|m| m.remove("explain"));
    match ui.call("context", request).await {
        Ok(r) => {
            let c = r.structured;
            let _ = write!(
                body,
                "<h2>Context at {budget} tokens</h2><p class=\"muted\">{} tokens used; {} memories dropped.</p>\
                 <table id=\"context\"><tr><th>memory</th><th>label</th><th>precision</th><th>text</th></tr>",
                c["tokens"],
                c["dropped"].as_array().map_or(0, Vec::len),
            );
            for b in c["blocks"].as_array().into_iter().flatten() {
                let id = b["id"].as_u64().unwrap_or(0);
                let _ = write!(
                    body,
                    "<tr><td><a href=\"/memory/{id}\">{id}</a></td><td>{}</td><td><b>{}</b></td><td>{}</td></tr>",
                    esc(b["label"].as_str().unwrap_or("")),
                    esc(b["precision"].as_str().unwrap_or("")),
                    esc(b["text"].as_str().unwrap_or("")),
                );
            }
            body.push_str("</table>");
        }
        Err(e) => {
            let _ = write!(body, "<p class=\"error\">context: {}</p>", esc(&e.0));
        }
    }
    page("search", None, &body).into_response()
}

/// `/memory/{id}`: its texts, history, provenance, scope, validity, decay with its retention
/// curve, and the actions on it.
pub(crate) async fn memory(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<u64>,
    Query(n): Query<Notice>,
) -> Response {
    let item = match ui.call("get", json!({ "id": id })).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let decay = match ui.call("explain_decay", json!({ "id": id })).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let feedback = match ui
        .call(crate::share::FEEDBACK_STATE, json!({ "id": id }))
        .await
    {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let mut body = format!(
        "<h1>Memory {id} <span class=\"muted\">{} · {}{}</span></h1>",
        esc(item["kind"].as_str().unwrap_or("")),
        esc(item["tier"].as_str().unwrap_or("")),
        if item["pinned"].as_bool() == Some(true) {
            " · pinned"
        } else {
            ""
        },
    );
    body.push_str("<table id=\"texts\"><tr><th>precision</th><th>text</th></tr>");
    for (name, field) in [
        ("original", "text"),
        ("concise", "concise"),
        ("brief", "brief"),
    ] {
        if let Some(t) = item[field].as_str() {
            let _ = write!(
                body,
                "<tr><td>{name}</td><td class=\"{field}\">{}</td></tr>",
                esc(t)
            );
        }
    }
    body.push_str("</table><div class=\"grid\"><div><h2>What it is</h2><table id=\"facts\">");
    let opt_time = |v: &Value| v.as_i64().map(time).unwrap_or_else(|| "—".into());
    let scope: Vec<String> = ["user", "agent", "session"]
        .iter()
        .filter_map(|k| item[*k].as_str().map(|v| format!("{k} {v}")))
        .collect();
    let tags: Vec<String> = item["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    for (k, v) in [
        (
            "namespace",
            item["namespace"].as_str().unwrap_or("").to_string(),
        ),
        (
            "scope",
            if scope.is_empty() {
                "(store-wide)".into()
            } else {
                scope.join(", ")
            },
        ),
        ("tags", tags.join(", ")),
        ("importance", item["importance"].to_string()),
        ("created", opt_time(&item["created"])),
        ("updated", opt_time(&item["updated"])),
        ("last recalled", opt_time(&item["accessed"])),
        ("valid from", opt_time(&item["valid_from"])),
        ("valid until", opt_time(&item["valid_until"])),
        ("merged repeats", item["count"].to_string()),
        ("feedback", feedback_text(&feedback)),
    ] {
        let _ = write!(body, "<tr><th>{k}</th><td>{}</td></tr>", esc(&v));
    }
    body.push_str("</table>");
    // History: the versions it replaced, and the one that replaced it.
    body.push_str("<h2>History</h2><ul id=\"history\">");
    if let Some(next) = item["superseded_by"].as_u64() {
        let _ = write!(
            body,
            "<li>replaced by <a href=\"/memory/{next}\">memory {next}</a></li>"
        );
    }
    let mut previous = item["supersedes"].as_u64();
    let mut shown = 0;
    while let Some(p) = previous.filter(|_| shown < 20) {
        match ui.call("get", json!({ "id": p })).await {
            Ok(r) => {
                let _ = write!(
                    body,
                    "<li>replaced <a href=\"/memory/{p}\">memory {p}</a>: {}</li>",
                    esc(r.structured["text"].as_str().unwrap_or(""))
                );
                previous = r.structured["supersedes"].as_u64();
            }
            Err(_) => {
                let _ = write!(body, "<li>replaced memory {p} (no longer stored)</li>");
                previous = None;
            }
        }
        shown += 1;
    }
    if shown == 0 && item["superseded_by"].is_null() {
        body.push_str("<li class=\"muted\">its only version</li>");
    }
    body.push_str("</ul><h2>Provenance</h2><ul id=\"provenance\">");
    let sources = item["sources"].as_array().cloned().unwrap_or_default();
    for s in &sources {
        let span = s["span"]
            .as_array()
            .map(|a| format!(" (bytes {}–{})", a[0], a.get(1).unwrap_or(&Value::Null)))
            .unwrap_or_default();
        let _ = write!(
            body,
            "<li>{}{span}</li>",
            esc(s["document"].as_str().unwrap_or(""))
        );
    }
    if sources.is_empty() {
        body.push_str("<li class=\"muted\">none recorded</li>");
    }
    body.push_str("</ul></div><div>");
    body.push_str(&decay_section(&decay));
    body.push_str("</div></div>");
    body.push_str(&super::actions::forms(
        id,
        item["pinned"].as_bool() == Some(true),
        item["text"].as_str().unwrap_or(""),
    ));
    page(&format!("memory {id}"), n.done.as_deref(), &body).into_response()
}

/// A memory's feedback so far, in words.
fn feedback_text(f: &Value) -> String {
    match (f["count"].as_u64(), f["sum"].as_u64()) {
        (Some(count), Some(sum)) if count > 0 => format!(
            "{count} rating(s), mean {:.1}, last {}; served {} precision step(s) {}",
            sum as f64 / count as f64,
            f["last"],
            f["precision_shift"].as_i64().unwrap_or(0).abs(),
            if f["precision_shift"].as_i64().unwrap_or(0) < 0 {
                "lower"
            } else {
                "higher"
            },
        ),
        _ => "none yet".into(),
    }
}

/// The decay part of a memory's page: the numbers, the projected dates, the retention chart
/// (its points are `explain_decay`'s curve, also given as JSON beside it).
fn decay_section(d: &Value) -> String {
    let anchor = d["anchor"].as_f64().unwrap_or(0.0);
    let days = |t: f64| (t - anchor) / DAY_MS;
    let curve: Vec<(f64, f64)> = d["curve"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                days(p["at"].as_f64().unwrap_or(anchor)),
                p["value"].as_f64().unwrap_or(0.0),
            )
        })
        .collect();
    let svg = charts::retention(&Retention {
        curve: &curve,
        working_threshold: d["working_threshold"].as_f64().unwrap_or(0.0),
        forget_threshold: d["forget_threshold"].as_f64().unwrap_or(0.0),
        now: (
            days(d["at"].as_f64().unwrap_or(anchor)),
            d["value"].as_f64().unwrap_or(0.0),
        ),
    });
    let opt_time = |v: &Value| v.as_i64().map(time).unwrap_or_else(|| "never".into());
    let mut out = String::from("<h2>Decay</h2><table id=\"decay\">");
    for (k, v) in [
        (
            "retention now",
            format!("{:.4}", d["value"].as_f64().unwrap_or(0.0)),
        ),
        (
            "strength",
            format!(
                "{:.1} days",
                d["strength_s"].as_f64().unwrap_or(0.0) / 86_400.0
            ),
        ),
        ("reinforced by recalls", d["reinforced"].to_string()),
        ("decay clock restarted", opt_time(&d["anchor"])),
        ("demoted (θ1) on", opt_time(&d["demote_at"])),
        ("forgotten (θ2) on", opt_time(&d["forget_at"])),
    ] {
        let _ = write!(out, "<tr><th>{k}</th><td>{}</td></tr>", esc(&v));
    }
    out.push_str("</table>");
    out.push_str(&chart("retention", svg));
    // The chart's data as JSON, for whoever checks it against `explain_decay`.
    let data = json!({ "curve": d["curve"], "working_threshold": d["working_threshold"],
                       "forget_threshold": d["forget_threshold"], "at": d["at"], "value": d["value"] });
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"retention-data\">{}</script>",
        data.to_string().replace('<', "\\u003c")
    );
    out
}

/// The forgetting page's filters.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ForgettingForm {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    days: Option<u32>,
}

/// `/forgetting`: demotions and deletions per day (chart), filterable by kind and user, and
/// the latest events.
pub(crate) async fn forgetting(
    State(ui): State<Arc<Ui>>,
    Query(f): Query<ForgettingForm>,
) -> Response {
    let days = f.days.unwrap_or(DEFAULT_DAYS).clamp(1, MAX_DAYS);
    let kind = f.kind.clone().filter(|s| !s.is_empty());
    let user = f.user.clone().filter(|s| !s.is_empty());
    let now = now_ms();
    let since = now - i64::from(days) * DAY_MS as i64;
    let events = match ui
        .call(crate::share::FORGOTTEN, json!({ "since": since }))
        .await
    {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let events: Vec<&Value> = events
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| {
            kind.as_deref()
                .is_none_or(|k| e["kind"].as_str() == Some(k))
        })
        .filter(|e| {
            user.as_deref()
                .is_none_or(|u| e["user"].as_str() == Some(u))
        })
        .collect();
    let first_day = since.div_euclid(DAY_MS as i64);
    let last_day = now.div_euclid(DAY_MS as i64);
    let mut per_day: Vec<(String, usize, usize)> =
        (first_day..=last_day).map(|d| (day(d), 0, 0)).collect();
    for e in &events {
        let d = e["at"].as_i64().unwrap_or(0).div_euclid(DAY_MS as i64);
        if let Some(slot) = per_day.get_mut((d - first_day).max(0) as usize) {
            if demotion(e) {
                slot.1 += 1;
            } else {
                slot.2 += 1;
            }
        }
    }
    let mut body = format!(
        "<h1>Forgetting</h1><form method=\"get\" action=\"/forgetting\" id=\"filters\">\
         kind <input name=\"kind\" value=\"{}\" style=\"width:7em\"> user <input name=\"user\" value=\"{}\" style=\"width:8em\"> \
         days <input name=\"days\" type=\"number\" min=\"1\" max=\"{MAX_DAYS}\" value=\"{days}\" style=\"width:5em\"> \
         <button>Show</button></form>",
        esc(kind.as_deref().unwrap_or("")),
        esc(user.as_deref().unwrap_or("")),
    );
    body.push_str(&chart("per-day", charts::forgetting(&per_day)));
    let _ = write!(
        body,
        "<h2>The latest {} of {} events</h2><table id=\"events\"><tr><th>at (UTC)</th><th>memory</th><th>what</th><th>retention</th><th>threshold</th><th>kind</th><th>user</th><th>text (start)</th></tr>",
        events.len().min(MAX_ROWS),
        events.len()
    );
    for e in events.iter().rev().take(MAX_ROWS) {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.4}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            time(e["at"].as_i64().unwrap_or(0)),
            e["id"],
            esc(e["reason"].as_str().unwrap_or("")),
            e["value"].as_f64().unwrap_or(0.0),
            e["threshold"],
            esc(e["kind"].as_str().unwrap_or("")),
            esc(e["user"].as_str().unwrap_or("")),
            esc(e["text"].as_str().unwrap_or("")),
        );
    }
    body.push_str("</table>");
    page("forgetting", None, &body).into_response()
}
