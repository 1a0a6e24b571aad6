//! Filters over external ids, and the choice between graph search and exact scan.
//!
//! A graph search under a filter that passes a fraction `p` of the items visits about `1/p`
//! times more nodes before it has `ef` accepted ones, and past some point an exact scan of the
//! passing items is both faster and exact. [`crate::Params::exact_below`] is that crossover,
//! measured by `ann-bench --filter-sweep` (BENCHMARKS.md). The pass fraction is known exactly for
//! an [`IdFilter`] and estimated for a predicate by evaluating it on a fixed sample of nodes.

use crate::graph::store::View;

/// Decides which external ids a search may return.
pub trait Filter: Sync {
    /// True if `id` may be returned.
    fn allows(&self, id: u64) -> bool;
    /// The exact set of allowed ids, when the filter has one; lets an exact scan touch only
    /// those items instead of every node.
    fn allowed_ids(&self) -> Option<&[u64]> {
        None
    }
}

impl<F: Fn(u64) -> bool + Sync> Filter for F {
    fn allows(&self, id: u64) -> bool {
        self(id)
    }
}

/// A filter that allows exactly a set of ids (sorted internally; lookups by binary search).
#[derive(Debug, Clone, Default)]
pub struct IdFilter {
    ids: Vec<u64>,
}

impl IdFilter {
    /// Allows exactly `ids` (duplicates are ignored).
    pub fn new(ids: impl IntoIterator<Item = u64>) -> Self {
        let mut ids: Vec<u64> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        IdFilter { ids }
    }
    /// Number of allowed ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    /// True if nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

impl Filter for IdFilter {
    fn allows(&self, id: u64) -> bool {
        self.ids.binary_search(&id).is_ok()
    }
    fn allowed_ids(&self) -> Option<&[u64]> {
        Some(&self.ids)
    }
}

/// Nodes sampled to estimate a predicate's pass fraction.
const SAMPLE: u32 = 256;

/// Fraction of live items `filter` passes: exact for id sets, sampled for predicates.
pub(crate) fn pass_fraction(view: &View<'_>, filter: &dyn Filter, live: usize) -> f32 {
    if let Some(ids) = filter.allowed_ids() {
        return ids.len() as f32 / live.max(1) as f32;
    }
    let n = view.len();
    if n == 0 {
        return 0.0;
    }
    let step = (n / SAMPLE).max(1);
    let (mut seen, mut passed) = (0u32, 0u32);
    let mut node = 0;
    while node < n {
        if !view.is_deleted(node) {
            seen += 1;
            passed += u32::from(filter.allows(view.ext(node)));
        }
        node += step;
    }
    if seen == 0 {
        0.0
    } else {
        passed as f32 / seen as f32
    }
}
