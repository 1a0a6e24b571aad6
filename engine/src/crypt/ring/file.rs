//! The key file: the ring as its file holds it (every data key wrapped under the KEK), read
//! bounded and checked, written atomically; and the ring as one line of text carried to another
//! device by hand.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use zeroize::Zeroizing;

use super::{
    check_aad, derive, key_of_plain, key_plain, open_with, random, seal_with, unhex, unhex_vec,
    wrap_aad, DataKey, KekFile, Key, KeyId, KeyRing, RingFile, WrappedKey, ARGON_M_KIB, ARGON_P,
    ARGON_T, CHECK, EXPORT_PREFIX, FORMAT, MAX_RING_BYTES,
};
use crate::crypt::{Encryption, KeyError};

impl KeyRing {
    /// The ring as its key file holds it: every data key wrapped under the KEK.
    pub(super) fn to_file(&self) -> RingFile {
        let mut check = Vec::new();
        seal_with(&self.kek, &check_aad(&self.id), CHECK, &mut check);
        let keys = self
            .keys
            .iter()
            .map(|k| {
                let plain = key_plain(k);
                let mut wrapped = Vec::new();
                seal_with(&self.kek, &wrap_aad(&self.id, &k.id), &plain, &mut wrapped);
                WrappedKey {
                    id: hex::encode(k.id),
                    wrapped: hex::encode(wrapped),
                }
            })
            .collect();
        RingFile {
            format: FORMAT.into(),
            version: 1,
            ring: hex::encode(self.id),
            kek: self.source.clone(),
            check: hex::encode(check),
            keys,
            destroyed: self.destroyed.clone(),
        }
    }

    /// The ring as one line of text to carry to another device by hand (never through a
    /// sync remote): `memloop-ring1:` and the base64 (URL-safe) of a key file holding the same
    /// ring (its id, data keys, signing key and destroyed keys) with every key rewrapped under
    /// `passphrase` (Argon2id, a fresh salt). Nothing is written.
    ///
    /// # Errors
    /// [`KeyError::Wrong`] for an empty passphrase.
    pub(crate) fn export(&self, passphrase: &str) -> Result<Zeroizing<String>, KeyError> {
        let (kek, source) = KeyRing::new_kek(&Encryption::passphrase(&self.path, passphrase))?;
        let view = KeyRing {
            path: self.path.clone(),
            id: self.id,
            kek,
            source,
            keys: self.keys.clone(),
            destroyed: self.destroyed.clone(),
        };
        let json = Zeroizing::new(serde_json::to_vec(&view.to_file()).expect("a ring serialises"));
        Ok(Zeroizing::new(format!(
            "{EXPORT_PREFIX}{}",
            URL_SAFE_NO_PAD.encode(json.as_slice())
        )))
    }

    /// Reads a ring exported by [`KeyRing::export`], unlocks it with `passphrase` (its check
    /// value and every data key verified), and writes it to `to`'s key file, which must not
    /// exist yet, unlocked by `to`'s new random key or passphrase. The ring keeps its id, so
    /// the stores it unlocks open with it.
    ///
    /// # Errors
    /// [`KeyError::Malformed`] for text that is not an exported ring (or is longer than any
    /// ring), [`KeyError::Wrong`] for the wrong passphrase, [`KeyError::Io`] when the key file
    /// exists or cannot be written.
    pub(crate) fn import(text: &str, passphrase: &str, to: &Encryption) -> Result<(), KeyError> {
        let from = Path::new("<exported key ring>");
        let text = text.trim();
        let body = text.strip_prefix(EXPORT_PREFIX).ok_or_else(|| {
            KeyError::malformed(from, format!("does not begin with {EXPORT_PREFIX}"))
        })?;
        // Base64 holds 3 bytes in 4 characters: longer text than any ring's is refused
        // before it is decoded.
        if body.len() as u64 > MAX_RING_BYTES / 3 * 4 + 4 {
            return Err(KeyError::malformed(from, "longer than any key ring"));
        }
        let json = Zeroizing::new(
            URL_SAFE_NO_PAD
                .decode(body)
                .map_err(|e| KeyError::malformed(from, format!("not base64 ({e})")))?,
        );
        let file = KeyRing::parse_file(from, &json)?;
        let id: [u8; 16] = unhex(from, "ring", &file.ring)?;
        let old_kek = KeyRing::of_passphrase(from, &file.kek, passphrase)?;
        let keys = KeyRing::unwrap_all(
            from,
            &file,
            &id,
            &old_kek,
            "the passphrase does not unlock this exported ring",
        )?;
        let (kek, source) = KeyRing::new_kek(to)?;
        KeyRing {
            path: to.key_file.clone(),
            id,
            kek,
            source,
            keys,
            destroyed: file.destroyed,
        }
        .write_file(true)
    }

    /// Writes the ring to its key file: a temporary file beside it, synced and renamed over
    /// it, then the directory synced. With `fresh`, refuses to replace an existing file; else
    /// the caller holds [`KeyRing::lock`] and merged the file first.
    pub(super) fn write_file(&self, fresh: bool) -> Result<(), KeyError> {
        let json =
            Zeroizing::new(serde_json::to_vec_pretty(&self.to_file()).expect("a ring serialises"));
        let path = &self.path;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Private from the moment it exists: 0600 on Unix, an ACL for this user on Windows.
        let mut tmp = tempfile::Builder::new()
            .prefix(".memloop-key")
            .make_in(&dir, crate::platform::create_new_private)
            .map_err(KeyError::io(path, "create a temporary key file"))?;
        tmp.write_all(&json)
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(KeyError::io(path, "write key file"))?;
        if fresh {
            tmp.persist_noclobber(path)
                .map_err(|e| KeyError::io(path, "create key file")(e.error))?;
        } else {
            tmp.persist(path)
                .map_err(|e| KeyError::io(path, "replace key file")(e.error))?;
        }
        crate::platform::sync_dir(&dir)
            .map_err(KeyError::io(path, "sync the key file's directory"))?;
        Ok(())
    }

    /// The KEK a passphrase gives under `source`'s Argon2id salt and parameters (`path` names
    /// the ring in errors; a key-holding `source` is malformed here).
    pub(super) fn of_passphrase(
        path: &Path,
        source: &KekFile,
        passphrase: &str,
    ) -> Result<Key, KeyError> {
        let KekFile::Passphrase {
            kdf,
            m_kib,
            t,
            p,
            salt,
        } = source
        else {
            return Err(KeyError::malformed(path, "not wrapped under a passphrase"));
        };
        if kdf != "argon2id" {
            return Err(KeyError::malformed(path, format!("unknown kdf {kdf}")));
        }
        let salt = unhex_vec(path, "salt", salt)?;
        derive(path, passphrase, *m_kib, *t, *p, &salt)
    }

    /// The key file at `path`, parsed (bounded in size).
    pub(super) fn read_file(path: &Path) -> Result<RingFile, KeyError> {
        let file = std::fs::File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => KeyError::Missing {
                path: path.to_path_buf(),
                detail: ": the key file is not there".into(),
            },
            _ => KeyError::io(path, "open key file")(e),
        })?;
        // The file holds the key-encryption key (or what a passphrase unlocks): one others may
        // read is refused before it is believed.
        let meta = file
            .metadata()
            .map_err(KeyError::io(path, "read key file"))?;
        let exposed = crate::platform::exposed_file(path, &meta)
            .map_err(KeyError::io(path, "read who may read the key file"))?;
        if let Some(why) = exposed {
            return Err(KeyError::Exposed {
                path: path.to_path_buf(),
                why,
            });
        }
        let mut bytes = Zeroizing::new(Vec::new());
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_RING_BYTES + 1),
            &mut bytes,
        )
        .map_err(KeyError::io(path, "read key file"))?;
        if bytes.len() as u64 > MAX_RING_BYTES {
            return Err(KeyError::malformed(path, "larger than any key ring"));
        }
        KeyRing::parse_file(path, &bytes)
    }

    /// A key file's bytes, parsed (`path` names them in errors).
    pub(super) fn parse_file(path: &Path, bytes: &[u8]) -> Result<RingFile, KeyError> {
        let file: RingFile = serde_json::from_slice(bytes)
            .map_err(|e| KeyError::malformed(path, format!("not a key ring ({e})")))?;
        if file.format != FORMAT || file.version != 1 {
            return Err(KeyError::malformed(
                path,
                "not a version 1 memloop key ring",
            ));
        }
        Ok(file)
    }

    /// Checks `kek` against the file's check value (else [`KeyError::Wrong`] saying `wrong`) and
    /// unwraps every data key.
    pub(super) fn unwrap_all(
        path: &Path,
        file: &RingFile,
        id: &[u8; 16],
        kek: &Key,
        wrong: &str,
    ) -> Result<Vec<DataKey>, KeyError> {
        let check = unhex_vec(path, "check", &file.check)?;
        if open_with(kek, &check_aad(id), &check).as_deref() != Some(CHECK) {
            return Err(KeyError::Wrong {
                path: path.to_path_buf(),
                detail: wrong.into(),
            });
        }
        let mut keys = Vec::with_capacity(file.keys.len());
        let mut seen = std::collections::HashSet::with_capacity(file.keys.len());
        for w in &file.keys {
            let key_id: KeyId = unhex(path, "key id", &w.id)?;
            // One id, one key: a ring naming an id twice is damaged (which key holds is a guess).
            if !seen.insert(key_id) {
                return Err(KeyError::malformed(
                    path,
                    format!("key {} is named twice", w.id),
                ));
            }
            let wrapped = unhex_vec(path, "wrapped key", &w.wrapped)?;
            let plain =
                Zeroizing::new(open_with(kek, &wrap_aad(id, &key_id), &wrapped).ok_or_else(
                    || KeyError::malformed(path, format!("key {} does not unwrap", w.id)),
                )?);
            keys.push(
                key_of_plain(key_id, &plain).ok_or_else(|| {
                    KeyError::malformed(path, format!("key {} has no label", w.id))
                })?,
            );
        }
        Ok(keys)
    }

    /// A new KEK and how the key file records it.
    pub(super) fn new_kek(enc: &Encryption) -> Result<(Key, KekFile), KeyError> {
        Ok(match &enc.passphrase {
            None => {
                let secret: Key = Zeroizing::new(random());
                let file = KekFile::Key {
                    secret: hex::encode(secret.as_slice()),
                };
                (secret, file)
            }
            Some(pass) => {
                if pass.is_empty() {
                    return Err(KeyError::Wrong {
                        path: enc.key_file.clone(),
                        detail: "an empty passphrase".into(),
                    });
                }
                let salt: [u8; 16] = random();
                let kek = derive(&enc.key_file, pass, ARGON_M_KIB, ARGON_T, ARGON_P, &salt)?;
                let file = KekFile::Passphrase {
                    kdf: "argon2id".into(),
                    m_kib: ARGON_M_KIB,
                    t: ARGON_T,
                    p: ARGON_P,
                    salt: hex::encode(salt),
                };
                (kek, file)
            }
        })
    }
}
