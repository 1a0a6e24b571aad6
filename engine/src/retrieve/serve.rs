//! Serving the final hits of a recall: each explained (importance, tier, retention, feedback),
//! then touched (access time, reinforcement). Also the lexical index slot the hybrid search
//! reads.

use crate::clock::Timestamp;
use crate::error::Result;
use crate::item::MemoryId;
use crate::lexical::LexicalIndex;
use crate::memory::{Inner, Touch};
use crate::store::FEEDBACK;
use crate::vocabulary::{FeedbackState, Hit};

impl Inner {
    /// Final hits leave: explained (tier as found), then touched and reinforced.
    pub(crate) fn serve(&self, hits: &mut [Hit]) -> Result<()> {
        self.apply_pending(hits.iter_mut().map(|h| &mut h.item));
        self.explain(hits)?;
        self.touch(hits, self.now())
    }

    /// Fills in each hit's importance, tier, retention and feedback.
    fn explain(&self, hits: &mut [Hit]) -> Result<()> {
        let ids: Vec<MemoryId> = hits.iter().map(|h| h.item.id).collect();
        let feedback = self.store.sides(FEEDBACK, &ids)?;
        let policy = &self.options.forgetting;
        let now = self.now();
        for (h, fb) in hits.iter_mut().zip(feedback) {
            h.explain.importance = h.item.importance;
            h.explain.tier = h.item.tier;
            h.explain.retention = if policy.enabled && !h.item.pinned {
                policy.retention(&h.item, now)
            } else {
                1.0
            };
            h.explain.feedback = fb
                .map(|b| FeedbackState::decode(&self.store, &b))
                .transpose()?;
        }
        Ok(())
    }

    /// Records a recall of `hits` at `now`: access time, and a reinforcement (spaced
    /// repetition) when forgetting is on. The catalog sees it at once; the database with the
    /// next write or checkpoint.
    fn touch(&self, hits: &mut [Hit], now: Timestamp) -> Result<()> {
        let policy = &self.options.forgetting;
        let mut pending = self.accessed.lock();
        let mut reinforced = Vec::new();
        for h in hits.iter_mut() {
            if let Some(earlier) = pending.get(&h.item.id) {
                earlier.apply(&mut h.item);
            }
            h.item.accessed = now;
            let mut touch = Touch {
                accessed: now,
                reinforced: None,
            };
            if policy.enabled && !h.item.pinned {
                policy.reinforce(&mut h.item, now);
                touch.reinforced = Some((h.item.strength, h.item.decay_anchor, h.item.reinforced));
                reinforced.push(h.item.clone());
            }
            pending.insert(h.item.id, touch);
        }
        drop(pending);
        if !reinforced.is_empty() {
            self.catalog.upsert_or_defer(reinforced);
        }
        Ok(())
    }

    /// The lexical index, built from every stored memory on first use (writes wait while it
    /// is built; afterwards every write keeps it current).
    pub(crate) fn lexical(&self) -> Result<parking_lot::RwLockReadGuard<'_, Option<LexicalIndex>>> {
        {
            let slot = self.lexical.read();
            if slot.is_some() {
                return Ok(slot);
            }
        }
        let _writer = self.writer.lock();
        if self.lexical.read().is_none() {
            let mut index = LexicalIndex::default();
            self.store
                .for_each_item(|item| index.upsert(item.id, item.user.as_deref(), &item.text))?;
            *self.lexical.write() = Some(index);
        }
        Ok(self.lexical.read())
    }
}
