//! The beam of a layer search: the nodes still to expand and the best accepted nodes found.
//!
//! Two ways to hold it, one search loop ([`super::layer::search_layer`]):
//! - [`Pool`]: one array sorted best first (the "linear pool" of NSG and glass). The candidates
//!   worth expanding are exactly the nodes scoring above the `ef`-th best accepted one, which
//!   are the results themselves, so one array of about `ef` entries holds both, with a mark on
//!   those already expanded. An insert is a binary search and a short move; the next candidate
//!   is the first unmarked entry. For searches that reject few nodes: unfiltered searches
//!   (which reject only tombstones) and graph construction.
//! - [`Heaps`]: a max-heap of candidates and a min-heap of the `ef` best accepted nodes
//!   (Malkov & Yashunin, Algorithm 2). For filtered searches: while fewer than `ef` nodes are
//!   accepted every node scored is a candidate, so the candidates can outnumber `ef` by the
//!   inverse of the filter's pass rate, where sorted inserts would cost their length each.
//!
//! Both keep the same set: the `ef` best accepted nodes by [`Scored`]'s order, and they stop
//! once no candidate scores above the worst of those.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::scored::Scored;

/// The frontier and results of one layer search.
pub(crate) trait Beam {
    /// Empties the beam for a search of width `ef`.
    fn begin(&mut self, ef: usize);
    /// Whether a node scoring `sim` enters the beam: fewer than `ef` accepted nodes yet, or
    /// better than the worst of them.
    fn admits(&self, sim: f32) -> bool;
    /// Adds a node that [`Beam::admits`]; `accepted` if it may be a result.
    fn offer(&mut self, sc: Scored, accepted: bool);
    /// The best node not yet expanded, marked expanded; `None` when the search is done.
    fn next(&mut self) -> Option<Scored>;
    /// The peek at the next candidate's node, for prefetching its links.
    fn peek(&self) -> Option<u32>;
    /// The accepted nodes, best first (at most `ef`).
    fn results(&mut self) -> Vec<Scored>;
}

/// One entry of a [`Pool`].
#[derive(Debug, Clone, Copy)]
struct Entry {
    sc: Scored,
    accepted: bool,
    expanded: bool,
}

/// The beam as one sorted array (see the module docs).
///
/// Invariants: `entries` is sorted best first; it holds every node offered that scores above
/// the `ef`-th best accepted one (all of them while fewer than `ef` are accepted); `accepted`
/// counts its accepted entries and is at most `ef`, and when it is `ef` the last entry is
/// accepted (the worst result); every entry before `next` is expanded.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    entries: Vec<Entry>,
    ef: usize,
    accepted: usize,
    next: usize,
}

impl Beam for Pool {
    fn begin(&mut self, ef: usize) {
        self.entries.clear();
        self.ef = ef.max(1);
        self.accepted = 0;
        self.next = 0;
    }

    #[inline]
    fn admits(&self, sim: f32) -> bool {
        self.accepted < self.ef || self.entries.last().is_some_and(|w| sim > w.sc.sim)
    }

    #[inline]
    fn offer(&mut self, sc: Scored, accepted: bool) {
        let at = self.entries.partition_point(|e| e.sc > sc);
        self.entries.insert(
            at,
            Entry {
                sc,
                accepted,
                expanded: false,
            },
        );
        self.next = self.next.min(at);
        if accepted {
            self.accepted += 1;
            if self.accepted > self.ef {
                // The old worst result (the last entry) leaves.
                self.entries.pop();
                self.accepted -= 1;
            }
        }
        if self.accepted == self.ef {
            // Rejected nodes below the worst result will never be expanded.
            while self.entries.last().is_some_and(|e| !e.accepted) {
                self.entries.pop();
            }
        }
        self.next = self.next.min(self.entries.len());
    }

    #[inline]
    fn next(&mut self) -> Option<Scored> {
        let e = self.entries.get_mut(self.next)?;
        e.expanded = true;
        let sc = e.sc;
        self.next += 1;
        while self.entries.get(self.next).is_some_and(|e| e.expanded) {
            self.next += 1;
        }
        Some(sc)
    }

    #[inline]
    fn peek(&self) -> Option<u32> {
        self.entries.get(self.next).map(|e| e.sc.node)
    }

    fn results(&mut self) -> Vec<Scored> {
        self.entries
            .iter()
            .filter(|e| e.accepted)
            .map(|e| e.sc)
            .collect()
    }
}

/// The beam as two binary heaps (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Heaps {
    candidates: BinaryHeap<Scored>,
    results: BinaryHeap<Reverse<Scored>>,
    ef: usize,
}

impl Heaps {
    fn worst(&self) -> f32 {
        self.results.peek().map_or(f32::NEG_INFINITY, |r| r.0.sim)
    }
}

impl Beam for Heaps {
    fn begin(&mut self, ef: usize) {
        self.candidates.clear();
        self.results.clear();
        self.ef = ef.max(1);
    }

    #[inline]
    fn admits(&self, sim: f32) -> bool {
        self.results.len() < self.ef || sim > self.worst()
    }

    #[inline]
    fn offer(&mut self, sc: Scored, accepted: bool) {
        self.candidates.push(sc);
        if accepted {
            if self.results.len() < self.ef {
                self.results.push(Reverse(sc));
            } else if let Some(mut worst) = self.results.peek_mut() {
                // Full, and this one beats the worst: it takes the worst's place (one sift
                // down where a push and a pop made two; the same set).
                *worst = Reverse(sc);
            }
        }
    }

    #[inline]
    fn next(&mut self) -> Option<Scored> {
        let c = self.candidates.pop()?;
        match self.results.peek() {
            Some(worst) if self.results.len() >= self.ef && c < worst.0 => None,
            _ => Some(c),
        }
    }

    #[inline]
    fn peek(&self) -> Option<u32> {
        self.candidates.peek().map(|c| c.node)
    }

    fn results(&mut self) -> Vec<Scored> {
        let mut out: Vec<Scored> = self.results.drain().map(|r| r.0).collect();
        out.sort_unstable_by(|a, b| b.cmp(a));
        out
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Runs one beam over a fixed sequence of offers and expansions.
    fn drive(beam: &mut impl Beam, ef: usize, ops: &[(f32, bool)]) -> (Vec<Scored>, Vec<u32>) {
        beam.begin(ef);
        let mut expanded = Vec::new();
        for (node, &(sim, accepted)) in ops.iter().enumerate() {
            if node % 3 == 2 {
                match beam.next() {
                    Some(c) => expanded.push(c.node),
                    None => break,
                }
            }
            if beam.admits(sim) {
                beam.offer(
                    Scored {
                        sim,
                        node: node as u32,
                    },
                    accepted,
                );
            }
        }
        while let Some(c) = beam.next() {
            expanded.push(c.node);
        }
        (beam.results(), expanded)
    }

    proptest! {
        /// The pool expands the same nodes in the same order and returns the same results as
        /// the two heaps, whatever is offered and rejected.
        #[test]
        fn pool_and_heaps_agree(
            ef in 1usize..12,
            ops in proptest::collection::vec(((0u8..40), proptest::bool::weighted(0.8)), 0..120),
        ) {
            let ops: Vec<(f32, bool)> =
                ops.into_iter().map(|(s, a)| (f32::from(s) / 40.0, a)).collect();
            let pool = drive(&mut Pool::default(), ef, &ops);
            let heaps = drive(&mut Heaps::default(), ef, &ops);
            prop_assert_eq!(pool, heaps);
        }
    }

    #[test]
    fn the_pool_keeps_the_best_accepted_and_drops_rejected_nodes_below_them() {
        let mut p = Pool::default();
        p.begin(2);
        let sc = |sim, node| Scored { sim, node };
        p.offer(sc(0.5, 0), true);
        p.offer(sc(0.9, 1), false);
        p.offer(sc(0.1, 2), false);
        assert!(p.admits(0.0), "fewer than ef accepted: every node enters");
        p.offer(sc(0.3, 3), true);
        // Two accepted now: the rejected node at 0.1, below the worst result, is gone.
        assert!(!p.admits(0.2));
        assert_eq!(p.entries.len(), 3);
        p.offer(sc(0.7, 4), true);
        assert_eq!(p.results(), vec![sc(0.7, 4), sc(0.5, 0)]);
        assert_eq!(p.next(), Some(sc(0.9, 1)));
        assert_eq!(p.next(), Some(sc(0.7, 4)));
        assert_eq!(p.next(), Some(sc(0.5, 0)));
        assert_eq!(p.next(), None);
    }
}
