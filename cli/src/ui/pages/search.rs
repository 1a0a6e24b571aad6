//! `/search`: a query, its hits with their score parts, and the context.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use memloop::requests::{ContextParams, RecallRequest};
use memloop::{Request, Scope};

use super::super::charts;
use super::super::html::{esc, page};
use super::super::Ui;
use super::{chart, refused};

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
        // The engine's own list: a strategy the engine does not know is never offered.
        std::iter::once("")
            .chain(memloop::Strategy::ALL.iter().map(|s| s.name()))
            .map(|s| {
                let selected = if strategy.as_deref().unwrap_or("") == s { " selected" } else { "" };
                let label = if s.is_empty() { "default strategy" } else { s };
                format!("<option value=\"{s}\"{selected}>{label}</option>")
            })
            .collect::<String>(),
        esc(user.as_deref().unwrap_or("")),
    );
    if f.q.trim().is_empty() {
        return page("search", None, &body).into_response();
    }
    let scope = Scope {
        user,
        ..Default::default()
    };
    let recall = RecallRequest {
        query: f.q.clone(),
        k: Some(k),
        strategy: strategy.clone(),
        explain: true,
        scope: scope.clone(),
        ..Default::default()
    };
    let hits = match ui.operation(Request::Recall(recall)).await {
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
    // The context `context` builds from the same query, k, strategy and user at the budget.
    let context = ContextParams {
        query: f.q.clone(),
        budget: Some(budget),
        k: Some(k),
        strategy,
        scope,
        ..Default::default()
    };
    match ui.operation(Request::Context(context)).await {
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
