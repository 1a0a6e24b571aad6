//! Vector search: the `k` nearest memories passing a filter, read back from the store.

use memloop_index::UnitVector;

use super::{Explanation, Hit};
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::item::MemoryId;
use crate::memory::Memory;

/// Extra candidates searched while the catalog loads, to make up for superseded versions
/// dropped after the search.
const UNLOADED_MARGIN: usize = 16;

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
        let found = match self.inner.catalog.try_get() {
            // Right after open the catalog may still be loading; a recall without filters does
            // not wait for it (superseded versions are dropped after reading the items).
            None if filter.is_unrestricted() => index.search(vector, k + UNLOADED_MARGIN, ef)?,
            slot => {
                let cat = match slot {
                    Some(c) => c,
                    None => self.inner.catalog.get()?,
                }
                .read();
                let Some(c) = cat.compile(filter) else {
                    return Ok(Vec::new());
                };
                if cat.passes_all(&c) {
                    index.search(vector, k, ef)?
                } else {
                    let pred = |id: u64| cat.allows(&c, id);
                    index.search_filtered(vector, k, ef, &pred)?
                }
            }
        };
        let mut found = found;
        // Equal scores rank by id, so two stores with the same memories rank them alike.
        found.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        let ids: Vec<MemoryId> = found.iter().map(|h| h.id).collect();
        let mut items = self.inner.store.items(&ids)?.into_iter().peekable();
        let now = self.inner.now();
        let mut hits: Vec<Hit> = Vec::with_capacity(found.len());
        // Items forgotten between the search and the read are skipped; order is kept.
        for h in found {
            if hits.len() == k {
                break;
            }
            if items.peek().is_some_and(|i| i.id == h.id) {
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
