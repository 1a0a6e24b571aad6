//! Erasing a scope: everything of one user, agent or session, gone from every file of the
//! store — the database (rewritten, so no freed page keeps it), the index file (saved without
//! the erased nodes), the forgetting log and the in-memory lexical index.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use crate::crypt::receipt::ErasureReceipt;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::forget::ForgetEvent;
use crate::item::{scope_covers, MemoryId, Scope};
use crate::memory::lineage::Unlinker;
use crate::memory::views::{Admin, Scoped};
use crate::memory::Memory;
use crate::merge::{erases, erasure_bound};
use crate::store::Carried;

/// What [`crate::Scoped::erase`] erased.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ScopeErasure {
    /// The scope erased.
    pub scope: Scope,
    /// Memories deleted, superseded versions included.
    pub memories: usize,
    /// Forgetting-log events deleted (they keep the start of a forgotten memory's text).
    pub log_events: usize,
    /// The database file's length before and after (it is rewritten whatever its free space).
    pub database_bytes: (u64, u64),
    /// The signed receipt of this erasure (also kept in the store's receipt log).
    pub receipt: ErasureReceipt,
    /// The receipt's file, exactly as signed (one JSON line): keep this to verify it later
    /// (`memloop receipt verify`), since re-serialising `receipt` may not give the same bytes.
    pub receipt_line: String,
}

/// An erasure whose rows are gone and whose receipt is not yet logged: kept in the store
/// (sealed) until the receipt is, so a crash between the two is completed at the next open.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PendingErasure {
    scope: Scope,
    memories: usize,
    current: u64,
    log_events: usize,
    changes: [u64; 2],
    /// The database file's length before the erasure.
    before: u64,
    /// The id (hex) of the user key to destroy, as the ring named it before.
    user_key: Option<String>,
    /// The user's keys (hex) it keeps, as an intent written before erasures had a `bound`
    /// names them (a new life's keys a sync adopted with the erasure); empty since.
    #[serde(default)]
    keep: Vec<String>,
    /// For an erasure another device made, carried out here by a sync: its time. Only what
    /// was made at or before it is erased, and the user's keys made after it stay.
    #[serde(default)]
    bound: Option<i64>,
    /// The user's memories made after `bound` that this device holds, kept: moved to a new
    /// key of the user before the keys they were sealed under are destroyed.
    #[serde(default)]
    rekey: Vec<MemoryId>,
    /// The newest time of what this erasure covers here: the latest creation time of the
    /// memories it erased and the latest time of the user's keys it destroys. An erasure made
    /// here is bound by it when this device's clock is behind it (what it held came from a
    /// device whose clock runs ahead), so every device erases what it erased here.
    #[serde(default)]
    newest: i64,
    /// For an erasure carried out here by a sync: the metadata key that marks it carried out
    /// and the device and receipt number it had there, recorded in the transaction that logs
    /// this store's receipt (a process killed between the two would send the receipt as an
    /// erasure of this device's own, bound at the time it was carried out here).
    #[serde(default)]
    carried: Option<Carried>,
}

/// The user whose key an erasure of `scope` destroys: a scope of a whole user only.
fn erased_user(scope: &Scope) -> Option<&str> {
    (scope.agent.is_none() && scope.session.is_none())
        .then_some(scope.user.as_deref())
        .flatten()
}

impl Memory {
    /// Carries out here an erasure of `scope` another device made at `at` (a sync's pull):
    /// what was made at or before `at` is erased and the user's keys made before it are
    /// destroyed, as [`Memory::forget_scope`] does; what was made after it (a write here
    /// before this device saw the erasure, or the user's new life) stays, and the user's keys
    /// made after it too. A kept memory sealed under a key the erasure destroys is moved to a
    /// new key of the user first (and so sent again by the next sync).
    ///
    /// `carried` names it; the receipt this store signs for it records it as carried out, in
    /// one transaction.
    pub(crate) fn forget_scope_before(
        &self,
        scope: &Scope,
        at: i64,
        carried: Carried,
    ) -> Result<ScopeErasure> {
        self.erase_scope(scope, Some(at), Some(carried))
    }

    fn erase_scope(
        &self,
        scope: &Scope,
        bound: Option<i64>,
        carried: Option<Carried>,
    ) -> Result<ScopeErasure> {
        scope.require_named("forget_scope")?;
        let before = self.admin().disk_usage()?.database;
        let filter = MemoryFilter::new()
            .scope(scope.clone())
            .include_superseded(true);
        // The user key this erasure destroys (an encrypted store, a whole user): named in the
        // intent before it goes, so a completion after a crash still names it.
        let user_key = match &self.inner.store.sealing.0 {
            Some(sealer) => erased_user(scope).and_then(|u| {
                let after = bound.map_or_else(Vec::new, |at| sealer.user_keys_after(u, at));
                sealer
                    .existing_key_id(&crate::crypt::ring::Label::User(u.to_string()))
                    .filter(|id| !after.contains(id))
                    .map(hex::encode)
            }),
            None => None,
        };
        // Kept memories move to a new key only where keys are destroyed: an encrypted store
        // erasing a whole user.
        let moves_keys = self.inner.store.sealing.0.is_some() && erased_user(scope).is_some();
        let newest_key = match (&self.inner.store.sealing.0, erased_user(scope)) {
            (Some(sealer), Some(u)) => sealer.newest_user_key(u),
            _ => 0,
        };
        let pending = self.inner.write(|inner, tx, applied| {
            let first = tx.seq_after() + 1;
            let ids: Vec<MemoryId> = {
                let cat = inner.catalog.get()?.read();
                cat.compile(&filter)
                    .map(|c| cat.matching(&c))
                    .unwrap_or_default()
            };
            let mut current = 0;
            let mut kept = Vec::new();
            let mut erased = Vec::with_capacity(ids.len());
            for item in inner.store.items(&ids)? {
                // Carried out for another device: bound by its time (the merge rule).
                if bound.is_some_and(|at| {
                    !erases(scope.fields(), at, item.scope_fields(), item.created)
                }) {
                    kept.push(item.id);
                } else {
                    erased.push(item);
                }
            }
            // Each erased version leaves its lineage as a forgotten one does: a version
            // kept (made after the erasure) follows the one before it that stays, and a
            // sync places it in the same lineage on every device.
            let mut lineage = Unlinker::new(&inner.store);
            for item in &erased {
                current += u64::from(!item.is_superseded());
                lineage.unlink(tx, item.id)?;
            }
            lineage.finish(tx, applied)?;
            let mut rekey = Vec::new();
            if moves_keys {
                for &id in &kept {
                    // Its lookup entries go under the key they were made with; the memory is
                    // sealed again under a new key before that one goes.
                    if let Some(item) = inner.store.item(id)? {
                        tx.unindex(&item)?;
                        rekey.push(id);
                    }
                }
            }
            for item in &erased {
                tx.delete(item)?;
                applied.removed.push(item.id);
            }
            let ids: Vec<MemoryId> = erased.iter().map(|i| i.id).collect();
            let mut newest = newest_key;
            for item in &erased {
                newest = newest.max(item.created);
            }
            // Events of memories erased now, and of the scope's memories forgotten before (an
            // event names its scope; one that cannot be read is dropped too, not trusted).
            let gone: FxHashSet<MemoryId> = ids.iter().copied().collect();
            let events = tx.drop_forget_events(|id, event| {
                gone.contains(&id)
                    || serde_json::from_slice::<ForgetEvent>(event).map_or(true, |e| {
                        let has = [e.user.as_deref(), e.agent.as_deref(), e.session.as_deref()];
                        scope_covers(scope.fields(), has)
                    })
            })?;
            let last = tx.seq_after();
            let pending = PendingErasure {
                scope: scope.clone(),
                memories: ids.len(),
                current,
                log_events: events,
                changes: [first.min(last), last],
                before,
                user_key: user_key.clone(),
                keep: Vec::new(),
                bound,
                rekey,
                newest,
                carried: carried.clone(),
            };
            // The rows and the intent go together: from here the erasure is completed, at the
            // next open if this process dies (`Memory::complete_pending_erasure`).
            tx.set_pending_erasure(Some(&serde_json::to_vec(&pending).expect("serialises")))?;
            Ok(pending)
        })?;
        self.finish_erasure(pending)
    }

    /// Completes an erasure whose rows are gone: the files rewritten without them, the user's
    /// key destroyed (an encrypted store), the receipt signed and logged and the intent
    /// cleared in one transaction. Each step may run again after a crash.
    fn finish_erasure(&self, p: PendingErasure) -> Result<ScopeErasure> {
        // The save leaves erased nodes out of the index file; the rewrite copies only live
        // records into a fresh database file.
        self.admin().compact()?;
        // An encrypted store destroys the user's data key (when the scope is a whole user)
        // and replaces the index key, then saves the index again under the new one: copies
        // of the old files, wherever they are, cannot be read for this scope again.
        let (destroyed, ring_destroyed) = match &self.inner.store.sealing.0 {
            Some(sealer) => {
                let mut keep: Vec<crate::crypt::ring::KeyId> = p
                    .keep
                    .iter()
                    .filter_map(|h| {
                        let mut id = [0u8; 8];
                        hex::decode_to_slice(h, &mut id).ok().map(|()| id)
                    })
                    .collect();
                // The erasures seen here so far, read again: a key this makes for the user is
                // stamped after each of them.
                self.inner.erasure_bounds()?;
                if let (Some(at), Some(user)) = (p.bound, erased_user(&p.scope)) {
                    let now = self.inner.options.clock.now();
                    if !p.rekey.is_empty() || now <= at {
                        // A new key of the user, stamped after the erasure whatever this
                        // device's clock says, seals the kept memories (one transaction) and
                        // what is written for the user here from now on.
                        sealer.new_user_key(user, now.max(at.saturating_add(1)))?;
                        if !p.rekey.is_empty() {
                            self.reseal_kept(&p.rekey)?;
                        }
                    }
                    keep.extend(sealer.user_keys_after(user, at));
                }
                let now = self.inner.options.clock.now();
                let key = sealer.destroy(erased_user(&p.scope), &keep, now)?;
                if let (None, Some(user)) = (p.bound, erased_user(&p.scope)) {
                    if p.newest >= now {
                        // This erasure is bound past this device's clock (by what it held
                        // from a device whose clock runs ahead): what it writes for the user
                        // from here is sealed under a key stamped after it, which every device
                        // keeps.
                        sealer.new_user_key(user, p.newest.saturating_add(1))?;
                    }
                }
                self.inner.checkpoint_with(false, true)?;
                let key = key.map(hex::encode).or(p.user_key.clone());
                (key, Some(sealer.destroyed_count() as u64))
            }
            None => (None, None),
        };
        let n = p.memories as u64;
        let counts = [
            ("items", n),
            ("vectors", n),
            ("catalog", n),
            ("hashes", p.current),
            ("forget_log", p.log_events as u64),
        ];
        // An erasure made here is bound by its time, or by the newest thing it covered here
        // when that is later (this device's clock is behind the device that made it).
        let floor = if p.bound.is_none() { p.newest } else { 0 };
        let receipt = self.sign_receipt(
            &p.scope,
            counts,
            destroyed,
            p.changes,
            ring_destroyed,
            floor,
            p.bound.zip(p.carried.as_ref()),
        )?;
        Ok(ScopeErasure {
            scope: p.scope,
            memories: p.memories,
            log_events: p.log_events,
            database_bytes: (p.before, self.admin().disk_usage()?.database),
            receipt_line: receipt.to_line(),
            receipt,
        })
    }

    /// Seals the memories `ids` (kept by an erasure carried out here) under their user's
    /// current key, in one transaction, each marked to be sent again by the next sync.
    fn reseal_kept(&self, ids: &[MemoryId]) -> Result<()> {
        self.inner.write(|inner, tx, applied| {
            for &id in ids {
                let Some(item) = inner.store.item(id)? else {
                    continue;
                };
                if tx.reseal(&item)? {
                    tx.send_again(id)?;
                    applied.items.push(item);
                }
            }
            Ok(())
        })
    }

    /// Completes the erasure a crash interrupted, if the store records one (called at open):
    /// its receipt is then in the log (`memloop receipt list`). Returns it.
    ///
    /// # Errors
    /// As [`crate::Scoped::erase`]; an intent that cannot be read is corruption.
    pub(crate) fn complete_pending_erasure(&self) -> Result<Option<ScopeErasure>> {
        let Some(bytes) = self.inner.store.pending_erasure()? else {
            return Ok(None);
        };
        let p: PendingErasure = serde_json::from_slice(&bytes).map_err(|e| {
            self.inner
                .store
                .corrupt(format!("the pending erasure does not parse: {e}"))
        })?;
        self.finish_erasure(p).map(Some)
    }

    /// Makes, signs and logs the receipt of an erasure, chained to the store's last one, and
    /// clears the erasure's intent in the same transaction. An encrypted store also records
    /// there how many keys its ring has destroyed (`ring_destroyed`): a key file rolled back
    /// past this erasure is refused at open. Until this commits the store's count is lower
    /// than the ring's, which refuses nothing.
    #[allow(clippy::too_many_arguments)]
    fn sign_receipt(
        &self,
        scope: &Scope,
        counts: [(&str, u64); 5],
        destroyed_key: Option<String>,
        changes: [u64; 2],
        ring_destroyed: Option<u64>,
        floor: i64,
        carried: Option<(i64, &Carried)>,
    ) -> Result<ErasureReceipt> {
        let store = &self.inner.store;
        let previous = store.last_receipt()?;
        let mut receipt = ErasureReceipt {
            format: "memloop-erasure-receipt".into(),
            version: 1,
            store: hex::encode(self.inner.store_id),
            user: scope.user.clone(),
            agent: scope.agent.clone(),
            session: scope.session.clone(),
            at: erasure_bound(self.inner.options.clock.now(), floor),
            counts: counts.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            encrypted: store.sealing.on(),
            destroyed_key,
            changes,
            previous: match &previous {
                Some((_, bytes)) => {
                    use sha2::Digest;
                    hex::encode(sha2::Sha256::digest(bytes))
                }
                None => "0".repeat(64),
            },
            public_key: String::new(),
            signature: String::new(),
        };
        let seed = self.signing_seed()?;
        receipt.sign(&seed);
        let line = receipt.to_line();
        let n = previous.map_or(1, |(n, _)| n + 1);
        self.inner.write(|_, tx, _| {
            tx.put_receipt(n, line.as_bytes())?;
            if let Some(count) = ring_destroyed {
                tx.set_meta(crate::store::RING_DESTROYED, &count.to_le_bytes())?;
            }
            if let Some((at, c)) = carried {
                // Carried out for the device that made it: marked so, with its own bound, in
                // the receipt's transaction (a push never sends it as this store's own).
                tx.set_meta(&c.key, &at.to_le_bytes())?;
                tx.set_meta(
                    &crate::store::receipt_echo_key(n),
                    &crate::store::Echo {
                        at,
                        device: c.device,
                        receipt: c.receipt,
                    }
                    .encode(),
                )?;
            }
            tx.set_pending_erasure(None)
        })?;
        self.inner.erasures_changed();
        Ok(receipt)
    }

    /// The seed of the store's Ed25519 receipt key: in the key ring of an encrypted store; in
    /// the database of a plain one (made at its first erasure).
    fn signing_seed(&self) -> Result<[u8; 32]> {
        if let Some(seed) = self.stored_signing_seed()? {
            return Ok(seed);
        }
        let seed: [u8; 32] = crate::crypt::ring::random();
        self.inner
            .write(|_, tx, _| tx.set_meta("signing_seed", &seed))?;
        Ok(seed)
    }

    /// The receipt key's seed if the store has one: always in an encrypted store's key ring;
    /// in a plain store's database once it erased something. A read.
    fn stored_signing_seed(&self) -> Result<Option<[u8; 32]>> {
        let store = &self.inner.store;
        match &store.sealing.0 {
            Some(sealer) => Ok(Some(sealer.signing_seed()?)),
            None => store
                .meta("signing_seed")?
                .map(|s| s.try_into())
                .transpose()
                .map_err(|_| store.corrupt("meta `signing_seed` is not 32 bytes")),
        }
    }
}

impl<'a> Admin<'a> {
    /// Every erasure receipt this store logged, oldest first, each exactly as signed (one
    /// JSON line): what `memloop receipt list` prints again, and what
    /// [`crate::privacy::verify_receipt_chain`] checks.
    ///
    /// # Errors
    /// [`crate::Error::Store`]; [`crate::Error::Key`] for a log entry that fails authentication.
    pub fn receipt_log(&self) -> Result<Vec<String>> {
        self.memory
            .inner
            .store
            .receipts()?
            .into_iter()
            .map(|(n, bytes)| {
                String::from_utf8(bytes).map_err(|_| {
                    self.memory
                        .inner
                        .store
                        .corrupt(format!("receipt {n} is not UTF-8"))
                })
            })
            .collect()
    }

    /// The store's receipt public key (hex): compare it with a receipt's `public_key` to know
    /// this store signed it. `None` for a plain store that never erased anything (its key is
    /// made at its first erasure; asking writes nothing).
    ///
    /// # Errors
    /// [`crate::Error::Key`] for a damaged key ring; [`crate::Error::Store`].
    pub fn receipt_public_key(&self) -> Result<Option<String>> {
        Ok(self.memory.stored_signing_seed()?.map(|seed| {
            hex::encode(
                ed25519_dalek::SigningKey::from_bytes(&seed)
                    .verifying_key()
                    .to_bytes(),
            )
        }))
    }

    /// Replaces the key that unlocks this encrypted store's key ring: a new random key in a key
    /// file, or a new passphrase (`new` may also name another key file: the ring moves there, and
    /// the old file still unlocks the data keys it held, so destroy it). Data keys are rewrapped,
    /// records are not touched.
    ///
    /// # Errors
    /// [`crate::privacy::KeyError::NotEncrypted`] for a plain store;
    /// [`crate::privacy::KeyError::Io`].
    pub fn rotate_key(&self, new: &crate::crypt::Encryption) -> Result<()> {
        let _w = self.memory.inner.writer.lock();
        match &self.memory.inner.store.sealing.0 {
            Some(sealer) => Ok(sealer.rekey(new)?),
            None => Err(crate::crypt::KeyError::NotEncrypted {
                path: self.memory.inner.dir.clone(),
            }
            .into()),
        }
    }
}

impl<'a> Scoped<'a> {
    /// Erases every memory of `scope` (each field it sets must match; `Scope::user("ana")` erases
    /// all of Ana's agents and sessions) in every namespace, superseded versions included, then
    /// makes it physical: the forgetting log loses their events, the index is saved without them
    /// and the database file is rewritten, so no file of the store keeps their text or vectors.
    /// Durable on return.
    ///
    /// # Errors
    /// [`crate::InvalidInput::EmptyScope`] for an empty name, [`crate::InvalidInput::Options`] for
    /// a scope with no field (that would erase everything: use a new store); as
    /// [`Admin::checkpoint`] and [`Admin::compact`].
    pub fn erase(&self) -> Result<ScopeErasure> {
        let scope = &self.scope;
        self.memory.erase_scope(scope, None, None)
    }
}
