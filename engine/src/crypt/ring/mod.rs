//! The key ring: the file the user holds (`--key-file`), outside the store directory.
//!
//! ```json
//! {"format": "memloop-keyring", "version": 1, "ring": "<16 bytes hex>",
//!  "kek": {"kind": "key", "secret": "<32 bytes hex>"}
//!       | {"kind": "passphrase", "kdf": "argon2id", "m_kib": 19456, "t": 2, "p": 1, "salt": "<16 bytes hex>"},
//!  "check": "<nonce ‖ AEAD(kek, \"memloop-kek-check\")>",
//!  "keys": [{"id": "<8 bytes hex>", "wrapped": "<nonce ‖ AEAD(kek, kind ‖ key ‖ name)>"}],
//!  "destroyed": [{"id": "<8 bytes hex>", "at": <ms>}]}
//! ```
//! The key-encryption key (KEK) is the 256-bit `secret`, or Argon2id of the passphrase. Each
//! data key is wrapped under it with the ring id and key id as associated data, so a wrapped
//! key moved to another slot or another ring does not unwrap. The scope a key belongs to (a
//! user's name) is inside the wrapping. Destroyed keys leave only their id, so a record sealed
//! under one reads as erased, while a record naming an id never made reads as tampered.

use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::{Encryption, KeyError};

mod file;

/// Bytes of every key.
pub(crate) const KEY_LEN: usize = 32;
/// Bytes of an XChaCha20 nonce.
pub(crate) const NONCE_LEN: usize = 24;
/// A data key's id (random, stored in the clear before each sealed record).
pub(crate) type KeyId = [u8; 8];
/// A 256-bit key, wiped when dropped.
pub(crate) type Key = Zeroizing<[u8; KEY_LEN]>;

/// The largest key file read (a ring of a million users is under 200 MiB; far beyond use).
const MAX_RING_BYTES: u64 = 256 << 20;
const FORMAT: &str = "memloop-keyring";
/// What an exported ring's text begins with.
const EXPORT_PREFIX: &str = "memloop-ring1:";
const CHECK: &[u8] = b"memloop-kek-check";
/// Argon2id parameters for new passphrase rings (OWASP's recommendation: 19 MiB, 2 passes).
const ARGON_M_KIB: u32 = 19 * 1024;
/// The most memory a key file's Argon2 may ask for, in KiB (256 MiB).
const MAX_ARGON_M_KIB: u32 = 256 * 1024;
/// The most passes.
const MAX_ARGON_T: u32 = 8;
/// The most lanes.
const MAX_ARGON_P: u32 = 8;
/// The most memory times passes, in KiB (512 MiB: a second or two on a laptop core).
const MAX_ARGON_WORK: u64 = 512 * 1024;
const ARGON_T: u32 = 2;
const ARGON_P: u32 = 1;

/// What a data key is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Label {
    /// Memories without a user.
    Unscoped,
    /// One user's memories.
    User(String),
    /// The index file (replaced at every erasure, so an old index file's vectors are lost).
    Index,
    /// The seed of the store's Ed25519 receipt key.
    Signing,
    /// The sync key-encryption key: the data keys a device publishes in a sync remote's key
    /// directory are wrapped under it (`crate::sync`). Replaced after every erasure.
    SyncKek,
}

impl Label {
    fn encode(&self) -> (u8, &[u8]) {
        match self {
            Label::Unscoped => (0, &[]),
            Label::User(name) => (1, name.as_bytes()),
            Label::Index => (2, &[]),
            Label::Signing => (3, &[]),
            Label::SyncKek => (4, &[]),
        }
    }

    fn decode(kind: u8, name: &[u8]) -> Option<Label> {
        Some(match kind {
            0 => Label::Unscoped,
            1 => Label::User(String::from_utf8(name.to_vec()).ok()?),
            2 => Label::Index,
            3 => Label::Signing,
            4 => Label::SyncKek,
            _ => return None,
        })
    }

    /// The label of the data key that seals a memory of `user`.
    pub(crate) fn of_user(user: Option<&str>) -> Label {
        user.map_or(Label::Unscoped, |u| Label::User(u.to_string()))
    }
}

/// One unwrapped data key.
#[derive(Clone)]
pub(crate) struct DataKey {
    pub(crate) id: KeyId,
    pub(crate) label: Label,
    pub(crate) key: Key,
    /// When it was made (ms since the Unix epoch, by the clock of the store that made it), for
    /// a user's key: an erasure destroys the user's keys made before it and keeps the ones made
    /// after it (a new life), on every device it reaches. 0 for every other key, and for a key
    /// made before keys had a time (it is then older than every erasure).
    pub(crate) since: i64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RingFile {
    format: String,
    version: u32,
    ring: String,
    kek: KekFile,
    check: String,
    keys: Vec<WrappedKey>,
    destroyed: Vec<DestroyedKey>,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum KekFile {
    Key {
        secret: String,
    },
    Passphrase {
        kdf: String,
        m_kib: u32,
        t: u32,
        p: u32,
        salt: String,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrappedKey {
    id: String,
    wrapped: String,
}

#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct DestroyedKey {
    #[serde(with = "hex_id")]
    id: KeyId,
    at: i64,
}

mod hex_id {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(id: &[u8; 8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(id))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 8], D::Error> {
        let s = String::deserialize(d)?;
        let mut id = [0u8; 8];
        hex::decode_to_slice(&s, &mut id).map_err(serde::de::Error::custom)?;
        Ok(id)
    }
}

/// The unlocked key ring of a store.
pub(crate) struct KeyRing {
    path: PathBuf,
    pub(crate) id: [u8; 16],
    kek: Key,
    source: KekFile,
    keys: Vec<DataKey>,
    destroyed: Vec<DestroyedKey>,
}

/// The flag on a wrapped key's label kind that says its time ([`DataKey::since`]) follows the
/// key: `[kind | 0x80][key][since, i64 LE][name]`. A key without a time keeps the layout it
/// always had, `[kind][key][name]`.
const SINCE_FLAG: u8 = 0x80;

/// A data key as the key file and a key directory carry it (wrapped by the caller): its
/// label's kind, the key, its time when it has one, its label's name.
pub(crate) fn key_plain(k: &DataKey) -> Zeroizing<Vec<u8>> {
    let (kind, name) = k.label.encode();
    if k.since == 0 {
        return Zeroizing::new([&[kind][..], k.key.as_slice(), name].concat());
    }
    Zeroizing::new(
        [
            &[kind | SINCE_FLAG][..],
            k.key.as_slice(),
            &k.since.to_le_bytes(),
            name,
        ]
        .concat(),
    )
}

/// The data key `id` of [`key_plain`]'s bytes, if they are such.
pub(crate) fn key_of_plain(id: KeyId, plain: &[u8]) -> Option<DataKey> {
    let (&first, rest) = plain.split_first()?;
    let key_bytes = rest.get(..KEY_LEN)?;
    let (since, name) = if first & SINCE_FLAG == 0 {
        (0, &rest[KEY_LEN..])
    } else {
        let since = i64::from_le_bytes(rest.get(KEY_LEN..KEY_LEN + 8)?.try_into().ok()?);
        // A time is recorded only when there is one.
        (since != 0).then_some(())?;
        (since, &rest[KEY_LEN + 8..])
    };
    let label = Label::decode(first & !SINCE_FLAG, name)?;
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    key.copy_from_slice(key_bytes);
    Some(DataKey {
        id,
        label,
        key,
        since,
    })
}

/// `n` random bytes from the operating system.
pub(crate) fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b
}

/// Seals `plain` under `key` with a fresh nonce: nonce ‖ ciphertext ‖ tag.
pub(crate) fn seal_with(key: &[u8; KEY_LEN], aad: &[u8], plain: &[u8], out: &mut Vec<u8>) {
    let nonce: [u8; NONCE_LEN] = random();
    let cipher = XChaCha20Poly1305::new(key.into());
    let sealed = cipher
        .encrypt(XNonce::from_slice(&nonce), Payload { msg: plain, aad })
        .expect("XChaCha20-Poly1305 seals any message under 256 GiB");
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
}

/// Opens what [`seal_with`] made; `None` when it fails authentication.
pub(crate) fn open_with(key: &[u8; KEY_LEN], aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < NONCE_LEN + 16 {
        return None;
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    XChaCha20Poly1305::new(key.into())
        .decrypt(XNonce::from_slice(nonce), Payload { msg: body, aad })
        .ok()
}

fn check_aad(ring: &[u8; 16]) -> Vec<u8> {
    [b"memloop-check\0".as_slice(), ring].concat()
}

fn wrap_aad(ring: &[u8; 16], id: &KeyId) -> Vec<u8> {
    [b"memloop-key\0".as_slice(), ring, id].concat()
}

fn unhex<const N: usize>(path: &Path, what: &str, s: &str) -> Result<[u8; N], KeyError> {
    let mut out = [0u8; N];
    hex::decode_to_slice(s, &mut out)
        .map_err(|_| KeyError::malformed(path, format!("{what} is not {N} bytes of hex")))?;
    Ok(out)
}

fn unhex_vec(path: &Path, what: &str, s: &str) -> Result<Vec<u8>, KeyError> {
    hex::decode(s).map_err(|_| KeyError::malformed(path, format!("{what} is not hex")))
}

/// The Argon2id KEK of `passphrase`.
fn derive(
    path: &Path,
    passphrase: &str,
    m: u32,
    t: u32,
    p: u32,
    salt: &[u8],
) -> Result<Key, KeyError> {
    let params = argon2::Params::new(m, t, p, Some(KEY_LEN))
        .map_err(|e| KeyError::malformed(path, format!("argon2 parameters: {e}")))?;
    // A key file could name parameters that take hours or all memory: bounded here, in
    // memory, passes, lanes and their product (the work), each well above what memloop
    // writes (19 MiB, 2 passes, 1 lane) and what OWASP recommends (up to 46 MiB).
    if m > MAX_ARGON_M_KIB
        || t > MAX_ARGON_T
        || p > MAX_ARGON_P
        || u64::from(m) * u64::from(t) > MAX_ARGON_WORK
    {
        return Err(KeyError::malformed(
            path,
            "argon2 parameters beyond 256 MiB, 8 passes, 8 lanes or 512 MiB of passes in all",
        ));
    }
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
        .hash_password_into(passphrase.as_bytes(), salt, key.as_mut())
        .map_err(|e| KeyError::malformed(path, format!("argon2: {e}")))?;
    Ok(key)
}

impl KeyRing {
    /// True if the key file exists.
    pub(crate) fn exists(enc: &Encryption) -> bool {
        enc.key_file.exists()
    }

    /// A new ring (a random key, or a passphrase's salt), with its index and signing keys,
    /// written to the key file, which must not exist yet.
    pub(crate) fn create(enc: &Encryption) -> Result<KeyRing, KeyError> {
        let path = enc.key_file.clone();
        let (kek, source) = KeyRing::new_kek(enc)?;
        let mut ring = KeyRing {
            path,
            id: random(),
            kek,
            source,
            keys: Vec::new(),
            destroyed: Vec::new(),
        };
        ring.add(Label::Index, 0);
        ring.add(Label::Signing, 0);
        ring.add(Label::SyncKek, 0);
        ring.write_file(true)?;
        Ok(ring)
    }

    /// Reads and unlocks the key file.
    ///
    /// # Errors
    /// [`KeyError::Missing`] if it is not there, [`KeyError::Wrong`] for a wrong passphrase
    /// (or a passphrase ring opened without one), [`KeyError::Malformed`] for a damaged file.
    pub(crate) fn load(enc: &Encryption) -> Result<KeyRing, KeyError> {
        let path = enc.key_file.as_path();
        let file = KeyRing::read_file(path)?;
        let id: [u8; 16] = unhex(path, "ring", &file.ring)?;
        let kek = match (&file.kek, &enc.passphrase) {
            (KekFile::Key { secret }, None) => {
                Zeroizing::new(unhex::<KEY_LEN>(path, "secret", secret)?)
            }
            (KekFile::Key { .. }, Some(_)) => {
                return Err(KeyError::Wrong {
                    path: path.to_path_buf(),
                    detail: "this key file holds its key; no passphrase unlocks it".into(),
                })
            }
            (KekFile::Passphrase { .. }, None) => {
                return Err(KeyError::Missing {
                    path: path.to_path_buf(),
                    detail: ": this key file needs its passphrase (MEMLOOP_KEY)".into(),
                })
            }
            (source @ KekFile::Passphrase { .. }, Some(pass)) => {
                KeyRing::of_passphrase(path, source, pass.as_str())?
            }
        };
        let keys = KeyRing::unwrap_all(
            path,
            &file,
            &id,
            &kek,
            match enc.passphrase {
                Some(_) => "the passphrase does not unlock this key file",
                None => "the key file's secret does not match its check value",
            },
        )?;
        Ok(KeyRing {
            path: path.to_path_buf(),
            id,
            kek,
            source: file.kek,
            keys,
            destroyed: file.destroyed,
        })
    }

    /// Takes the key file's lock (`<key file>.lock`, beside it): every change of a ring is
    /// read, merged and written under it, so stores and processes sharing a key file never
    /// lose each other's keys.
    fn lock(&self) -> Result<std::fs::File, KeyError> {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let path = self.path.with_file_name(name);
        let file = crate::platform::open_private(&path, crate::platform::Create::ReadWrite)
            .map_err(KeyError::io(&path, "open the key file's lock"))?;
        crate::platform::lock(&file).map_err(KeyError::io(&path, "lock the key file"))?;
        Ok(file)
    }

    /// Takes in what another holder of the key file wrote since this ring was read: keys it
    /// made, keys it destroyed. Called under [`KeyRing::lock`].
    fn merge_from_file(&mut self) -> Result<(), KeyError> {
        if !self.path.exists() {
            return Ok(());
        }
        let file = KeyRing::read_file(&self.path)?;
        if unhex::<16>(&self.path, "ring", &file.ring)? != self.id {
            return Err(KeyError::Wrong {
                path: self.path.clone(),
                detail: "the key file now holds another key ring".into(),
            });
        }
        let keys = KeyRing::unwrap_all(
            &self.path,
            &file,
            &self.id,
            &self.kek,
            "the key file was rekeyed by another process: reopen the store with its new key",
        )?;
        for d in file.destroyed {
            if !self.was_destroyed(&d.id) {
                self.destroyed.push(d);
            }
        }
        for k in keys {
            if self.by_id(&k.id).is_none() {
                self.keys.push(k);
            }
        }
        let destroyed = self.destroyed.clone();
        self.keys
            .retain(|k| !destroyed.iter().any(|d| d.id == k.id));
        Ok(())
    }

    /// Reads again what other holders of the key file changed.
    pub(crate) fn refresh(&mut self) -> Result<(), KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()
    }

    /// The id of the key labelled `label`, made (at time `now`) and written if neither this
    /// ring nor the key file has one.
    pub(crate) fn ensure(&mut self, label: Label, now: i64) -> Result<KeyId, KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        if let Some(k) = self.find(&label) {
            return Ok(k.id);
        }
        let id = self.add(label, now).id;
        if let Err(e) = self.write_file(false) {
            self.keys.retain(|k| k.id != id);
            return Err(e);
        }
        Ok(id)
    }

    /// Destroys every key labelled `user`'s but those in `keep` and the index key, adds a new
    /// index key, and writes the ring; returns the destroyed user key's id.
    pub(crate) fn destroy_and_replace_index(
        &mut self,
        user: Option<&Label>,
        keep: &[KeyId],
        at: i64,
    ) -> Result<Option<KeyId>, KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        // A user may hold several keys (one made here, one adopted from another device).
        let destroyed = user.and_then(|label| {
            let first = self.destroy_but(label, keep, at);
            while self.destroy_but(label, keep, at).is_some() {}
            first
        });
        while self.destroy(&Label::Index, at).is_some() {}
        self.add(Label::Index, 0);
        self.write_file(false)?;
        Ok(destroyed)
    }

    /// Adds a new key labelled `label` stamped `since`, first of the label's keys (it seals
    /// what is sealed for the label from here), written at once: its id.
    pub(crate) fn add_user_key(&mut self, label: Label, since: i64) -> Result<KeyId, KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        let id = self.add(label, since).id;
        let new = self.keys.pop().expect("just added");
        self.keys.insert(0, new);
        if let Err(e) = self.write_file(false) {
            self.keys.retain(|k| k.id != id);
            return Err(e);
        }
        Ok(id)
    }

    /// Adds a key another device made (through a sync remote's key directory), written at
    /// once: `false` when the ring holds it already, or destroyed it.
    pub(crate) fn adopt(&mut self, key: DataKey) -> Result<bool, KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        if self.by_id(&key.id).is_some() || self.was_destroyed(&key.id) {
            return Ok(false);
        }
        let id = key.id;
        self.keys.push(key);
        if let Err(e) = self.write_file(false) {
            self.keys.retain(|k| k.id != id);
            return Err(e);
        }
        Ok(true)
    }

    /// Every key labelled `label`.
    pub(crate) fn all(&self, label: &Label) -> Vec<DataKey> {
        self.keys
            .iter()
            .filter(|k| &k.label == label)
            .cloned()
            .collect()
    }

    /// The data keys of memories (unscoped and per user): what a sync publishes.
    pub(crate) fn memory_keys(&self) -> Vec<DataKey> {
        self.keys
            .iter()
            .filter(|k| matches!(k.label, Label::Unscoped | Label::User(_)))
            .cloned()
            .collect()
    }

    /// Adds a new sync key-encryption key beside the ones held, written at once.
    pub(crate) fn add_sync_kek(&mut self) -> Result<DataKey, KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        let new = self.add(Label::SyncKek, 0).clone();
        if let Err(e) = self.write_file(false) {
            self.keys.retain(|k| k.id != new.id);
            return Err(e);
        }
        Ok(new)
    }

    /// Destroys every sync key-encryption key but `keep`, written at once.
    pub(crate) fn destroy_sync_keks_but(&mut self, keep: &KeyId, at: i64) -> Result<(), KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        let old: Vec<KeyId> = self
            .keys
            .iter()
            .filter(|k| k.label == Label::SyncKek && &k.id != keep)
            .map(|k| k.id)
            .collect();
        if old.is_empty() {
            return Ok(());
        }
        self.keys.retain(|k| !old.contains(&k.id));
        self.destroyed
            .extend(old.into_iter().map(|id| DestroyedKey { id, at }));
        self.write_file(false)
    }

    /// The key file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The key labelled `label`, if the ring has one.
    pub(crate) fn find(&self, label: &Label) -> Option<&DataKey> {
        self.keys.iter().find(|k| &k.label == label)
    }

    /// The key with id `id`.
    pub(crate) fn by_id(&self, id: &KeyId) -> Option<&DataKey> {
        self.keys.iter().find(|k| &k.id == id)
    }

    /// How many keys were destroyed.
    pub(crate) fn destroyed_count(&self) -> usize {
        self.destroyed.len()
    }

    /// The ids of the keys this ring destroyed (or learned were destroyed elsewhere).
    pub(crate) fn destroyed_ids(&self) -> Vec<KeyId> {
        self.destroyed.iter().map(|d| d.id).collect()
    }

    /// Records that key `id`, which this ring never held, was destroyed elsewhere (a sync's
    /// key directory says so), written at once: its records then read as erased instead of
    /// waiting for a key that will never come. `false` when the ring holds it or knew.
    pub(crate) fn note_destroyed(&mut self, id: KeyId, at: i64) -> Result<bool, KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        if self.by_id(&id).is_some() || self.was_destroyed(&id) {
            return Ok(false);
        }
        self.destroyed.push(DestroyedKey { id, at });
        if let Err(e) = self.write_file(false) {
            self.destroyed.retain(|d| d.id != id);
            return Err(e);
        }
        Ok(true)
    }

    /// True if key `id` was destroyed (its records are erased).
    pub(crate) fn was_destroyed(&self, id: &KeyId) -> bool {
        self.destroyed.iter().any(|d| &d.id == id)
    }

    /// Adds a new random key labelled `label` (not yet written).
    fn add(&mut self, label: Label, since: i64) -> &DataKey {
        let mut id: KeyId = random();
        while self.by_id(&id).is_some() || self.was_destroyed(&id) {
            id = random();
        }
        self.keys.push(DataKey {
            id,
            // Only a user's key is timed: an erasure's bound is read against it.
            since: if matches!(label, Label::User(_)) {
                since.max(1)
            } else {
                0
            },
            label,
            key: Zeroizing::new(random()),
        });
        self.keys.last().expect("just pushed")
    }

    /// Forgets the key labelled `label`, keeping only its id; returns the id.
    fn destroy(&mut self, label: &Label, at: i64) -> Option<KeyId> {
        self.destroy_but(label, &[], at)
    }

    /// [`KeyRing::destroy`] of a key labelled `label` that is not in `keep`.
    fn destroy_but(&mut self, label: &Label, keep: &[KeyId], at: i64) -> Option<KeyId> {
        let pos = self
            .keys
            .iter()
            .position(|k| &k.label == label && !keep.contains(&k.id))?;
        let key = self.keys.remove(pos);
        self.destroyed.push(DestroyedKey { id: key.id, at });
        Some(key.id)
    }

    /// Replaces the key-encryption key (a new random key, or a new passphrase) and rewraps
    /// every data key under it; records are not touched. Written at once.
    pub(crate) fn rekey(&mut self, new: &Encryption) -> Result<(), KeyError> {
        let _lock = self.lock()?;
        self.merge_from_file()?;
        let (kek, source) = KeyRing::new_kek(new)?;
        let old = (
            std::mem::replace(&mut self.kek, kek),
            std::mem::replace(&mut self.source, source),
        );
        let old_path = std::mem::replace(&mut self.path, new.key_file.clone());
        if let Err(e) = self.write_file(false) {
            (self.kek, self.source) = old;
            self.path = old_path;
            return Err(e);
        }
        Ok(())
    }

    /// What the manifest records about this ring (no secret): the AEAD, the KDF and its
    /// parameters, the ring's id.
    pub(crate) fn describe(&self) -> serde_json::Value {
        let kdf = match &self.source {
            KekFile::Key { .. } => serde_json::json!({"kind": "key"}),
            KekFile::Passphrase {
                kdf,
                m_kib,
                t,
                p,
                salt,
            } => {
                serde_json::json!({"kind": "passphrase", "kdf": kdf, "m_kib": m_kib, "t": t, "p": p, "salt": salt})
            }
        };
        serde_json::json!({"aead": "XChaCha20-Poly1305", "kek": kdf, "ring": hex::encode(self.id)})
    }
}

#[cfg(test)]
mod tests;
