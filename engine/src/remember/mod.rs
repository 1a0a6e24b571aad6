//! Remembering: remember (with de-duplication, `dedup.rs` deciding what may merge), update
//! (with history), forget. Each runs through the write pipeline of `memory/apply.rs`.

use memloop_index::UnitVector;
use rustc_hash::FxHashMap;

mod close_pairs;
pub mod dedup;
mod index_ahead;
mod screen;

use dedup::{
    merges_near_duplicates, one_current_truth, same_information, RememberAction, Remembered,
};

use crate::error::{Error, Result};
use crate::invalid::InvalidInput;
use crate::item::{check_text, check_validity, Kind, MemoryId, MemoryItem, NewMemory, Scope};
use crate::memory::{Applied, Inner, Memory};
use crate::store::Tx;
use screen::Screen;

use crate::vocabulary::Update;

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
        let mut checked = Vec::with_capacity(memories.len());
        for (i, (m, v)) in memories.into_iter().enumerate() {
            let at = || format!("memory {i}");
            m.validate(self.inner.options.max_text_bytes, self.inner.now())
                .map_err(|e| e.at(at()))?;
            let v = self.inner.unit(v).map_err(|e| e.at(at()))?;
            checked.push((m, v));
        }
        let done = self.remember_checked(checked, false)?;
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
        let now = self.inner.now();
        for (i, m) in memories.iter().enumerate() {
            m.validate(self.inner.options.max_text_bytes, now)
                .map_err(|e| e.at(format!("memory {i}")))?;
        }
        let texts: Vec<&str> = memories.iter().map(|m| m.text.as_str()).collect();
        let vectors = self.inner.embed_documents(&texts)?;
        self.remember_checked(memories.into_iter().zip(vectors).collect(), exact_only)
    }

    /// Remembers memories whose input and vectors were checked.
    fn remember_checked(
        &self,
        checked: Vec<(NewMemory, UnitVector)>,
        exact_only: bool,
    ) -> Result<Vec<Remembered>> {
        let ids = self.inner.write(|inner, tx, applied| {
            let mut ids = Vec::with_capacity(checked.len());
            let mut staged = Staged {
                exact_only,
                ..Staged::default()
            };
            let consume = |tx: &mut Tx, applied: &mut Applied, i: usize, screen: Screen| {
                let (m, v) = &checked[i];
                let (m, v) = (m.clone(), v.clone());
                ids.push(inner.remember_one(tx, applied, &mut staged, m, v, screen)?);
                Ok(())
            };
            if checked.len() >= index_ahead::INDEX_AHEAD_MIN {
                inner.index_ahead(tx, applied, &checked, exact_only, consume)?;
            } else {
                inner.screen_each(tx, applied, &checked, exact_only, consume)?;
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
        self.update_in(&Scope::default(), id, update)
    }

    /// [`Memory::update`] for a caller confined to `scope`: a memory outside it is
    /// [`Error::NotFound`] and stays as it is.
    ///
    /// # Errors
    /// As [`Memory::update`].
    pub fn update_in(&self, scope: &Scope, id: MemoryId, update: Update) -> Result<MemoryId> {
        if let Some(i) = update.importance {
            if !(0.0..=1.0).contains(&i) {
                return Err(InvalidInput::Importance(i).into());
            }
        }
        if let Some(t) = &update.text {
            check_text(t, self.inner.options.max_text_bytes)?;
        }
        // Refused before the new text is embedded; the window the update leaves is checked
        // below, against the version's own bounds.
        if let Some(from) = update.valid_from {
            check_validity(from, update.valid_until)?;
        }
        let new_text = update.text.clone();
        let vector = match &new_text {
            Some(t) => Some(self.inner.embed_one(t)?),
            None => None,
        };
        self.inner.write(|inner, tx, applied| {
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
                    tx.unhash(&old.content_hash(), old.id)?;
                    new.id = tx.allocate_id()?;
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
                    new.valid_from = update.valid_from.unwrap_or(now);
                    new.valid_until = update.valid_until;
                    check_validity(new.valid_from, new.valid_until)?;
                    old.superseded_by = Some(new.id);
                    old.valid_until = Some(closed_at(&old, new.valid_from));
                    tx.put(&old, None)?;
                    tx.put(&new, Some(&vector))?;
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

    /// Deletes memory `id` from the store and the index, durably.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no such memory.
    pub fn forget(&self, id: MemoryId) -> Result<()> {
        self.forget_in(&Scope::default(), id)
    }

    /// [`Memory::forget`] for a caller confined to `scope`: a memory outside it is
    /// [`Error::NotFound`] and stays.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no such memory in `scope`.
    pub fn forget_in(&self, scope: &Scope, id: MemoryId) -> Result<()> {
        self.inner.write(|inner, tx, applied| {
            let item = inner
                .store
                .item(id)?
                .filter(|i| crate::item::scope_covers(scope.fields(), i.scope_fields()))
                .ok_or(Error::NotFound(id))?;
            tx.delete(&item)?;
            // The forgetting log keeps the start of a demoted memory's text: forgotten for
            // good means gone from there too.
            tx.drop_forget_events(|event_id, _| event_id == id)?;
            applied.removed.push(id);
            Ok(())
        })
    }
}

/// Items created or merged earlier in the same batch (not yet visible through the database).
#[derive(Default)]
struct Staged {
    by_hash: FxHashMap<[u8; 32], MemoryId>,
    items: FxHashMap<MemoryId, MemoryItem>,
    /// Memories created in the batch and their vectors (their items are in `items`).
    fresh: Vec<(MemoryId, UnitVector)>,
    /// Merge exact duplicates only.
    exact_only: bool,
}

impl Staged {
    /// Notes a memory created in this batch, so later inputs can merge into it.
    fn remember_fresh(&mut self, hash: [u8; 32], item: &MemoryItem, v: UnitVector) {
        self.by_hash.insert(hash, item.id);
        self.items.insert(item.id, item.clone());
        self.fresh.push((item.id, v));
    }
}

impl Inner {
    fn remember_one(
        &self,
        tx: &mut Tx,
        applied: &mut Applied,
        staged: &mut Staged,
        m: NewMemory,
        v: UnitVector,
        screen: Screen,
    ) -> Result<Remembered> {
        let now = self.now();
        let hash = screen.hash;
        let exact = staged.by_hash.get(&hash).copied().or(screen.stored);
        let near = match exact {
            Some(_) => None,
            None if staged.exact_only || !merges_near_duplicates(m.kind) => None,
            None => {
                let ns = m.namespace_or_default();
                self.near_duplicate(staged, ns, m.scope_fields(), m.kind, &v, screen)
            }
        };
        let Some(id) = exact.or(near) else {
            let item = self.insert_new(tx, applied, m, v.clone(), None, screen.indexed_as)?;
            staged.remember_fresh(hash, &item, v);
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
            applied.withdrawn.extend(screen.indexed_as);
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
        let item = self.insert_new(tx, applied, m, v.clone(), supersedes, screen.indexed_as)?;
        staged.remember_fresh(hash, &item, v);
        let Some(previous) = supersedes else {
            staged.items.insert(id, existing);
            return Ok(Remembered {
                id: item.id,
                action: RememberAction::New,
            });
        };
        tx.unhash(&existing.content_hash(), previous)?;
        existing.superseded_by = Some(item.id);
        existing.valid_until = Some(closed_at(&existing, item.valid_from));
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

    /// Writes `m` as a new memory with unit vector `v` (no de-duplication), as the new version
    /// of `supersedes` when given (the caller links the old version). With `indexed_as`, its
    /// vector is in the index already under that id, which it takes; otherwise it gets a fresh
    /// id and goes into the index after the commit.
    pub(crate) fn insert_new(
        &self,
        tx: &mut Tx,
        applied: &mut Applied,
        m: NewMemory,
        v: UnitVector,
        supersedes: Option<MemoryId>,
        indexed_as: Option<MemoryId>,
    ) -> Result<MemoryItem> {
        let id = match indexed_as {
            Some(id) => id,
            None => tx.allocate_id()?,
        };
        let mut item = m.into_item(id, self.now());
        item.supersedes = supersedes;
        item.strength = self
            .options
            .forgetting
            .initial_strength_ms(item.kind, item.importance)
            / 1000.0;
        tx.put(&item, Some(&v))?;
        if indexed_as.is_none() {
            applied.inserted.push((id, v));
        }
        applied.items.push(item.clone());
        Ok(item)
    }

    /// The closest current memory of the same namespace and kind at or above the threshold,
    /// among stored memories (`screen.in_index`) and those added earlier in this batch
    /// (looked for only when `screen.in_batch` says one is close enough).
    fn near_duplicate(
        &self,
        staged: &Staged,
        ns: &str,
        scope: [Option<&str>; 3],
        kind: Kind,
        v: &UnitVector,
        screen: Screen,
    ) -> Option<MemoryId> {
        let threshold = self.options.dedup_threshold?;
        let mut best: Option<(f32, MemoryId)> = None;
        let fresh: &[(MemoryId, UnitVector)] = if screen.in_batch { &staged.fresh } else { &[] };
        for (id, fv) in fresh {
            let same_place = staged
                .items
                .get(id)
                .is_some_and(|f| f.namespace == ns && f.kind == kind && f.scope_fields() == scope);
            if same_place {
                let s = fv.cosine(v);
                if s >= threshold && best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, *id));
                }
            }
        }
        if let Some((s, id)) = screen.in_index {
            // The screen read the catalog as the batch began: a memory superseded earlier in
            // the batch is no longer current, and nothing merges into it or supersedes it again.
            let current = staged
                .items
                .get(&id)
                .is_none_or(|i| i.superseded_by.is_none());
            if current && best.is_none_or(|(b, _)| s > b) {
                best = Some((s, id));
            }
        }
        best.map(|(_, id)| id)
    }
}

/// Where a superseded version's validity ends: where its successor's begins, never before it
/// began itself, and never later than an end it already had.
fn closed_at(old: &MemoryItem, successor_from: crate::clock::Timestamp) -> crate::clock::Timestamp {
    let end = successor_from.max(old.valid_from);
    old.valid_until.map_or(end, |until| until.min(end))
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
