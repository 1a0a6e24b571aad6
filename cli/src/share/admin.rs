//! What only a peer on the socket may ask the serving process, beside the registry's
//! operations: a check (`memloop check`), so it needs no agent holding the store stopped, and
//! the inspector's reads (`memloop ui`: the census and the forgetting log). They are views for
//! maintenance and inspection, not operations of the registry: they span every scope.

use anyhow::Result;
use memloop::Memory;
use serde_json::Value;

use crate::mcp::tools::{Reply, ToolError, ToolResult};

/// `memloop check`'s request name on the socket.
pub const CHECK: &str = "check";

/// The inspector's overview: the census, the counts, the bytes on disk.
pub const CENSUS: &str = "census";
/// The inspector's forgetting log: the demotions and deletions since `since` (ms).
pub const FORGOTTEN: &str = "forgotten";
/// The inspector's view of one memory's feedback so far (`id`).
pub const FEEDBACK_STATE: &str = "feedback_state";

/// One of the socket's own requests, typed: what a process builds, runs here when it serves
/// the store, or sends by [`AdminCall::name`] and [`AdminCall::arguments`], which
/// [`AdminCall::parse`] reads back the same (a test).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminCall {
    /// `memloop check`: the store's checks, the index rebuilt when it is not sound.
    Check,
    /// The inspector's overview ([`CENSUS`]).
    Census,
    /// The inspector's forgetting log since a time, ms ([`FORGOTTEN`]).
    Forgotten {
        /// From when.
        since: memloop::Timestamp,
    },
    /// One memory's feedback so far ([`FEEDBACK_STATE`]).
    FeedbackState {
        /// The memory.
        id: memloop::MemoryId,
    },
}

/// The arguments of [`AdminCall::FeedbackState`].
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Id {
    id: memloop::MemoryId,
}

/// The arguments of [`AdminCall::Forgotten`].
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Since {
    since: memloop::Timestamp,
}

impl AdminCall {
    /// Its name on the socket.
    pub fn name(&self) -> &'static str {
        match self {
            AdminCall::Check => CHECK,
            AdminCall::Census => CENSUS,
            AdminCall::Forgotten { .. } => FORGOTTEN,
            AdminCall::FeedbackState { .. } => FEEDBACK_STATE,
        }
    }

    /// Its arguments as the socket carries them.
    pub fn arguments(&self) -> Value {
        let fields = match self {
            AdminCall::Check | AdminCall::Census => return Value::Null,
            AdminCall::Forgotten { since } => serde_json::to_value(Since { since: *since }),
            AdminCall::FeedbackState { id } => serde_json::to_value(Id { id: *id }),
        };
        fields.unwrap_or(Value::Null)
    }

    /// True when it changes nothing (safe to send again when the server went away mid-call):
    /// all but the check, which may rebuild the index.
    pub fn reads_only(&self) -> bool {
        !matches!(self, AdminCall::Check)
    }

    /// The socket's own request named `name` with `arguments`; `None` for a name that is not
    /// one (an operation of the registry, or nothing).
    pub fn parse(name: &str, arguments: Value) -> Option<Result<AdminCall, ToolError>> {
        let bad = |e: serde_json::Error| ToolError(format!("{name}: {e}"));
        Some(match name {
            CHECK => Ok(AdminCall::Check),
            CENSUS => Ok(AdminCall::Census),
            FORGOTTEN => serde_json::from_value::<Since>(arguments)
                .map(|a| AdminCall::Forgotten { since: a.since })
                .map_err(bad),
            FEEDBACK_STATE => serde_json::from_value::<Id>(arguments)
                .map(|a| AdminCall::FeedbackState { id: a.id })
                .map_err(bad),
            _ => return None,
        })
    }

    /// Runs it on `memory`.
    pub fn run(&self, memory: &Memory) -> ToolResult {
        let failed = |e: anyhow::Error| ToolError(format!("{e:#}"));
        match self {
            AdminCall::Check => check_on(memory)
                .map_err(failed)
                .and_then(|c| match c.problems {
                    Some(problems) => Err(ToolError(format!("{}\n{problems}", c.text))),
                    None => Ok(Reply {
                        text: c.text,
                        structured: c.json,
                    }),
                }),
            AdminCall::Census => json_reply(serde_json::json!({
                "census": memory.admin().census()?,
                "stats": memory.stats()?,
                "disk": memory.admin().disk_usage()?,
            })),
            AdminCall::Forgotten { since } => json_reply(memory.admin().forgotten(*since)?),
            AdminCall::FeedbackState { id } => json_reply(
                memory
                    .scoped(&memloop::Scope::default())
                    .feedback_state(*id)?,
            ),
        }
    }
}

/// A value as a reply whose text is its JSON.
fn json_reply(value: impl serde::Serialize) -> ToolResult {
    let json = serde_json::to_value(value).map_err(|e| ToolError(e.to_string()))?;
    Ok(Reply {
        text: json.to_string(),
        structured: json,
    })
}

/// Runs the socket's own request `request` with `arguments` (as it came over the socket).
pub fn call(memory: &Memory, request: &str, arguments: Value) -> ToolResult {
    match AdminCall::parse(request, arguments) {
        Some(call) => call?.run(memory),
        None => Err(ToolError(format!(
            "`{request}` is not a request of the socket's own"
        ))),
    }
}

/// True for the socket's own requests (the rest are MCP tools).
pub fn handles(request: &str) -> bool {
    AdminCall::parse(request, Value::Null).is_some()
}

/// A store's check, as `memloop check` prints it.
pub struct Checked {
    /// The report as text.
    pub text: String,
    /// The report as JSON.
    pub json: Value,
    /// What to say when problems remain (the command then fails).
    pub problems: Option<String>,
}

/// Checks an open store, here or in the process serving it.
pub fn check_on(memory: &Memory) -> Result<Checked> {
    let report = memory.admin().check()?;
    let mut text = format!("{} memories, {} indexed\n", report.memories, report.indexed);
    match &report.index_rebuilt {
        Some(why) => text.push_str(&format!("index rebuilt from the database: {why}")),
        None => text.push_str("index file verified"),
    }
    for p in &report.problems {
        text.push_str(&format!("\nproblem: {p}"));
    }
    let problems = (!report.is_sound()).then(|| {
        format!(
            "{} problem(s) found; `memloop --store {} check --salvage OUT` exports every readable memory",
            report.problems.len(),
            memory.dir().display()
        )
    });
    Ok(Checked {
        text,
        json: serde_json::to_value(&report)?,
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request of the socket's own, sent by its name and arguments, is read back the
    /// same; an operation's name is not one of them, and bad arguments are refused by name.
    #[test]
    fn every_admin_call_sent_is_read_back_the_same() {
        for call in [
            AdminCall::Check,
            AdminCall::Census,
            AdminCall::Forgotten { since: -5 },
            AdminCall::FeedbackState {
                id: memloop::MemoryId::new(42),
            },
        ] {
            let back = AdminCall::parse(call.name(), call.arguments());
            assert_eq!(back.map(|r| r.map_err(|e| e.0)), Some(Ok(call.clone())));
            assert!(handles(call.name()));
        }
        assert!(AdminCall::parse("recall", Value::Null).is_none());
        let refused = AdminCall::parse(FORGOTTEN, serde_json::json!({"since": "x"}));
        assert!(matches!(refused, Some(Err(ToolError(m))) if m.starts_with("forgotten: ")));
    }
}
