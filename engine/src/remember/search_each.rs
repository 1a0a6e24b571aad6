//! The screener of small batches: each memory's near duplicates searched in the index.

use memloop_index::{Hit, Index, NearHits, UnitVector};

use super::dedup::merges_near_duplicates;
use super::screen::{Consume, NearScreen, Screen, Screener, DEDUP_EF};
use crate::error::Result;
use crate::item::{MemoryId, NewMemory};
use crate::memory::{Applied, Inner};
use crate::store::Tx;

/// What a search of the index finds at or above `threshold` near `v`, as an insert reports it.
///
/// Searched without a filter: a filtered search samples the filter's pass rate and asks the
/// catalog about every node it accepts (lookups at random places of a large map), and the
/// place's best is the first of the unfiltered hits in the place unless every hit is above the
/// threshold (it may then lie past them; [`NearHits::saturated`]).
fn search_near(index: &Index, v: &UnitVector, threshold: f32) -> Result<NearHits> {
    let hits: Vec<Hit> = index.search(v, DEDUP_EF, DEDUP_EF)?;
    let above = hits.iter().take_while(|h| h.score >= threshold).count();
    let saturated = above == hits.len() && !hits.is_empty();
    let mut hits = hits;
    hits.truncate(above);
    Ok(NearHits { hits, saturated })
}

/// Searches the index for each memory's near duplicates (small batches).
pub(super) struct SearchEach;

impl Screener for SearchEach {
    fn screen(
        &self,
        inner: &Inner,
        tx: &mut Tx,
        applied: &mut Applied,
        batch: &[(NewMemory, UnitVector)],
        threshold: Option<f32>,
        consume: &mut Consume<'_>,
    ) -> Result<()> {
        let cat_guard = inner.catalog.get()?.read();
        let index = inner.index.current();
        let near = NearScreen::of_batch(threshold, &cat_guard, &index, batch);
        for (i, (m, v)) in batch.iter().enumerate() {
            let hash = m.content_hash();
            let mut screen = Screen::new(hash, inner.store.by_hash(&hash, m.scope_fields()[0])?);
            // An exact duplicate merges whatever lies near it.
            if let (Some(n), None) = (&near, screen.stored) {
                if merges_near_duplicates(m.kind) {
                    let found = search_near(&index, v, n.threshold)?;
                    n.screen(&mut screen, i, m, v, &found, MemoryId::END)?;
                }
            }
            consume(tx, applied, i, screen)?;
        }
        Ok(())
    }
}
