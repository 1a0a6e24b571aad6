//! The memory id: what names a memory in a store, at every door and in every key.

use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// A memory's id, unique within a store, never reused. Ids grow in the order memories are
/// made but need not be consecutive (a large batch's memory that merges after all leaves the
/// id it was indexed under unused).
///
/// A type of its own so that an id is never taken for a count, a time or an index position:
/// it is made from a number where one comes in ([`MemoryId::new`], `From<u64>`: what a door
/// reads from its caller) and read back as one where it leaves ([`MemoryId::get`],
/// `From<MemoryId> for u64`). It serialises as the bare number (JSON, the answer shapes and
/// their schemas are unchanged) and encodes as one in the store (bincode, the same bytes as
/// a `u64`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    Encode,
    Decode,
)]
#[serde(transparent)]
pub struct MemoryId(u64);

impl MemoryId {
    /// The id with this number. Any number makes an id; one above [`MAX_ID`] names no memory
    /// a store ever holds (a lookup finds nothing).
    pub const fn new(raw: u64) -> MemoryId {
        MemoryId(raw)
    }

    /// No memory: ids start at 1, so 0 names none (a sync entry's local id for a memory this
    /// store does not hold, a foreign id that cannot be kept).
    pub(crate) const NONE: MemoryId = MemoryId(0);

    /// Above every id a store can hold: the end of an open range of ids, never a memory's.
    pub(crate) const END: MemoryId = MemoryId(u64::MAX);

    /// The id's number, as the doors and the store's keys carry it.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl From<u64> for MemoryId {
    fn from(raw: u64) -> MemoryId {
        MemoryId(raw)
    }
}

impl From<MemoryId> for u64 {
    fn from(id: MemoryId) -> u64 {
        id.0
    }
}

impl std::fmt::Display for MemoryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::str::FromStr for MemoryId {
    type Err = std::num::ParseIntError;

    fn from_str(text: &str) -> Result<MemoryId, Self::Err> {
        text.parse().map(MemoryId)
    }
}

/// A run of consecutive ids as a store allocates them: from `start` up to, not including,
/// `end`. Iterates over its ids in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct IdRange {
    /// The first id of the run.
    pub(crate) start: MemoryId,
    /// The id after the last.
    pub(crate) end: MemoryId,
}

impl Iterator for IdRange {
    type Item = MemoryId;

    fn next(&mut self) -> Option<MemoryId> {
        (self.start < self.end).then(|| {
            let id = self.start;
            self.start = MemoryId(id.0 + 1);
            id
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.end.0.saturating_sub(self.start.0)).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// The largest id a memory can have, 2^53 − 1: every id is exact as a JavaScript number or a
/// JSON double. A store allocates ids in creation order up to it and refuses to go past (ids
/// never wrap round onto stored memories); an import keeps a foreign id only up to it.
pub const MAX_ID: MemoryId = MemoryId((1 << 53) - 1);
