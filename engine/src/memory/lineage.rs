//! Taking versions out of their lineages inside one write: a forget, a forgetting sweep and an
//! erasure close the gap each removed version leaves, as sync's merge rules say (of a
//! lineage's live versions the one made last is current, `crate::merge`), and record what a
//! sync needs to send the same lineage to every device.

use rustc_hash::{FxHashMap, FxHashSet};

use super::Applied;
use crate::error::Result;
use crate::item::{MemoryId, MemoryItem};
use crate::store::{forgotten_next_key, forgotten_prev_key, lineage_prev_key, Store, Tx};

/// The versions one transaction changed or removed so far, read before the store (whose
/// reads do not see the transaction's writes), with what it changed written at
/// [`Unlinker::finish`].
pub(crate) struct Unlinker<'s> {
    store: &'s Store,
    changed: FxHashMap<MemoryId, MemoryItem>,
    removed: FxHashSet<MemoryId>,
}

impl<'s> Unlinker<'s> {
    /// Nothing changed yet.
    pub(crate) fn new(store: &'s Store) -> Self {
        Unlinker {
            store,
            changed: FxHashMap::default(),
            removed: FxHashSet::default(),
        }
    }

    /// Version `id` as this transaction left it so far (`None`: not stored, or removed).
    pub(crate) fn get(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        if self.removed.contains(&id) {
            return Ok(None);
        }
        match self.changed.get(&id) {
            Some(i) => Ok(Some(i.clone())),
            None => self.store.item(id),
        }
    }

    /// Takes version `id` out of its lineage (the caller deletes it): the versions before and
    /// after it are linked to each other, so forgetting a current version makes the one
    /// before it current again, here as on every device that applies the forget. Recorded
    /// for sync: the version it followed (sent with the forget, so a device that never held
    /// it still places the versions after it; for a version first here only because the
    /// versions before it were removed, the one it was made from), the one after it (which
    /// stands for it: for a first version, for the lineage), and for the version after it
    /// the one it followed when first made (a sync sends a version with the predecessor it
    /// was made from, whatever was removed since). Returns the version as it stood; `None`
    /// when it is not stored.
    pub(crate) fn unlink(&mut self, tx: &mut Tx, id: MemoryId) -> Result<Option<MemoryItem>> {
        let Some(item) = self.get(id)? else {
            return Ok(None);
        };
        let prev = item.supersedes.map(|p| self.get(p)).transpose()?.flatten();
        let next = item
            .superseded_by
            .map(|n| self.get(n))
            .transpose()?
            .flatten();
        if let Some(mut p) = prev {
            tx.set_meta(&forgotten_prev_key(id), &p.id.get().to_le_bytes())?;
            p.superseded_by = next.as_ref().map(|n| n.id);
            self.changed.insert(p.id, p);
        } else if let Some(from) = meta_id(tx, &lineage_prev_key(id))? {
            // First here only because the versions before it were removed here (or it stands
            // for a lineage whose first version was forgotten before it arrived): the version
            // it was made from, as a sync sent it, so the forget is sent with the same
            // predecessor from here as from every device that held it in its lineage.
            tx.set_meta(&forgotten_prev_key(id), &from.get().to_le_bytes())?;
        }
        if let Some(mut n) = next {
            tx.set_meta(&forgotten_next_key(id), &n.id.get().to_le_bytes())?;
            if tx.meta(&lineage_prev_key(n.id))?.is_none() {
                tx.set_meta(&lineage_prev_key(n.id), &id.get().to_le_bytes())?;
            }
            n.supersedes = item.supersedes;
            self.changed.insert(n.id, n);
        }
        self.changed.remove(&id);
        self.removed.insert(id);
        Ok(Some(item))
    }

    /// Records a change of version `item` made by the caller beside the unlinking (written
    /// at [`Unlinker::finish`], unless it is removed meanwhile).
    pub(crate) fn change(&mut self, item: MemoryItem) {
        self.changed.insert(item.id, item);
    }

    /// Writes the versions whose links changed (not those removed) and names them in
    /// `applied`.
    pub(crate) fn finish(self, tx: &mut Tx, applied: &mut Applied) -> Result<()> {
        let mut changed: Vec<MemoryItem> = self
            .changed
            .into_values()
            .filter(|i| !self.removed.contains(&i.id))
            .collect();
        changed.sort_by_key(|i| i.id);
        for item in changed {
            tx.put(&item, None)?;
            applied.items.push(item);
        }
        Ok(())
    }
}

/// [`made_from`] read outside a write (a snapshot sends each version with the predecessor a
/// push would send it with, whatever was removed since it was made).
pub(crate) fn stored_made_from(store: &Store, item: &MemoryItem) -> Result<Option<MemoryId>> {
    Ok(id_of(store.meta(&lineage_prev_key(item.id))?).or(item.supersedes))
}

/// A local memory id as a lineage key's value holds it (8 bytes, little-endian).
fn id_of(bytes: Option<Vec<u8>>) -> Option<MemoryId> {
    bytes
        .and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok())
        .map(u64::from_le_bytes)
        .map(MemoryId::new)
}

/// A local memory id as a lineage key holds it (8 bytes, little-endian).
fn meta_id(tx: &mut Tx, key: &str) -> Result<Option<MemoryId>> {
    Ok(id_of(tx.meta(key)?))
}

/// What [`Unlinker::unlink`] recorded of local version `id`, removed here: the version it
/// followed, and the one that followed it.
pub(crate) fn removed_between(
    tx: &mut Tx,
    id: MemoryId,
) -> Result<(Option<MemoryId>, Option<MemoryId>)> {
    Ok((
        meta_id(tx, &forgotten_prev_key(id))?,
        meta_id(tx, &forgotten_next_key(id))?,
    ))
}

/// The local version that version `item` was made from, as a sync sends it: the one it
/// follows now, or, when versions between were removed here, the one it followed when made
/// ([`Unlinker::unlink`]).
pub(crate) fn made_from(tx: &mut Tx, item: &MemoryItem) -> Result<Option<MemoryId>> {
    Ok(meta_id(tx, &lineage_prev_key(item.id))?.or(item.supersedes))
}
