//! The forgetting state of a store: one kinetic queue per namespace and user (least retained
//! first, for capacity eviction) and two deadline indexes (θ1 demotions, θ2 deletions).
//!
//! Fixed thresholds are per-item deadlines in closed form, so tier changes need no kinetic
//! ordering: an ordered set of (deadline, id) fires them. The queues answer "who is least
//! retained now", which depends on all items at once.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap, FxHashSet};

use super::kinetic::KineticQueue;
use super::policy::{DecayFields, ForgetPolicy};
use crate::clock::Timestamp;
use crate::item::MemoryId;

/// Why a memory moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForgetReason {
    /// Retention fell below θ1: working → long-term.
    Demoted,
    /// Retention fell below θ2: deleted.
    Decayed,
    /// Over capacity, and the least retained: deleted.
    Evicted,
    /// What it says stopped holding (its `valid_until` passed): working → long-term, however
    /// well retained.
    Expired,
}

/// One planned move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Move {
    pub(crate) id: MemoryId,
    pub(crate) reason: ForgetReason,
    pub(crate) value: f64,
    pub(crate) threshold: f64,
}

/// Which queue a memory waits in: its namespace and user (interned names; the catalog's
/// "no name" for a memory of no user).
type Partition = (u32, u32);

/// Live memories per group (a namespace, a user) and the groups over a capacity, kept as
/// memories come and go: a write asks whether any group is over in O(1), and a sweep visits
/// only the groups that are.
#[derive(Debug, Default)]
pub(crate) struct GroupCounts {
    counts: FxHashMap<u32, usize>,
    over: FxHashSet<u32>,
    cap: Option<usize>,
}

impl GroupCounts {
    /// Counts against `cap` (none: no group is ever over).
    pub(crate) fn new(cap: Option<usize>) -> Self {
        GroupCounts {
            cap,
            ..GroupCounts::default()
        }
    }

    /// One more memory in `group`.
    pub(crate) fn add(&mut self, group: u32) {
        let n = self.counts.entry(group).or_default();
        *n += 1;
        if self.cap.is_some_and(|c| *n > c) {
            self.over.insert(group);
        }
    }

    /// One memory fewer in `group`.
    pub(crate) fn sub(&mut self, group: u32) {
        let Some(n) = self.counts.get_mut(&group) else {
            return;
        };
        *n -= 1;
        if self.cap.is_none_or(|c| *n <= c) {
            self.over.remove(&group);
        }
        if *n == 0 {
            self.counts.remove(&group);
        }
    }

    fn count(&self, group: u32) -> usize {
        self.counts.get(&group).copied().unwrap_or(0)
    }
}

/// The catalog's counts of live memories: in all, per namespace, per user (memories of no user
/// are counted in no user's group).
pub(crate) struct Counts<'a> {
    pub(crate) live: usize,
    pub(crate) namespaces: &'a GroupCounts,
    pub(crate) users: &'a GroupCounts,
}

/// A sweep of one scope: which memories are in it, and its user, if it names one.
pub(crate) struct ScopeSweep<'a> {
    pub(crate) holds: &'a dyn Fn(MemoryId) -> bool,
    pub(crate) user: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    namespace: u32,
    user: u32,
    fields: DecayFields,
    demote_at: Option<Timestamp>,
    forget_at: Option<Timestamp>,
}

/// Queues and deadlines of every memory.
#[derive(Debug)]
pub(crate) struct Forgetting {
    pub(crate) policy: ForgetPolicy,
    queues: FxHashMap<Partition, KineticQueue>,
    demote_at: BTreeSet<(Timestamp, MemoryId)>,
    forget_at: BTreeSet<(Timestamp, MemoryId)>,
    entries: FxHashMap<MemoryId, Entry>,
    start: f64,
}

impl Forgetting {
    pub(crate) fn new(policy: ForgetPolicy, now: Timestamp) -> Self {
        Forgetting {
            policy,
            queues: FxHashMap::default(),
            demote_at: BTreeSet::new(),
            forget_at: BTreeSet::new(),
            entries: FxHashMap::default(),
            start: now as f64 / 1000.0,
        }
    }

    /// Adds or replaces memory `id`.
    pub(crate) fn upsert(&mut self, id: MemoryId, namespace: u32, user: u32, fields: DecayFields) {
        self.remove(id);
        if !self.policy.enabled || fields.pinned {
            return;
        }
        let p = &self.policy;
        let demote_at = p.leaves_working(&fields);
        let forget_at = p.crossing_of(&fields, p.forget_threshold);
        if let Some(t) = demote_at {
            self.demote_at.insert((t, id));
        }
        if let Some(t) = forget_at {
            self.forget_at.insert((t, id));
        }
        let line = p.line(&fields);
        let start = self.start;
        let q = self
            .queues
            .entry((namespace, user))
            .or_insert_with(|| KineticQueue::new(start));
        // Lines and times are finite by construction (validated policy, clamped weights).
        let _ = q.set_line(id.get(), line);
        self.entries.insert(
            id,
            Entry {
                namespace,
                user,
                fields,
                demote_at,
                forget_at,
            },
        );
    }

    /// Drops memory `id`.
    pub(crate) fn remove(&mut self, id: MemoryId) {
        if let Some(e) = self.entries.remove(&id) {
            if let Some(t) = e.demote_at {
                self.demote_at.remove(&(t, id));
            }
            if let Some(t) = e.forget_at {
                self.forget_at.remove(&(t, id));
            }
            if let Some(q) = self.queues.get_mut(&(e.namespace, e.user)) {
                q.remove(id.get());
            }
        }
    }

    /// True if a sweep at `now` would move something (cheap: two first elements and counts).
    pub(crate) fn due(&self, now: Timestamp, counts: &Counts<'_>) -> bool {
        let first = |s: &BTreeSet<(Timestamp, MemoryId)>| s.first().is_some_and(|&(t, _)| t <= now);
        first(&self.demote_at)
            || first(&self.forget_at)
            || self.policy.capacity.is_some_and(|c| counts.live > c)
            || !counts.namespaces.over.is_empty()
            || !counts.users.over.is_empty()
    }

    /// What a sweep at `now` does: deletions past θ2, demotions past θ1, then evictions of
    /// the least retained while over capacity (per user, per namespace, then store-wide).
    /// Evicted items leave the queues here; the caller removes the rest after committing.
    ///
    /// A sweep of one scope (`only`) applies the deadlines to that scope's memories and the
    /// per-user capacity to its user, if it names one; the namespace and store-wide
    /// capacities span scopes, so only a whole sweep applies them.
    pub(crate) fn plan(
        &mut self,
        now: Timestamp,
        counts: &Counts<'_>,
        only: Option<ScopeSweep<'_>>,
    ) -> Vec<Move> {
        let p = self.policy.clone();
        let in_scope = |id: MemoryId| only.as_ref().is_none_or(|o| (o.holds)(id));
        let mut moves = Vec::new();
        let mut gone = FxHashSet::default();
        for &(_, id) in self.forget_at.range(..=(now, MemoryId::END)) {
            if !in_scope(id) {
                continue;
            }
            let e = &self.entries[&id];
            moves.push(Move {
                id,
                reason: ForgetReason::Decayed,
                value: p.retention_of(&e.fields, now),
                threshold: p.forget_threshold,
            });
            gone.insert(id);
        }
        for &(_, id) in self.demote_at.range(..=(now, MemoryId::END)) {
            if gone.contains(&id) || !in_scope(id) {
                continue;
            }
            let e = &self.entries[&id];
            let value = p.retention_of(&e.fields, now);
            let expired = value >= p.working_threshold
                && e.fields.valid_until.is_some_and(|until| until <= now);
            moves.push(Move {
                id,
                reason: if expired {
                    ForgetReason::Expired
                } else {
                    ForgetReason::Demoted
                },
                value,
                threshold: p.working_threshold,
            });
        }
        let t = now as f64 / 1000.0;
        for q in self.queues.values_mut() {
            let _ = q.advance(t.max(q.now()));
        }
        for id in &gone {
            let e = self.entries[id];
            if let Some(q) = self.queues.get_mut(&(e.namespace, e.user)) {
                q.remove(id.get());
            }
        }
        // Per user: the users over capacity, or the scope's own user if it is.
        if let Some(cap) = p.capacity_per_user {
            let users: Vec<u32> = match &only {
                None => counts.users.over.iter().copied().collect(),
                Some(o) => o
                    .user
                    .filter(|u| counts.users.over.contains(u))
                    .into_iter()
                    .collect(),
            };
            for user in users {
                let n = counts.users.count(user);
                self.evict_over(&mut moves, n, cap, now, |&(_, u)| u == user);
            }
        }
        if only.is_some() {
            return moves;
        }
        if let Some(cap) = p.capacity_per_namespace {
            let namespaces: Vec<u32> = counts.namespaces.over.iter().copied().collect();
            for ns in namespaces {
                let n = counts.namespaces.count(ns);
                self.evict_over(&mut moves, n, cap, now, |&(q_ns, _)| q_ns == ns);
            }
        }
        if let Some(cap) = p.capacity {
            self.evict_over(&mut moves, counts.live, cap, now, |_| true);
        }
        moves
    }

    /// Evicts the least retained of the queues `group` selects until the `n` memories they
    /// hold, less those `moves` already deletes, are at most `cap`.
    fn evict_over(
        &mut self,
        moves: &mut Vec<Move>,
        n: usize,
        cap: usize,
        now: Timestamp,
        group: impl Fn(&Partition) -> bool,
    ) {
        let gone_here = moves
            .iter()
            .filter(|m| {
                !matches!(m.reason, ForgetReason::Demoted | ForgetReason::Expired)
                    && self
                        .entries
                        .get(&m.id)
                        .is_some_and(|e| group(&(e.namespace, e.user)))
            })
            .count();
        let mut n = n.saturating_sub(gone_here);
        while n > cap {
            let lowest = self
                .queues
                .iter()
                .filter(|(k, _)| group(k))
                .filter_map(|(k, q)| q.peek_min().map(|(_, v)| (*k, v)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let Some((key, _)) = lowest else { break };
            let Some((id, _)) = self.queues.get_mut(&key).and_then(KineticQueue::pop_min) else {
                break;
            };
            let value = self
                .entries
                .get(&MemoryId::new(id))
                .map_or(0.0, |e| self.policy.retention_of(&e.fields, now));
            moves.push(Move {
                id: MemoryId::new(id),
                reason: ForgetReason::Evicted,
                value,
                threshold: cap as f64,
            });
            n -= 1;
        }
    }
}
