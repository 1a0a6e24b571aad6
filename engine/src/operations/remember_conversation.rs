//! `remember_conversation`: the turns of a chat session.

use crate::conversation::ConversationReport;
use crate::error::Result;
use crate::memory::Memory;
use crate::vocabulary::{ConversationRequest, Door};

use super::operate::{Operate, INSPECTOR_LOOKS};

/// [`super::Operation::RememberConversation`].
pub(super) struct RememberConversation;

impl Operate for RememberConversation {
    const NAME: &'static str = "remember_conversation";
    const DOC: &'static str = "Store turns of a chat session, each with its speaker and time \
        (RFC 3339), so later questions such as \"when did Ana start the course?\" find what \
        was said and when. Later calls with the same session continue it; the session keeps a \
        summary. Returns the turns' ids and the summary's.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = false;
    type Request = ConversationRequest;
    type Answer = ConversationReport;

    fn absent_from(door: Door) -> Option<&'static str> {
        (door == Door::Inspector).then_some(INSPECTOR_LOOKS)
    }

    fn run(memory: &Memory, request: ConversationRequest) -> Result<ConversationReport> {
        let (session, turns, scope) = request.into_parts()?;
        memory.remember_conversation(&session, &turns, &scope)
    }

    fn text(_: &ConversationRequest, report: &ConversationReport) -> String {
        format!("Remembered {report}.")
    }
}
