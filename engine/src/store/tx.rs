//! One write transaction ([`Tx`]) with the bookkeeping every change needs: the next id, the
//! sequence numbers, the change log, the content hashes and subjects kept beside each item.

use std::sync::Arc;

use parking_lot::Mutex;
use redb::{ReadableTable, ReadableTableMetadata, TableDefinition, WriteTransaction};

use super::sealing::{forget_rid, rid, side_table, Sealing};
use super::{
    db, encode_vector, legacy_subject_key, subject_key, CatalogRecord, Op, Store, CATALOG, CHANGES,
    FEEDBACK, FORGET_LOG, HASHES, ITEMS, META, SENTENCES, SUBJECTS, SUBJECT_STATE, VECTORS,
};
use crate::crypt::seal::Table;
use crate::error::{Error, Result};
use crate::item::{IdRange, MemoryId, MemoryItem, MAX_ID};

/// One write transaction with the bookkeeping every change needs (next id, sequence numbers,
/// change log).
pub(crate) struct Tx {
    tx: WriteTransaction,
    next_id: u64,
    start_seq: u64,
    seq: u64,
    poisoned: Arc<Mutex<Option<String>>>,
    path: std::path::PathBuf,
    sealing: Sealing,
}

impl Tx {
    /// Begins a write; `synced` selects an fsync at commit.
    pub(crate) fn begin(store: &Store, synced: bool) -> Result<Tx> {
        store.ensure_writable()?;
        let mut tx = store.db.read().begin_write().map_err(db)?;
        // The counters and the highest stored id, read in the write itself.
        let (next_id, seq, highest) = {
            let meta = tx.open_table(META).map_err(db)?;
            let counter = |key: &str| -> Result<u64> {
                let bytes = meta.get(key).map_err(db)?;
                store.decode_meta_u64(key, bytes.as_ref().map(|v| v.value()))
            };
            let (next_id, seq) = (counter("next_id")?.max(1), counter("seq")?);
            let items = tx.open_table(ITEMS).map_err(db)?;
            let highest = items.last().map_err(db)?.map(|(id, _)| id.value());
            (next_id, seq, highest)
        };
        // Every stored id is below the next one: a counter that says otherwise is damaged
        // (a store an older memloop let an imported id wrap), and new memories would be
        // written over stored ones. Checked once here, not at each insert.
        if let Some(highest) = highest.filter(|&h| h >= next_id) {
            return Err(store.corrupt(format!(
                "the next id {next_id} is not above the highest stored id {highest}: new memories would overwrite stored ones; export and import into a new store"
            )));
        }
        tx.set_durability(if synced {
            redb::Durability::Immediate
        } else {
            redb::Durability::None
        })
        .map_err(|e| store.corrupt(format!("durability: {e}")))?;
        Ok(Tx {
            tx,
            next_id,
            start_seq: seq,
            seq,
            poisoned: store.poisoned.clone(),
            path: store.path.clone(),
            sealing: store.sealing.clone(),
        })
    }

    /// `n` fresh ids in a row; every stored memory's id is below them.
    ///
    /// # Errors
    /// [`Error::Corrupt`] past [`MAX_ID`]: ids never wrap round onto stored memories.
    pub(crate) fn allocate_ids(&mut self, n: u64) -> Result<IdRange> {
        let first = self.next_id;
        match first.checked_add(n) {
            Some(end) if end <= MAX_ID.get() + 1 => {
                self.next_id = end;
                Ok(IdRange {
                    start: MemoryId::new(first),
                    end: MemoryId::new(end),
                })
            }
            _ => Err(Error::Corrupt {
                path: self.path.clone(),
                detail: format!(
                    "no ids left: the next id is {first} and ids end at {MAX_ID}; export and \
                     import into a new store to renumber"
                ),
            }),
        }
    }

    /// A fresh id.
    pub(crate) fn allocate_id(&mut self) -> Result<MemoryId> {
        Ok(self.allocate_ids(1)?.start)
    }

    /// Makes sure ids up to `id` (at most [`MAX_ID`]: the caller checks) are never allocated
    /// again (import keeps foreign ids).
    pub(crate) fn reserve_id(&mut self, id: MemoryId) {
        debug_assert!(id <= MAX_ID);
        self.next_id = self.next_id.max(id.min(MAX_ID).get() + 1);
    }

    /// The transaction itself, for the store's own modules that keep tables of their own.
    pub(super) fn raw(&self) -> &WriteTransaction {
        &self.tx
    }

    /// Changes logged so far in this transaction.
    pub(crate) fn changes(&self) -> u64 {
        self.seq - self.start_seq
    }

    /// The store's sequence number once this transaction commits.
    pub(crate) fn seq_after(&self) -> u64 {
        self.seq
    }

    fn log(&mut self, id: MemoryId, op: Op) -> Result<()> {
        self.seq += 1;
        let mut t = self.tx.open_table(CHANGES).map_err(db)?;
        t.insert(self.seq, (id.get(), op as u8)).map_err(db)?;
        Ok(())
    }

    /// Writes `item` (and its vector when it changed), its catalog record and, for a current
    /// version, its content hash.
    pub(crate) fn put(&mut self, item: &MemoryItem, vector: Option<&[f32]>) -> Result<()> {
        let user = item.scope_fields()[0];
        let r = rid(item.id.get());
        let encoded = item.encode();
        let stored = self.sealing.seal(Table::Items, &r, user, &encoded)?;
        self.tx
            .open_table(ITEMS)
            .map_err(db)?
            .insert(item.id.get(), stored.as_ref())
            .map_err(db)?;
        let record = CatalogRecord::of(item).encode();
        let stored = self.sealing.seal(Table::Catalog, &r, user, &record)?;
        self.tx
            .open_table(CATALOG)
            .map_err(db)?
            .insert(item.id.get(), stored.as_ref())
            .map_err(db)?;
        if !item.is_superseded() {
            // Only current versions own their content hash and subject key.
            if let Some(hash) = self.sealing.hash_key(user, &item.content_hash()) {
                self.tx
                    .open_table(HASHES)
                    .map_err(db)?
                    .insert(hash.as_slice(), item.id.get())
                    .map_err(db)?;
            }
            if let Some(key) = subject_key(item).and_then(|k| self.sealing.subject_key(user, k)) {
                self.tx
                    .open_table(SUBJECTS)
                    .map_err(db)?
                    .insert(key.as_str(), item.id.get())
                    .map_err(db)?;
            }
        }
        if let Some(v) = vector {
            let bytes = encode_vector(v);
            let stored = self.sealing.seal(Table::Vectors, &r, user, &bytes)?;
            self.tx
                .open_table(VECTORS)
                .map_err(db)?
                .insert(item.id.get(), stored.as_ref())
                .map_err(db)?;
            // Sentence vectors of an older vector are not this one's: [`Tx::put_sentences`]
            // writes the new ones, if any.
            self.tx
                .open_table(SENTENCES)
                .map_err(db)?
                .remove(item.id.get())
                .map_err(db)?;
        }
        self.log(item.id, if vector.is_some() { Op::Put } else { Op::Meta })
    }

    /// Stores the vectors of `item`'s sentences (unit vectors of the store's dimension, at
    /// most [`super::sentences::MAX_SENTENCES`] kept), sealed like its vector; nothing for
    /// none. Called after [`Tx::put`] wrote the vector they belong with.
    pub(crate) fn put_sentences(&mut self, item: &MemoryItem, vectors: &[Vec<f32>]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        let bytes = super::sentences::SentenceVectors::encode(vectors);
        let user = item.scope_fields()[0];
        let stored = self
            .sealing
            .seal(Table::Sentences, &rid(item.id.get()), user, &bytes)?;
        self.tx
            .open_table(SENTENCES)
            .map_err(db)?
            .insert(item.id.get(), stored.as_ref())
            .map_err(db)?;
        Ok(())
    }

    /// Removes `item` entirely (its hash entry too, if it still points at it).
    pub(crate) fn delete(&mut self, item: &MemoryItem) -> Result<()> {
        self.tx
            .open_table(ITEMS)
            .map_err(db)?
            .remove(item.id.get())
            .map_err(db)?;
        self.tx
            .open_table(VECTORS)
            .map_err(db)?
            .remove(item.id.get())
            .map_err(db)?;
        self.tx
            .open_table(SENTENCES)
            .map_err(db)?
            .remove(item.id.get())
            .map_err(db)?;
        self.tx
            .open_table(CATALOG)
            .map_err(db)?
            .remove(item.id.get())
            .map_err(db)?;
        self.unindex(item)?;
        for table in [FEEDBACK, SUBJECT_STATE] {
            self.tx
                .open_table(table)
                .map_err(db)?
                .remove(item.id.get())
                .map_err(db)?;
        }
        self.log(item.id, Op::Delete)
    }

    /// Removes the lookup entries of `item` (its content hash and subject keys, if they point
    /// at it), computed under its user's current key, and nothing else: the first half of
    /// moving a kept memory to a new key ([`Tx::reseal`] is the second).
    pub(crate) fn unindex(&mut self, item: &MemoryItem) -> Result<()> {
        let user = item.scope_fields()[0];
        self.unhash(&item.content_hash(), item.id, user)?;
        for key in [subject_key(item), legacy_subject_key(item)]
            .into_iter()
            .flatten()
            .filter_map(|k| self.sealing.subject_key(user, k))
        {
            let mut subjects = self.tx.open_table(SUBJECTS).map_err(db)?;
            let owner = subjects.get(key.as_str()).map_err(db)?.map(|v| v.value());
            if owner == Some(item.id.get()) {
                subjects.remove(key.as_str()).map_err(db)?;
            }
        }
        Ok(())
    }

    /// Writes `item` again with every record of it (vector, sentence vectors, feedback and
    /// subject state) opened and sealed anew under its user's current key, and its lookup
    /// entries made under that key: the memory outlives the destruction of the key it was
    /// sealed under. Logged as a change (a sync sends it again, sealed under the new key).
    /// `false`, writing nothing, when it is not stored or cannot be opened any more.
    pub(crate) fn reseal(&mut self, item: &MemoryItem) -> Result<bool> {
        let r = rid(item.id.get());
        let (Some(vector), Some(sentences), Some(feedback), Some(state)) = (
            self.opened(VECTORS, Table::Vectors, item.id)?,
            self.opened(SENTENCES, Table::Sentences, item.id)?,
            self.opened(FEEDBACK, Table::Feedback, item.id)?,
            self.opened(SUBJECT_STATE, Table::SubjectState, item.id)?,
        ) else {
            return Ok(false);
        };
        let Some(vector) = vector.as_deref().and_then(super::decode_vector) else {
            return Ok(false);
        };
        // Items, catalog, vector, hash and subject under the current key; `put` clears the
        // sentence vectors, which go back below.
        self.put(item, Some(&vector))?;
        let user = item.scope_fields()[0];
        if let Some(p) = &sentences {
            let stored = self.sealing.seal(Table::Sentences, &r, user, p)?;
            self.tx
                .open_table(SENTENCES)
                .map_err(db)?
                .insert(item.id.get(), stored.as_ref())
                .map_err(db)?;
        }
        for (table, p) in [(FEEDBACK, feedback), (SUBJECT_STATE, state)] {
            if let Some(p) = p {
                self.put_side(table, item.id, &p)?;
            }
        }
        Ok(true)
    }

    /// Memory `id`'s record in `table` (sealed as `code`), opened: `Some(None)` when it has
    /// none, `None` when it cannot be opened (its key is gone).
    fn opened(
        &mut self,
        table: TableDefinition<u64, &[u8]>,
        code: Table,
        id: MemoryId,
    ) -> Result<Option<Option<Vec<u8>>>> {
        let stored = self
            .tx
            .open_table(table)
            .map_err(db)?
            .get(id.get())
            .map_err(db)?
            .map(|v| v.value().to_vec());
        Ok(match stored {
            None => Some(None),
            Some(bytes) => self
                .sealing
                .open(code, &rid(id.get()), &bytes)?
                .map(|p| Some(p.into_owned())),
        })
    }

    /// Sets a side-table value (feedback or subject state) of memory `id`.
    pub(crate) fn put_side(
        &mut self,
        table: TableDefinition<u64, &[u8]>,
        id: MemoryId,
        value: &[u8],
    ) -> Result<()> {
        let stored = if self.sealing.on() {
            let item = self.tx.open_table(ITEMS).map_err(db)?;
            let item = item
                .get(id.get())
                .map_err(db)?
                .ok_or(Error::NotFound(id))?
                .value()
                .to_vec();
            self.sealing
                .seal_beside(side_table(table), &rid(id.get()), &item, value)?
                .into_owned()
        } else {
            value.to_vec()
        };
        self.tx
            .open_table(table)
            .map_err(db)?
            .insert(id.get(), stored.as_slice())
            .map_err(db)?;
        Ok(())
    }

    /// Removes the hash entry of a text that changed, if it points at `id` (a memory of
    /// `user`).
    pub(crate) fn unhash(
        &mut self,
        hash: &[u8; 32],
        id: MemoryId,
        user: Option<&str>,
    ) -> Result<()> {
        let Some(hash) = self.sealing.hash_key(user, hash) else {
            return Ok(());
        };
        let mut hashes = self.tx.open_table(HASHES).map_err(db)?;
        let owner = hashes.get(hash.as_slice()).map_err(db)?.map(|v| v.value());
        if owner == Some(id.get()) {
            hashes.remove(hash.as_slice()).map_err(db)?;
        }
        Ok(())
    }

    /// Records a forgetting event (JSON) at time `at` of a memory of `user`.
    pub(crate) fn log_forget(
        &mut self,
        at: i64,
        id: MemoryId,
        user: Option<&str>,
        event: &[u8],
    ) -> Result<()> {
        let stored = self
            .sealing
            .seal(Table::ForgetLog, &forget_rid(at, id.get()), user, event)?;
        self.tx
            .open_table(FORGET_LOG)
            .map_err(db)?
            .insert((at, id.get()), stored.as_ref())
            .map_err(db)?;
        Ok(())
    }

    /// Drops every forgetting event for which `doomed(id, event)` holds; returns how many.
    pub(crate) fn drop_forget_events(
        &mut self,
        doomed: impl Fn(MemoryId, &[u8]) -> bool,
    ) -> Result<usize> {
        let mut t = self.tx.open_table(FORGET_LOG).map_err(db)?;
        let mut found = Vec::new();
        for entry in t.iter().map_err(db)? {
            let (key, event) = entry.map_err(db)?;
            let (at, id) = key.value();
            // An event whose key is gone is an erased scope's: dropped too.
            let plain = self
                .sealing
                .open(Table::ForgetLog, &forget_rid(at, id), event.value())?;
            if plain.is_none_or(|p| doomed(MemoryId::new(id), &p)) {
                found.push((at, id));
            }
        }
        let doomed = found;
        for key in &doomed {
            t.remove(key).map_err(db)?;
        }
        Ok(doomed.len())
    }

    /// Drops the oldest forgetting events beyond `limit`.
    pub(crate) fn prune_forget_log(&mut self, limit: usize) -> Result<()> {
        let mut t = self.tx.open_table(FORGET_LOG).map_err(db)?;
        let len = t.len().map_err(db)? as usize;
        for _ in limit..len {
            t.pop_first().map_err(db)?;
        }
        Ok(())
    }

    /// Appends erasure receipt number `n`.
    pub(crate) fn put_receipt(&mut self, n: u64, receipt: &[u8]) -> Result<()> {
        // Sealed under the store-wide key in an encrypted store: the receipt names the user.
        let stored = self
            .sealing
            .seal(Table::Receipts, &n.to_le_bytes(), None, receipt)?;
        self.tx
            .open_table(super::RECEIPTS)
            .map_err(db)?
            .insert(n, stored.as_ref())
            .map_err(db)?;
        Ok(())
    }

    /// Records (`Some`) or clears (`None`) the erasure under way: written in the transaction
    /// that deletes its rows and cleared in the one that logs its receipt, so an erasure a
    /// crash interrupted is completed at the next open. Sealed like a receipt (it names the
    /// scope).
    pub(crate) fn set_pending_erasure(&mut self, intent: Option<&[u8]>) -> Result<()> {
        let stored = match intent {
            Some(plain) => {
                Some(
                    self.sealing
                        .seal(Table::Receipts, super::PENDING_ERASURE_RID, None, plain)?,
                )
            }
            None => None,
        };
        let mut t = self.tx.open_table(META).map_err(db)?;
        match stored {
            Some(v) => t.insert(super::PENDING_ERASURE, v.as_ref()).map_err(db)?,
            None => t.remove(super::PENDING_ERASURE).map_err(db)?,
        };
        Ok(())
    }

    /// A metadata value, read inside this write.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let t = self.tx.open_table(META).map_err(db)?;
        let v = t.get(key).map_err(db)?;
        Ok(v.map(|v| v.value().to_vec()))
    }

    /// Sets a metadata value.
    pub(crate) fn set_meta(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.tx
            .open_table(META)
            .map_err(db)?
            .insert(key, value)
            .map_err(db)?;
        Ok(())
    }

    /// Commits; returns the last sequence number written.
    /// Commits; a failure poisons the store (see [`Error::Poisoned`]): what a failed fsync
    /// left on disk is unknown, so nothing is retried or written until the store is reopened,
    /// when redb recovers its last committed state.
    pub(crate) fn commit(mut self) -> Result<u64> {
        let (next_id, seq) = (self.next_id, self.seq);
        self.set_meta("next_id", &next_id.to_le_bytes())?;
        self.set_meta("seq", &seq.to_le_bytes())?;
        let poisoned = self.poisoned.clone();
        self.tx.commit().map_err(|e| {
            let e = db(e);
            *poisoned.lock() = Some(e.to_string());
            e
        })?;
        Ok(seq)
    }
}
