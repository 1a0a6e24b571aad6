//! The merge rules of sync (docs/sync.md), pure: what every device's changes become once
//! they meet, whatever order they meet in.
//!
//! A replica's sync state is a join-semilattice: [`Replica::apply`] of one change is
//! commutative, associative and idempotent, so replicas that have seen the same changes hold
//! the same state, in whatever order, however often, and through whichever devices they came.
//! What recall sees ([`Replica::view`]) is a function of that state alone:
//! - a version of a memory is immutable and kept once it exists (union): an update makes a
//!   new version of the same lineage;
//! - of a lineage's live versions, the one made last (by hybrid logical clock, the device id
//!   breaking ties) is current and the others are its history, never dropped;
//! - feedback and reinforcement are per-device counters (each device only raises its own),
//!   and a memory's count is their sum;
//! - `forget(id)` is a tombstone that beats every copy of that version, whenever it arrives;
//! - erasing a user tombstones every version of theirs made before the erasure, wherever it
//!   was made; a version made after it (a new life) stays;
//! - decay state and tier are not merged: each device recomputes them from this view.

use std::collections::{BTreeMap, BTreeSet};

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

/// A version's id in every replica: the device that made it and the id it had there. Local
/// ids are minted by each store as it likes; no two devices mint the same pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct GlobalId {
    /// The device that made it.
    pub(crate) origin: DeviceId,
    /// Its id in the origin's store.
    pub(crate) local: u64,
}

/// One version of a memory: immutable once made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version<B> {
    /// This version.
    pub(crate) id: GlobalId,
    /// The lineage it belongs to: the first version's id (its own for a new memory).
    pub(crate) lineage: GlobalId,
    /// When it was made.
    pub(crate) made: Hlc,
    /// The user it belongs to, if any (what an erasure names).
    pub(crate) user: Option<String>,
    /// Its content: text, kind, vector, … (sealed in transit).
    pub(crate) body: B,
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
    fn join(self, other: Counts) -> Counts {
        Counts {
            feedback: self.feedback.max(other.feedback),
            level_sum: self.level_sum.max(other.level_sum),
            reinforced: self.reinforced.max(other.reinforced),
        }
    }

    /// Both added (two devices' counters of one version).
    fn add(self, other: Counts) -> Counts {
        Counts {
            feedback: self.feedback.saturating_add(other.feedback),
            level_sum: self.level_sum.saturating_add(other.level_sum),
            reinforced: self.reinforced.saturating_add(other.reinforced),
        }
    }
}

/// One change as it travels between devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change<B, M> {
    /// A new version (a new memory, or an update of one).
    Version(Version<B>),
    /// A version's changeable metadata (tags, importance, pinned, validity's end) as set at
    /// `at`: the latest setting wins.
    Meta {
        /// The version.
        id: GlobalId,
        /// When it was set.
        at: Hlc,
        /// What it was set to.
        meta: M,
    },
    /// `device`'s counters of a version, as they stand.
    Counts {
        /// The version.
        id: GlobalId,
        /// Whose counters.
        device: DeviceId,
        /// Their totals.
        counts: Counts,
    },
    /// The version was forgotten (by a call or a sweep) at `at`.
    Forget {
        /// The version.
        id: GlobalId,
        /// When.
        at: Hlc,
    },
    /// Every version of `user` made before `at` was erased.
    Erase {
        /// The user.
        user: String,
        /// When.
        at: Hlc,
    },
}

/// What sync knows of a store: every change seen, joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replica<B, M> {
    versions: BTreeMap<GlobalId, Version<B>>,
    meta: BTreeMap<GlobalId, (Hlc, M)>,
    counts: BTreeMap<(GlobalId, DeviceId), Counts>,
    forgotten: BTreeMap<GlobalId, Hlc>,
    erased: BTreeMap<String, Hlc>,
}

impl<B, M> Default for Replica<B, M> {
    fn default() -> Self {
        Replica {
            versions: BTreeMap::new(),
            meta: BTreeMap::new(),
            counts: BTreeMap::new(),
            forgotten: BTreeMap::new(),
            erased: BTreeMap::new(),
        }
    }
}

/// One memory as recall sees it after a merge: its current version and its history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Merged<M> {
    /// The live version made last.
    pub(crate) current: GlobalId,
    /// The lineage's other live versions, oldest first.
    pub(crate) history: Vec<GlobalId>,
    /// The current version's metadata, if any was set.
    pub(crate) meta: Option<M>,
    /// The current version's counters, summed over the devices.
    pub(crate) counts: Counts,
}

impl<B: Clone + Eq, M: Clone + Eq> Replica<B, M> {
    /// Joins one change into the state. Commutative, associative and idempotent. Returns
    /// true when it changed the state (the change was news).
    pub(crate) fn apply(&mut self, change: &Change<B, M>) -> bool {
        match change {
            Change::Version(v) => match self.versions.get(&v.id) {
                // One id, one version: a second copy is the same one (the origin mints an id
                // once). A copy that differs is not believed over the first: the segment it
                // came in is signed, so only a device with the ring could make it.
                Some(_) => false,
                None => {
                    self.versions.insert(v.id, v.clone());
                    true
                }
            },
            Change::Meta { id, at, meta } => match self.meta.get(id) {
                Some((had, _)) if had >= at => false,
                _ => {
                    self.meta.insert(*id, (*at, meta.clone()));
                    true
                }
            },
            Change::Counts { id, device, counts } => {
                let slot = self.counts.entry((*id, *device)).or_default();
                let joined = slot.join(*counts);
                let news = joined != *slot;
                *slot = joined;
                news
            }
            Change::Forget { id, at } => join_max(&mut self.forgotten, *id, *at),
            Change::Erase { user, at } => join_max(&mut self.erased, user.clone(), *at),
        }
    }

    /// True when version `v` is gone: forgotten, or its user's erased after it was made.
    fn gone(&self, v: &Version<B>) -> bool {
        self.forgotten.contains_key(&v.id)
            || v.user
                .as_ref()
                .and_then(|u| self.erased.get(u))
                .is_some_and(|erased| v.made < *erased)
    }

    /// Every memory as recall sees it, by lineage.
    pub(crate) fn view(&self) -> BTreeMap<GlobalId, Merged<M>> {
        let mut lineages: BTreeMap<GlobalId, Vec<&Version<B>>> = BTreeMap::new();
        for v in self.versions.values().filter(|v| !self.gone(v)) {
            lineages.entry(v.lineage).or_default().push(v);
        }
        let mut out = BTreeMap::new();
        for (lineage, mut versions) in lineages {
            versions.sort_by_key(|v| (v.made, v.id));
            let Some(current) = versions.pop() else {
                continue;
            };
            let counts = self
                .counts
                .range((current.id, DeviceId::MIN)..=(current.id, DeviceId::MAX))
                .fold(Counts::default(), |sum, (_, c)| sum.add(*c));
            out.insert(
                lineage,
                Merged {
                    current: current.id,
                    history: versions.iter().map(|v| v.id).collect(),
                    meta: self.meta.get(&current.id).map(|(_, m)| m.clone()),
                    counts,
                },
            );
        }
        out
    }

    /// The version `id`, if this replica holds it (gone or not).
    pub(crate) fn version(&self, id: &GlobalId) -> Option<&Version<B>> {
        self.versions.get(id)
    }

    /// The tombstones: versions forgotten, and the users erased with when.
    pub(crate) fn tombstones(&self) -> (BTreeSet<GlobalId>, &BTreeMap<String, Hlc>) {
        (self.forgotten.keys().copied().collect(), &self.erased)
    }
}

/// Keeps the later of `at` and what `map` holds for `key`; true when that was news.
fn join_max<K: Ord>(map: &mut BTreeMap<K, Hlc>, key: K, at: Hlc) -> bool {
    match map.get(&key) {
        Some(had) if *had >= at => false,
        _ => {
            map.insert(key, at);
            true
        }
    }
}

#[cfg(test)]
mod tests;
