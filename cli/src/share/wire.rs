//! What peers of a shared store say to each other over its socket: one JSON line per request,
//! one per reply, in order.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::tools::{Reply, ToolError, ToolResult};

/// The protocol's version; a request of another version is refused with a message.
pub const VERSION: u32 = 1;

/// The greeting a peer sends first: answered by the serving process itself, not a tool.
pub const HELLO: &str = "hello";

/// The longest request line a serving process reads: a remember's text at the largest size a
/// memory may hold, with its other precisions and JSON escapes. With [`MAX_PEERS`] this
/// bounds what peers can make a server buffer.
pub const MAX_LINE_BYTES: usize = crate::lines::MAX_LINE_BYTES;

/// The longest reply a serving process sends; a longer one is replaced by an error that says
/// so (ask for fewer hits), never mistaken for a dead server.
pub const MAX_REPLY_BYTES: usize = 256 << 20;

/// Connections a serving process keeps at once; more are answered with an error and closed.
pub const MAX_PEERS: usize = 64;

/// The error a serving process answers while it closes the store: the request was not run,
/// so the peer sends it again to the next server.
pub const CLOSING: &str = "the serving process is closing the store";

/// A tool call forwarded to the serving process.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// [`VERSION`].
    pub v: u32,
    /// The tool.
    pub tool: String,
    /// Its arguments, as an MCP client sent them.
    #[serde(default)]
    pub arguments: Value,
}

/// The serving process's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// The tool ran.
    Ok(Reply),
    /// The tool refused its arguments or failed.
    Error(String),
}

impl From<ToolResult> for Response {
    fn from(r: ToolResult) -> Self {
        match r {
            Ok(reply) => Response::Ok(reply),
            Err(e) => Response::Error(e.0),
        }
    }
}

impl From<Response> for ToolResult {
    fn from(r: Response) -> Self {
        match r {
            Response::Ok(reply) => Ok(reply),
            Response::Error(e) => Err(ToolError(e)),
        }
    }
}
