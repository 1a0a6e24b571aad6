//! Vector search: the `k` nearest memories passing a filter, read back from the store.

use memloop_index::UnitVector;
use rustc_hash::FxHashSet;

use crate::clock::Timestamp;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::item::MemoryId;
use crate::memory::Memory;
use crate::vocabulary::{Explanation, Hit, Query};

/// Extra candidates searched while the catalog loads, to make up for superseded versions
/// dropped after the search.
const UNLOADED_MARGIN: usize = 16;

/// How many candidates whose validity began in the window a query names join from each index
/// (vector and lexical), past the strategy's own.
pub(super) const WINDOW_CANDIDATES: usize = 20;

impl Memory {
    /// The `k` nearest memories passing `filter`, best first, with their vector score and rank
    /// explained; no access is recorded. `k` was checked by the entry point.
    pub(crate) fn search_vector(
        &self,
        vector: &UnitVector,
        k: usize,
        filter: &MemoryFilter,
        ef: Option<usize>,
    ) -> Result<Vec<Hit>> {
        let ef = ef.unwrap_or(self.inner.options.recall_ef).max(k);
        let index = self.inner.verified_index()?;
        let cat = match self.inner.catalog.try_get() {
            Some(c) => c,
            // Right after open the catalog may still be loading; a recall without filters does
            // not wait for it (superseded versions are dropped after reading the items).
            None if filter.is_unrestricted() => {
                let found = self.index_search(&index, vector, k + UNLOADED_MARGIN, ef, None)?;
                return self.read_hits(found, k, filter);
            }
            None => self.inner.catalog.get()?,
        }
        .read();
        let Some(c) = cat.compile(filter) else {
            return Ok(Vec::new());
        };
        let allowed = |id: u64| cat.allows(&c, MemoryId::new(id));
        if cat.passes_all(&c) {
            let found = self.index_search(&index, vector, k, ef, None)?;
            let searched = found.len();
            let hits = self.read_hits(found, k, filter)?;
            // The store lacked some hits: memories forgotten since, or a large batch indexed
            // ahead of its commit (`remember/index_ahead.rs`). The catalog knows only
            // committed memories: searching under it fills the `k` places.
            if hits.len() == k || searched < k {
                return Ok(hits);
            }
        }
        let found = self.index_search(&index, vector, k, ef, Some(&allowed))?;
        self.read_hits(found, k, filter)
    }

    /// The `k` nearest memories passing the query's filter, and with a `window` (`[start,
    /// end)`, ms: the time the query names) the nearest [`WINDOW_CANDIDATES`] whose validity
    /// began in it, however far below the others they rank, for the time boost to lift.
    pub(crate) fn search_vector_and_window(
        &self,
        vector: &UnitVector,
        k: usize,
        query: &Query,
        window: Option<(Timestamp, Timestamp)>,
    ) -> Result<Vec<Hit>> {
        let mut hits = self.search_vector(vector, k, &query.filter, query.ef)?;
        if let Some(w) = window {
            let seen: FxHashSet<MemoryId> = hits.iter().map(|h| h.item.id).collect();
            let inside =
                self.search_vector_began_in(vector, WINDOW_CANDIDATES, &query.filter, query.ef, w)?;
            for mut h in inside.into_iter().filter(|h| !seen.contains(&h.item.id)) {
                h.explain.vector_rank = Some(hits.len());
                h.rank = hits.len();
                hits.push(h);
            }
        }
        Ok(hits)
    }

    /// The `k` nearest memories passing `filter` whose validity began in `window` (`[start,
    /// end)`, ms), best first, explained as [`Memory::search_vector`]'s; a window holding few
    /// memories is scanned exactly (the index's own choice).
    pub(crate) fn search_vector_began_in(
        &self,
        vector: &UnitVector,
        k: usize,
        filter: &MemoryFilter,
        ef: Option<usize>,
        window: (Timestamp, Timestamp),
    ) -> Result<Vec<Hit>> {
        let ef = ef.unwrap_or(self.inner.options.recall_ef).max(k);
        let index = self.inner.verified_index()?;
        let cat = self.inner.catalog.get()?.read();
        let Some(c) = cat.compile(filter) else {
            return Ok(Vec::new());
        };
        let allowed = |id: u64| {
            cat.allows(&c, MemoryId::new(id)) && cat.began_in(MemoryId::new(id), window.0, window.1)
        };
        let found = self.index_search(&index, vector, k, ef, Some(&allowed))?;
        self.read_hits(found, k, filter)
    }

    /// One search of the index (an int8 one re-scored on the store's vectors).
    fn index_search(
        &self,
        index: &memloop_index::Index,
        vector: &UnitVector,
        k: usize,
        ef: usize,
        filter: Option<&dyn memloop_index::Filter>,
    ) -> Result<Vec<memloop_index::Hit>> {
        super::rescore::search(index, &self.inner.store, vector, k, ef, filter)
    }

    /// The items of `found` the store holds that `filter` admits, best first, at most `k`.
    fn read_hits(
        &self,
        mut found: Vec<memloop_index::Hit>,
        k: usize,
        filter: &MemoryFilter,
    ) -> Result<Vec<Hit>> {
        // Equal scores rank by id, so two stores with the same memories rank them alike.
        found.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        let ids: Vec<MemoryId> = found.iter().map(|h| MemoryId::new(h.id)).collect();
        let mut items = self.inner.store.items(&ids)?.into_iter().peekable();
        let now = self.inner.now();
        let mut hits: Vec<Hit> = Vec::with_capacity(found.len());
        // Items forgotten between the search and the read are skipped; order is kept.
        for h in found {
            if hits.len() == k {
                break;
            }
            if items.peek().is_some_and(|i| i.id == MemoryId::new(h.id)) {
                let mut item = items.next().expect("peeked");
                // The catalog filtered the search; an unfiltered one still met old versions.
                if !filter.admits_version(&item) {
                    continue;
                }
                item.accessed = now;
                hits.push(Hit {
                    item,
                    score: h.score,
                    rank: hits.len(),
                    explain: Explanation {
                        vector: Some(h.score),
                        vector_rank: Some(hits.len()),
                        ..Default::default()
                    },
                });
            }
        }
        Ok(hits)
    }
}
