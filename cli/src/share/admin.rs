//! What only a peer on the socket may ask the serving process, beside the MCP tools: a backup
//! (`memloop export`) and a check (`memloop check`), so neither needs the agent holding the
//! store stopped. Not MCP tools: a model has no business writing files on the host.

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
        EXPORT => serde_json::from_value::<crate::commands::ExportArgs>(arguments)
            .map_err(|e| ToolError(format!("export: {e}")))
            .and_then(|a| crate::commands::export_on(memory, &a).map_err(failed))
            .map(|json| Reply {
                text: json.to_string(),
                structured: json,
            }),
        CHECK => crate::check::check_on(memory)
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
