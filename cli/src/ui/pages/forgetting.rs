//! `/forgetting`: demotions and deletions per day.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use crate::share::AdminCall;

use super::super::charts;
use super::super::html::{day, esc, page, time};
use super::super::Ui;
use super::overview::demotion;
use super::{chart, now_ms, refused, DAY_MS, DEFAULT_DAYS, MAX_DAYS, MAX_ROWS};

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
    let events = match ui.admin(AdminCall::Forgotten { since }).await {
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
