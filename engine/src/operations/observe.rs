//! `observe`: an event about a subject.

use crate::error::Result;
use crate::item::MemoryId;
use crate::memory::Memory;
use crate::vocabulary::{Door, ObserveRequest};

use super::operate::{Operate, INSPECTOR_LOOKS};

/// `observe`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Observed {
    /// The subject's memory.
    pub id: MemoryId,
}

/// [`super::Operation::Observe`].
pub(super) struct Observe;

impl Operate for Observe {
    const NAME: &'static str = "observe";
    const DOC: &'static str = "Record an event about a subject (a file, a service): created, \
        modified, executed or deleted, with its content or output. The subject keeps one \
        memory, updated.";
    const SCOPED: bool = false;
    const READS_ONLY: bool = false;
    type Request = ObserveRequest;
    type Answer = Observed;

    fn absent_from(door: Door) -> Option<&'static str> {
        (door == Door::Inspector).then_some(INSPECTOR_LOOKS)
    }

    fn run(memory: &Memory, request: ObserveRequest) -> Result<Observed> {
        let event = request.event()?;
        Ok(Observed {
            id: memory.observe(&request.subject, event, request.content.as_deref())?,
        })
    }

    fn text(request: &ObserveRequest, observed: &Observed) -> String {
        format!(
            "Observed: {} {} (memory {}).",
            request.subject, request.event, observed.id
        )
    }
}
