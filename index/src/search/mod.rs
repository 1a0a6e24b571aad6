//! k-nearest-neighbour search: greedy descent through the upper layers, beam search on level 0,
//! optional filter with exact-scan fallback.

pub(crate) mod beam;
pub(crate) mod filter;
pub(crate) mod layer;
pub(crate) mod scored;
pub(crate) mod scorer;
pub(crate) mod scratch;

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub use filter::{Filter, IdFilter};
use scored::Scored;
use scorer::{rescore, rescore_len, Bf16, Exact, Int8, Nibble, Probe, Scorer};
pub use scratch::SearchScratch;

use crate::encoding::VectorEncoding;
use crate::error::Result;
use crate::graph::store::View;
use crate::unit::{check_dim, UnitVector};
use crate::Index;

/// One search result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// External id.
    pub id: u64,
    /// Inner product with the (normalised) query, in [-1, 1]; higher is closer.
    pub score: f32,
}

/// Exact similarities from f32 vectors the caller keeps, for [`Index::search_rescored`]: an
/// int8 index keeps only its codes (a caller's store usually holds the f32 vectors already),
/// and ranks on them within their quantisation error.
pub trait Rescore {
    /// The inner products of `query` with the f32 vectors of `ids`, in their order: one entry
    /// per id, `None` where the caller has no vector (that candidate keeps its code's score).
    fn exact(&self, ids: &[u64], query: &[f32]) -> Vec<Option<f32>>;
}

thread_local! {
    static SCRATCH: RefCell<SearchScratch> = RefCell::new(SearchScratch::new());
}

/// Runs `f` with this thread's scratch (a fresh one if it is in use, e.g. re-entered from a
/// filter that searches).
fn with_thread_scratch<R>(f: impl FnOnce(&mut SearchScratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut SearchScratch::new()),
    })
}

impl Index {
    /// The `k` nearest live items to `query` with beam width `ef` (raised to `k` if smaller).
    ///
    /// Uses a per-thread scratch.
    ///
    /// # Errors
    /// [`crate::IndexError::DimensionMismatch`] or [`crate::IndexError::InvalidVector`] for a
    /// bad query.
    pub fn search(&self, query: &UnitVector, k: usize, ef: usize) -> Result<Vec<Hit>> {
        with_thread_scratch(|s| self.search_with(query, k, ef, None, s))
    }

    /// Like [`Index::search`], returning only items that `filter` allows.
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search_filtered(
        &self,
        query: &UnitVector,
        k: usize,
        ef: usize,
        filter: &dyn Filter,
    ) -> Result<Vec<Hit>> {
        with_thread_scratch(|s| self.search_with(query, k, ef, Some(filter), s))
    }

    /// The general search: caller-provided scratch, optional filter.
    ///
    /// When the filter passes less than [`crate::Params::exact_below`] of the live items, the
    /// passing items are scanned exactly instead (see `search::filter`).
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search_with(
        &self,
        query: &UnitVector,
        k: usize,
        ef: usize,
        filter: Option<&dyn Filter>,
        scratch: &mut SearchScratch,
    ) -> Result<Vec<Hit>> {
        check_dim(self.params.dim, query.len())?;
        let q = query.as_slice();
        // The entry point is read before the view is taken: a concurrent insert can make a
        // new node the entry, and a view taken earlier would not contain it (its links would
        // look empty and the search would stop at it).
        let entry = self.entry();
        let view = self.store.view();
        let out = if k == 0 {
            Vec::new()
        } else {
            match filter {
                // Live count from this view: a second `view()` here would take the read lock
                // recursively, which can deadlock behind a waiting writer.
                Some(f)
                    if filter::pass_fraction(&view, f, view.live()) < self.params.exact_below =>
                {
                    self.exact_scan(&view, q, k, f)
                }
                _ => self.graph_search(&view, entry, q, k, ef.max(k), filter, scratch),
            }
        };
        Ok(out)
    }

    /// [`Index::search_with`], then, in an int8 index, its best `2k` (at least `k + 8`)
    /// candidates re-scored by `rescore` and the top `k` of them kept: the ranking of an f32
    /// index from a quarter of its bytes. f32 and bf16 indexes already score exactly and
    /// ignore `rescore`.
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search_rescored(
        &self,
        query: &UnitVector,
        k: usize,
        ef: usize,
        filter: Option<&dyn Filter>,
        rescore: &dyn Rescore,
    ) -> Result<Vec<Hit>> {
        let search = |k| with_thread_scratch(|s| self.search_with(query, k, ef, filter, s));
        if self.params.vectors != VectorEncoding::Int8 {
            return search(k);
        }
        let mut hits = search(rescore_len(k))?;
        let ids: Vec<u64> = hits.iter().map(|h| h.id).collect();
        for (h, exact) in hits.iter_mut().zip(rescore.exact(&ids, query.as_slice())) {
            if let Some(exact) = exact {
                h.score = exact;
            }
        }
        hits.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        hits.truncate(k);
        Ok(hits)
    }

    /// The graph walk with the scorer of this index's encoding; a bf16 index's best candidates
    /// are re-scored exactly, and every candidate of an int8 index's walk (on the high planes
    /// of its codes) on the whole codes, before the top `k` are taken.
    #[allow(clippy::too_many_arguments)] // the hot path, called from one place
    fn graph_search(
        &self,
        view: &View<'_>,
        entry: Option<(u32, usize)>,
        q: &[f32],
        k: usize,
        ef: usize,
        filter: Option<&dyn Filter>,
        s: &mut SearchScratch,
    ) -> Vec<Hit> {
        let Some(entry) = entry else {
            return Vec::new();
        };
        let dot = self.dot;
        let found = match self.params.vectors {
            VectorEncoding::F32 => walk(view, &Exact { q, dot }, entry, ef, filter, s),
            VectorEncoding::Bf16 => rescore(
                view,
                &Exact { q, dot },
                walk(view, &Bf16::new(q), entry, ef, filter, s),
                rescore_len(k),
                k,
            ),
            VectorEncoding::Int8 => rescore(
                view,
                &Int8::new(q),
                walk(view, &Nibble::new(q), entry, ef, filter, s),
                usize::MAX,
                k,
            ),
        };
        found
            .into_iter()
            .take(k)
            .map(|sc| Hit {
                id: view.ext(sc.node),
                score: sc.sim,
            })
            .collect()
    }

    /// Exact top-k over the items `filter` passes (exact on the codes, for an int8 index).
    fn exact_scan(&self, view: &View<'_>, q: &[f32], k: usize, filter: &dyn Filter) -> Vec<Hit> {
        let probe = Probe::of_vector(q, self.params.vectors, self.dot);
        let mut heap: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(k + 1);
        let mut offer = |node: u32| {
            let sc = Scored {
                sim: probe.sim(view, node),
                node,
            };
            if heap.len() < k {
                heap.push(Reverse(sc));
            } else if heap.peek().is_some_and(|w| sc > w.0) {
                heap.pop();
                heap.push(Reverse(sc));
            }
        };
        match filter.allowed_ids() {
            Some(ids) => view.for_each_found(ids, &mut offer),
            None => (0..view.len())
                .filter(|&n| !view.is_deleted(n) && filter.allows(view.ext(n)))
                .for_each(&mut offer),
        }
        let mut hits: Vec<Scored> = heap.into_iter().map(|r| r.0).collect();
        hits.sort_unstable_by(|a, b| b.cmp(a));
        hits.into_iter()
            .map(|sc| Hit {
                id: view.ext(sc.node),
                score: sc.sim,
            })
            .collect()
    }

    /// Exact top-k by brute force over every live item (the ground truth for recall tests; on
    /// the codes of an int8 index, which keeps no f32 vectors).
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search_exact(&self, query: &UnitVector, k: usize) -> Result<Vec<Hit>> {
        check_dim(self.params.dim, query.len())?;
        let all = |_: u64| true;
        let view = self.store.view();
        Ok(self.exact_scan(&view, query, k, &all))
    }
}

/// Greedy descent from `entry` to level 1, then the beam search of width `ef` on level 0
/// (accepting only live nodes the filter allows), scored by `scorer`.
fn walk(
    view: &View<'_>,
    scorer: &impl Scorer,
    (ep, top): (u32, usize),
    ef: usize,
    filter: Option<&dyn Filter>,
    s: &mut SearchScratch,
) -> Vec<Scored> {
    let mut links = std::mem::take(&mut s.links);
    let mut cur = Scored {
        sim: scorer.sim(view, ep),
        node: ep,
    };
    for level in (1..=top).rev() {
        cur = layer::greedy(view, scorer, cur, level, &mut links);
    }
    s.links = links;
    match filter {
        None => layer::search_layer(view, scorer, &[cur], ef, 0, s, |n| !view.is_deleted(n)),
        Some(f) => layer::search_layer_filtered(view, scorer, &[cur], ef, s, |n| {
            !view.is_deleted(n) && f.allows(view.ext(n))
        }),
    }
}
