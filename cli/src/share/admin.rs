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

/// True for the socket's own requests (the rest are MCP tools).
pub fn handles(request: &str) -> bool {
    matches!(request, CHECK | CENSUS | FORGOTTEN | FEEDBACK_STATE)
}

/// The arguments of [`FEEDBACK_STATE`].
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Id {
    id: memloop::MemoryId,
}

/// The arguments of [`FORGOTTEN`].
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Since {
    since: memloop::Timestamp,
}

/// A value as a reply whose text is its JSON.
fn json_reply(value: impl serde::Serialize) -> ToolResult {
    let json = serde_json::to_value(value).map_err(|e| ToolError(e.to_string()))?;
    Ok(Reply {
        text: json.to_string(),
        structured: json,
    })
}

/// Runs one of the socket's own requests ([`handles`]).
pub fn call(memory: &Memory, request: &str, arguments: Value) -> ToolResult {
    let failed = |e: anyhow::Error| ToolError(format!("{e:#}"));
    match request {
        CHECK => check_on(memory)
            .map_err(failed)
            .and_then(|c| match c.problems {
                Some(problems) => Err(ToolError(format!("{}\n{problems}", c.text))),
                None => Ok(Reply {
                    text: c.text,
                    structured: c.json,
                }),
            }),
        CENSUS => json_reply(serde_json::json!({
            "census": memory.admin().census()?,
            "stats": memory.stats()?,
            "disk": memory.admin().disk_usage()?,
        })),
        FORGOTTEN => {
            let a = serde_json::from_value::<Since>(arguments)
                .map_err(|e| ToolError(format!("forgotten: {e}")))?;
            json_reply(memory.admin().forgotten(a.since)?)
        }
        FEEDBACK_STATE => {
            let a = serde_json::from_value::<Id>(arguments)
                .map_err(|e| ToolError(format!("feedback_state: {e}")))?;
            json_reply(
                memory
                    .scoped(&memloop::Scope::default())
                    .feedback_state(a.id)?,
            )
        }
        other => Err(ToolError(format!(
            "`{other}` is not a request of the socket's own"
        ))),
    }
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
