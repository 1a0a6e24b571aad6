//! Import: an export file checked whole, re-embedded when it comes from another model, then
//! merged in one transaction.

use std::path::Path;

use memloop_index::UnitVector;
use rustc_hash::{FxHashMap, FxHashSet};

use super::format::{corrupt, parse};
use super::ImportReport;
use crate::error::{Error, Result};
use crate::filter::MemoryFilter;
use crate::item::{MemoryId, MemoryItem};
use crate::memory::views::Transfer;
use crate::memory::Memory;

/// Texts re-embedded per call when a file comes from another model.
const EMBED_CHUNK: usize = 512;

impl Memory {
    /// Imports the decoded records of file `path` (of model `model`, vectors of `file_dim`):
    /// checked whole, re-embedded when the model is another, then merged in one transaction.
    pub(super) fn import_parsed(
        &self,
        path: &Path,
        model: &str,
        file_dim: usize,
        rows: Vec<(MemoryItem, Vec<f32>)>,
    ) -> Result<ImportReport> {
        let dim = self.admin().embedder().dim();
        let reembedded = model != self.admin().fingerprint();
        if !reembedded && file_dim != dim {
            return Err(corrupt(path, "dimension differs from the model it names"));
        }
        let mut report = ImportReport {
            records: rows.len(),
            reembedded,
            ..Default::default()
        };
        // Everything is checked before anything is written, and everything is written in one
        // transaction: a file that fails anywhere leaves the store exactly as it was.
        // Each record passes the check every written memory passes: a file cannot hold a
        // state no call could make (NaN strength, a window ending before it begins, …).
        let max_text = self.inner.options.max_text_bytes;
        for (n, (item, _)) in rows.iter().enumerate() {
            item.check(max_text)
                .map_err(|e| corrupt(path, format!("record {n} (id {}): {e}", item.id)))?;
        }
        let mut records = Vec::with_capacity(rows.len());
        if reembedded {
            for chunk in rows.chunks(EMBED_CHUNK) {
                let texts: Vec<&str> = chunk.iter().map(|(i, _)| i.text.as_str()).collect();
                let vectors = self.inner.embed_documents(&texts)?;
                records.extend(chunk.iter().map(|(i, _)| i.clone()).zip(vectors));
            }
        } else {
            for (n, (item, vector)) in rows.into_iter().enumerate() {
                let v = UnitVector::with_dim(vector, dim)
                    .map_err(|e| corrupt(path, format!("record {n}: {e}")))?;
                records.push((item, v));
            }
        }
        let mut history = self.superseded_versions()?;
        self.import_records(records, &mut history, &mut report)?;
        Ok(report)
    }

    /// Merges `records` (items with unit vectors in this store's space) in one transaction:
    /// first every record is matched to a memory already here or given an id, then the new
    /// ones are written with their version links mapped to those ids.
    pub(crate) fn import_records(
        &self,
        records: Vec<(MemoryItem, UnitVector)>,
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
                        None => inner.store.by_hash(&hash, item.scope_fields()[0])?,
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
                // A foreign id past MAX_ID is renumbered: kept, it would use up the ids.
                let free = foreign != MemoryId::NONE
                    && foreign <= crate::item::MAX_ID
                    && !taken.contains(&foreign)
                    && !merged.contains_key(&foreign)
                    && inner.store.item(foreign)?.is_none();
                item.id = if free {
                    tx.reserve_id(foreign);
                    foreign
                } else {
                    tx.allocate_id()?
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

/// The key a superseded version is recognised by across stores: content and creation time.
pub(crate) fn version_key(item: &MemoryItem) -> [u8; 40] {
    let mut k = [0u8; 40];
    k[..32].copy_from_slice(&item.content_hash());
    k[32..].copy_from_slice(&item.created.to_le_bytes());
    k
}

impl Memory {
    /// Superseded versions in this store, by version key.
    pub(crate) fn superseded_versions(&self) -> Result<FxHashMap<[u8; 40], MemoryId>> {
        let filter = MemoryFilter::new().include_superseded(true);
        Ok(self
            .advanced()
            .scan(&filter, usize::MAX)?
            .into_iter()
            .filter(MemoryItem::is_superseded)
            .map(|i| (version_key(&i), i.id))
            .collect())
    }
}

/// Copies the metadata of `newer` onto `local` (content and id stay).
pub(crate) fn take_metadata(local: &mut MemoryItem, newer: &MemoryItem) {
    local.concise = newer.concise.clone();
    local.brief = newer.brief.clone();
    local.triple = newer.triple.clone();
    local.subject = newer.subject.clone();
    local.tags = newer.tags.clone();
    local.importance = newer.importance;
    local.outcome = newer.outcome;
    local.pinned = newer.pinned;
    local.updated = newer.updated;
    local.accessed = local.accessed.max(newer.accessed);
    local.count = local.count.max(newer.count);
    for s in &newer.sources {
        if !local.sources.contains(s) {
            local.sources.push(s.clone());
        }
    }
}

impl<'a> Transfer<'a> {
    /// Merges an export file into this store, all or nothing: the whole file is read, checked
    /// (checksums, every record decoded within its bounds, every vector finite) and, if it came
    /// from another model, re-embedded with this store's model before one transaction writes it.
    /// Memories already here (same namespace, kind and text) are not copied: their metadata is
    /// replaced when the imported record is newer. New memories keep their ids when those are free
    /// here; version links follow the ids.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] / [`crate::Error::UnsupportedVersion`] for a bad file;
    /// [`crate::Error::Embed`], [`crate::Error::Store`], [`crate::Error::Index`]. On any error
    /// nothing was imported.
    pub fn import(&self, path: impl AsRef<Path>) -> Result<ImportReport> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, "read", e))?;
        let file = parse(path, &bytes, self.memory.store().sealing.0.as_deref())?;
        self.memory
            .import_parsed(path, &file.model, file.dim, file.records)
    }
}
