//! Reads: get, scan, recall. None of them takes the writer lock.

use super::Memory;
use crate::error::{Error, Result};
use crate::filter::MemoryFilter;
use crate::item::{MemoryId, MemoryItem};
use crate::query::{Hit, Query};

/// Extra candidates searched while the catalog loads, to make up for superseded versions
/// dropped after the search.
const UNLOADED_MARGIN: usize = 16;

/// The most hits one recall returns.
pub const MAX_K: usize = 10_000;

impl Memory {
    /// The memory `id`, if it exists.
    ///
    /// # Errors
    /// [`Error::Store`] or [`Error::Corrupt`].
    pub fn get(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        self.inner.store.item(id)
    }

    /// The memories passing `filter`, by ascending id, at most `limit`.
    ///
    /// # Errors
    /// [`Error::Store`] or [`Error::Corrupt`].
    pub fn scan(&self, filter: &MemoryFilter, limit: usize) -> Result<Vec<MemoryItem>> {
        let ids = {
            let cat = self.inner.catalog.get()?.read();
            match cat.compile(filter) {
                Some(c) => cat.matching(&c),
                None => Vec::new(),
            }
        };
        let ids: Vec<MemoryId> = ids.into_iter().take(limit).collect();
        self.inner.store.items(&ids)
    }

    /// Single-step recall: embeds the query and returns the `k` most similar memories that
    /// pass the filter, best first. Records the access time of each hit.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an empty query or `k` outside 1..=[`MAX_K`];
    /// [`Error::Embed`], [`Error::Index`], [`Error::Store`].
    pub fn recall(&self, query: &Query) -> Result<Vec<Hit>> {
        if query.text.trim().is_empty() {
            return Err(Error::InvalidInput("query text is empty".into()));
        }
        check_k(query.k)?;
        let vector = self.inner.embedder.embed_query(&query.text)?;
        self.recall_vector(&vector, query.k, &query.filter, query.ef)
    }

    /// Recall by a query vector made with this store's model.
    ///
    /// # Errors
    /// As [`Memory::recall`]; [`Error::Index`] for a vector of the wrong dimension.
    pub fn recall_vector(
        &self,
        vector: &[f32],
        k: usize,
        filter: &MemoryFilter,
        ef: Option<usize>,
    ) -> Result<Vec<Hit>> {
        let mut hits = self.search_vector(vector, k, filter, ef)?;
        self.inner.serve(&mut hits)?;
        Ok(hits)
    }

    /// The `k` nearest memories passing `filter`, best first, with their vector score and rank
    /// explained; no access is recorded.
    pub(crate) fn search_vector(
        &self,
        vector: &[f32],
        k: usize,
        filter: &MemoryFilter,
        ef: Option<usize>,
    ) -> Result<Vec<Hit>> {
        check_k(k)?;
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
                if item.is_superseded() && !filter.include_superseded {
                    continue;
                }
                item.accessed = now;
                hits.push(Hit {
                    item,
                    score: h.score,
                    rank: hits.len(),
                    explain: crate::retrieve::Explanation {
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

impl super::Inner {
    /// Records a recall of `hits` at `now`: access time, and a reinforcement (spaced
    /// repetition) when forgetting is on. The catalog sees it at once; the database with the
    /// next write or checkpoint.
    pub(super) fn touch(&self, hits: &mut [Hit], now: crate::clock::Timestamp) -> Result<()> {
        let policy = &self.options.forgetting;
        let mut pending = self.accessed.lock();
        let mut reinforced = Vec::new();
        for h in hits.iter_mut() {
            if let Some(earlier) = pending.get(&h.item.id) {
                earlier.apply(&mut h.item);
            }
            h.item.accessed = now;
            let mut touch = super::Touch {
                accessed: now,
                reinforced: None,
            };
            if policy.enabled && !h.item.pinned {
                policy.reinforce(&mut h.item, now);
                touch.reinforced = Some((h.item.strength, h.item.decay_anchor, h.item.reinforced));
                reinforced.push(h.item.clone());
            }
            pending.insert(h.item.id, touch);
        }
        drop(pending);
        if !reinforced.is_empty() {
            let mut cat = self.catalog.get()?.write();
            for item in &reinforced {
                cat.upsert(item);
            }
        }
        Ok(())
    }
}

pub(crate) fn check_k(k: usize) -> Result<()> {
    if k == 0 || k > MAX_K {
        return Err(Error::InvalidInput(format!(
            "k = {k} is outside 1..={MAX_K}"
        )));
    }
    Ok(())
}
