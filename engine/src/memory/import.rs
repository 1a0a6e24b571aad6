//! The write side of an import (see `transfer` for the file format).

use rustc_hash::FxHashMap;

use super::Memory;
use crate::error::Result;
use crate::item::{MemoryId, MemoryItem};
use crate::transfer::{take_metadata, version_key, ImportReport};

impl Memory {
    /// Merges `records` (items with vectors in this store's space) in one transaction.
    pub(crate) fn import_records(
        &self,
        records: Vec<(MemoryItem, Vec<f32>)>,
        remap: &mut FxHashMap<MemoryId, MemoryId>,
        history: &mut FxHashMap<[u8; 40], MemoryId>,
        report: &mut ImportReport,
    ) -> Result<()> {
        let dim = self.inner.embedder.dim();
        self.inner.write(|inner, tx, applied| {
            let mut by_hash: FxHashMap<[u8; 32], MemoryId> = FxHashMap::default();
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
                    Some(id) => applied
                        .items
                        .iter()
                        .rev()
                        .find(|i| i.id == id)
                        .cloned()
                        .map_or_else(|| inner.store.item(id), |i| Ok(Some(i)))?,
                    None => None,
                };
                if let Some(mut existing) = existing {
                    remap.insert(foreign, existing.id);
                    if item.updated > existing.updated {
                        take_metadata(&mut existing, &item);
                        tx.put(&existing, None)?;
                        applied.items.push(existing);
                        report.merged += 1;
                    } else {
                        report.unchanged += 1;
                    }
                    continue;
                }
                let vector = super::write::unit(vector, dim).map_err(crate::Error::InvalidInput)?;
                let free = foreign != 0
                    && inner.store.item(foreign)?.is_none()
                    && !applied.items.iter().any(|i| i.id == foreign)
                    && !remap.values().any(|&l| l == foreign);
                item.id = if free {
                    tx.reserve_id(foreign);
                    foreign
                } else {
                    tx.allocate_id()
                };
                remap.insert(foreign, item.id);
                if item.is_superseded() {
                    history.insert(version_key(&item), item.id);
                } else {
                    by_hash.insert(item.content_hash(), item.id);
                }
                tx.put(&item, Some(&vector))?;
                applied.inserted.push((item.id, vector));
                applied.items.push(item);
                report.added += 1;
            }
            Ok(())
        })
    }

    /// Rewrites version links of imported items whose ids changed.
    pub(crate) fn relink(&self, remap: &FxHashMap<MemoryId, MemoryId>) -> Result<()> {
        if remap.iter().all(|(f, l)| f == l) {
            return Ok(());
        }
        let ids: Vec<MemoryId> = remap.values().copied().collect();
        self.inner.write(|inner, tx, applied| {
            for mut item in inner.store.items(&ids)? {
                let map = |l: Option<MemoryId>| l.and_then(|x| remap.get(&x).copied());
                let (s, b) = (map(item.supersedes), map(item.superseded_by));
                if (s, b) != (item.supersedes, item.superseded_by) {
                    item.supersedes = s;
                    item.superseded_by = b;
                    tx.put(&item, None)?;
                    applied.items.push(item);
                }
            }
            Ok(())
        })
    }
}
