//! An int8 index keeps only its codes and ranks on them; its best candidates are re-scored on
//! the store's f32 vectors, the one copy the store keeps, so an int8 store ranks and scores
//! as an f32 one while its index file is a quarter of the size.

use std::cell::RefCell;

use memloop_index::{Filter, Hit, Index, Rescore, UnitVector};

use crate::error::{Error, Result};
use crate::item::MemoryId;
use crate::store::Store;

/// The store's vectors as an index [`Rescore`]; a read error is kept for the caller.
struct StoreVectors<'a> {
    store: &'a Store,
    failed: RefCell<Option<Error>>,
}

impl Rescore for StoreVectors<'_> {
    fn exact(&self, ids: &[u64], query: &[f32]) -> Vec<Option<f32>> {
        let wanted: Vec<MemoryId> = ids.iter().map(|&id| MemoryId::new(id)).collect();
        let found = match self.store.vectors(&wanted) {
            Ok(found) => found,
            Err(e) => {
                self.failed.replace(Some(e));
                return vec![None; ids.len()];
            }
        };
        let mut found = found.into_iter().peekable();
        ids.iter()
            .map(|&id| {
                // `vectors` keeps the order of `ids`, skipping the ones it lacks.
                let v = found.next_if(|(fid, _)| *fid == MemoryId::new(id))?.1;
                // Normalised as the index normalised it, so the score is the one an f32 index
                // gives to the bit.
                let v = UnitVector::new(v).ok()?;
                Some(memloop_index::simd::dot(query, &v))
            })
            .collect()
    }
}

/// `k` hits from `index` for `vector`, filtered by `filter`; an int8 index's best candidates
/// re-scored on `store`'s vectors.
pub(crate) fn search(
    index: &Index,
    store: &Store,
    vector: &UnitVector,
    k: usize,
    ef: usize,
    filter: Option<&dyn Filter>,
) -> Result<Vec<Hit>> {
    let vectors = StoreVectors {
        store,
        failed: RefCell::new(None),
    };
    let hits = index.search_rescored(vector, k, ef, filter, &vectors)?;
    match vectors.failed.into_inner() {
        Some(e) => Err(e),
        None => Ok(hits),
    }
}
