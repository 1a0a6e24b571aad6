//! The doors into the engine, and the request of an operation that takes no fields. The
//! operations themselves, one file each, stand on the top floor (`crate::operations`), above
//! the feature folders that carry them out.

use serde::{Deserialize, Serialize};

/// A way into the engine. Each door's casing convention aside (camelCase in Node), every door
/// carrying an operation takes its request and returns its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Door {
    /// The Rust API ([`crate::Memory::call`] and the typed methods).
    Rust,
    /// The command line (`--json`), opening the store or forwarding to the process serving it.
    Cli,
    /// MCP tools, over stdio and HTTP.
    Mcp,
    /// The socket of a shared store, which the CLI forwards to.
    Socket,
    /// The inspector's actions (`memloop ui`).
    Inspector,
    /// The C ABI's `memloop_call`.
    C,
    /// Python's `Memory.call` and methods.
    Python,
    /// Node's `memory.call` and methods.
    Node,
}

impl Door {
    /// Every door.
    pub const ALL: [Door; 8] = [
        Door::Rust,
        Door::Cli,
        Door::Mcp,
        Door::Socket,
        Door::Inspector,
        Door::C,
        Door::Python,
        Door::Node,
    ];
}

/// `stats`: no fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}
