//! Lower precisions of a text: the [`Summarizer`] hook and its extractive default.

use crate::agent::Task;
use crate::error::Result;

/// A text at the two lower precisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The gist: the leading sentences.
    pub concise: String,
    /// A line.
    pub brief: String,
}

/// Makes the concise and brief versions of a memory's text (an LLM, or [`Extractive`]).
pub trait Summarizer: Send + Sync {
    /// Summarises `text`.
    ///
    /// # Errors
    /// Any error aborts the operation that asked and is returned to the caller.
    fn summarize(&self, text: &str) -> Result<Summary>;

    /// Summarises a task whose original text is `original` (by default through
    /// [`Summarizer::summarize`]).
    ///
    /// # Errors
    /// As [`Summarizer::summarize`].
    fn summarize_task(&self, task: &Task, original: &str) -> Result<Summary> {
        let _ = task;
        self.summarize(original)
    }
}

/// The default summarizer: no model, only the text's own sentences. Concise keeps the leading
/// sentences up to half the words (at most 60, at least one sentence); brief is the first
/// sentence, cut at 20 words.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extractive;

const CONCISE_MAX_WORDS: usize = 60;
const BRIEF_MAX_WORDS: usize = 20;

impl Summarizer for Extractive {
    fn summarize(&self, text: &str) -> Result<Summary> {
        Ok(extract(text))
    }

    /// Concise: the request, the final two steps and the outcome. Brief: the request, the
    /// operation names (each step's first word) and the outcome.
    fn summarize_task(&self, task: &Task, _original: &str) -> Result<Summary> {
        let outcome = task.outcome_word();
        let last: Vec<&str> = task
            .steps
            .iter()
            .rev()
            .take(2)
            .rev()
            .map(String::as_str)
            .collect();
        let concise = if last.is_empty() {
            format!("Task: {}\nOutcome: {outcome}", task.request)
        } else {
            format!(
                "Task: {}\nFinal actions: {}\nOutcome: {outcome}",
                task.request,
                last.join("; ")
            )
        };
        let mut ops: Vec<String> = Vec::new();
        for step in &task.steps {
            let op: String = step
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            if !op.is_empty() && ops.last() != Some(&op) {
                ops.push(op);
            }
        }
        let brief = if ops.is_empty() {
            format!("Task: {} ({outcome})", task.request)
        } else {
            format!("Task: {} — {} ({outcome})", task.request, ops.join(", "))
        };
        Ok(Summary { concise, brief })
    }
}

/// The extractive summary of `text` (infallible; shared by the default summarizer and the
/// context assembly of memories stored without lower precisions).
pub(crate) fn extract(text: &str) -> Summary {
    let text = text.trim();
    let sentences = sentences(text);
    let words = text.split_whitespace().count();
    let limit = (words / 2).clamp(1, CONCISE_MAX_WORDS);
    let mut concise = String::new();
    let mut taken = 0;
    for s in &sentences {
        let n = s.split_whitespace().count();
        if taken > 0 && taken + n > limit {
            break;
        }
        if !concise.is_empty() {
            concise.push(' ');
        }
        concise.push_str(s);
        taken += n;
    }
    let concise = cut_words(&concise, CONCISE_MAX_WORDS);
    let brief = cut_words(sentences.first().copied().unwrap_or(""), BRIEF_MAX_WORDS);
    Summary { concise, brief }
}

/// Sentences of `text`: split after `.`, `!`, `?` followed by whitespace, and at line breaks.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = match c {
            '\n' => Some(i),
            '.' | '!' | '?' if bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace) => Some(i + 1),
            _ => None,
        };
        if let Some(end) = end {
            let s = text[start..end].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = end;
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// `text` cut to its first `max` words, with "…" when cut.
fn cut_words(text: &str, max: usize) -> String {
    let mut words = text.split_whitespace();
    let kept: Vec<&str> = words.by_ref().take(max).collect();
    let mut out = kept.join(" ");
    if words.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concise_keeps_leading_sentences_and_brief_one_line() {
        let text = "The deploy failed at step three. The cache was stale. We cleared it and \
                    retried. It worked on the second try. Nobody was paged.";
        let s = extract(text);
        assert_eq!(s.brief, "The deploy failed at step three.");
        assert_eq!(
            s.concise,
            "The deploy failed at step three. The cache was stale."
        );
        let long = "word ".repeat(100);
        let s = extract(&long);
        assert_eq!(s.brief.split_whitespace().count(), 20);
        assert!(s.brief.ends_with('…'));
        assert!(s.concise.split_whitespace().count() <= 60);
        assert_eq!(extract("").brief, "");
        assert_eq!(extract("one").concise, "one");
    }
}
