//! A conversation's session summary: one [`Kind::Summary`] memory per session, rewritten
//! through the summarizer hook whenever turns are added.

use crate::clock::Timestamp;
use crate::error::Result;
use crate::item::NewMemory;
use crate::time::format_minute;

/// One turn as the summary reads it.
pub(super) struct Line<'a> {
    /// "speaker: text".
    pub(super) text: &'a str,
    pub(super) speaker: &'a str,
    pub(super) time: Timestamp,
}

/// The session summary's text, concise and brief versions for `turns` (the session's turns in
/// order, at least one), by `summarizer`.
pub(super) fn session_summary(
    summarizer: &dyn crate::context::Summarizer,
    session: &str,
    turns: &[Line<'_>],
) -> Result<NewMemory> {
    let transcript: Vec<&str> = turns.iter().map(|t| t.text).collect();
    let gist = summarizer.summarize(&transcript.join("\n"))?;
    let mut speakers: Vec<&str> = Vec::new();
    for t in turns {
        if !speakers.contains(&t.speaker) {
            speakers.push(t.speaker);
        }
    }
    let first = turns.iter().map(|t| t.time).min().unwrap_or_default();
    let last = turns.iter().map(|t| t.time).max().unwrap_or_default();
    let day = |ms| {
        format_minute(ms)
            .split_once(' ')
            .map_or(String::new(), |(d, _)| d.to_string())
    };
    let when = if day(first) == day(last) {
        day(first)
    } else {
        format!("{} to {}", day(first), day(last))
    };
    let header = format!(
        "Conversation {session} ({when}, {} turns; {}):",
        turns.len(),
        speakers.join(", ")
    );
    Ok(NewMemory {
        text: format!("{header} {}", gist.concise),
        concise: Some(format!("{header} {}", gist.brief)),
        brief: Some(header),
        kind: crate::item::Kind::Summary,
        valid_from: Some(first),
        ..NewMemory::default()
    })
}
