//! Large batches: new memories go into the index ahead of their write.
//!
//! A write used to search the index for each memory's near duplicates, write the memories,
//! commit, and only then insert the new ones into the index, whose insert searches the same
//! neighbourhood again at a wider beam (a sixth of a bulk load's time went to the first
//! search). Here the memories that are not exact duplicates (by content hash, of a stored
//! memory or an earlier one of the batch) are inserted first, chunk by chunk on the rayon pool,
//! and the search that links each one reports what lies at or above the de-duplication
//! threshold ([`memloop_index::Index::insert_batch_near`]); this thread meanwhile decides and
//! writes the memories inserted so far, in order.
//!
//! Each inserted memory gets the id it will have if it is new. One that de-duplication merges
//! after all (same information as a near duplicate) is withdrawn after the commit, and if the
//! write fails every memory inserted ahead is (tombstones, compacted away by the next save).
//! Until the commit a search may meet the batch's memories: recalls read their hits from the
//! store and skip those it does not hold, as they do for memories forgotten meanwhile. A crash
//! loses nothing: the index on disk changes only at a checkpoint, which waits for the writer.

use memloop_index::{NearHits, UnitVector, UnitVectors};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::screen::{Consume, NearScreen, Screen, Screener};
use crate::error::Result;
use crate::item::{MemoryId, NewMemory};
use crate::memory::{Applied, Inner};
use crate::store::Tx;

/// Batches of at least this many memories are indexed ahead of their write. A smaller batch
/// searches for each memory's near duplicates instead (`screen.rs`): a memory merged after
/// all would have cost an insert, and a single write has nothing to overlap.
pub(super) const INDEX_AHEAD_MIN: usize = 64;

/// Memories inserted per step of the pipeline.
const CHUNK: usize = 128;

/// Inserts the memories of a batch that may be new into the index, recording their ids in
/// `applied.indexed_ahead`, and screens each from what its insert found.
pub(super) struct IndexAhead;

impl Screener for IndexAhead {
    fn screen(
        &self,
        inner: &Inner,
        tx: &mut Tx,
        applied: &mut Applied,
        batch: &[(NewMemory, UnitVector)],
        threshold: Option<f32>,
        consume: &mut Consume<'_>,
    ) -> Result<()> {
        let hashes: Vec<[u8; 32]> = batch.par_iter().map(|(m, _)| m.content_hash()).collect();
        let stored: Vec<Option<MemoryId>> = hashes
            .par_iter()
            .zip(batch.par_iter())
            .map(|(h, (m, _))| inner.store.by_hash(h, m.scope_fields()[0]))
            .collect::<Result<_>>()?;
        // The batch's possibly new memories take fresh ids in order: their ids if they are new.
        let mut seen = FxHashSet::default();
        let may_be_new: Vec<bool> = hashes
            .iter()
            .zip(&stored)
            .map(|(h, s)| s.is_none() && seen.insert(*h))
            .collect();
        let ids = tx.allocate_ids(may_be_new.iter().filter(|&&n| n).count() as u64)?;
        let mut fresh = ids.clone();
        let ahead: Vec<Option<MemoryId>> = may_be_new
            .iter()
            .map(|&n| if n { fresh.next() } else { None })
            .collect();
        let first = ids.start;
        applied.indexed_ahead = ids;

        let cat_guard = inner.catalog.get()?.read();
        let index = inner.index.current();
        let near = NearScreen::of_batch(threshold, &cat_guard, &index, batch);
        // The chunk at `start` inserted; what each of its memories' insert found (`None` for
        // those not inserted).
        let insert = |start: usize| -> Result<Vec<Option<NearHits>>> {
            let end = (start + CHUNK).min(batch.len());
            let mut found = vec![None; end - start];
            let (ids, rows): (Vec<u64>, Vec<&UnitVector>) = (start..end)
                .filter_map(|i| ahead[i].map(|id| (id.get(), &batch[i].1)))
                .unzip();
            if ids.is_empty() {
                return Ok(found);
            }
            let rows = UnitVectors::from_rows(rows, index.dim())?;
            let Some(t) = threshold else {
                index.insert_batch(&ids, &rows)?;
                return Ok(found);
            };
            let reports = index.insert_batch_near(&ids, &rows, t)?;
            let slots = found.iter_mut().zip(&ahead[start..end]);
            for (slot, report) in slots.filter(|(_, a)| a.is_some()).zip(reports) {
                *slot.0 = Some(report);
            }
            Ok(found)
        };
        // Each inserted chunk's memories screened and consumed, in order.
        let mut i = 0;
        let mut take = |chunk: Vec<Option<NearHits>>| -> Result<()> {
            for found in chunk {
                let (m, v) = &batch[i];
                let mut screen = Screen {
                    indexed_as: ahead[i],
                    ..Screen::new(hashes[i], stored[i])
                };
                if let (Some(n), Some(found)) = (&near, found) {
                    n.screen(&mut screen, i, m, v, &found, first)?;
                }
                consume(tx, applied, i, screen)?;
                i += 1;
            }
            Ok(())
        };
        if !crate::platform::THREADS {
            // No thread to insert ahead on: each chunk inserted, then screened.
            for start in (0..batch.len()).step_by(CHUNK) {
                take(insert(start)?)?;
            }
            return Ok(());
        }
        std::thread::scope(|scope| {
            let (send, receive) = std::sync::mpsc::sync_channel::<Result<_>>(2);
            scope.spawn(move || {
                for start in (0..batch.len()).step_by(CHUNK) {
                    let chunk = insert(start);
                    let failed = chunk.is_err();
                    // A closed channel means the writer stopped (an error): stop too.
                    if send.send(chunk).is_err() || failed {
                        return;
                    }
                }
            });
            for chunk in receive {
                take(chunk?)?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::item::MemoryId;
    use std::sync::Arc;

    use super::IndexAhead;
    use crate::remember::dedup::Merging;
    use crate::remember::screen::Screener;
    use crate::{Error, HashingEmbedder, Memory, NewMemory, Options, Query};

    /// A write that fails after its batch went into the index takes every vector out again;
    /// the next write allocates the same ids, and the index takes them.
    #[test]
    fn a_failed_write_withdraws_what_it_indexed_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options::with_embedder(Arc::new(HashingEmbedder::new(64)));
        let m = Memory::open(dir.path(), options).unwrap();
        let kept = m
            .remember(NewMemory::new("written before the batch"))
            .unwrap();
        let texts: Vec<String> = (0..150)
            .map(|i| format!("note {i} about harbour {}", i * 7))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = m.inner.embed_documents(&refs).unwrap();
        let batch: Vec<_> = texts.iter().map(NewMemory::new).zip(vectors).collect();
        let mut screened = 0;
        let failed = m.inner.write(|inner, tx, applied| {
            let threshold = Merging::Near.threshold(inner.options.dedup_threshold);
            let mut count = |_: &mut _, _: &mut _, _, _| {
                screened += 1;
                Ok(())
            };
            IndexAhead.screen(inner, tx, applied, &batch, threshold, &mut count)?;
            assert_eq!(inner.index.len(), 151, "indexed before the commit");
            Err::<(), _>(Error::NotFound(MemoryId::NONE))
        });
        assert!(matches!(failed, Err(Error::NotFound(MemoryId::NONE))));
        assert_eq!(screened, 150);
        assert_eq!(m.inner.index.len(), 1);
        assert_eq!(m.stats().unwrap().memories, 1);

        let ids = m
            .remember_batch(texts.iter().map(NewMemory::new).collect())
            .unwrap();
        assert_eq!(ids[0].get(), kept.get() + 1);
        let stats = m.stats().unwrap();
        assert_eq!((stats.memories, stats.indexed), (151, 151));
        assert!(m.admin().check().unwrap().is_sound());
        for (text, id) in texts.iter().zip(&ids).step_by(29) {
            let hits = m.recall(&Query::new(text.as_str()).k(1)).unwrap();
            assert_eq!(hits[0].item.id, *id);
        }
    }
}
