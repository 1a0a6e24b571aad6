//! `explain_decay`: a memory's retention and when it will move on.

use crate::error::Result;
use crate::forget::DecayReport;
use crate::memory::Memory;
use crate::vocabulary::{Door, IdRequest};

use super::operate::{Operate, INSPECTOR_LOOKS};

/// [`super::Operation::ExplainDecay`].
pub(super) struct ExplainDecay;

impl Operate for ExplainDecay {
    const NAME: &'static str = "explain_decay";
    const DOC: &'static str = "How well a memory is retained now, and when it will move to \
        long-term storage or be forgotten if unused.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = true;
    type Request = IdRequest;
    type Answer = Box<DecayReport>;

    fn absent_from(door: Door) -> Option<&'static str> {
        (door == Door::Inspector).then_some(INSPECTOR_LOOKS)
    }

    fn run(memory: &Memory, request: IdRequest) -> Result<Box<DecayReport>> {
        Ok(Box::new(
            memory.scoped(&request.scope()).explain_decay(request.id)?,
        ))
    }

    fn text(_: &IdRequest, report: &Box<DecayReport>) -> String {
        format!(
            "Memory {}: retention {:.3} now.\n{}",
            report.id,
            report.value,
            serde_json::to_string_pretty(report.as_ref()).unwrap_or_default()
        )
    }
}
