//! Sealed records: what an encrypted store writes in place of each value.
//!
//! Layout: `0xA1`, the data key's id (8 bytes), a random 24-byte nonce, the XChaCha20-Poly1305
//! ciphertext and its 16-byte tag. The associated data is `memloop-rec\0`, the table's code,
//! the record's key (its memory id, or the forgetting event's time and id) and the key id, so
//! a record copied under another id, into another table, or relabelled with another key fails
//! authentication instead of being read as that memory.

use hmac::{Hmac, Mac};
use parking_lot::RwLock;
use sha2::{Digest, Sha256};

use super::ring::{open_with, seal_with, DataKey, KeyId, KeyRing, Label};
use super::{Encryption, KeyError};

const SEALED: u8 = 0xA1;
/// Bytes a sealed record adds to its plaintext.
pub(crate) const OVERHEAD: usize = 1 + 8 + 24 + 16;

/// The tables (and files) whose values are sealed, each with its own code in the associated
/// data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Table {
    /// `items`.
    Items = 1,
    /// `vectors`.
    Vectors = 2,
    /// `catalog`.
    Catalog = 3,
    /// `feedback`.
    Feedback = 4,
    /// `subject_state`.
    SubjectState = 5,
    /// `forget_log`.
    ForgetLog = 6,
    /// The index file.
    Index = 7,
    /// A record of an export file.
    Export = 8,
    /// `receipts`: the erasure receipt log (it names who was erased).
    Receipts = 9,
    /// A row of a sync segment (`crate::sync`), in a remote.
    Sync = 10,
    /// `sentences`: a memory's sentence vectors.
    Sentences = 11,
}

/// Seals and opens the records of one encrypted store with its key ring.
pub(crate) struct Sealer {
    ring: RwLock<KeyRing>,
    /// The store's clock (ms since the Unix epoch): a user's key is stamped with the time it
    /// was made.
    now: Box<dyn Fn() -> i64 + Send + Sync>,
    /// Per user, the latest bound of an erasure of theirs the store made or carried out (set
    /// by the store's memory handle from its receipt log): a key of theirs made here is
    /// stamped after it whatever the clock says, like a memory written for them
    /// (`crate::merge::created_after`), so no erasure seen before the key was made destroys it.
    floors: RwLock<std::collections::BTreeMap<String, i64>>,
}

/// A sealed record, opened.
pub(crate) enum Opened {
    /// Its plaintext.
    Plain(Vec<u8>),
    /// Its key was destroyed by an erasure: the record is unreadable for good.
    Erased,
}

fn aad(table: Table, rid: &[u8], key: &KeyId) -> Vec<u8> {
    [b"memloop-rec\0".as_slice(), &[table as u8], rid, key].concat()
}

impl Sealer {
    pub(crate) fn new(ring: KeyRing, now: Box<dyn Fn() -> i64 + Send + Sync>) -> Sealer {
        Sealer {
            ring: RwLock::new(ring),
            now,
            floors: RwLock::new(std::collections::BTreeMap::new()),
        }
    }

    /// Sets, per user, the latest bound of an erasure of theirs seen here ([`Sealer::floors`]).
    pub(crate) fn set_erasure_floors(&self, floors: std::collections::BTreeMap<String, i64>) {
        *self.floors.write() = floors;
    }

    /// The stamp of a key labelled `label` made at `since`: after every erasure of its user
    /// seen here.
    fn stamp(&self, label: &Label, since: i64) -> i64 {
        match label {
            Label::User(u) => self
                .floors
                .read()
                .get(u)
                .map_or(since, |f| since.max(f.saturating_add(1))),
            _ => since,
        }
    }

    /// The ring's id (recorded in the store, so another store's key file is refused).
    pub(crate) fn ring_id(&self) -> [u8; 16] {
        self.ring.read().id
    }

    /// What the manifest says about the encryption.
    pub(crate) fn describe(&self) -> serde_json::Value {
        self.ring.read().describe()
    }

    /// The id of the key labelled `label`, made (and the key file rewritten) if the ring has
    /// none yet.
    pub(crate) fn key_id(&self, label: Label) -> Result<KeyId, KeyError> {
        if let Some(k) = self.ring.read().find(&label) {
            return Ok(k.id);
        }
        let since = self.stamp(&label, (self.now)());
        self.ring.write().ensure(label, since)
    }

    /// A new key for `user` stamped `since` (a new life after an erasure bound at
    /// `since - 1`, whatever this device's clock says), written at once; it seals the user's
    /// records from here when the ring holds no other key of theirs.
    pub(crate) fn new_user_key(&self, user: &str, since: i64) -> Result<KeyId, KeyError> {
        let label = Label::User(user.to_string());
        let since = self.stamp(&label, since);
        self.ring.write().add_user_key(label, since)
    }

    /// The latest time of `user`'s keys (0 for none, or none with a time).
    pub(crate) fn newest_user_key(&self, user: &str) -> i64 {
        self.ring
            .read()
            .all(&Label::User(user.to_string()))
            .iter()
            .map(|k| k.since)
            .max()
            .unwrap_or(0)
    }

    /// The ids of `user`'s keys made after `at` (what an erasure bound at `at` keeps).
    pub(crate) fn user_keys_after(&self, user: &str, at: i64) -> Vec<KeyId> {
        self.ring
            .read()
            .all(&Label::User(user.to_string()))
            .into_iter()
            .filter(|k| k.since > at)
            .map(|k| k.id)
            .collect()
    }

    /// The id of the key labelled `label`, if the ring has one (nothing is made).
    pub(crate) fn existing_key_id(&self, label: &Label) -> Option<KeyId> {
        self.ring.read().find(label).map(|k| k.id)
    }

    /// Seals `plain` for `table` under record key `rid` with the key labelled `label`.
    pub(crate) fn seal(
        &self,
        table: Table,
        rid: &[u8],
        label: Label,
        plain: &[u8],
    ) -> Result<Vec<u8>, KeyError> {
        let id = self.key_id(label)?;
        self.seal_under(table, rid, id, plain)
    }

    /// Seals `plain` with the key `id` (the key of the memory a side record belongs to).
    pub(crate) fn seal_under(
        &self,
        table: Table,
        rid: &[u8],
        id: KeyId,
        plain: &[u8],
    ) -> Result<Vec<u8>, KeyError> {
        let ring = self.ring.read();
        let key = ring.by_id(&id).ok_or_else(|| KeyError::Tampered {
            what: format!(
                "{table:?} {}: its memory's key {} is gone",
                hex::encode(rid),
                hex::encode(id)
            ),
        })?;
        let mut out = Vec::with_capacity(plain.len() + OVERHEAD);
        out.push(SEALED);
        out.extend_from_slice(&id);
        seal_with(&key.key, &aad(table, rid, &id), plain, &mut out);
        Ok(out)
    }

    /// The key id a sealed record names.
    pub(crate) fn key_of(sealed: &[u8]) -> Option<KeyId> {
        match sealed {
            [SEALED, rest @ ..] if rest.len() >= 8 => rest[..8].try_into().ok(),
            _ => None,
        }
    }

    /// Opens a sealed record of `table` under record key `rid`.
    ///
    /// # Errors
    /// [`KeyError::Tampered`] when it fails authentication or names a key that never existed.
    pub(crate) fn open(&self, table: Table, rid: &[u8], sealed: &[u8]) -> Result<Opened, KeyError> {
        let tampered = || KeyError::Tampered {
            what: format!("{table:?} record {}", hex::encode(rid)),
        };
        let id = Self::key_of(sealed).ok_or_else(tampered)?;
        let known = {
            let ring = self.ring.read();
            ring.by_id(&id).is_some() || ring.was_destroyed(&id)
        };
        if !known {
            // Another holder of the key file may have made (or destroyed) it since.
            self.ring.write().refresh()?;
        }
        let ring = self.ring.read();
        let Some(key) = ring.by_id(&id) else {
            return if ring.was_destroyed(&id) {
                Ok(Opened::Erased)
            } else {
                // A key the ring never held: a key file older than the store (a copy taken
                // before this key was made), not a changed record.
                Err(KeyError::Wrong {
                    path: ring.path().to_path_buf(),
                    detail: format!(
                        "the store uses data key {}, which this key file does not hold: it is older than the store (give the current key file)",
                        hex::encode(id)
                    ),
                })
            };
        };
        open_with(&key.key, &aad(table, rid, &id), &sealed[9..])
            .map(Opened::Plain)
            .ok_or_else(tampered)
    }

    /// The lookup key of `raw` (a content hash or a subject key) for a memory of `user`: an
    /// HMAC under a key derived from the scope's data key, so the database holds no hash of
    /// any text, and an erased scope's entries cannot even be matched to a guess. `None` when
    /// the scope has no key yet (then nothing of it is stored).
    pub(crate) fn lookup(&self, user: Option<&str>, raw: &[u8]) -> Option<[u8; 32]> {
        let ring = self.ring.read();
        let key = ring.find(&Label::of_user(user))?;
        let derived = Sha256::new()
            .chain_update(b"memloop-lookup\0")
            .chain_update(key.key.as_slice())
            .finalize();
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&derived).expect("HMAC takes any key length");
        mac.update(raw);
        Some(mac.finalize().into_bytes().into())
    }

    /// The seed of the store's Ed25519 receipt key.
    pub(crate) fn signing_seed(&self) -> Result<[u8; 32], KeyError> {
        let id = self.key_id(Label::Signing)?;
        let ring = self.ring.read();
        ring.by_id(&id)
            .map(|k| *k.key)
            .ok_or_else(|| KeyError::Tampered {
                what: "the key ring's signing key".into(),
            })
    }

    /// The sync key-encryption keys this ring holds (one, but after adopting two devices'
    /// concurrent replacements), made if it holds none.
    pub(crate) fn sync_keks(&self) -> Result<Vec<DataKey>, KeyError> {
        self.key_id(Label::SyncKek)?;
        Ok(self.ring.read().all(&Label::SyncKek))
    }

    /// The data keys of memories this ring holds.
    pub(crate) fn memory_keys(&self) -> Vec<DataKey> {
        self.ring.read().memory_keys()
    }

    /// True when the ring holds key `id` or destroyed it.
    pub(crate) fn knows(&self, id: &KeyId) -> bool {
        let ring = self.ring.read();
        ring.by_id(id).is_some() || ring.was_destroyed(id)
    }

    /// The key `id`, if the ring holds it.
    pub(crate) fn key(&self, id: &KeyId) -> Option<DataKey> {
        self.ring.read().by_id(id).cloned()
    }

    /// Adds a key another device made; `false` when known already.
    pub(crate) fn adopt(&self, key: DataKey) -> Result<bool, KeyError> {
        self.ring.write().adopt(key)
    }

    /// Adds a new sync key-encryption key beside the ones held: returns it.
    pub(crate) fn add_sync_kek(&self) -> Result<DataKey, KeyError> {
        self.ring.write().add_sync_kek()
    }

    /// Destroys every sync key-encryption key but `keep`.
    pub(crate) fn destroy_sync_keks_but(&self, keep: &KeyId, at: i64) -> Result<(), KeyError> {
        self.ring.write().destroy_sync_keks_but(keep, at)
    }

    /// Destroys `user`'s data keys but those in `keep` and replaces the index key (the index
    /// file is saved again under the new one): written to the key file at once. Returns the
    /// destroyed user key's id, if the user had one.
    pub(crate) fn destroy(
        &self,
        user: Option<&str>,
        keep: &[KeyId],
        at: i64,
    ) -> Result<Option<KeyId>, KeyError> {
        let label = user.map(|u| Label::User(u.to_string()));
        self.ring
            .write()
            .destroy_and_replace_index(label.as_ref(), keep, at)
    }

    /// Replaces the key-encryption key (rewraps the data keys; no record changes).
    pub(crate) fn rekey(&self, new: &Encryption) -> Result<(), KeyError> {
        self.ring.write().rekey(new)
    }

    /// How many data keys the ring records as destroyed.
    pub(crate) fn destroyed_count(&self) -> usize {
        self.ring.read().destroyed_count()
    }

    /// The ids of the keys the ring destroyed.
    pub(crate) fn destroyed_ids(&self) -> Vec<KeyId> {
        self.ring.read().destroyed_ids()
    }

    /// Records that key `id`, never held here, was destroyed elsewhere: `false` when known.
    pub(crate) fn note_destroyed(&self, id: KeyId, at: i64) -> Result<bool, KeyError> {
        self.ring.write().note_destroyed(id, at)
    }

    /// The key file.
    pub(crate) fn key_file(&self) -> std::path::PathBuf {
        self.ring.read().path().to_path_buf()
    }
}
