//! The requests that address one memory by id, as every door asks for them: a new version or
//! new metadata ([`UpdateRequest`], giving the engine's [`Update`]), feedback, forgetting
//! (one memory, or a whole scope), and the reads by id. Each names the scope the caller acts
//! in; a memory outside it is not found, as the engine's `*_in` calls enforce.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::when::When;
use crate::error::Result;
use crate::item::{MemoryId, Scope};

/// Changes to an existing memory; `None` fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    /// New original text: the memory is re-embedded, and the old version is kept as a
    /// superseded memory linked to the new one.
    pub text: Option<String>,
    /// New concise version.
    pub concise: Option<String>,
    /// New brief version.
    pub brief: Option<String>,
    /// Replaces the tags.
    pub tags: Option<Vec<String>>,
    /// New importance in [0, 1].
    pub importance: Option<f32>,
    /// Pin or unpin.
    pub pinned: Option<bool>,
    /// When what it says became true (ms). With a new text: the new version's start, where
    /// the old version's validity ends (default: now).
    pub valid_from: Option<crate::clock::Timestamp>,
    /// When it stopped being true (ms).
    pub valid_until: Option<crate::clock::Timestamp>,
}

/// `update`: a new version of a memory, or new metadata for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateRequest {
    /// The memory to change (its current version).
    pub id: MemoryId,
    /// The new text: a new version is made and the old one kept as history, its validity
    /// closed where the new one's begins.
    #[serde(default)]
    pub text: Option<String>,
    /// A new shorter version.
    #[serde(default)]
    pub concise: Option<String>,
    /// A new shortest version.
    #[serde(default)]
    pub brief: Option<String>,
    /// Replaces the tags.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// New importance, 0 to 1.
    #[serde(default)]
    pub importance: Option<f32>,
    /// Pin (never forget) or unpin.
    #[serde(default)]
    pub pinned: Option<bool>,
    /// When the new text became true (RFC 3339 or Unix seconds as text, milliseconds as an
    /// integer; default now): where the old version's validity ends.
    #[serde(default)]
    pub valid_from: Option<When>,
    /// When it stopped being true, if it did.
    #[serde(default)]
    pub valid_until: Option<When>,
    /// The scope the caller acts in: a memory outside it is not found.
    #[serde(flatten)]
    pub scope: Scope,
}

impl UpdateRequest {
    /// The scope the caller acts in, and the engine's changes.
    ///
    /// # Errors
    /// [`crate::InvalidInput`] for a time that is not one.
    pub fn into_update(self) -> Result<(Scope, Update)> {
        let time = |w: &Option<When>, field| w.as_ref().map(|w| w.millis(field)).transpose();
        let update = Update {
            valid_from: time(&self.valid_from, "valid_from")?,
            valid_until: time(&self.valid_until, "valid_until")?,
            text: self.text,
            concise: self.concise,
            brief: self.brief,
            tags: self.tags,
            importance: self.importance,
            pinned: self.pinned,
        };
        Ok((self.scope, update))
    }
}

/// `feedback`: how useful a memory was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackRequest {
    /// The memory rated.
    pub id: MemoryId,
    /// 1 (misleading) to 5 (essential): steers how fast it is forgotten and how much of it a
    /// context shows.
    pub level: u8,
    /// The scope the caller acts in: a memory outside it is not found.
    #[serde(flatten)]
    pub scope: Scope,
}

impl FeedbackRequest {
    /// The scope the caller acts in.
    pub fn scope(&self) -> Scope {
        self.scope.clone()
    }
}

/// `forget`: one memory by id, or everything of a user, agent or session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetRequest {
    /// The memory to forget; or leave it out and name a scope to erase all of it.
    #[serde(default)]
    pub id: Option<MemoryId>,
    /// The scope: with `id`, the scope the caller acts in (a memory outside it is not
    /// found); alone, the scope whose memories are all erased, from every file of the store
    /// (`user` with `agent`: that user's agent only).
    #[serde(flatten)]
    pub scope: Scope,
}

impl ForgetRequest {
    /// The scope named.
    pub fn scope(&self) -> Scope {
        self.scope.clone()
    }
}

/// `get` and `explain_decay`: one memory by id, within the caller's scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdRequest {
    /// The memory's id.
    pub id: MemoryId,
    /// The scope the caller acts in: a memory outside it is not found.
    #[serde(flatten)]
    pub scope: Scope,
}

impl IdRequest {
    /// The scope the caller acts in.
    pub fn scope(&self) -> Scope {
        self.scope.clone()
    }
}
