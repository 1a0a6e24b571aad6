//! The screen of a memory before it is written: is it an exact duplicate of a stored memory,
//! and which current memory of its place is a near duplicate. Small batches search the index
//! for each memory (`search_each.rs`); large ones learn the same from their insert
//! (`index_ahead.rs`). Both are a [`Screener`].

use memloop_index::{Index, NearHits, UnitVector};

use super::close_pairs::BatchVectors;
use super::dedup::merges_near_duplicates;
use crate::catalog::{Catalog, Compiled};
use crate::error::Result;
use crate::item::{Kind, MemoryId, NewMemory};
use crate::memory::{Applied, Inner};
use crate::store::Tx;

/// The beam of a near-duplicate search of the index.
pub(super) const DEDUP_EF: usize = 32;

/// How many of a triple's closest current memories in its place are read for another value
/// of the same fact (the same head and relation, another tail), which its write closes when
/// the de-duplication threshold found no near duplicate.
pub(super) const SAME_FACT_K: usize = 4;

/// What a batch's screen found for one memory, before it is written.
#[derive(Debug, Clone, Copy)]
pub(super) struct Screen {
    /// The memory's content hash.
    pub(super) hash: [u8; 32],
    /// The stored memory with the same content hash (an exact duplicate).
    pub(super) stored: Option<MemoryId>,
    /// The closest current memory of the index in its namespace, kind and scope at or above
    /// the de-duplication threshold.
    pub(super) in_index: Option<(f32, MemoryId)>,
    /// Some earlier memory of the batch is at or above the threshold (of any place: the
    /// write loop checks those it created for the same place).
    pub(super) in_batch: bool,
    /// The id under which the memory's vector is in the index already (inserted ahead of the
    /// write, `index_ahead.rs`); `None`: it is inserted after the commit if it is new.
    pub(super) indexed_as: Option<MemoryId>,
    /// For a triple with no near duplicate: the closest current memories of its place in the
    /// index, best first, which may hold another value of the same fact (the write reads them
    /// and decides).
    pub(super) same_fact: [Option<MemoryId>; SAME_FACT_K],
}

impl Screen {
    /// The screen of a memory with content hash `hash`, stored already as `stored`, before
    /// anything near it was looked for.
    pub(super) fn new(hash: [u8; 32], stored: Option<MemoryId>) -> Screen {
        Screen {
            hash,
            stored,
            in_index: None,
            in_batch: false,
            indexed_as: None,
            same_fact: [None; SAME_FACT_K],
        }
    }
}

/// What the near-duplicate screen of a batch reads, shared by its memories.
pub(super) struct NearScreen<'a> {
    pub(super) threshold: f32,
    pub(super) catalog: &'a Catalog,
    pub(super) index: &'a Index,
    /// The batch's vectors, for the check against its earlier memories.
    pub(super) pairs: BatchVectors<'a>,
}

impl<'a> NearScreen<'a> {
    /// The screen of `batch` at `threshold` (none without one: no near duplicates merge).
    pub(super) fn of_batch(
        threshold: Option<f32>,
        catalog: &'a Catalog,
        index: &'a Index,
        batch: &'a [(NewMemory, UnitVector)],
    ) -> Option<NearScreen<'a>> {
        threshold.map(|threshold| NearScreen {
            threshold,
            catalog,
            index,
            pairs: BatchVectors::new(batch.iter().map(|(_, v)| v).collect()),
        })
    }

    /// Fills in `screen`'s near duplicates of batch memory `i` (`m`, `v`), given what the index
    /// holds at or above the threshold near it (`near`; `before`: only ids below it count).
    pub(super) fn screen(
        &self,
        screen: &mut Screen,
        i: usize,
        m: &NewMemory,
        v: &UnitVector,
        near: &NearHits,
        before: MemoryId,
    ) -> Result<()> {
        if !merges_near_duplicates(m.kind) {
            return Ok(());
        }
        let filter = crate::filter::MemoryFilter::new()
            .namespace(m.namespace_or_default())
            .kind(m.kind);
        if let Some(place) = self.catalog.compile_exact_scope(&filter, m.scope_fields()) {
            screen.in_index = self.nearest_in_place(&place, near, before, v)?;
            if screen.in_index.is_none() && m.kind == Kind::Triple && m.triple.is_some() {
                screen.same_fact = self.closest_in_place(&place, before, v)?;
            }
        }
        // Decided by the cosine `near_duplicate` computes (`close_pairs` skips only the
        // pairs it bounds below the threshold), so the screen misses nothing.
        screen.in_batch = self.pairs.close_to_earlier(i, self.threshold);
        Ok(())
    }

    /// The [`SAME_FACT_K`] closest memories (below `before`) of `place` to `v`, at any cosine.
    fn closest_in_place(
        &self,
        place: &Compiled,
        before: MemoryId,
        v: &UnitVector,
    ) -> Result<[Option<MemoryId>; SAME_FACT_K]> {
        let cat = self.catalog;
        let hits = self
            .index
            .search_filtered(v, SAME_FACT_K, DEDUP_EF, &|id: u64| {
                id < before.get() && cat.allows(place, MemoryId::new(id))
            })?;
        let mut out = [None; SAME_FACT_K];
        for (slot, hit) in out.iter_mut().zip(hits) {
            *slot = Some(MemoryId::new(hit.id));
        }
        Ok(out)
    }

    /// The first of `near`'s hits (below `before`) in `place`. When every item the search
    /// kept was above the threshold, the place's best may lie past them: the index is then
    /// searched under the place's filter.
    fn nearest_in_place(
        &self,
        place: &Compiled,
        near: &NearHits,
        before: MemoryId,
        v: &UnitVector,
    ) -> Result<Option<(f32, MemoryId)>> {
        let cat = self.catalog;
        if let Some(hit) = near
            .hits
            .iter()
            .find(|h| h.id < before.get() && cat.allows(place, MemoryId::new(h.id)))
        {
            return Ok(Some((hit.score, MemoryId::new(hit.id))));
        }
        if !near.saturated {
            return Ok(None);
        }
        let hits = self.index.search_filtered(v, 1, DEDUP_EF, &|id: u64| {
            cat.allows(place, MemoryId::new(id))
        })?;
        Ok(hits
            .first()
            .filter(|hit| hit.score >= self.threshold)
            .map(|hit| (hit.score, MemoryId::new(hit.id))))
    }
}

/// Hands each memory of a batch to the write, in order, with its [`Screen`].
pub(super) type Consume<'c> = dyn FnMut(&mut Tx, &mut Applied, usize, Screen) -> Result<()> + 'c;

/// How a batch's memories are screened before they are written: two ways to the same screens.
pub(super) trait Screener {
    /// Screens each memory of `batch` for duplicates (near ones at or above `threshold`; none
    /// without one) and hands the screens to `consume` in order.
    fn screen(
        &self,
        inner: &Inner,
        tx: &mut Tx,
        applied: &mut Applied,
        batch: &[(NewMemory, UnitVector)],
        threshold: Option<f32>,
        consume: &mut Consume<'_>,
    ) -> Result<()>;
}
