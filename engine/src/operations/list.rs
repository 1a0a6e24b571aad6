//! `list`: the memories passing a filter, a page at a time.

use crate::error::Result;
use crate::item::MemoryItem;
use crate::memory::Memory;
use crate::vocabulary::{Door, ListRequest};

use super::operate::Operate;

/// `list`'s answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Listed {
    /// The memories of the page, by ascending id.
    pub memories: Vec<MemoryItem>,
}

/// [`super::Operation::List`].
pub(super) struct List;

impl Operate for List {
    const NAME: &'static str = "list";
    const DOC: &'static str = "The memories passing a filter (namespace, kinds, tags, scope), \
        oldest id first, a page at a time (`limit`, `offset`), with no query and no ranking.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = true;
    type Request = ListRequest;
    type Answer = Listed;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, request: ListRequest) -> Result<Listed> {
        Ok(Listed {
            memories: memory.advanced().list(&request)?,
        })
    }

    fn text(_: &ListRequest, listed: &Listed) -> String {
        if listed.memories.is_empty() {
            return "No memory passes the filter.".to_string();
        }
        listed
            .memories
            .iter()
            .map(|m| format!("[memory {}, {}] {}", m.id, m.kind.name(), m.text))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
