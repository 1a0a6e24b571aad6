//! `/memory/{id}`: one memory, its decay and the actions on it.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use memloop::requests::IdRequest;
use memloop::{MemoryId, Request};

use crate::share::AdminCall;

use super::super::charts::{self, Retention};
use super::super::html::{esc, page, time};
use super::super::Ui;
use super::{chart, refused, Notice, DAY_MS};

/// `/memory/{id}`: its texts, history, provenance, scope, validity, decay with its retention
/// curve, and the actions on it.
pub(crate) async fn memory(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<MemoryId>,
    Query(n): Query<Notice>,
) -> Response {
    let by_id = IdRequest {
        id,
        ..Default::default()
    };
    let item = match ui.operation(Request::Get(by_id.clone())).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let decay = match ui.operation(Request::ExplainDecay(by_id)).await {
        Ok(r) => r.structured,
        Err(e) => return refused(&e),
    };
    let feedback = match ui.admin(AdminCall::FeedbackState { id }).await {
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
        let get = IdRequest {
            id: MemoryId::new(p),
            ..Default::default()
        };
        match ui.operation(Request::Get(get)).await {
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
    body.push_str(&super::super::actions::forms(
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
