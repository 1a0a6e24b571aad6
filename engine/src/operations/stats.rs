//! `stats`: counts of the store.

use crate::error::Result;
use crate::memory::{Memory, Stats as Counts};
use crate::vocabulary::{Door, NoFields};

use super::operate::Operate;

/// [`super::Operation::Stats`].
pub(super) struct Stats;

impl Operate for Stats {
    const NAME: &'static str = "stats";
    const DOC: &'static str = "Counts: memories, per tier, indexed, and the embedding model.";
    const SCOPED: bool = false;
    const READS_ONLY: bool = true;
    type Request = NoFields;
    type Answer = Box<Counts>;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, _: NoFields) -> Result<Box<Counts>> {
        Ok(Box::new(memory.stats()?))
    }

    fn text(_: &NoFields, s: &Box<Counts>) -> String {
        format!(
            "{} memories ({} working, {} long-term), {} indexed, model {}.",
            s.memories, s.working, s.long_term, s.indexed, s.model
        )
    }
}
