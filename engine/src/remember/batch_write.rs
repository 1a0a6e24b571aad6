//! One batch write: its memories screened ([`Screener`]), each decided ([`Dedup::decide`]) and
//! then written as decided, in one transaction.
//!
//! Three steps per memory, in order: the screen finds what may be the same memory (by content
//! hash, in the index, earlier in the batch); [`BatchWrite`] picks the candidate and reads its
//! text; the pure decision says new, merged, superseded or beside; only then is anything
//! written. The rule "never drop information" is the decision's, in `dedup.rs`.

use memloop_index::UnitVector;
use rustc_hash::FxHashMap;

use super::dedup::{merges_near_duplicates, Candidate, Dedup, Merging, RememberAction, Remembered};
use super::index_ahead::{IndexAhead, INDEX_AHEAD_MIN};
use super::screen::{Screen, Screener};
use super::search_each::SearchEach;
use crate::error::Result;
use crate::item::{Kind, MemoryId, MemoryItem, NewMemory};
use crate::memory::{Applied, Inner};
use crate::retrieve::{fact_key, states_another_value};
use crate::store::Tx;

/// A batch of checked memories with their unit vectors (and their sentences' vectors, where
/// known), and how far they may merge.
pub(super) struct BatchWrite {
    batch: Vec<(NewMemory, UnitVector)>,
    sentences: Vec<Vec<Vec<f32>>>,
    merging: Merging,
}

impl BatchWrite {
    /// A write of `batch` (input and vectors checked), merging as `merging` says; a new
    /// memory keeps the sentence vectors at its place in `sentences` (none past its end).
    pub(super) fn new(
        batch: Vec<(NewMemory, UnitVector)>,
        sentences: Vec<Vec<Vec<f32>>>,
        merging: Merging,
    ) -> BatchWrite {
        BatchWrite {
            batch,
            sentences,
            merging,
        }
    }

    /// Writes the batch in one transaction; one [`Remembered`] per memory, in order.
    pub(super) fn run(self, inner: &Inner) -> Result<Vec<Remembered>> {
        let threshold = self.merging.threshold(inner.options.dedup_threshold);
        let batch = &self.batch;
        inner.write(|inner, tx, applied| {
            let mut done = Vec::with_capacity(batch.len());
            let mut staged = Staged::default();
            let mut consume = |tx: &mut Tx, applied: &mut Applied, i: usize, screen: Screen| {
                let (m, v) = &batch[i];
                let sentences = self.sentences.get(i).map_or(&[][..], Vec::as_slice);
                let step = Step {
                    inner,
                    tx,
                    applied,
                    sentences,
                };
                done.push(staged.write(step, threshold, m.clone(), v.clone(), screen)?);
                Ok(())
            };
            screener_for(batch.len()).screen(inner, tx, applied, batch, threshold, &mut consume)?;
            Ok(done)
        })
    }
}

/// The screener for a batch of `len` memories: large ones are indexed ahead of their write.
fn screener_for(len: usize) -> &'static dyn Screener {
    if len >= INDEX_AHEAD_MIN {
        &IndexAhead
    } else {
        &SearchEach
    }
}

/// What one memory's write works on.
struct Step<'a> {
    inner: &'a Inner,
    tx: &'a mut Tx,
    applied: &'a mut Applied,
    /// The vectors of the memory's sentences (empty for none).
    sentences: &'a [Vec<f32>],
}

/// Items created or merged earlier in the same batch (not yet visible through the database).
#[derive(Default)]
struct Staged {
    by_hash: FxHashMap<[u8; 32], MemoryId>,
    items: FxHashMap<MemoryId, MemoryItem>,
    /// Memories created in the batch and their vectors (their items are in `items`).
    fresh: Vec<(MemoryId, UnitVector)>,
    /// Triples created in the batch, by head and relation (`retrieve::fact_key`).
    facts: FxHashMap<String, Vec<MemoryId>>,
}

impl Staged {
    /// Decides for `m` (vector `v`, screened as `screen`) and writes it as decided.
    fn write(
        &mut self,
        s: Step<'_>,
        threshold: Option<f32>,
        m: NewMemory,
        v: UnitVector,
        screen: Screen,
    ) -> Result<Remembered> {
        let found = match self.candidate(threshold, &m, &v, screen) {
            Some(c) => Some((c, self.take_item(s.inner, c.id)?)),
            None if threshold.is_some() => self.other_value(s.inner, &m, screen)?,
            None => None,
        };
        let stored = found.as_ref().map(|(c, item)| {
            let told_late = m.valid_from.is_some_and(|from| from < item.valid_from);
            (*c, item.text.as_str(), told_late)
        });
        let decision = Dedup::decide(m.kind, &m.text, stored);
        let Some((_, mut existing)) = found else {
            let item = s.inner.insert_new(
                s.tx,
                s.applied,
                m,
                (v.clone(), s.sentences),
                None,
                screen.indexed_as,
            )?;
            self.remember_fresh(screen.hash, &item, v);
            return Ok(remembered(item.id, RememberAction::New));
        };
        let now = s.inner.now();
        let id = existing.id;
        match decision {
            Dedup::Merge { .. } => {
                merge(&mut existing, m, now);
                s.tx.put(&existing, None)?;
                s.applied.withdrawn.extend(screen.indexed_as);
                self.by_hash.insert(screen.hash, id);
                self.items.insert(id, existing.clone());
                s.applied.items.push(existing);
                Ok(remembered(id, RememberAction::Merged))
            }
            Dedup::Supersede { previous } => {
                let item = s.inner.insert_new(
                    s.tx,
                    s.applied,
                    m,
                    (v.clone(), s.sentences),
                    Some(previous),
                    screen.indexed_as,
                )?;
                self.remember_fresh(screen.hash, &item, v);
                s.tx.unhash(
                    &existing.content_hash(),
                    previous,
                    existing.scope_fields()[0],
                )?;
                existing.superseded_by = Some(item.id);
                existing.valid_until = Some(closed_at(&existing, item.valid_from));
                existing.updated = now;
                s.tx.put(&existing, None)?;
                self.fresh.retain(|f| f.0 != previous);
                self.items.insert(previous, existing.clone());
                s.applied.items.push(existing);
                Ok(remembered(item.id, RememberAction::Superseded { previous }))
            }
            // `New` comes only without a candidate (above); `Beside` keeps the candidate.
            Dedup::Beside { .. } | Dedup::New => {
                let item = s.inner.insert_new(
                    s.tx,
                    s.applied,
                    m,
                    (v.clone(), s.sentences),
                    None,
                    screen.indexed_as,
                )?;
                self.remember_fresh(screen.hash, &item, v);
                self.items.insert(id, existing);
                Ok(remembered(item.id, RememberAction::New))
            }
        }
    }

    /// The memory `m` may merge into: an exact duplicate (earlier in the batch, or stored),
    /// else the closest near duplicate in its place at or above `threshold`.
    fn candidate(
        &self,
        threshold: Option<f32>,
        m: &NewMemory,
        v: &UnitVector,
        screen: Screen,
    ) -> Option<Candidate> {
        if let Some(id) = self.by_hash.get(&screen.hash).copied().or(screen.stored) {
            return Some(Candidate { id, exact: true });
        }
        let threshold = threshold.filter(|_| merges_near_duplicates(m.kind))?;
        let id = self.near_duplicate(threshold, m, v, screen)?;
        Some(Candidate { id, exact: false })
    }

    /// The closest current memory of `m`'s namespace, kind and scope at or above `threshold`,
    /// among stored memories (`screen.in_index`) and those added earlier in this batch
    /// (looked for only when `screen.in_batch` says one is close enough).
    fn near_duplicate(
        &self,
        threshold: f32,
        m: &NewMemory,
        v: &UnitVector,
        screen: Screen,
    ) -> Option<MemoryId> {
        let (ns, scope, kind) = (m.namespace_or_default(), m.scope_fields(), m.kind);
        let mut best: Option<(f32, MemoryId)> = None;
        let fresh: &[(MemoryId, UnitVector)] = if screen.in_batch { &self.fresh } else { &[] };
        for (id, fv) in fresh {
            let same_place = self
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
            let current = self
                .items
                .get(&id)
                .is_none_or(|i| i.superseded_by.is_none());
            if current && best.is_none_or(|(b, _)| s > b) {
                best = Some((s, id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// For a triple that no near duplicate was found for: a current triple of its place with
    /// the same head and relation and another tail (`retrieve::states_another_value`: Hank
    /// lives in Madrid after Hank lives in Lisbon), among the closest the screen found in the
    /// index and the triples created earlier in the batch with the same head and relation;
    /// the one whose validity began last when several do. It is decided on as a near
    /// duplicate saying something else is: the newer value supersedes it, closing its
    /// validity, and an earlier value told late stands beside it.
    fn other_value(
        &mut self,
        inner: &Inner,
        m: &NewMemory,
        screen: Screen,
    ) -> Result<Option<(Candidate, MemoryItem)>> {
        let Some(triple) = m.triple.as_ref().filter(|_| m.kind == Kind::Triple) else {
            return Ok(None);
        };
        if screen.stored.is_some() {
            return Ok(None);
        }
        let (ns, scope) = (m.namespace_or_default(), m.scope_fields());
        let in_batch = self.facts.get(&fact_key(triple)).into_iter().flatten();
        let mut ids: Vec<MemoryId> = screen.same_fact.iter().flatten().copied().collect();
        ids.extend(in_batch.copied());
        ids.sort_unstable();
        ids.dedup();
        let mut best: Option<MemoryItem> = None;
        for id in ids {
            let item = match self.items.get(&id) {
                Some(item) => item.clone(),
                None => match inner.store.item(id)? {
                    Some(item) => item,
                    None => continue,
                },
            };
            let same_place =
                item.namespace == ns && item.kind == m.kind && item.scope_fields() == scope;
            if same_place
                && item.superseded_by.is_none()
                && states_another_value(triple, &item)
                && best.as_ref().is_none_or(|b| item.valid_from > b.valid_from)
            {
                best = Some(item);
            }
        }
        Ok(match best {
            Some(item) => {
                let c = Candidate {
                    id: item.id,
                    exact: false,
                };
                Some((c, self.take_item(inner, c.id)?))
            }
            None => None,
        })
    }

    /// Memory `id` as this batch left it, or as stored.
    fn take_item(&mut self, inner: &Inner, id: MemoryId) -> Result<MemoryItem> {
        match self.items.remove(&id) {
            Some(item) => Ok(item),
            None => inner.store.item(id)?.ok_or_else(|| {
                inner
                    .store
                    .corrupt(format!("hash entry points at missing item {id}"))
            }),
        }
    }

    /// Notes a memory created in this batch, so later inputs can merge into it.
    fn remember_fresh(&mut self, hash: [u8; 32], item: &MemoryItem, v: UnitVector) {
        if let Some(t) = item.triple.as_ref().filter(|_| item.kind == Kind::Triple) {
            self.facts.entry(fact_key(t)).or_default().push(item.id);
        }
        self.by_hash.insert(hash, item.id);
        self.items.insert(item.id, item.clone());
        self.fresh.push((item.id, v));
    }
}

/// Where a superseded version's validity ends: where its successor's begins, never before it
/// began itself, and never later than an end it already had.
pub(super) fn closed_at(
    old: &MemoryItem,
    successor_from: crate::clock::Timestamp,
) -> crate::clock::Timestamp {
    let end = successor_from.max(old.valid_from);
    old.valid_until.map_or(end, |until| until.min(end))
}

fn remembered(id: MemoryId, action: RememberAction) -> Remembered {
    Remembered { id, action }
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
