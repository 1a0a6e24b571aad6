//! `sweep`: demote and delete what faded.

use crate::error::Result;
use crate::forget::SweepReport;
use crate::item::Scope;
use crate::memory::Memory;
use crate::vocabulary::Door;

use super::operate::Operate;

/// [`super::Operation::Sweep`].
pub(super) struct Sweep;

impl Operate for Sweep {
    const NAME: &'static str = "sweep";
    const DOC: &'static str = "Move memories whose retention fell below the first threshold \
        to long-term storage and forget those below the second (of one user, agent or session \
        when one is named). Returns how many moved and how many were forgotten.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = false;
    /// The scope whose memories are swept (none: the whole store).
    type Request = Scope;
    type Answer = SweepReport;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, scope: Scope) -> Result<SweepReport> {
        memory.scoped(&scope).sweep()
    }

    fn text(_: &Scope, r: &SweepReport) -> String {
        format!(
            "Swept: {} moved to long-term storage, {} forgotten.",
            r.demoted, r.forgotten
        )
    }
}
