//! What only a peer on the socket may ask the serving process, beside the MCP tools: a backup
//! (`memloop export`) and a check (`memloop check`), so neither needs the agent holding the
//! store stopped. Not MCP tools: a model has no business writing files on the host.

use anyhow::Result;
use memloop::Memory;
use serde_json::Value;

use crate::mcp::tools::{Reply, ToolError, ToolResult};

/// `memloop export`'s request name on the socket.
pub const EXPORT: &str = "export";
/// `memloop check`'s request name on the socket.
pub const CHECK: &str = "check";

/// True for the socket's own requests (the rest are MCP tools).
pub fn handles(request: &str) -> bool {
    matches!(request, EXPORT | CHECK)
}

/// Runs one of the socket's own requests ([`handles`]).
pub fn call(memory: &Memory, request: &str, arguments: Value) -> ToolResult {
    let failed = |e: anyhow::Error| ToolError(format!("{e:#}"));
    match request {
        EXPORT => {
            let request = serde_json::from_value::<memloop::ExportRequest>(arguments)
                .map_err(|e| ToolError(format!("export: {e}")))?;
            let json = serde_json::to_value(memory.export_request(&request)?)
                .map_err(|e| ToolError(e.to_string()))?;
            Ok(Reply {
                text: json.to_string(),
                structured: json,
            })
        }
        CHECK => check_on(memory)
            .map_err(failed)
            .and_then(|c| match c.problems {
                Some(problems) => Err(ToolError(format!("{}\n{problems}", c.text))),
                None => Ok(Reply {
                    text: c.text,
                    structured: c.json,
                }),
            }),
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
    let report = memory.check()?;
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
