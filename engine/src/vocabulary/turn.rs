//! A turn of a conversation, as callers give it and the extractor reads it.

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Who spoke (not empty).
    pub speaker: String,
    /// What they said.
    pub text: String,
    /// When, ms since the Unix epoch.
    pub time: Timestamp,
}

impl Turn {
    /// A turn of `speaker` at `time` (ms).
    pub fn new(speaker: impl Into<String>, text: impl Into<String>, time: Timestamp) -> Turn {
        Turn {
            speaker: speaker.into(),
            text: text.into(),
            time,
        }
    }
}
