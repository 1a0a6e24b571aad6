//! What only a peer on the socket may ask the serving process, beside the MCP tools: a backup
//! (`memloop export`) and a check (`memloop check`), so neither needs the agent holding the
//! store stopped. Not MCP tools: a model has no business writing files on the host.

use std::path::PathBuf;

use anyhow::{bail, Result};
use memloop::{Memory, MemoryFilter, Scope};
use serde_json::{json, Value};

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
        EXPORT => serde_json::from_value::<ExportRequest>(arguments)
            .map_err(|e| ToolError(format!("export: {e}")))
            .and_then(|a| export_on(memory, &a).map_err(failed))
            .map(|json| Reply {
                text: json.to_string(),
                structured: json,
            }),
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

/// What `memloop export` asks for.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportRequest {
    /// The file to write.
    pub path: PathBuf,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only this user's memories.
    pub user: Option<String>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Only this session's.
    pub session: Option<String>,
    /// `mlx`, `arrow` or `parquet`.
    pub format: String,
    /// With arrow or parquet: only what changed after this sequence number.
    pub since: Option<u64>,
}

/// Runs an export on an open store (here, or in the process serving it) and returns what the
/// command prints.
pub fn export_on(memory: &Memory, a: &ExportRequest) -> Result<Value> {
    let filter = MemoryFilter {
        namespace: a.namespace.clone(),
        ..Default::default()
    }
    .scope(Scope {
        user: a.user.clone(),
        agent: a.agent.clone(),
        session: a.session.clone(),
    });
    Ok(match memloop::ColumnarFormat::parse(&a.format) {
        None if a.since.is_some() => bail!("--since needs --format arrow or parquet"),
        None => json!({ "exported": memory.export(&a.path, &filter)?, "path": a.path }),
        Some(format) => {
            let r = memory.export_changes(&a.path, a.since, &filter, format)?;
            json!({ "exported": r.upserts + r.deletes, "upserts": r.upserts, "deletes": r.deletes,
                    "since": r.since, "through": r.through, "next_since": r.through,
                    "bytes": r.bytes, "path": a.path })
        }
    })
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
