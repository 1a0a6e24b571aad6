//! Remembering: remember (with de-duplication, `dedup.rs` deciding what may merge), update
//! (with history), forget. Each runs through the write pipeline of `memory/apply.rs`.

use memloop_index::UnitVector;

mod batch_write;
mod close_pairs;
pub mod dedup;
mod index_ahead;
mod screen;
mod search_each;

use batch_write::{closed_at, BatchWrite};
use dedup::{Merging, Remembered};

use crate::error::{Error, Result};
use crate::invalid::InvalidInput;
use crate::item::{check_text, check_validity, MemoryId, MemoryItem, NewMemory, Scope};
use crate::memory::lineage::Unlinker;
use crate::memory::views::{Advanced, Scoped};
use crate::memory::{Applied, Inner, Memory};
use crate::store::Tx;

use crate::vocabulary::Update;

impl Memory {
    /// Remembers one memory; returns the id that now holds its text: a new memory's, the existing
    /// memory's it merged into, or the new version's when it superseded a fact (see
    /// [`Memory::remember_explained`] for which, and [`crate::dedup`] for the rule: nothing is
    /// merged that says something else).
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for bad input; [`crate::Error::Embed`] /
    /// [`crate::Error::Store`] / [`crate::Error::Index`]. On error nothing was written.
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
        Ok(self.advanced().remember_batch_explained(vec![memory])?[0])
    }

    /// Remembers many memories: embedded together (the embedder batches and parallelises),
    /// written in one transaction (one fsync in synced mode). Returns one id per input, in
    /// order; duplicates inside the batch merge like duplicates of stored memories.
    ///
    /// # Errors
    /// As [`Memory::remember`]; any invalid input rejects the whole batch.
    pub fn remember_batch(&self, memories: Vec<NewMemory>) -> Result<Vec<MemoryId>> {
        let done = self.embed_and_remember(memories, Merging::Near)?;
        Ok(done.into_iter().map(|r| r.id).collect())
    }

    /// Remembers `memories`, merging only exact duplicates (tasks with different outcomes or
    /// steps, or a document's overlapping chunks, must stay apart however similar they read).
    pub(crate) fn remember_distinct(&self, memories: Vec<NewMemory>) -> Result<Vec<MemoryId>> {
        let done = self.embed_and_remember(memories, Merging::ExactOnly)?;
        Ok(done.into_iter().map(|r| r.id).collect())
    }

    fn embed_and_remember(
        &self,
        memories: Vec<NewMemory>,
        merging: Merging,
    ) -> Result<Vec<Remembered>> {
        let now = self.inner.now();
        for (i, m) in memories.iter().enumerate() {
            m.validate(self.inner.options.max_text_bytes, now)
                .map_err(|e| e.at(format!("memory {i}")))?;
        }
        let texts: Vec<&str> = memories.iter().map(|m| m.text.as_str()).collect();
        let (vectors, sentences): (Vec<UnitVector>, Vec<Vec<Vec<f32>>>) = if self.inner.sentences {
            self.inner
                .embed_documents_with_sentences(&texts)?
                .into_iter()
                .unzip()
        } else {
            (self.inner.embed_documents(&texts)?, Vec::new())
        };
        self.remember_checked(
            memories.into_iter().zip(vectors).collect(),
            sentences,
            merging,
        )
    }

    /// Remembers memories whose input and vectors were checked, each new one with its
    /// sentences' vectors where `sentences` has them (in the same order; empty for none).
    fn remember_checked(
        &self,
        checked: Vec<(NewMemory, UnitVector)>,
        sentences: Vec<Vec<Vec<f32>>>,
        merging: Merging,
    ) -> Result<Vec<Remembered>> {
        let done = BatchWrite::new(checked, sentences, merging).run(&self.inner)?;
        self.inner.maybe_sweep();
        Ok(done)
    }

    /// Changes memory `id`. A new text makes a new version: the old one stays, superseded (out of
    /// default ranking, found with [`crate::MemoryFilter::include_superseded`]), and the returned
    /// id is the new version's. Otherwise the memory is changed in place and its id returned.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`]; [`crate::Error::InvalidInput`] for bad values or when `id` was
    /// already superseded (update the current version).
    pub fn update(&self, id: MemoryId, update: Update) -> Result<MemoryId> {
        self.scoped(&Scope::default()).update(id, update)
    }

    /// Deletes memory `id` from the store and the index, durably.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] if there is no such memory.
    pub fn forget(&self, id: MemoryId) -> Result<()> {
        self.scoped(&Scope::default()).forget(id)
    }
}

impl Inner {
    /// Writes `m` as a new memory with unit vector `v` and its sentences' vectors (none for
    /// an empty slice; no de-duplication), as the new version of `supersedes` when given (the
    /// caller links the old version). With `indexed_as`, its vector is in the index already
    /// under that id, which it takes; otherwise it gets a fresh id and goes into the index
    /// after the commit.
    pub(crate) fn insert_new(
        &self,
        tx: &mut Tx,
        applied: &mut Applied,
        m: NewMemory,
        (v, sentences): (UnitVector, &[Vec<f32>]),
        supersedes: Option<MemoryId>,
        indexed_as: Option<MemoryId>,
    ) -> Result<MemoryItem> {
        let id = match indexed_as {
            Some(id) => id,
            None => tx.allocate_id()?,
        };
        let mut item = m.into_item(id, self.now());
        item.created = self.created_now(item.scope_fields())?;
        item.supersedes = supersedes;
        item.strength = self
            .options
            .forgetting
            .initial_strength_ms(item.kind, item.importance)
            / 1000.0;
        tx.put(&item, Some(&v))?;
        tx.put_sentences(&item, sentences)?;
        if indexed_as.is_none() {
            applied.inserted.push((id, v));
        }
        applied.items.push(item.clone());
        Ok(item)
    }
}

impl<'a> Advanced<'a> {
    /// [`Memory::remember_batch`], saying for each input what was done.
    ///
    /// # Errors
    /// As [`Memory::remember_batch`].
    pub fn remember_batch_explained(&self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        self.memory.embed_and_remember(memories, Merging::Near)
    }

    /// Remembers memories whose embeddings the caller computed with this store's model (bulk
    /// loads, benchmarks). Vectors are normalised; de-duplication applies as in
    /// [`Memory::remember_batch`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a vector of the wrong dimension or that cannot be
    /// normalised; otherwise as [`Memory::remember_batch`].
    pub fn remember_embedded(&self, memories: Vec<(NewMemory, Vec<f32>)>) -> Result<Vec<MemoryId>> {
        let mut checked = Vec::with_capacity(memories.len());
        for (i, (m, v)) in memories.into_iter().enumerate() {
            let at = || format!("memory {i}");
            m.validate(
                self.memory.inner.options.max_text_bytes,
                self.memory.inner.now(),
            )
            .map_err(|e| e.at(at()))?;
            let v = self.memory.inner.unit(v).map_err(|e| e.at(at()))?;
            checked.push((m, v));
        }
        let done = self
            .memory
            .remember_checked(checked, Vec::new(), Merging::Near)?;
        Ok(done.into_iter().map(|r| r.id).collect())
    }
}

impl<'a> Scoped<'a> {
    /// [`Memory::update`] for a caller confined to `scope`: a memory outside it is
    /// [`crate::Error::NotFound`] and stays as it is.
    ///
    /// # Errors
    /// As [`Memory::update`].
    pub fn update(&self, id: MemoryId, update: Update) -> Result<MemoryId> {
        let scope = &self.scope;
        if let Some(i) = update.importance {
            if !(0.0..=1.0).contains(&i) {
                return Err(InvalidInput::Importance(i).into());
            }
        }
        if let Some(t) = &update.text {
            check_text(t, self.memory.inner.options.max_text_bytes)?;
        }
        // Refused before the new text is embedded; the window the update leaves is checked
        // below, against the version's own bounds.
        if let Some(from) = update.valid_from {
            check_validity(from, update.valid_until)?;
        }
        let new_text = update.text.clone();
        let (vector, sentences) = match &new_text {
            Some(t) if self.memory.inner.sentences => {
                let (v, s) = self
                    .memory
                    .inner
                    .embed_documents_with_sentences(&[t])?
                    .remove(0);
                (Some(v), s)
            }
            Some(t) => (Some(self.memory.inner.embed_one(t)?), Vec::new()),
            None => (None, Vec::new()),
        };
        self.memory.inner.write(|inner, tx, applied| {
            let mut old = inner
                .store
                .item(id)?
                .filter(|i| crate::item::scope_covers(scope.fields(), i.scope_fields()))
                .ok_or(Error::NotFound(id))?;
            if let Some(newer) = old.superseded_by {
                return Err(InvalidInput::Superseded { id, by: newer }.into());
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
                    tx.unhash(&old.content_hash(), old.id, old.scope_fields()[0])?;
                    new.id = tx.allocate_id()?;
                    new.text = text;
                    new.created = inner.created_now(new.scope_fields())?;
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
                    new.valid_from = update.valid_from.unwrap_or(now);
                    new.valid_until = update.valid_until;
                    check_validity(new.valid_from, new.valid_until)?;
                    old.superseded_by = Some(new.id);
                    old.valid_until = Some(closed_at(&old, new.valid_from));
                    tx.put(&old, None)?;
                    tx.put(&new, Some(&vector))?;
                    tx.put_sentences(&new, &sentences)?;
                    applied.inserted.push((new.id, vector));
                    applied.items.push(old);
                }
                _ => {
                    // The same version: its window moves where the update says.
                    new.valid_from = update.valid_from.unwrap_or(new.valid_from);
                    new.valid_until = update.valid_until.or(new.valid_until);
                    check_validity(new.valid_from, new.valid_until)?;
                    tx.put(&new, None)?
                }
            }
            let id = new.id;
            applied.items.push(new);
            Ok(id)
        })
    }

    /// [`Memory::forget`] for a caller confined to `scope`: a memory outside it is
    /// [`crate::Error::NotFound`] and stays.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] if there is no such memory in `scope`.
    pub fn forget(&self, id: MemoryId) -> Result<()> {
        let scope = &self.scope;
        self.memory.inner.write(|inner, tx, applied| {
            let item = inner
                .store
                .item(id)?
                .filter(|i| crate::item::scope_covers(scope.fields(), i.scope_fields()))
                .ok_or(Error::NotFound(id))?;
            // Its neighbours in the lineage close the gap it leaves (sync's merge rules).
            let mut lineage = Unlinker::new(&inner.store);
            lineage.unlink(tx, item.id)?;
            lineage.finish(tx, applied)?;
            tx.delete(&item)?;
            // The forgetting log keeps the start of a demoted memory's text: forgotten for
            // good means gone from there too.
            tx.drop_forget_events(|event_id, _| event_id == id)?;
            applied.removed.push(id);
            Ok(())
        })
    }
}
