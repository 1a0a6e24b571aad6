//! Whole-table reads the rest of the engine needs, each in one read transaction, so that only
//! `store/` opens redb transactions.

use redb::{ReadableTable, ReadableTableMetadata};

use super::db;
use super::sealing::{forget_rid, rid};
use super::{CatalogRecord, Op, Store, CATALOG, CHANGES, FORGET_LOG, VECTORS};
use crate::clock::Timestamp;
use crate::crypt::seal::Table;
use crate::error::Result;
use crate::item::MemoryId;

impl Store {
    /// Calls `f` with every catalog record, by id, and the number of records (for reserving).
    pub(crate) fn for_each_catalog_record(
        &self,
        mut f: impl FnMut(MemoryId, &CatalogRecord<'_>, usize),
    ) -> Result<()> {
        let tx = self.read_tx()?;
        let table = tx.open_table(CATALOG).map_err(db)?;
        let len = table.len().map_err(db)? as usize;
        for row in table.iter().map_err(db)? {
            let (k, v) = row.map_err(db)?;
            let id = k.value();
            let Some(plain) = self.sealing.open(Table::Catalog, &rid(id), v.value())? else {
                continue; // an erased scope's record, in a copy taken before the erasure
            };
            let rec = CatalogRecord::decode(&plain)
                .ok_or_else(|| self.corrupt(format!("catalog record of {id}")))?;
            f(MemoryId::new(id), &rec, len);
        }
        Ok(())
    }

    /// The ids whose vector changed (put or deleted) in the logged changes `from..=to`, sorted,
    /// each once.
    pub(crate) fn vector_changes(&self, from: u64, to: u64) -> Result<Vec<MemoryId>> {
        let tx = self.read_tx()?;
        let changes = tx.open_table(CHANGES).map_err(db)?;
        let mut touched = Vec::new();
        for row in changes.range(from..=to).map_err(db)? {
            let (_, v) = row.map_err(db)?;
            let (id, op) = v.value();
            if op != Op::Meta as u8 {
                touched.push(MemoryId::new(id));
            }
        }
        touched.sort_unstable();
        touched.dedup();
        Ok(touched)
    }

    /// Every stored vector of `dim` floats, ids and vectors flattened in id order.
    pub(crate) fn all_vectors(&self, dim: usize) -> Result<(Vec<MemoryId>, Vec<f32>)> {
        let tx = self.read_tx()?;
        let vectors = tx.open_table(VECTORS).map_err(db)?;
        let (mut ids, mut flat) = (Vec::new(), Vec::new());
        for row in vectors.iter().map_err(db)? {
            let (k, v) = row.map_err(db)?;
            let id = MemoryId::new(k.value());
            let Some(v) = self.decode_vector_of(id, v.value())? else {
                continue;
            };
            if v.len() != dim {
                return Err(self.corrupt(format!("vector {id} has the wrong length")));
            }
            ids.push(id);
            flat.extend_from_slice(&v);
        }
        Ok((ids, flat))
    }

    /// The raw forgetting-log entries (JSON) recorded at or after `since`, oldest first.
    pub(crate) fn forget_log_since(&self, since: Timestamp) -> Result<Vec<Vec<u8>>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(FORGET_LOG).map_err(db)?;
        let mut out = Vec::new();
        for row in t.range((since, 0)..).map_err(db)? {
            let (k, v) = row.map_err(db)?;
            let (at, id) = k.value();
            if let Some(plain) =
                self.sealing
                    .open(Table::ForgetLog, &forget_rid(at, id), v.value())?
            {
                out.push(plain.into_owned());
            }
        }
        Ok(out)
    }

    /// The stored vectors of `ids` as little-endian bytes, in order; an id without one is
    /// corrupt.
    pub(crate) fn vector_bytes(&self, ids: &[MemoryId]) -> Result<Vec<Vec<u8>>> {
        let tx = self.read_tx()?;
        let vectors = tx.open_table(VECTORS).map_err(db)?;
        ids.iter()
            .map(|&id| {
                let stored = vectors
                    .get(id.get())
                    .map_err(db)?
                    .ok_or_else(|| self.corrupt(format!("no vector for {id}")))?;
                let plain = self
                    .sealing
                    .open(Table::Vectors, &rid(id.get()), stored.value())?
                    .ok_or_else(|| self.corrupt(format!("the vector of {id} was erased")))?;
                Ok(plain.into_owned())
            })
            .collect()
    }
}
