//! What a command asks of a store, typed: the request a command builds, run here through
//! `Memory::call_told` or sent to the process serving the store (`forward.rs`), and printed by
//! `output.rs` from the same value.

use serde_json::Value;

/// What a command asks of a store, typed: run here, or sent to the process serving it.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// An operation of the registry.
    Operation(Box<memloop::Request>),
    /// `memloop check`, a request of the shared store's own (not an operation).
    Check,
}

/// A command as it is run here or sent to the process serving the store.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// What it asks.
    pub asked: Asked,
    /// Print the answer's JSON rather than its text.
    pub json: bool,
}

impl ToolCall {
    /// Operation `request`, its answer printed as JSON with `json`.
    pub fn operation(request: memloop::Request, json: bool) -> ToolCall {
        ToolCall {
            asked: Asked::Operation(Box::new(request)),
            json,
        }
    }

    /// Its name on the socket.
    pub fn name(&self) -> &'static str {
        match &self.asked {
            Asked::Operation(request) => request.operation().name(),
            Asked::Check => crate::share::CHECK,
        }
    }

    /// Its fields as the socket carries them.
    pub fn arguments(&self) -> Value {
        match &self.asked {
            Asked::Operation(request) => request.fields(),
            Asked::Check => Value::Null,
        }
    }
}
