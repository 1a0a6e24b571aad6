//! Writes: remember (with de-duplication), update (with history), forget.

use rustc_hash::FxHashMap;

use super::{Inner, Memory, WriterState};
use crate::dedup::{one_current_truth, same_information, RememberAction, Remembered};
use crate::error::{Error, Result};
use crate::item::{check_text, content_hash, Kind, MemoryId, MemoryItem, NewMemory};
use crate::options::Durability;
use crate::store::Tx;

/// Changes to an existing memory; `None` fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    /// New original text: the memory is re-embedded, and the old version is kept as a
    /// superseded memory linked to the new one.
    pub text: Option<String>,
    /// New concise version.
    pub concise: Option<String>,
    /// New brief version.
    pub brief: Option<String>,
    /// Replaces the tags.
    pub tags: Option<Vec<String>>,
    /// New importance in [0, 1].
    pub importance: Option<f32>,
    /// Pin or unpin.
    pub pinned: Option<bool>,
}

/// What one write changed, applied to the index and catalog after the commit.
#[derive(Default)]
pub(super) struct Applied {
    /// Items whose vector is new (inserted into the index).
    pub(super) inserted: Vec<(MemoryId, Vec<f32>)>,
    /// Items whose catalog fields may have changed.
    pub(super) items: Vec<MemoryItem>,
    /// Items deleted.
    pub(super) removed: Vec<MemoryId>,
    /// Items whose vector was replaced in place (same id, new text).
    pub(super) replaced: Vec<(MemoryId, Vec<f32>)>,
}

impl Memory {
    /// Remembers one memory; returns the id that now holds its text: a new memory's, the
    /// existing memory's it merged into, or the new version's when it superseded a fact (see
    /// [`Memory::remember_explained`] for which, and [`crate::dedup`] for the rule: nothing is
    /// merged that says something else).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for bad input; [`Error::Embed`] / [`Error::Store`] /
    /// [`Error::Index`]. On error nothing was written.
    pub fn remember(&self, memory: NewMemory) -> Result<MemoryId> {
        Ok(self.remember_explained(memory)?.id)
    }

    /// Remembers one memory and says what was done: stored as new, merged into an existing
    /// memory that says the same (exactly, or up to case, spacing and punctuation; its count
    /// grows, its metadata takes the newest values, the new source joins its provenance), or
    /// stored as a new version superseding a near-duplicate fact or triple that said
    /// something else.
    ///
    /// # Errors
    /// As [`Memory::remember`].
    pub fn remember_explained(&self, memory: NewMemory) -> Result<Remembered> {
        Ok(self.remember_batch_explained(vec![memory])?[0])
    }

    /// Remembers many memories: embedded together (the embedder batches and parallelises),
    /// written in one transaction (one fsync in synced mode). Returns one id per input, in
    /// order; duplicates inside the batch merge like duplicates of stored memories.
    ///
    /// # Errors
    /// As [`Memory::remember`]; any invalid input rejects the whole batch.
    pub fn remember_batch(&self, memories: Vec<NewMemory>) -> Result<Vec<MemoryId>> {
        let done = self.embed_and_remember(memories, false)?;
        Ok(done.into_iter().map(|r| r.id).collect())
    }

    /// [`Memory::remember_batch`], saying for each input what was done.
    ///
    /// # Errors
    /// As [`Memory::remember_batch`].
    pub fn remember_batch_explained(&self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        self.embed_and_remember(memories, false)
    }

    /// Remembers memories whose embeddings the caller computed with this store's model (bulk
    /// loads, benchmarks). Vectors are normalised; de-duplication applies as in
    /// [`Memory::remember_batch`].
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a vector of the wrong dimension or that cannot be
    /// normalised; otherwise as [`Memory::remember_batch`].
    pub fn remember_embedded(&self, memories: Vec<(NewMemory, Vec<f32>)>) -> Result<Vec<MemoryId>> {
        let done = self.remember_checked(memories, false)?;
        Ok(done.into_iter().map(|r| r.id).collect())
    }

    /// Remembers `memories`, merging only exact duplicates (tasks with different outcomes or
    /// steps, or a document's overlapping chunks, must stay apart however similar they read).
    pub(crate) fn remember_distinct(&self, memories: Vec<NewMemory>) -> Result<Vec<MemoryId>> {
        let done = self.embed_and_remember(memories, true)?;
        Ok(done.into_iter().map(|r| r.id).collect())
    }

    fn embed_and_remember(
        &self,
        memories: Vec<NewMemory>,
        exact_only: bool,
    ) -> Result<Vec<Remembered>> {
        for (i, m) in memories.iter().enumerate() {
            m.validate(self.inner.options.max_text_bytes)
                .map_err(|e| Error::InvalidInput(format!("memory {i}: {e}")))?;
        }
        let texts: Vec<&str> = memories.iter().map(|m| m.text.as_str()).collect();
        let vectors = self.inner.embedder.embed_documents(&texts)?;
        self.remember_checked(memories.into_iter().zip(vectors).collect(), exact_only)
    }

    fn remember_checked(
        &self,
        memories: Vec<(NewMemory, Vec<f32>)>,
        exact_only: bool,
    ) -> Result<Vec<Remembered>> {
        let dim = self.inner.embedder.dim();
        let mut checked = Vec::with_capacity(memories.len());
        for (i, (m, v)) in memories.into_iter().enumerate() {
            m.validate(self.inner.options.max_text_bytes)
                .map_err(|e| Error::InvalidInput(format!("memory {i}: {e}")))?;
            let v = unit(v, dim).map_err(|e| Error::InvalidInput(format!("memory {i}: {e}")))?;
            checked.push((m, v));
        }
        let ids = self.inner.write(|inner, tx, applied| {
            let mut ids = Vec::with_capacity(checked.len());
            let mut staged = Staged {
                exact_only,
                ..Staged::default()
            };
            for (m, v) in checked {
                ids.push(inner.remember_one(tx, applied, &mut staged, m, v)?);
            }
            Ok(ids)
        })?;
        self.inner.maybe_sweep();
        Ok(ids)
    }

    /// Changes memory `id`. A new text makes a new version: the old one stays, superseded
    /// (out of default ranking, found with [`crate::MemoryFilter::include_superseded`]), and
    /// the returned id is the new version's. Otherwise the memory is changed in place and its
    /// id returned.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::InvalidInput`] for bad values or when `id` was already
    /// superseded (update the current version).
    pub fn update(&self, id: MemoryId, update: Update) -> Result<MemoryId> {
        if let Some(i) = update.importance {
            if !(0.0..=1.0).contains(&i) {
                return Err(Error::InvalidInput(format!(
                    "importance {i} is outside [0, 1]"
                )));
            }
        }
        if let Some(t) = &update.text {
            check_text(t, self.inner.options.max_text_bytes).map_err(Error::InvalidInput)?;
        }
        let new_text = update.text.clone();
        let vector = match &new_text {
            Some(t) => Some(self.inner.embed_one(t)?),
            None => None,
        };
        self.inner.write(|inner, tx, applied| {
            let mut old = inner.store.item(id)?.ok_or(Error::NotFound(id))?;
            if let Some(newer) = old.superseded_by {
                return Err(Error::InvalidInput(format!(
                    "memory {id} was superseded by {newer}; update the current version"
                )));
            }
            let now = inner.now();
            let mut new = old.clone();
            if let Some(t) = update.concise {
                new.concise = Some(t);
            }
            if let Some(t) = update.brief {
                new.brief = Some(t);
            }
            if let Some(mut tags) = update.tags {
                tags.sort();
                tags.dedup();
                new.tags = tags;
            }
            if let Some(i) = update.importance {
                new.importance = i;
            }
            if let Some(p) = update.pinned {
                new.pinned = p;
            }
            new.updated = now;
            match (new_text, vector) {
                (Some(text), Some(vector)) if text != old.text => {
                    tx.unhash(&old.content_hash(), old.id)?;
                    new.id = tx.allocate_id();
                    new.text = text;
                    new.created = now;
                    new.count = 1;
                    new.tier = crate::item::Tier::Working;
                    new.decay_anchor = now;
                    new.reinforced = 0;
                    new.strength = inner
                        .options
                        .forgetting
                        .initial_strength_ms(new.kind, new.importance)
                        / 1000.0;
                    new.supersedes = Some(old.id);
                    old.superseded_by = Some(new.id);
                    tx.put(&old, None)?;
                    tx.put(&new, Some(&vector))?;
                    applied.inserted.push((new.id, vector));
                    applied.items.push(old);
                }
                _ => tx.put(&new, None)?,
            }
            let id = new.id;
            applied.items.push(new);
            Ok(id)
        })
    }

    /// Deletes memory `id` from the store and the index, durably.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no such memory.
    pub fn forget(&self, id: MemoryId) -> Result<()> {
        self.inner.write(|inner, tx, applied| {
            let item = inner.store.item(id)?.ok_or(Error::NotFound(id))?;
            tx.delete(&item)?;
            applied.removed.push(id);
            Ok(())
        })
    }

    /// Makes every write so far durable (a no-op in synced mode).
    ///
    /// # Errors
    /// [`Error::Store`] / [`Error::Poisoned`] when the writes could not be made durable;
    /// [`Error::Background`] when the background thread's last checkpoint or flush failed and
    /// nothing has succeeded since.
    pub fn flush(&self) -> Result<()> {
        let mut w = self.inner.writer.lock();
        self.inner.flush_locked(&mut w)?;
        drop(w);
        match self.inner.background_error.lock().take() {
            Some(e) => Err(Error::Background(e)),
            None => Ok(()),
        }
    }
}

/// Items created or merged earlier in the same batch (not yet visible through the database).
#[derive(Default)]
struct Staged {
    by_hash: FxHashMap<[u8; 32], MemoryId>,
    items: FxHashMap<MemoryId, MemoryItem>,
    fresh: Vec<(MemoryId, String, Kind, Vec<f32>)>,
    /// Merge exact duplicates only.
    exact_only: bool,
}

impl Staged {
    /// Notes a memory created in this batch, so later inputs can merge into it.
    fn remember_fresh(&mut self, hash: [u8; 32], item: &MemoryItem, ns: String, v: Vec<f32>) {
        self.by_hash.insert(hash, item.id);
        self.items.insert(item.id, item.clone());
        self.fresh.push((item.id, ns, item.kind, v));
    }
}

impl Inner {
    pub(crate) fn now(&self) -> crate::clock::Timestamp {
        self.options.clock.now()
    }

    /// Runs `f` in one write transaction under the writer lock, commits it, then applies what
    /// it recorded to the index and the catalog.
    pub(super) fn write<T>(
        &self,
        f: impl FnOnce(&Inner, &mut Tx, &mut Applied) -> Result<T>,
    ) -> Result<T> {
        // The catalog must be loaded before anything commits (its snapshot must miss nothing),
        // and the index verified before a write searches or changes it.
        self.catalog.get()?;
        self.ensure_index_verified()?;
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
        let out = f(self, &mut tx, &mut applied)?;
        let changes = tx.changes();
        tx.commit()?;
        self.apply(applied)?;
        note_changes(&mut w, changes, synced);
        drop(w);
        Ok(out)
    }

    fn apply(&self, applied: Applied) -> Result<()> {
        let index = self.index.read().clone();
        for &id in applied
            .removed
            .iter()
            .chain(applied.replaced.iter().map(|(id, _)| id))
        {
            if index.contains(id) {
                index.delete(id)?;
            }
        }
        let mut applied = applied;
        applied.inserted.append(&mut applied.replaced);
        if !applied.inserted.is_empty() {
            let ids: Vec<MemoryId> = applied.inserted.iter().map(|(id, _)| *id).collect();
            let flat: Vec<f32> = applied
                .inserted
                .iter()
                .flat_map(|(_, v)| v.iter().copied())
                .collect();
            index.insert_batch(&ids, &flat)?;
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
                lexical.upsert(item.id, &item.text);
            }
            for &id in &applied.removed {
                lexical.remove(id);
            }
        }
        Ok(())
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
        if let (Some(item), Some(t)) = (item.as_mut(), self.accessed.lock().get(&id)) {
            t.apply(item);
        }
        Ok(item)
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

    fn remember_one(
        &self,
        tx: &mut Tx,
        applied: &mut Applied,
        staged: &mut Staged,
        m: NewMemory,
        v: Vec<f32>,
    ) -> Result<Remembered> {
        let now = self.now();
        let ns = m.namespace_or_default().to_string();
        let hash = content_hash(&ns, m.kind, &m.text);
        let exact = match staged.by_hash.get(&hash) {
            Some(&id) => Some(id),
            None => self.store.by_hash(&hash)?,
        };
        let near = match exact {
            Some(_) => None,
            None if staged.exact_only => None,
            None => self.near_duplicate(staged, &ns, m.kind, &v)?,
        };
        let Some(id) = exact.or(near) else {
            let item = self.insert_new(tx, applied, m, v.clone(), None)?;
            staged.remember_fresh(hash, &item, ns, v);
            return Ok(Remembered {
                id: item.id,
                action: RememberAction::New,
            });
        };
        let mut existing = match staged.items.remove(&id) {
            Some(item) => item,
            None => self.store.item(id)?.ok_or_else(|| {
                self.store
                    .corrupt(format!("hash entry points at missing item {id}"))
            })?,
        };
        if exact.is_some() || same_information(&existing.text, &m.text) {
            merge(&mut existing, m, now);
            tx.put(&existing, None)?;
            staged.by_hash.insert(hash, id);
            staged.items.insert(id, existing.clone());
            applied.items.push(existing);
            return Ok(Remembered {
                id,
                action: RememberAction::Merged,
            });
        }
        // A near-duplicate that says something else: never merged. A fact or triple becomes
        // the new version of the one it resembles; other kinds stand beside it.
        let supersedes = one_current_truth(m.kind).then_some(existing.id);
        let item = self.insert_new(tx, applied, m, v.clone(), supersedes)?;
        staged.remember_fresh(hash, &item, ns, v);
        let Some(previous) = supersedes else {
            staged.items.insert(id, existing);
            return Ok(Remembered {
                id: item.id,
                action: RememberAction::New,
            });
        };
        tx.unhash(&existing.content_hash(), previous)?;
        existing.superseded_by = Some(item.id);
        existing.updated = now;
        tx.put(&existing, None)?;
        staged.fresh.retain(|f| f.0 != previous);
        staged.items.insert(previous, existing.clone());
        applied.items.push(existing);
        Ok(Remembered {
            id: item.id,
            action: RememberAction::Superseded { previous },
        })
    }

    /// The unit document vector of `text`.
    pub(super) fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let v = self.embedder.embed_documents(&[text])?.remove(0);
        unit(v, self.embedder.dim()).map_err(Error::InvalidInput)
    }

    /// Writes `m` as a new memory with unit vector `v` (no de-duplication), as the new version
    /// of `supersedes` when given (the caller links the old version).
    pub(super) fn insert_new(
        &self,
        tx: &mut Tx,
        applied: &mut Applied,
        m: NewMemory,
        v: Vec<f32>,
        supersedes: Option<MemoryId>,
    ) -> Result<MemoryItem> {
        let id = tx.allocate_id();
        let mut item = m.into_item(id, self.now());
        item.supersedes = supersedes;
        item.strength = self
            .options
            .forgetting
            .initial_strength_ms(item.kind, item.importance)
            / 1000.0;
        tx.put(&item, Some(&v))?;
        applied.inserted.push((id, v));
        applied.items.push(item.clone());
        Ok(item)
    }

    /// The closest current memory of the same namespace and kind at or above the threshold,
    /// among stored memories and those added earlier in this batch.
    fn near_duplicate(
        &self,
        staged: &Staged,
        ns: &str,
        kind: Kind,
        v: &[f32],
    ) -> Result<Option<MemoryId>> {
        let Some(threshold) = self.options.dedup_threshold else {
            return Ok(None);
        };
        let mut best: Option<(f32, MemoryId)> = None;
        for (id, fns, fkind, fv) in &staged.fresh {
            if fns == ns && *fkind == kind {
                let s = memloop_index::simd::dot(fv, v);
                if s >= threshold && best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, *id));
                }
            }
        }
        let filter = crate::filter::MemoryFilter::new().namespace(ns).kind(kind);
        let cat = self.catalog.get()?.read();
        if let Some(c) = cat.compile(&filter) {
            let index = self.index.read().clone();
            let pred = |id: u64| cat.allows(&c, id);
            if let Some(hit) = index.search_filtered(v, 1, 32, &pred)?.first() {
                if hit.score >= threshold && best.is_none_or(|(b, _)| hit.score > b) {
                    best = Some((hit.score, hit.id));
                }
            }
        }
        Ok(best.map(|(_, id)| id))
    }
}

/// Merges a duplicate into its survivor: count, newest metadata, provenance.
fn merge(item: &mut MemoryItem, m: NewMemory, now: crate::clock::Timestamp) {
    item.count = item.count.saturating_add(1);
    item.updated = now;
    item.accessed = now;
    item.tags.extend(m.tags);
    item.tags.sort();
    item.tags.dedup();
    if let Some(i) = m.importance {
        item.importance = item.importance.max(i);
    }
    if let Some(s) = m.source {
        if !item.sources.contains(&s) {
            item.sources.push(s);
        }
    }
    item.concise = m.concise.or(item.concise.take());
    item.brief = m.brief.or(item.brief.take());
    item.triple = m.triple.or(item.triple.take());
    item.subject = m.subject.or(item.subject.take());
    item.outcome = m.outcome.or(item.outcome);
    item.pinned |= m.pinned;
}

fn note_changes(w: &mut WriterState, n: u64, synced: bool) {
    if n > 0 {
        w.unsaved += n;
        w.first_unsaved.get_or_insert_with(std::time::Instant::now);
        w.unflushed |= !synced;
    }
}

/// Normalises `v`, checking its dimension.
pub(crate) fn unit(mut v: Vec<f32>, dim: usize) -> Result<Vec<f32>, String> {
    if v.len() != dim {
        return Err(format!(
            "vector has {} dimensions, the model makes {dim}",
            v.len()
        ));
    }
    let norm = memloop_index::simd::dot(&v, &v).sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return Err("vector is zero or not finite".into());
    }
    // Already-unit vectors (from the embedder, or an export) are kept bit for bit, so a
    // memory scores the same in every store that holds it.
    if (norm - 1.0).abs() > 1e-6 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    Ok(v)
}
