//! The model of a replica the property test runs (`super::tests`): every device's changes
//! joined into one state, by the merge rules of `super` and nothing else. A pull applies the
//! same rules to the store's rows (`crate::sync`), so what the test shows of the model holds
//! of them.

use std::collections::{BTreeMap, BTreeSet};

use super::{erases, scope_fields, setting_wins, Counts, DeviceId, ErasedScope, Hlc};
use crate::clock::Timestamp;

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
    /// Its scope: user, agent and session (what an erasure names).
    pub(crate) scope: ErasedScope,
    /// When it was created on the device that made it, by [`created_after`] (what an
    /// erasure's bound is weighed against).
    pub(crate) created: Timestamp,
    /// Its content: text, kind, vector, … (sealed in transit).
    pub(crate) body: B,
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
    /// Every version of `scope` created at or before `at` was erased ([`erases`]).
    Erase {
        /// What it erased.
        scope: ErasedScope,
        /// Its bound, by [`erasure_bound`].
        at: Timestamp,
    },
}

/// What sync knows of a store: every change seen, joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replica<B, M> {
    versions: BTreeMap<GlobalId, Version<B>>,
    meta: BTreeMap<GlobalId, (Hlc, M)>,
    counts: BTreeMap<(GlobalId, DeviceId), Counts>,
    forgotten: BTreeMap<GlobalId, Hlc>,
    erased: BTreeMap<ErasedScope, Timestamp>,
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
                Some((had, _)) if !setting_wins(*at, *had) => false,
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
            Change::Erase { scope, at } => join_max(&mut self.erased, scope.clone(), *at),
        }
    }

    /// True when version `v` is gone: forgotten, or taken by an erasure ([`erases`]).
    fn gone(&self, v: &Version<B>) -> bool {
        self.forgotten.contains_key(&v.id)
            || self.erased.iter().any(|(scope, at)| {
                erases(scope_fields(scope), *at, scope_fields(&v.scope), v.created)
            })
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

    /// The tombstones: versions forgotten, and the scopes erased with their bounds.
    pub(crate) fn tombstones(&self) -> (BTreeSet<GlobalId>, &BTreeMap<ErasedScope, Timestamp>) {
        (self.forgotten.keys().copied().collect(), &self.erased)
    }
}

/// Keeps the later of `at` and what `map` holds for `key`; true when that was news.
fn join_max<K: Ord, T: Ord + Copy>(map: &mut BTreeMap<K, T>, key: K, at: T) -> bool {
    match map.get(&key) {
        Some(had) if *had >= at => false,
        _ => {
            map.insert(key, at);
            true
        }
    }
}
