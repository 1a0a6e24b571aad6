//! `get`: one memory by id.

use crate::error::{Error, Result};
use crate::item::MemoryItem;
use crate::memory::Memory;
use crate::vocabulary::{Door, IdRequest};

use super::operate::Operate;

/// [`super::Operation::Get`].
pub(super) struct Get;

impl Operate for Get {
    const NAME: &'static str = "get";
    const DOC: &'static str = "One memory by id, with all its fields.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = true;
    type Request = IdRequest;
    type Answer = Box<MemoryItem>;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, request: IdRequest) -> Result<Box<MemoryItem>> {
        let item = memory
            .scoped(&request.scope())
            .get(request.id)?
            .ok_or(Error::NotFound(request.id))?;
        Ok(Box::new(item))
    }

    fn text(_: &IdRequest, item: &Box<MemoryItem>) -> String {
        format!("Memory {} ({}): {}", item.id, item.kind.name(), item.text)
    }
}
