//! What a cue step is ([`CueStep`]) and what it reads of a query ([`Asked`]): every cue's
//! file implements the one trait; `cues.rs` lists them in recall's order.

use crate::clock::Timestamp;
use crate::vocabulary::{Cue, Cues, Hit};

use super::time_cues::TimeCues;

/// What the cue steps read of a query.
pub(super) struct Asked<'a> {
    /// The query's text.
    pub(super) text: &'a str,
    /// The time it asks about (its `as_of`, or now).
    pub(super) reference: Timestamp,
    /// The time it names (empty when the `time` cue is off).
    pub(super) time: &'a TimeCues,
    /// The cues on.
    pub(super) cues: Cues,
}

/// A cue as one step over the ranked pool.
pub(super) trait CueStep: Sync {
    /// The cue it is (the step runs only when it is on).
    fn cue(&self) -> Cue;
    /// Raises or re-orders `hits` (ranked best first) for the query, explaining each change;
    /// leaves them as they are when the query does not call for the cue.
    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]);
}
