//! The write side of an import (see `transfer` for the file format).

use rustc_hash::{FxHashMap, FxHashSet};

use super::Memory;
use crate::error::Result;
use crate::item::{MemoryId, MemoryItem};
use crate::transfer::{take_metadata, version_key, ImportReport};

impl Memory {
    /// Merges `records` (items with unit vectors in this store's space) in one transaction:
    /// first every record is matched to a memory already here or given an id, then the new
    /// ones are written with their version links mapped to those ids.
    pub(crate) fn import_records(
        &self,
        records: Vec<(MemoryItem, Vec<f32>)>,
        history: &mut FxHashMap<[u8; 40], MemoryId>,
        report: &mut ImportReport,
    ) -> Result<()> {
        self.inner.write(|inner, tx, applied| {
            let mut remap: FxHashMap<MemoryId, MemoryId> = FxHashMap::default();
            let mut by_hash: FxHashMap<[u8; 32], MemoryId> = FxHashMap::default();
            // Memories already here that records matched, and whether a record was newer.
            let mut merged: FxHashMap<MemoryId, (MemoryItem, bool)> = FxHashMap::default();
            let mut taken: FxHashSet<MemoryId> = FxHashSet::default();
            let mut fresh = Vec::new();
            for (mut item, vector) in records {
                let foreign = item.id;
                let local = if item.is_superseded() {
                    history.get(&version_key(&item)).copied()
                } else {
                    let hash = item.content_hash();
                    match by_hash.get(&hash) {
                        Some(&id) => Some(id),
                        None => inner.store.by_hash(&hash)?,
                    }
                };
                let existing = match local {
                    Some(id) if taken.contains(&id) => {
                        // A duplicate inside the file of a record imported just before.
                        remap.insert(foreign, id);
                        report.unchanged += 1;
                        continue;
                    }
                    Some(id) => match merged.remove(&id) {
                        Some(staged) => Some(staged),
                        None => inner.store.item(id)?.map(|i| (i, false)),
                    },
                    None => None,
                };
                if let Some((mut existing, mut changed)) = existing {
                    remap.insert(foreign, existing.id);
                    if item.updated > existing.updated {
                        take_metadata(&mut existing, &item);
                        changed = true;
                        report.merged += 1;
                    } else {
                        report.unchanged += 1;
                    }
                    merged.insert(existing.id, (existing, changed));
                    continue;
                }
                let free = foreign != 0
                    && !taken.contains(&foreign)
                    && !merged.contains_key(&foreign)
                    && inner.store.item(foreign)?.is_none();
                item.id = if free {
                    tx.reserve_id(foreign);
                    foreign
                } else {
                    tx.allocate_id()
                };
                taken.insert(item.id);
                remap.insert(foreign, item.id);
                if item.is_superseded() {
                    history.insert(version_key(&item), item.id);
                } else {
                    by_hash.insert(item.content_hash(), item.id);
                }
                fresh.push((item, vector));
                report.added += 1;
            }
            for (existing, changed) in merged.into_values() {
                if changed {
                    tx.put(&existing, None)?;
                    applied.items.push(existing);
                }
            }
            let map = |l: Option<MemoryId>| l.and_then(|x| remap.get(&x).copied());
            for (mut item, vector) in fresh {
                item.supersedes = map(item.supersedes);
                item.superseded_by = map(item.superseded_by);
                tx.put(&item, Some(&vector))?;
                applied.inserted.push((item.id, vector));
                applied.items.push(item);
            }
            Ok(())
        })
    }
}
