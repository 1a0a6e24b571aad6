//! `feedback`: how much a memory helped.

use crate::error::Result;
use crate::memory::Memory;
use crate::retrieve::FeedbackState;
use crate::vocabulary::{Door, FeedbackRequest};

use super::operate::Operate;

/// [`super::Operation::Feedback`].
pub(super) struct Feedback;

impl Operate for Feedback {
    const NAME: &'static str = "feedback";
    const DOC: &'static str = "Rate how much a memory helped (1 harmful, 2 useless, 3 somewhat \
        useful, 4 useful, 5 decisive). Useful memories are kept longer and served in more \
        detail.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = false;
    type Request = FeedbackRequest;
    /// The memory's feedback so far.
    type Answer = FeedbackState;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, request: FeedbackRequest) -> Result<FeedbackState> {
        memory
            .scoped(&request.scope())
            .feedback(request.id, request.level)
    }

    fn text(request: &FeedbackRequest, state: &FeedbackState) -> String {
        format!(
            "Feedback {} recorded for memory {} ({} so far).",
            request.level, request.id, state.count
        )
    }
}
