//! `forget`: one memory, or a whole scope, erased.

use crate::error::Result;
use crate::forget::ScopeErasure;
use crate::invalid::InvalidInput;
use crate::item::MemoryId;
use crate::memory::Memory;
use crate::vocabulary::{Door, ForgetRequest};

use super::operate::Operate;

/// `forget`'s answer for one memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Forgotten {
    /// The memory forgotten.
    pub id: MemoryId,
    /// Always true: a memory that could not be forgotten is an error.
    pub forgotten: bool,
}

/// `forget`'s answer: one memory forgotten, or a scope erased. It serialises as the inner
/// value alone.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ForgetAnswer {
    /// One memory.
    Forgotten(Forgotten),
    /// A scope, with its signed receipt.
    Erased(Box<ScopeErasure>),
}

/// [`super::Operation::Forget`].
pub(super) struct Forget;

impl Operate for Forget {
    const NAME: &'static str = "forget";
    const DOC: &'static str = "Delete one memory by id, for good; or erase everything of a \
        user, agent or session (give `user`, `agent` and/or `session` instead of `id`): their \
        memories are removed from every file of the store, and a signed receipt says so.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = false;
    type Request = ForgetRequest;
    type Answer = ForgetAnswer;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, request: ForgetRequest) -> Result<ForgetAnswer> {
        let scope = request.scope();
        match (request.id, scope.is_empty()) {
            // With a scope, the id must be a memory of that scope.
            (Some(id), _) => {
                memory.scoped(&scope).forget(id)?;
                Ok(ForgetAnswer::Forgotten(Forgotten {
                    id,
                    forgotten: true,
                }))
            }
            (None, false) => Ok(ForgetAnswer::Erased(Box::new(
                memory.scoped(&scope).erase()?,
            ))),
            (None, true) => Err(InvalidInput::Field {
                field: "id",
                reason: "give `id` (with a scope: a memory of that scope), or a scope alone to \
                         erase it"
                    .into(),
            }
            .into()),
        }
    }

    fn text(_: &ForgetRequest, answer: &ForgetAnswer) -> String {
        match answer {
            ForgetAnswer::Forgotten(f) => format!("Memory {} forgotten.", f.id),
            // The text carries the receipt's exact signed line (`receipt_line` in the
            // structured answer too): a client that saves either verifies; `receipt`
            // re-serialised by a JSON library may order its keys otherwise and not.
            ForgetAnswer::Erased(erased) => format!(
                "Erased {} memories of {} from every file of the store. Receipt (save this line \
                 as it is; `memloop receipt verify FILE` checks it):\n{}",
                erased.memories, erased.scope, erased.receipt_line
            ),
        }
    }
}
