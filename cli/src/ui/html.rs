//! The inspector's HTML: escaping, the page around each view, the embedded assets.

use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

/// `s` safe inside HTML text and quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as one query-string component.
pub(crate) fn url(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A time (ms since the epoch) as UTC `YYYY-MM-DD HH:MM`.
pub(crate) fn time(ms: i64) -> String {
    memloop::time::format_minute(ms)
}

/// A day number (days since 1970-01-01) as `YYYY-MM-DD`.
pub(crate) fn day(days: i64) -> String {
    memloop::time::format_minute(days * 86_400_000)[..10].to_string()
}

/// A whole page: the navigation, an optional notice, then `body`.
pub(crate) fn page(title: &str, notice: Option<&str>, body: &str) -> Html<String> {
    let notice = notice
        .map(|n| format!("<p class=\"flash\" id=\"notice\">{}</p>", esc(n)))
        .unwrap_or_default();
    Html(format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>memloop · {title}</title>\
         <link rel=\"stylesheet\" href=\"/assets/ui.css\"><script src=\"/assets/ui.js\" defer></script>\
         </head><body><nav><strong>memloop</strong><a href=\"/\">Overview</a>\
         <a href=\"/search\">Search</a><a href=\"/forgetting\">Forgetting</a></nav>\
         <main>{notice}{body}</main></body></html>",
        title = esc(title),
    ))
}

/// A page saying what went wrong.
pub(crate) fn failure(status: axum::http::StatusCode, message: &str) -> Response {
    let body = format!(
        "<h1>Not done</h1><p class=\"error\" id=\"error\">{}</p>",
        esc(message)
    );
    (status, page("error", None, &body)).into_response()
}

/// `/assets/ui.css`.
pub(crate) async fn stylesheet() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/ui.css"),
    )
        .into_response()
}

/// `/assets/ui.js`.
pub(crate) async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/ui.js"),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::{day, esc, time};

    #[test]
    fn text_is_escaped_and_dates_are_civil() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(day(0), "1970-01-01");
        assert_eq!(day(19_723), "2024-01-01");
        assert_eq!(time(1_709_210_096_000), "2024-02-29 12:34");
    }
}
