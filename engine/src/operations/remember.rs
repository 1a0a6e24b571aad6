//! `remember`: store one memory.

use crate::error::Result;
use crate::memory::Memory;
use crate::remember::dedup::{RememberAction, Remembered};
use crate::vocabulary::{Door, RememberRequest};

use super::operate::{Operate, INSPECTOR_LOOKS};

/// [`super::Operation::Remember`].
pub(super) struct Remember;

impl Operate for Remember {
    const NAME: &'static str = "remember";
    const DOC: &'static str = "Store one memory for later conversations: a fact, a decision, a \
        preference, an observation. Give the full text; optionally a concise and a brief \
        version (served when space is short), a kind (fact, triple, chunk, …), tags, a \
        namespace and an importance. Repeating the same text merges into the existing memory; \
        a fact that says something new about the same thing replaces the old version (kept as \
        history). Returns the memory's id.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = false;
    type Request = RememberRequest;
    type Answer = Remembered;

    fn absent_from(door: Door) -> Option<&'static str> {
        (door == Door::Inspector).then_some(INSPECTOR_LOOKS)
    }

    fn run(memory: &Memory, request: RememberRequest) -> Result<Remembered> {
        memory.remember_explained(request.into_new_memory()?)
    }

    fn text(_: &RememberRequest, done: &Remembered) -> String {
        let how = match done.action {
            RememberAction::Merged => "merged into the memory that already said this".to_string(),
            RememberAction::Superseded { previous } => {
                format!("a new version replacing memory {previous} (kept as history)")
            }
            RememberAction::New => "a new memory".to_string(),
        };
        format!("Remembered as memory {}: {how}.", done.id)
    }
}
