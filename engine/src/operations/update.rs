//! `update`: a new version of a memory, or new metadata.

use crate::error::Result;
use crate::item::MemoryId;
use crate::memory::Memory;
use crate::vocabulary::{Door, UpdateRequest};

use super::operate::Operate;

/// `update`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Updated {
    /// The memory that now holds it: the same id, or the new version's.
    pub id: MemoryId,
    /// The version it replaced, kept as history (`null` for a change in place).
    pub previous: Option<MemoryId>,
}

/// [`super::Operation::Update`].
pub(super) struct Update;

impl Operate for Update {
    const NAME: &'static str = "update";
    const DOC: &'static str = "Change a memory: a new text makes a new version (the old one \
        is kept as history, its validity ending where the new one begins: `valid_from`, \
        default now); tags, importance, pinning and the shorter versions change in place. \
        Returns the id that now holds it.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = false;
    type Request = UpdateRequest;
    type Answer = Updated;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, request: UpdateRequest) -> Result<Updated> {
        let given = request.id;
        let (scope, changes) = request.into_update()?;
        let id = memory.scoped(&scope).update(given, changes)?;
        Ok(Updated {
            id,
            previous: (id != given).then_some(given),
        })
    }

    fn text(_: &UpdateRequest, updated: &Updated) -> String {
        match updated.previous {
            None => format!("Memory {} updated in place.", updated.id),
            Some(given) => format!(
                "Memory {} is the new version; {given} is kept as history, valid until it began.",
                updated.id
            ),
        }
    }
}
