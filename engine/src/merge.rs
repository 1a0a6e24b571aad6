//! The merge rules of sync (docs/sync.md), pure: what every device's changes become once
//! they meet, whatever order they meet in. The rules are the code that runs: the memory
//! handle stamps a new memory by [`created_after`], an erasure takes its bound from
//! [`erasure_bound`] and what it takes from [`erases`], a pull joins counters by
//! [`Counts::join`] and settles metadata by [`setting_wins`]; the model of a replica that the
//! property test runs (`merge/model.rs`, `merge/tests.rs`) is built from the same functions.
//!
//! A replica's sync state is a join-semilattice: applying one change is
//! commutative, associative and idempotent, so replicas that have seen the same changes hold
//! the same state, in whatever order, however often, and through whichever devices they came.
//! What recall sees is a function of that state alone:
//! - a version of a memory is immutable and kept once it exists (union): an update makes a
//!   new version of the same lineage;
//! - of a lineage's live versions, the one made last (by hybrid logical clock, the device id
//!   breaking ties) is current and the others are its history, never dropped;
//! - feedback and reinforcement are per-device counters (each device only raises its own),
//!   and a memory's count is their sum;
//! - `forget(id)` is a tombstone that beats every copy of that version, whenever it arrives;
//! - erasing a scope (a user, an agent, a session, or any of them together) takes every
//!   version of it created at or before the erasure's bound, wherever it was made; a version
//!   created after it (a new life) stays. The bound is the eraser's clock, or the newest
//!   thing it erased if that is later (a device whose clock ran ahead made it), and a device
//!   that has seen an erasure creates what it writes in its scope after the bound, so what
//!   the eraser held is taken and what was written after it was seen is not, whatever the
//!   clocks say;
//! - decay state and tier are not merged: each device recomputes them from this view.

use crate::clock::Timestamp;
use crate::item::{fields_of, scope_covers};

/// A scope an erasure names: user, agent and session, each named or not (each named must
/// match; at least one is named).
pub(crate) type ErasedScope = [Option<String>; 3];

/// An erasure as the rules weigh it: its scope and its bound (ms since the Unix epoch).
pub(crate) type ErasureBound = (ErasedScope, Timestamp);

/// The scope's three fields as [`scope_covers`] reads them.
pub(crate) fn scope_fields(scope: &ErasedScope) -> [Option<&str>; 3] {
    let [u, a, s] = scope;
    fields_of(u, a, s)
}

/// Whether an erasure of `scope` bound at `at` takes a version of scope `has` created at
/// `created`: the scope covers it and it was created at or before the bound.
pub(crate) fn erases(
    scope: [Option<&str>; 3],
    at: Timestamp,
    has: [Option<&str>; 3],
    created: Timestamp,
) -> bool {
    scope_covers(scope, has) && created <= at
}

/// The creation time of a version written now (`now`, this device's clock) in scope `has`:
/// `now`, or just after the bound of every erasure of its scope this device has seen, if
/// later (an erasure made on a device whose clock runs ahead), so that no erasure seen
/// before a write takes it.
pub(crate) fn created_after(
    now: Timestamp,
    seen: &[ErasureBound],
    has: [Option<&str>; 3],
) -> Timestamp {
    seen.iter()
        .filter(|(scope, _)| scope_covers(scope_fields(scope), has))
        .fold(now, |t, (_, at)| t.max(at.saturating_add(1)))
}

/// The bound of an erasure made now (`now`, the eraser's clock) whose scope holds, on the
/// eraser, nothing newer than `newest` (its memories' creation times, and for a user the
/// time of their newest key): the later of the two, so everything the eraser held is taken.
pub(crate) fn erasure_bound(now: Timestamp, newest: Timestamp) -> Timestamp {
    now.max(newest)
}

/// Whether the erasures `seen` destroyed `user`'s data key stamped `since` (the time it was
/// made): an erasure of the whole user destroys every key of theirs made at or before its
/// bound, the ones it never held too (a key another device made earlier, learned later), and
/// keeps the keys made after it (the user's new life).
pub(crate) fn key_erased(seen: &[ErasureBound], user: &str, since: Timestamp) -> bool {
    seen.iter().any(|([u, a, s], at)| {
        u.as_deref() == Some(user) && a.is_none() && s.is_none() && since <= *at
    })
}

/// Whether a setting of a version's metadata made at `at` replaces the one made at `had`:
/// the later one wins (the hybrid logical clock orders every two settings).
pub(crate) fn setting_wins(at: Hlc, had: Hlc) -> bool {
    at > had
}

/// A device's id: random, registered in the remote so that no two devices hold the same one.
pub(crate) type DeviceId = u64;

/// A hybrid logical clock reading (Kulkarni et al., "Logical physical clocks", 2014): the
/// wall clock in ms as this device last knew it, a counter for changes within one such
/// millisecond, and the device. Ordered by the three in turn: a total order every device
/// agrees on, which follows causality (a change made after seeing another orders after it)
/// even between devices whose clocks disagree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Hlc {
    /// Milliseconds since the Unix epoch.
    pub(crate) wall: i64,
    /// Changes within the same `wall`.
    pub(crate) counter: u32,
    /// The device that read it.
    pub(crate) device: DeviceId,
}

/// One device's hybrid logical clock.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HlcClock {
    last: Hlc,
}

impl HlcClock {
    /// The clock of `device`, last at `last` (its stored reading, or the default).
    pub(crate) fn new(device: DeviceId, last: Hlc) -> HlcClock {
        HlcClock {
            last: Hlc { device, ..last },
        }
    }

    /// The reading for a change made now, `wall_now` being the device's wall clock: later
    /// than every reading this clock gave or saw.
    pub(crate) fn tick(&mut self, wall_now: i64) -> Hlc {
        let wall = self.last.wall.max(wall_now);
        let counter = if wall == self.last.wall {
            self.last.counter.saturating_add(1)
        } else {
            0
        };
        self.last = Hlc {
            wall,
            counter,
            device: self.last.device,
        };
        self.last
    }

    /// Takes in a reading `seen` from another device (a change pulled), so that every change
    /// made here later orders after it.
    pub(crate) fn observe(&mut self, seen: Hlc, wall_now: i64) {
        let wall = self.last.wall.max(seen.wall).max(wall_now);
        let counter = match (wall == self.last.wall, wall == seen.wall) {
            (true, true) => self.last.counter.max(seen.counter),
            (true, false) => self.last.counter,
            (false, true) => seen.counter,
            (false, false) => 0,
        };
        self.last = Hlc {
            wall,
            counter,
            device: self.last.device,
        };
    }

    /// The last reading given or seen.
    pub(crate) fn last(&self) -> Hlc {
        self.last
    }
}

/// A device's totals for one version: each only ever grows, and only its device raises it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Feedback calls.
    pub(crate) feedback: u32,
    /// The sum of their levels.
    pub(crate) level_sum: u32,
    /// Reinforcements by recall.
    pub(crate) reinforced: u32,
}

impl Counts {
    /// The larger of each total (the later of two readings of one device's counters).
    pub(crate) fn join(self, other: Counts) -> Counts {
        Counts {
            feedback: self.feedback.max(other.feedback),
            level_sum: self.level_sum.max(other.level_sum),
            reinforced: self.reinforced.max(other.reinforced),
        }
    }

    /// Both added (two devices' counters of one version).
    pub(crate) fn add(self, other: Counts) -> Counts {
        Counts {
            feedback: self.feedback.saturating_add(other.feedback),
            level_sum: self.level_sum.saturating_add(other.level_sum),
            reinforced: self.reinforced.saturating_add(other.reinforced),
        }
    }
}

#[cfg(test)]
mod model;
#[cfg(test)]
mod tests;
