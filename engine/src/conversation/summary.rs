//! A conversation's session summary: one [`Kind::Summary`] memory per session, rewritten
//! through the summarizer hook whenever turns are added.

use crate::clock::Timestamp;
use crate::error::Result;
use crate::item::NewMemory;
use crate::time::format_minute;

/// Speakers a summary's header names.
const MAX_SPEAKERS: usize = 8;
/// Characters of a speaker's (or the session's) name a header keeps.
const SPEAKER_CHARS: usize = 64;

/// `text` cut to at most `max` bytes on a character boundary (an ellipsis marks a cut).
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub('\u{2026}'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\u{2026}", &text[..end])
}

/// One turn as the summary reads it.
pub(super) struct Line<'a> {
    /// "speaker: text".
    pub(super) text: &'a str,
    pub(super) speaker: &'a str,
    pub(super) time: Timestamp,
}

/// The session summary's text, concise and brief versions for `turns` (the session's turns in
/// order, at least one), by `summarizer`.
/// Each of its texts is cut to `max_bytes`.
pub(super) fn session_summary(
    summarizer: &dyn crate::context::Summarizer,
    session: &str,
    turns: &[Line<'_>],
    max_bytes: usize,
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
    // The header names at most MAX_SPEAKERS speakers, each cut to SPEAKER_CHARS: the summary
    // of a session must fit a memory however many or long its speakers' names.
    let mut named: Vec<String> = speakers
        .iter()
        .take(MAX_SPEAKERS)
        .map(|s| cut(s, SPEAKER_CHARS))
        .collect();
    if speakers.len() > MAX_SPEAKERS {
        named.push(format!("{} more", speakers.len() - MAX_SPEAKERS));
    }
    let header = format!(
        "Conversation {} ({when}, {} turns; {}):",
        cut(session, SPEAKER_CHARS),
        turns.len(),
        named.join(", ")
    );
    // The summary is derived from the turns, which keep every word: cut to the text limit
    // rather than refused after the turns were written.
    let fit = |t: String| cut(&t, max_bytes);
    Ok(NewMemory {
        text: fit(format!("{header} {}", gist.concise)),
        concise: Some(fit(format!("{header} {}", gist.brief))),
        brief: Some(fit(header)),
        kind: crate::item::Kind::Summary,
        valid_from: Some(first),
        ..NewMemory::default()
    })
}
