//! The inspector's actions: pin, forget, rate, edit (a new version, the old one kept as
//! history) and erasing a user's scope. Each is a confirmed form (`assets/ui.js`) posting here,
//! and each runs the engine's normal call (the MCP tool of the same job), then goes back to
//! the page with what was done.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Form, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use memloop::requests::{FeedbackRequest, ForgetRequest, UpdateRequest};
use memloop::{MemoryId, Request, Scope};
use serde::Deserialize;

use super::html::{esc, failure, page, url};
use super::Ui;

/// The action forms of memory `id`'s page.
pub(crate) fn forms(id: MemoryId, pinned: bool, text: &str) -> String {
    let mut out = String::from("<h2>Actions</h2><div id=\"actions\">");
    let (pin, label) = if pinned {
        ("false", "Unpin")
    } else {
        ("true", "Pin (never forget)")
    };
    let _ = write!(
        out,
        "<form class=\"inline\" method=\"post\" action=\"/memory/{id}/pin\" id=\"pin\" data-confirm=\"{label} memory {id}?\">\
         <input type=\"hidden\" name=\"pinned\" value=\"{pin}\"><button>{label}</button></form>\
         <form class=\"inline\" method=\"post\" action=\"/memory/{id}/rate\" id=\"rate\" data-confirm=\"Rate memory {id}?\">\
         <select name=\"level\">{}</select> <button>Rate</button></form>\
         <form class=\"inline\" method=\"post\" action=\"/memory/{id}/forget\" id=\"forget\" data-confirm=\"Forget memory {id}? This cannot be undone.\">\
         <button class=\"danger\">Forget</button></form>\
         <h2>Edit</h2><form method=\"post\" action=\"/memory/{id}/edit\" id=\"edit\" data-confirm=\"Save this as a new version of memory {id}?\">\
         <textarea name=\"text\" required>{}</textarea><br><button>Save as a new version</button></form></div>",
        (1..=5)
            .map(|l| {
                let selected = if l == 5 { " selected" } else { "" };
                format!("<option value=\"{l}\"{selected}>{l} {}</option>", ["", "harmful", "", "", "", "decisive"][l])
            })
            .collect::<String>(),
        esc(text),
    );
    out
}

/// Back to `path` with a notice of what was done.
fn done(path: &str, notice: &str) -> Response {
    let location = format!("{path}?done={}", url(notice));
    (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
}

/// Runs one operation of the registry that is on the inspector's door; its refusal as an error
/// page.
async fn run(ui: &Arc<Ui>, request: Request) -> Result<serde_json::Value, Response> {
    let op = request.operation();
    if !op.on(memloop::Door::Inspector) {
        return Err(failure(
            StatusCode::BAD_REQUEST,
            &format!("`{}` is not an action of the inspector", op.name()),
        ));
    }
    ui.operation(request)
        .await
        .map(|r| r.structured)
        .map_err(|e| failure(StatusCode::BAD_REQUEST, &e.0))
}

/// The pin form.
#[derive(Debug, Deserialize)]
pub(crate) struct PinForm {
    pinned: bool,
}

/// `POST /memory/{id}/pin`: pins (never forgotten) or unpins it.
pub(crate) async fn pin(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<MemoryId>,
    Form(f): Form<PinForm>,
) -> Response {
    match run(
        &ui,
        Request::Update(UpdateRequest {
            id,
            pinned: Some(f.pinned),
            ..Default::default()
        }),
    )
    .await
    {
        Ok(_) => done(
            &format!("/memory/{id}"),
            if f.pinned { "Pinned." } else { "Unpinned." },
        ),
        Err(r) => r,
    }
}

/// `POST /memory/{id}/forget`: deletes it.
pub(crate) async fn forget(State(ui): State<Arc<Ui>>, Path(id): Path<MemoryId>) -> Response {
    match run(
        &ui,
        Request::Forget(ForgetRequest {
            id: Some(id),
            ..Default::default()
        }),
    )
    .await
    {
        Ok(_) => done("/", &format!("Memory {id} forgotten.")),
        Err(r) => r,
    }
}

/// The rate form.
#[derive(Debug, Deserialize)]
pub(crate) struct RateForm {
    level: u8,
}

/// `POST /memory/{id}/rate`: feedback 1–5.
pub(crate) async fn rate(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<MemoryId>,
    Form(f): Form<RateForm>,
) -> Response {
    match run(
        &ui,
        Request::Feedback(FeedbackRequest {
            id,
            level: f.level,
            ..Default::default()
        }),
    )
    .await
    {
        Ok(state) => done(
            &format!("/memory/{id}"),
            &format!("Rated {} ({} ratings so far).", f.level, state["count"]),
        ),
        Err(r) => r,
    }
}

/// The edit form.
#[derive(Debug, Deserialize)]
pub(crate) struct EditForm {
    text: String,
}

/// `POST /memory/{id}/edit`: a new version with the new text (the old one kept as history).
pub(crate) async fn edit(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<MemoryId>,
    Form(f): Form<EditForm>,
) -> Response {
    match run(
        &ui,
        Request::Update(UpdateRequest {
            id,
            text: Some(f.text.clone()),
            ..Default::default()
        }),
    )
    .await
    {
        Ok(r) => {
            let new = r["id"].as_u64().map_or(id, MemoryId::new);
            let notice = if new == id {
                "Saved.".to_string()
            } else {
                format!("Saved as memory {new}; memory {id} is kept as its history.")
            };
            done(&format!("/memory/{new}"), &notice)
        }
        Err(r) => r,
    }
}

/// The erase form.
#[derive(Debug, Deserialize)]
pub(crate) struct EraseForm {
    user: String,
}

/// `POST /erase`: every memory of one user, from every file of the store. The answer is a
/// page with the erasure's signed receipt, its exact bytes in `#receipt` (what `memloop
/// receipt verify` checks), not a redirect: the receipt is shown once, like `memloop erase`
/// prints it once (`memloop receipt list` prints it again).
pub(crate) async fn erase(State(ui): State<Arc<Ui>>, Form(f): Form<EraseForm>) -> Response {
    if f.user.trim().is_empty() {
        return failure(StatusCode::BAD_REQUEST, "name the user to erase");
    }
    match run(
        &ui,
        Request::Forget(ForgetRequest {
            scope: Scope {
                user: Some(f.user.clone()),
                ..Default::default()
            },
            ..Default::default()
        }),
    )
    .await
    {
        Ok(r) => {
            let notice = format!("Erased {} memories of user {}.", r["memories"], f.user);
            let line = r["receipt_line"].as_str().unwrap_or_default();
            let body = format!(
                "<h1>Erased</h1><p>The erasure's signed receipt: save it exactly as shown (one \
                 line) and check it with <code>memloop receipt verify FILE</code>; <code>memloop \
                 receipt list</code> prints it again.</p><pre id=\"receipt\">{}</pre>\
                 <p><a href=\"/\">Back to the overview</a></p>",
                esc(line.trim_end())
            );
            page("erased", Some(&notice), &body).into_response()
        }
        Err(r) => r,
    }
}
