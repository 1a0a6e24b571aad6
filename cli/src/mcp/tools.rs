//! The registry's operations as calls on the engine: [`call`] parses one operation's request
//! (`memloop::Request::parse`), runs it through `Memory::call_told` and returns the registry's
//! answer as JSON beside the operation's own text for a model. The same function serves an MCP client in
//! process, a peer forwarding through the shared store's socket and the CLI opening the store
//! itself, so an operation answers the same bytes wherever the store is held.

use memloop::{Error, Memory, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a tool returns: text for the model, the registry's answer as JSON for programs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// Readable text.
    pub text: String,
    /// The answer, as JSON (`structuredContent`, `--json`).
    pub structured: Value,
}

/// A tool refused its arguments or the engine failed; the message names what was wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError(pub String);

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Error> for ToolError {
    /// The engine's message with its stable code, as every door reports it.
    fn from(e: Error) -> Self {
        ToolError(format!("{e} (error code {})", e.code().name()))
    }
}

/// A tool's outcome.
pub type ToolResult = Result<Reply, ToolError>;

/// Runs operation `name` with `arguments` on `memory`.
pub fn call(memory: &Memory, name: &str, arguments: Value) -> ToolResult {
    run(
        memory,
        Request::parse(name, arguments).map_err(Error::from)?,
    )
}

/// Runs `request` on `memory`.
pub fn run(memory: &Memory, request: Request) -> ToolResult {
    let told = memory.call_told(request)?;
    Ok(Reply {
        text: told.text,
        structured: told.answer.to_json(),
    })
}
