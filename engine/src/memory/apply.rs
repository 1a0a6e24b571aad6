//! The write pipeline: one transaction under the writer lock, committed, then applied to the
//! index, the catalog and the lexical index.

use memloop_index::{UnitVector, UnitVectors};

use super::{Inner, Memory, WriterState};
use crate::error::{Error, Result};
use crate::item::{scope_covers, IdRange, MemoryId, MemoryItem, Scope};
use crate::memory::views::Admin;
use crate::merge::ErasureBound;
use crate::options::Durability;
use crate::store::Tx;

/// What one write changed, applied to the index and catalog after the commit.
#[derive(Default)]
pub(crate) struct Applied {
    /// Items whose vector is new (inserted into the index).
    pub(crate) inserted: Vec<(MemoryId, UnitVector)>,
    /// Items whose catalog fields may have changed.
    pub(crate) items: Vec<MemoryItem>,
    /// Items deleted.
    pub(crate) removed: Vec<MemoryId>,
    /// Items whose vector was replaced in place (same id, new text).
    pub(crate) replaced: Vec<(MemoryId, UnitVector)>,
    /// Ids whose vectors went into the index before the commit (`remember/index_ahead.rs`):
    /// withdrawn from it again if the write fails.
    pub(crate) indexed_ahead: IdRange,
    /// Ids of `indexed_ahead` that the write did not keep (merged into another memory).
    pub(crate) withdrawn: Vec<MemoryId>,
}

impl Memory {}

impl Inner {
    pub(crate) fn now(&self) -> crate::clock::Timestamp {
        self.options.clock.now()
    }

    /// The creation time of a version of scope `fields` made now: now, but never at or before
    /// an erasure of its scope this store made or carried out (the merge rule
    /// [`crate::merge::created_after`]). A device whose clock runs
    /// behind the one that erased does not stamp what it writes after carrying the erasure out
    /// as made before it (which every other device would drop).
    ///
    /// # Errors
    /// [`crate::Error::Store`]; a receipt of the log that fails to verify is corruption.
    pub(crate) fn created_now(
        &self,
        fields: [Option<&str>; 3],
    ) -> crate::error::Result<crate::clock::Timestamp> {
        Ok(crate::merge::created_after(
            self.now(),
            &self.erasure_bounds()?,
            fields,
        ))
    }

    /// Every erasure this store made or carried out, with its bound (its time, or for one a
    /// sync carried out, the time of the device that made it): read from the receipt log
    /// once, kept until a receipt is logged.
    ///
    /// # Errors
    /// [`crate::Error::Store`]; a receipt of the log that fails to verify is corruption.
    pub(crate) fn erasure_bounds(&self) -> crate::error::Result<Vec<ErasureBound>> {
        let mut bounds = self.erasure_bounds.lock();
        if bounds.is_none() {
            let mut read = Vec::new();
            for (n, line) in self.store.receipts()? {
                let r = crate::crypt::verify_receipt(&line)
                    .map_err(|e| self.store.corrupt(format!("erasure receipt {n}: {e}")))?;
                let at = self
                    .store
                    .meta(&crate::store::receipt_echo_key(n))?
                    .and_then(|b| crate::store::Echo::decode(&b))
                    .map_or(r.at, |e| e.at);
                read.push(([r.user, r.agent, r.session], at));
            }
            if let Some(sealer) = &self.store.sealing.0 {
                // A user's key made here is stamped after every erasure of theirs seen here.
                let mut floors = std::collections::BTreeMap::new();
                for ([u, a, s], at) in &read {
                    if let (Some(u), None, None) = (u, a, s) {
                        let f = floors.entry(u.clone()).or_insert(*at);
                        *f = (*f).max(*at);
                    }
                }
                sealer.set_erasure_floors(floors);
            }
            *bounds = Some(read);
        }
        Ok(bounds.clone().unwrap_or_default())
    }

    /// Drops what [`Inner::created_now`] read of the receipt log (a receipt was logged).
    pub(crate) fn erasures_changed(&self) {
        *self.erasure_bounds.lock() = None;
    }

    /// Runs `f` in one write transaction under the writer lock, commits it, then applies what
    /// it recorded to the index and the catalog.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&Inner, &mut Tx, &mut Applied) -> Result<T>,
    ) -> Result<T> {
        // The catalog must be loaded before anything commits (its snapshot must miss nothing),
        // and the index verified before a write searches or changes it.
        self.catalog.get()?;
        self.ensure_index_trusted()?;
        let mut w = self.writer.lock();
        let synced = self.options.durability == Durability::Synced;
        if !self.accessed.lock().is_empty() {
            // Committed on their own first, so `f` reads items with their touches applied.
            let mut tx = Tx::begin(&self.store, synced)?;
            self.write_accessed(&mut tx)?;
            tx.commit()?;
        }
        let mut tx = Tx::begin(&self.store, synced)?;
        let mut applied = Applied::default();
        let out = match f(self, &mut tx, &mut applied) {
            Ok(out) => out,
            Err(e) => {
                self.withdraw(applied.indexed_ahead);
                return Err(e);
            }
        };
        let changes = tx.changes();
        let seq_after = tx.seq_after();
        if let Err(e) = tx.commit() {
            // What a failed commit left on disk is known only once the database is reopened
            // (redb recovers its last committed state): the write is there whole or not at
            // all. There, it is applied and acknowledged like any other.
            let landed = changes > 0
                && self.store.recover().is_ok()
                && self.store.meta_u64("seq").ok() == Some(seq_after);
            if !landed {
                self.withdraw(applied.indexed_ahead);
                return Err(e);
            }
        }
        self.apply(applied)?;
        note_changes(&mut w, changes, synced);
        drop(w);
        Ok(out)
    }

    fn apply(&self, applied: Applied) -> Result<()> {
        let index = self.index.current();
        for &id in applied
            .removed
            .iter()
            .chain(applied.replaced.iter().map(|(id, _)| id))
            .chain(&applied.withdrawn)
        {
            if index.contains(id.get()) {
                index.delete(id.get())?;
            }
        }
        let mut applied = applied;
        applied.inserted.append(&mut applied.replaced);
        if !applied.inserted.is_empty() {
            let ids: Vec<u64> = applied.inserted.iter().map(|(id, _)| id.get()).collect();
            let rows =
                UnitVectors::from_rows(applied.inserted.iter().map(|(_, v)| v), index.dim())?;
            index.insert_batch(&ids, &rows)?;
        }
        let mut cat = self.catalog.get()?.write();
        for item in &applied.items {
            cat.upsert(item);
        }
        for &id in &applied.removed {
            cat.remove(id);
        }
        drop(cat);
        if let Some(lexical) = self.lexical.write().as_mut() {
            for item in &applied.items {
                lexical.upsert(item.id, item.user.as_deref(), &item.text);
            }
            for &id in &applied.removed {
                lexical.remove(id);
            }
        }
        Ok(())
    }

    /// Takes the vectors of a failed write's `ids` out of the index again. Best effort: a
    /// vector left behind belongs to no stored memory, and recalls skip what the store lacks.
    fn withdraw(&self, ids: IdRange) {
        let index = self.index.current();
        for id in ids {
            if index.contains(id.get()) {
                let _ = index.delete(id.get());
            }
        }
    }

    /// Writes pending recall access times and reinforcements into `tx`.
    pub(crate) fn write_accessed(&self, tx: &mut Tx) -> Result<()> {
        let pending = std::mem::take(&mut *self.accessed.lock());
        for (id, touch) in pending {
            if let Some(mut item) = self.store.item(id)? {
                touch.apply(&mut item);
                tx.put(&item, None)?;
            }
        }
        Ok(())
    }

    /// Memory `id` as stored, with any pending recall touch applied.
    pub(crate) fn current(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        let mut item = self.store.item(id)?;
        self.apply_pending(item.iter_mut());
        Ok(item)
    }

    /// Applies to `items`, read from the database, the recalls not written there yet (access
    /// times, reinforcements): every read shows what the engine knows, the same as after the
    /// store is closed and opened again, whichever door holds it how long.
    pub(crate) fn apply_pending<'a>(&self, items: impl Iterator<Item = &'a mut MemoryItem>) {
        let pending = self.accessed.lock();
        if pending.is_empty() {
            return;
        }
        for item in items {
            if let Some(t) = pending.get(&item.id) {
                t.apply(item);
            }
        }
    }

    /// Memory `id` as [`Inner::current`] has it, if it lies within `scope` (every field the
    /// scope sets, the memory has too; an empty scope admits every memory). A memory of
    /// another scope is reported absent, as if it did not exist: a scoped caller learns
    /// nothing of it.
    pub(crate) fn current_in(&self, id: MemoryId, scope: &Scope) -> Result<Option<MemoryItem>> {
        Ok(self
            .current(id)?
            .filter(|item| scope_covers(scope.fields(), item.scope_fields())))
    }

    /// Makes grouped writes durable with one synced commit.
    pub(crate) fn flush_locked(&self, w: &mut WriterState) -> Result<()> {
        if w.unflushed || !self.accessed.lock().is_empty() {
            let mut tx = Tx::begin(&self.store, true)?;
            self.write_accessed(&mut tx)?;
            tx.commit()?;
            w.unflushed = false;
        }
        Ok(())
    }
}

/// Counts `n` committed changes towards the next checkpoint (and the next flush when they
/// were not synced).
fn note_changes(w: &mut WriterState, n: u64, synced: bool) {
    if n > 0 {
        w.unsaved += n;
        w.first_unsaved.get_or_insert_with(std::time::Instant::now);
        w.unflushed |= !synced;
    }
}

impl<'a> Admin<'a> {
    /// Makes every write so far durable (a no-op in synced mode).
    ///
    /// # Errors
    /// [`crate::Error::Store`] / [`crate::Error::Poisoned`] when the writes could not be made
    /// durable; [`crate::Error::Background`] when the background thread's last checkpoint or flush
    /// failed and nothing has succeeded since.
    pub fn flush(&self) -> Result<()> {
        let mut w = self.memory.inner.writer.lock();
        self.memory.inner.flush_locked(&mut w)?;
        drop(w);
        match self.memory.inner.background_error.lock().take() {
            Some(e) => Err(Error::Background(e)),
            None => Ok(()),
        }
    }
}
