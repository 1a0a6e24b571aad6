//! Reading every record of the database back, for `Memory::check`.

use redb::ReadableTable;

use super::db;
use super::sentences::SentenceVectors;
use super::{sealing, Store, ITEMS, SENTENCES, VECTORS};
use crate::crypt::seal::Table;
use crate::error::Result;
use crate::item::MemoryId;

impl Store {
    /// Decodes every item and vector in one read transaction; returns how many memories
    /// there are and what is wrong (undecodable items, missing or ragged vectors, vectors
    /// without an item).
    pub(crate) fn check_records(&self, dim: usize) -> Result<(usize, Vec<String>)> {
        let tx = self.read_tx()?;
        let items = tx.open_table(ITEMS).map_err(db)?;
        let vectors = tx.open_table(VECTORS).map_err(db)?;
        let mut problems = Vec::new();
        let mut count = 0;
        for entry in items.iter().map_err(db)? {
            let (k, v) = entry.map_err(db)?;
            let id = k.value();
            count += 1;
            if let Err(e) = self.decode_item(MemoryId::new(id), v.value()) {
                problems.push(format!("memory {id}: {e}"));
            }
            match vectors.get(id).map_err(db)? {
                Some(v) => match self.decode_vector_of(MemoryId::new(id), v.value()) {
                    Ok(Some(v)) if v.len() == dim => {}
                    Ok(None) => {} // an erased scope's (a copy taken before the erasure)
                    Ok(Some(_)) => {
                        problems.push(format!("memory {id}: vector is not {dim} floats"))
                    }
                    Err(e) => problems.push(format!("memory {id}: vector: {e}")),
                },
                None => problems.push(format!("memory {id} has no vector")),
            }
        }
        for entry in vectors.iter().map_err(db)? {
            let (k, _) = entry.map_err(db)?;
            if items.get(k.value()).map_err(db)?.is_none() {
                problems.push(format!("vector {} belongs to no memory", k.value()));
            }
        }
        // Sentence vectors (format 2): each row decodes and belongs to a memory.
        let sentences = match tx.open_table(SENTENCES) {
            Ok(t) => Some(t),
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(db(e)),
        };
        let rows = match &sentences {
            Some(t) => Some(t.iter().map_err(db)?),
            None => None,
        };
        for entry in rows.into_iter().flatten() {
            let (k, v) = entry.map_err(db)?;
            let id = k.value();
            if items.get(id).map_err(db)?.is_none() {
                problems.push(format!("sentence vectors {id} belong to no memory"));
                continue;
            }
            match self
                .sealing
                .open(Table::Sentences, &sealing::rid(id), v.value())
            {
                Ok(Some(plain)) if SentenceVectors::decode(&plain, dim).is_none() => {
                    problems.push(format!("memory {id}: sentence vectors do not decode"))
                }
                Ok(_) => {}
                Err(e) => problems.push(format!("memory {id}: sentence vectors: {e}")),
            }
        }
        Ok((count, problems))
    }
}
