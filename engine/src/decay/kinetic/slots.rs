//! Which slot holds which id: the lookup every queue operation starts with.
//!
//! Memory ids are handed out in order, so a queue's ids are mostly small and close together:
//! those below a bound live in a flat table indexed by id (one load, no hashing), the rest in
//! a hash map. The table grows by doubling while it stays under twice the number of ids held
//! (plus a small constant), so its memory is O(n) however sparse the ids, and a queue holding
//! a scattered few (one user's memories among many) stays in the map.

use rustc_hash::FxHashMap;

/// A free entry of the flat table.
const NONE: u32 = u32::MAX;
/// Ids below this always fit the table, whatever the count.
const MIN_DENSE: usize = 1024;

/// id → slot.
#[derive(Debug, Clone, Default)]
pub(super) struct SlotIndex {
    dense: Vec<u32>,
    sparse: FxHashMap<u64, u32>,
    len: usize,
}

impl SlotIndex {
    /// Ids held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The slot of `id`.
    #[inline]
    pub(super) fn get(&self, id: u64) -> Option<u32> {
        match self.dense.get(id as usize) {
            Some(&NONE) => None,
            Some(&slot) => Some(slot),
            None => self.sparse.get(&id).copied(),
        }
    }

    /// Records `id` at `slot` (replacing a slot it had).
    pub(super) fn insert(&mut self, id: u64, slot: u32) {
        debug_assert_ne!(slot, NONE);
        let bound = (2 * (self.len + 1)).max(MIN_DENSE) as u64;
        if id >= self.dense.len() as u64 && id < bound {
            self.grow(
                (id as usize + 1)
                    .max(2 * self.dense.len())
                    .min(bound as usize),
            );
        }
        let old = match self.dense.get_mut(id as usize) {
            Some(s) => std::mem::replace(s, slot),
            None => self.sparse.insert(id, slot).unwrap_or(NONE),
        };
        if old == NONE {
            self.len += 1;
        }
    }

    /// Forgets `id`; its slot, if it had one.
    pub(super) fn remove(&mut self, id: u64) -> Option<u32> {
        let old = match self.dense.get_mut(id as usize) {
            Some(s) => Some(std::mem::replace(s, NONE)).filter(|&s| s != NONE),
            None => self.sparse.remove(&id),
        };
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Empties it (the table keeps its size).
    pub(super) fn clear(&mut self) {
        self.dense.fill(NONE);
        self.sparse.clear();
        self.len = 0;
    }

    /// Extends the table to `len` ids, moving the map's ids below it in.
    fn grow(&mut self, len: usize) {
        self.dense.resize(len, NONE);
        if !self.sparse.is_empty() {
            let dense = &mut self.dense;
            self.sparse
                .retain(|&id, &mut slot| match dense.get_mut(id as usize) {
                    Some(s) => {
                        *s = slot;
                        false
                    }
                    None => true,
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any mix of inserts, replacements and removals over dense and scattered ids reads
        /// back as a hash map would.
        #[test]
        fn behaves_as_a_map(ops in prop::collection::vec(
            (0u8..3, prop_oneof![0u64..3000, any::<u64>().prop_map(|x| x % (1 << 40))], 0u32..1000),
            1..400,
        )) {
            let (mut index, mut model) = (SlotIndex::default(), HashMap::new());
            for (op, id, slot) in ops {
                match op {
                    0 | 1 => {
                        index.insert(id, slot);
                        model.insert(id, slot);
                    }
                    _ => prop_assert_eq!(index.remove(id), model.remove(&id)),
                }
                prop_assert_eq!(index.len(), model.len());
                prop_assert_eq!(index.get(id), model.get(&id).copied());
            }
            for (&id, &slot) in &model {
                prop_assert_eq!(index.get(id), Some(slot));
            }
            prop_assert!(index.dense.len() <= (2 * (model.len() + 400)).max(MIN_DENSE));
            index.clear();
            prop_assert_eq!(index.len(), 0);
            for id in model.keys() {
                prop_assert_eq!(index.get(*id), None);
            }
        }
    }

    #[test]
    fn scattered_ids_stay_in_the_map() {
        let mut index = SlotIndex::default();
        for i in 0..100u64 {
            index.insert(i * 1_000_000, i as u32);
        }
        assert!(index.dense.len() <= MIN_DENSE);
        assert_eq!(index.get(42_000_000), Some(42));
        assert_eq!(index.get(42_000_001), None);
    }
}
