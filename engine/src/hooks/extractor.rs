//! The [`Extractor`] hook: turns of a conversation in, facts and triples out (an LLM behind
//! it, or nothing: by default no extractor runs).

use crate::error::Result;
use crate::item::NewMemory;
use crate::vocabulary::Turn;

/// A memory drawn from one turn of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    /// The turn it comes from: an index into the turns the extractor was given.
    pub turn: usize,
    /// What to remember (a [`crate::Kind::Fact`] or [`crate::Kind::Triple`], usually). The
    /// engine sources it to the turn, puts it in the conversation's scope and, unless it says
    /// otherwise, makes it valid from the turn's time.
    pub memory: NewMemory,
}

/// Turns new turns of a conversation into facts and triples, each sourced to its turn. Set in
/// [`crate::Hooks::extractor`]; called by [`crate::Memory::remember_conversation`] before
/// anything is written, so an error stores nothing.
pub trait Extractor: Send + Sync {
    /// The memories to draw from `turns`, the new turns of `session`.
    ///
    /// # Errors
    /// Any error aborts the call that asked and is returned to its caller.
    fn extract(&self, session: &str, turns: &[Turn]) -> Result<Vec<Extracted>>;
}
