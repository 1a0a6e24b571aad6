//! What a command asks of a store, typed: the request a command builds ([`Asked`]: an
//! operation of the registry, or `memloop check`), run here or sent to the process serving the
//! store (`forward.rs`), and printed by `output.rs` from the same value.

pub use crate::share::Asked;

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
}
