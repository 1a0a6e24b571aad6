//! Reusable per-thread search state, so a search allocates nothing once warm.

use super::beam::{Heaps, Pool};

/// Buffers reused across searches: a visited set, the beams of the layer search (a sorted pool
/// for unfiltered searches and graph construction, two heaps for filtered ones; see
/// `search::beam`), the neighbour buffer. Pass one per thread to
/// [`crate::Index::search_with`]; [`crate::Index::search`] keeps one per thread for you.
#[derive(Default)]
pub struct SearchScratch {
    pub(crate) visited: Visited,
    pub(crate) pool: Pool,
    pub(crate) heaps: Heaps,
    pub(crate) links: Vec<u32>,
}

impl std::fmt::Debug for SearchScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchScratch")
            .field("capacity", &self.visited.stamps.len())
            .finish()
    }
}

impl SearchScratch {
    /// An empty scratch; it grows to the index size on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The nodes one search has met: epoch stamps, cleared in O(1).
#[derive(Default)]
pub(crate) struct Visited {
    /// Epoch stamps (u16 keeps the array small enough to stay in cache on large graphs).
    stamps: Vec<u16>,
    epoch: u16,
}

impl Visited {
    /// Starts a new visit over `n` nodes.
    pub(crate) fn begin(&mut self, n: usize) {
        if self.stamps.len() < n {
            self.stamps.resize(n + n / 4 + 64, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamps.iter_mut().for_each(|v| *v = 0);
            self.epoch = 1;
        }
    }

    /// Hints the CPU to load the stamps of `nodes`.
    #[inline]
    pub(crate) fn prefetch(&self, nodes: &[u32]) {
        for &n in nodes {
            if let Some(v) = self.stamps.get(n as usize) {
                crate::simd::prefetch_bytes(std::slice::from_ref(v));
            }
        }
    }

    /// Marks `node` visited; true if it was not visited before in this search.
    #[inline]
    pub(crate) fn visit(&mut self, node: u32) -> bool {
        match self.stamps.get_mut(node as usize) {
            Some(v) if *v != self.epoch => {
                *v = self.epoch;
                true
            }
            _ => false,
        }
    }
}
