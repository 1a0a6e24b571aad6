//! Lower precisions of a text: the [`Summarizer`] hook and its extractive default.

use crate::error::Result;
use crate::vocabulary::Task;

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

/// The query-aware extractive summary of `text`: concise keeps the sentences sharing the most
/// terms with the query (`query_terms`, as the lexical index analyses them), up to half the
/// words (at most 60), in their order in the text; brief is the best of them (cut at 40 words).
/// A text none of whose sentences shares a term falls back to [`extract`]. `lead` (a turn's
/// "speaker:") is put back in front of a version that lost it, so a downgrade keeps who said it.
pub(crate) fn extract_for(
    text: &str,
    query_terms: &[String],
    analyzer: &crate::lexical::Analyzer,
    lead: Option<&str>,
) -> Summary {
    let text = text.trim();
    let sentences = sentences(text);
    let scores: Vec<usize> = sentences
        .iter()
        .map(|s| {
            let mut terms = analyzer.terms(s);
            terms.sort_unstable();
            terms.dedup();
            query_terms
                .iter()
                .filter(|t| terms.binary_search(t).is_ok())
                .count()
        })
        .collect();
    if scores.iter().all(|&s| s == 0) {
        return extract(text);
    }
    let mut order: Vec<usize> = (0..sentences.len()).collect();
    order.sort_by(|&a, &b| scores[b].cmp(&scores[a]).then(a.cmp(&b)));
    let words = text.split_whitespace().count();
    let limit = (words / 2).clamp(1, CONCISE_MAX_WORDS);
    let (mut chosen, mut taken) = (Vec::new(), 0);
    for &i in &order {
        let n = sentences[i].split_whitespace().count();
        if !chosen.is_empty() && (taken + n > limit || scores[i] == 0) {
            break;
        }
        chosen.push(i);
        taken += n;
    }
    chosen.sort_unstable();
    let led = |s: String| match lead {
        Some(lead) if !s.starts_with(lead) => format!("{lead} {s}"),
        _ => s,
    };
    let concise: Vec<&str> = chosen.iter().map(|&i| sentences[i]).collect();
    Summary {
        concise: led(cut_words(&concise.join(" "), CONCISE_MAX_WORDS)),
        brief: led(cut_words(sentences[order[0]], QUERY_BRIEF_MAX_WORDS)),
    }
}

/// The longest brief [`extract_for`] keeps: the best sentence whole, unless it is very long.
const QUERY_BRIEF_MAX_WORDS: usize = 40;

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
    fn the_sentence_holding_the_querys_terms_survives_a_downgrade() {
        let analyzer = crate::lexical::Analyzer::default();
        let terms = |q: &str| {
            let mut t = analyzer.terms(q);
            t.sort_unstable();
            t.dedup();
            t
        };
        let text = "We met at the old harbour in spring. The weather was grey and cold. Later \
                    that week the crane was repaired by a team from Oslo. Everyone was relieved.";
        let s = extract_for(text, &terms("who repaired the crane?"), &analyzer, None);
        assert_eq!(
            s.brief,
            "Later that week the crane was repaired by a team from Oslo."
        );
        assert!(s.concise.contains("team from Oslo"), "{}", s.concise);
        // The leading-sentences default would have lost it.
        assert!(!extract(text).brief.contains("Oslo"));
        // A turn keeps its speaker; no shared term falls back to the leading sentences.
        let turn = "Mel: Hi! We went camping. The kids loved the lake at dawn.";
        let s = extract_for(turn, &terms("lake"), &analyzer, Some("Mel:"));
        assert_eq!(s.brief, "Mel: The kids loved the lake at dawn.");
        assert_eq!(
            extract_for(text, &terms("zebra"), &analyzer, None),
            extract(text)
        );
    }

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
