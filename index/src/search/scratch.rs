//! Reusable per-thread search state, so a search allocates nothing once warm.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A (similarity, node) pair ordered by similarity, then node id (a total order, no NaN issues).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scored {
    pub sim: f32,
    pub node: u32,
}

impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sim
            .total_cmp(&other.sim)
            .then(other.node.cmp(&self.node))
    }
}

/// Buffers reused across searches: a visited set (epoch-stamped, cleared in O(1)), the two
/// heaps of the layer search, the neighbour buffer. Pass one per thread to
/// [`crate::Index::search_with`]; [`crate::Index::search`] keeps one per thread for you.
#[derive(Default)]
pub struct SearchScratch {
    /// Epoch stamps (u16 keeps the array small enough to stay in cache on large graphs).
    visited: Vec<u16>,
    epoch: u16,
    pub(crate) candidates: BinaryHeap<Scored>,
    pub(crate) results: BinaryHeap<Reverse<Scored>>,
    pub(crate) links: Vec<u32>,
}

impl std::fmt::Debug for SearchScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchScratch")
            .field("capacity", &self.visited.len())
            .finish()
    }
}

impl SearchScratch {
    /// An empty scratch; it grows to the index size on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a new visit over `n` nodes.
    pub(crate) fn begin(&mut self, n: usize) {
        if self.visited.len() < n {
            self.visited.resize(n + n / 4 + 64, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.visited.iter_mut().for_each(|v| *v = 0);
            self.epoch = 1;
        }
        self.candidates.clear();
        self.results.clear();
    }

    /// Hints the CPU to load the visited stamps of `nodes`.
    #[inline]
    pub(crate) fn prefetch_visited(&self, nodes: &[u32]) {
        for &n in nodes {
            if let Some(v) = self.visited.get(n as usize) {
                crate::simd::prefetch_bytes(std::slice::from_ref(v));
            }
        }
    }

    /// Marks `node` visited; true if it was not visited before in this search.
    #[inline]
    pub(crate) fn visit(&mut self, node: u32) -> bool {
        match self.visited.get_mut(node as usize) {
            Some(v) if *v != self.epoch => {
                *v = self.epoch;
                true
            }
            _ => false,
        }
    }
}
