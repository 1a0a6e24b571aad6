//! A time as a request names it: text (RFC 3339, or Unix seconds) or an integer of
//! milliseconds, read the same by every request that takes one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::invalid::InvalidInput;

/// A time a request names: text (RFC 3339, or Unix seconds) or an integer of milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum When {
    /// Milliseconds since the Unix epoch.
    Millis(Timestamp),
    /// RFC 3339 (`2024-05-01T00:00:00Z`) or Unix seconds (`1714521600`).
    Text(String),
}

impl When {
    /// The time in milliseconds, or the typed error naming `field`.
    pub fn millis(&self, field: &'static str) -> std::result::Result<Timestamp, InvalidInput> {
        let text = match self {
            When::Millis(ms) => return Ok(*ms),
            When::Text(text) => text.trim(),
        };
        let parsed = match text.parse::<i64>() {
            Ok(secs) => secs.checked_mul(1000),
            Err(_) => crate::time::parse_rfc3339(text),
        };
        parsed.ok_or_else(|| InvalidInput::Time {
            field,
            text: text.to_string(),
        })
    }
}
