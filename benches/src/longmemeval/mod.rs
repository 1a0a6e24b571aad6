//! LongMemEval (ICLR 2025, MIT): timestamped chat histories and questions about them, read from
//! `longmemeval_*.json` or `.json.gz` by path (never copied), with the official retrieval
//! metrics (`metrics.rs`), the official flat BM25 baseline (`bm25_okapi.rs`) and the run of
//! `retrieval-bench --longmemeval` (`run.rs`).

pub mod bm25_okapi;
pub mod metrics;
pub mod run;

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// One turn of a haystack session.
#[derive(Debug, Clone)]
pub struct LmeTurn {
    /// `user` or `assistant`.
    pub role: String,
    /// What was said.
    pub content: String,
    /// The turn holds (part of) the answer.
    pub has_answer: bool,
}

/// One haystack session: its id, date and turns.
#[derive(Debug, Clone)]
pub struct LmeSession {
    /// The session id (evidence sessions' ids contain `answer`).
    pub id: String,
    /// When it took place, ms since the Unix epoch (UTC).
    pub time: i64,
    /// The turns in order.
    pub turns: Vec<LmeTurn>,
}

impl LmeSession {
    /// The key of turn `i`: `{session id}_{i}`, as the official scripts number turns.
    pub fn turn_key(&self, i: usize) -> String {
        format!("{}_{i}", self.id)
    }

    /// The turns a store holds: the user's (every speaker's with `all_turns`), not empty.
    pub fn kept_turns(&self, all_turns: bool) -> impl Iterator<Item = (usize, &LmeTurn)> {
        self.turns
            .iter()
            .enumerate()
            .filter(move |(_, t)| (all_turns || t.role == "user") && !t.content.trim().is_empty())
    }

    /// Whether the official scripts count this session as evidence.
    pub fn is_evidence(&self) -> bool {
        self.id.contains("answer")
    }
}

/// One question with its haystack.
#[derive(Debug, Clone)]
pub struct LmeQuestion {
    /// The question id (`…_abs` for abstention questions).
    pub id: String,
    /// single-session-user, single-session-assistant, single-session-preference,
    /// multi-session, knowledge-update or temporal-reasoning.
    pub kind: String,
    /// The question.
    pub question: String,
    /// When it is asked, ms since the Unix epoch.
    pub time: i64,
    /// The haystack, in the order given.
    pub sessions: Vec<LmeSession>,
}

impl LmeQuestion {
    /// Abstention questions have no evidence and are left out of retrieval metrics.
    pub fn is_abstention(&self) -> bool {
        self.id.ends_with("_abs")
    }

    /// The evidence turns' keys: turns with `has_answer` in evidence sessions (user turns
    /// only when `user_only`, as the official metrics count them).
    pub fn evidence_turns(&self, user_only: bool) -> Vec<String> {
        let mut out = Vec::new();
        for s in self.sessions.iter().filter(|s| s.is_evidence()) {
            for (i, t) in s.turns.iter().enumerate() {
                if t.has_answer && (!user_only || t.role == "user") {
                    out.push(s.turn_key(i));
                }
            }
        }
        out
    }

    /// The evidence sessions' ids.
    pub fn evidence_sessions(&self) -> Vec<String> {
        self.sessions
            .iter()
            .filter(|s| s.is_evidence())
            .map(|s| s.id.clone())
            .collect()
    }
}

/// Parses LongMemEval's dates, `2023/03/27 (Mon) 23:35`, as UTC.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut parts = s.split_whitespace();
    let (date, _weekday, time) = (parts.next()?, parts.next()?, parts.next()?);
    memloop::time::parse_rfc3339(&format!("{}T{time}:00Z", date.replace('/', "-")))
}

/// Reads a LongMemEval file (`.json`, or `.json.gz`).
pub fn load(path: &Path) -> Result<Vec<LmeQuestion>> {
    let file = std::fs::File::open(path).with_context(|| format!("open {}", path.display()))?;
    let mut text = String::new();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(file).read_to_string(&mut text)?;
    } else {
        std::io::BufReader::new(file).read_to_string(&mut text)?;
    }
    let all: Value = serde_json::from_str(&text).context("LongMemEval JSON")?;
    let Some(all) = all.as_array() else {
        bail!("{}: not a JSON array of questions", path.display());
    };
    all.iter().map(question).collect()
}

fn text(v: &Value, field: &str) -> Result<String> {
    v[field]
        .as_str()
        .map(String::from)
        .with_context(|| format!("{field} missing or not text"))
}

fn question(q: &Value) -> Result<LmeQuestion> {
    let id = text(q, "question_id")?;
    let at = |s: &str| parse_date(s).with_context(|| format!("{id}: bad date {s:?}"));
    let dates = q["haystack_dates"].as_array().context("haystack_dates")?;
    let ids = q["haystack_session_ids"]
        .as_array()
        .context("haystack_session_ids")?;
    let sessions = q["haystack_sessions"]
        .as_array()
        .context("haystack_sessions")?;
    if dates.len() != ids.len() || ids.len() != sessions.len() {
        bail!("{id}: haystack fields of different lengths");
    }
    let sessions = sessions
        .iter()
        .zip(ids)
        .zip(dates)
        .map(|((turns, sid), date)| {
            let turns = turns
                .as_array()
                .context("a session is not a list")?
                .iter()
                .map(|t| {
                    Ok(LmeTurn {
                        role: text(t, "role")?,
                        content: text(t, "content")?,
                        has_answer: t["has_answer"].as_bool().unwrap_or(false),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(LmeSession {
                id: sid.as_str().context("a session id")?.to_string(),
                time: at(date.as_str().context("a date")?)?,
                turns,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(LmeQuestion {
        kind: text(q, "question_type")?,
        question: text(q, "question")?,
        time: at(&text(q, "question_date")?)?,
        id,
        sessions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_as_utc() {
        assert_eq!(parse_date("1970/01/01 (Thu) 00:01"), Some(60_000));
        assert_eq!(
            parse_date("2023/03/27 (Mon) 23:35"),
            Some(1_679_960_100_000)
        );
        assert_eq!(parse_date("2023-03-27 23:35"), None);
    }
}
