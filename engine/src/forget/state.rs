//! The forgetting state of a store: one kinetic queue per namespace (least retained first,
//! for capacity eviction) and two deadline indexes (θ1 demotions, θ2 deletions).
//!
//! Fixed thresholds are per-item deadlines in closed form, so tier changes need no kinetic
//! ordering: an ordered set of (deadline, id) fires them. The queues answer "who is least
//! retained now", which depends on all items at once.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

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

#[derive(Debug, Clone, Copy)]
struct Entry {
    namespace: u32,
    fields: DecayFields,
    demote_at: Option<Timestamp>,
    forget_at: Option<Timestamp>,
}

/// Queues and deadlines of every memory.
#[derive(Debug)]
pub(crate) struct Forgetting {
    pub(crate) policy: ForgetPolicy,
    queues: FxHashMap<u32, KineticQueue>,
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
    pub(crate) fn upsert(&mut self, id: MemoryId, namespace: u32, fields: DecayFields) {
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
            .entry(namespace)
            .or_insert_with(|| KineticQueue::new(start));
        // Lines and times are finite by construction (validated policy, clamped weights).
        let _ = q.set_line(id, line);
        self.entries.insert(
            id,
            Entry {
                namespace,
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
            if let Some(q) = self.queues.get_mut(&e.namespace) {
                q.remove(id);
            }
        }
    }

    /// True if a sweep at `now` would move something (cheap: two first elements and counts).
    pub(crate) fn due(&self, now: Timestamp, live: usize, per_ns: &FxHashMap<u32, usize>) -> bool {
        let first = |s: &BTreeSet<(Timestamp, MemoryId)>| s.first().is_some_and(|&(t, _)| t <= now);
        first(&self.demote_at)
            || first(&self.forget_at)
            || self.policy.capacity.is_some_and(|c| live > c)
            || self
                .policy
                .capacity_per_namespace
                .is_some_and(|c| per_ns.values().any(|&n| n > c))
    }

    /// What a sweep at `now` does: deletions past θ2, demotions past θ1, then evictions of
    /// the least retained while over capacity (per namespace, then store-wide). Evicted items
    /// leave the queues here; the caller removes the rest after committing.
    pub(crate) fn plan(
        &mut self,
        now: Timestamp,
        live: usize,
        per_ns: &FxHashMap<u32, usize>,
    ) -> Vec<Move> {
        let p = self.policy.clone();
        let mut moves = Vec::new();
        let mut gone = rustc_hash::FxHashSet::default();
        for &(_, id) in self.forget_at.range(..=(now, MemoryId::MAX)) {
            let e = &self.entries[&id];
            moves.push(Move {
                id,
                reason: ForgetReason::Decayed,
                value: p.retention_of(&e.fields, now),
                threshold: p.forget_threshold,
            });
            gone.insert(id);
        }
        for &(_, id) in self.demote_at.range(..=(now, MemoryId::MAX)) {
            if !gone.contains(&id) {
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
        }
        let t = now as f64 / 1000.0;
        for q in self.queues.values_mut() {
            let _ = q.advance(t.max(q.now()));
        }
        for id in &gone {
            let ns = self.entries[id].namespace;
            if let Some(q) = self.queues.get_mut(&ns) {
                q.remove(*id);
            }
        }
        let evict = |q: &mut KineticQueue, moves: &mut Vec<Move>, threshold: f64| {
            let (id, _) = q.pop_min()?;
            let value = self
                .entries
                .get(&id)
                .map_or(0.0, |e| p.retention_of(&e.fields, now));
            moves.push(Move {
                id,
                reason: ForgetReason::Evicted,
                value,
                threshold,
            });
            Some(())
        };
        if let Some(cap) = p.capacity_per_namespace {
            for (&ns, q) in self.queues.iter_mut() {
                let gone_here = moves
                    .iter()
                    .filter(|m| {
                        m.reason != ForgetReason::Demoted
                            && self.entries.get(&m.id).is_some_and(|e| e.namespace == ns)
                    })
                    .count();
                let mut n = per_ns
                    .get(&ns)
                    .copied()
                    .unwrap_or(0)
                    .saturating_sub(gone_here);
                while n > cap && evict(q, &mut moves, cap as f64).is_some() {
                    n -= 1;
                }
            }
        }
        if let Some(cap) = p.capacity {
            let mut n = live.saturating_sub(
                moves
                    .iter()
                    .filter(|m| m.reason != ForgetReason::Demoted)
                    .count(),
            );
            while n > cap {
                let Some((&ns, _)) = self
                    .queues
                    .iter()
                    .filter_map(|(ns, q)| q.peek_min().map(|m| (ns, m)))
                    .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
                else {
                    break;
                };
                let q = self.queues.get_mut(&ns).expect("found above");
                if evict(q, &mut moves, cap as f64).is_none() {
                    break;
                }
                n -= 1;
            }
        }
        moves
    }
}
