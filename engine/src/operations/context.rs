//! `context`: a context under a token budget.

use crate::context::Context as Assembled;
use crate::error::Result;
use crate::memory::Memory;
use crate::vocabulary::{ContextParams, Door};

use super::operate::Operate;

/// [`super::Operation::Context`].
pub(super) struct Context;

impl Operate for Context {
    const NAME: &'static str = "context";
    const DOC: &'static str = "Assemble the memories relevant to a query into text ready to \
        paste into a prompt, never over `budget` tokens: the most relevant in full, the rest \
        shortened. `mode: documents` gives the source documents instead.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = true;
    type Request = ContextParams;
    type Answer = Assembled;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, request: ContextParams) -> Result<Assembled> {
        memory.context(&request.into_request()?)
    }

    fn text(_: &ContextParams, context: &Assembled) -> String {
        if context.text.is_empty() {
            "No memory is relevant.".to_string()
        } else {
            context.text.clone()
        }
    }
}
