//! Encryption at rest: the key ring the user holds ([`ring`]), sealed records ([`seal`]) and
//! signed erasure receipts ([`receipt`]).
//!
//! A store opened with [`Encryption`] keeps every memory's text, tags, metadata, vectors and
//! side records sealed with XChaCha20-Poly1305 under a data key of its scope (one per user, one
//! for memories without a user), each record with a fresh random nonce and its table and id as
//! associated data. The data keys live wrapped in the key file, outside the store directory:
//! erasing a user destroys its key there, so no copy of the directory (free pages, backups,
//! exports) can be read for that user again.

pub(crate) mod receipt;
pub(crate) mod ring;
pub(crate) mod seal;

use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

pub use receipt::{verify_receipt, verify_receipt_chain, ChainError, ErasureReceipt, ReceiptError};

/// How a store is encrypted: the key file holding its key ring, and the passphrase that
/// unlocks it when the ring was made with one.
#[derive(Clone)]
pub struct Encryption {
    /// The key file: the 256-bit key itself (made when a store is created with this option),
    /// or, with a passphrase, the Argon2id salt and parameters; and the wrapped data keys.
    /// Keep it outside the store directory, and back it up: without it the store is lost.
    pub key_file: PathBuf,
    /// The passphrase from which Argon2id derives the key-encryption key; `None` for a key
    /// file that holds the key itself.
    pub passphrase: Option<Zeroizing<String>>,
}

impl Encryption {
    /// Encryption with the key held in `key_file` (made, with a random 256-bit key, when a new
    /// store is created).
    pub fn key_file(key_file: impl AsRef<Path>) -> Self {
        Encryption {
            key_file: key_file.as_ref().to_path_buf(),
            passphrase: None,
        }
    }

    /// Encryption with a key derived from `passphrase` by Argon2id; `key_file` keeps the salt,
    /// the parameters and the wrapped data keys.
    pub fn passphrase(key_file: impl AsRef<Path>, passphrase: impl Into<String>) -> Self {
        Encryption {
            key_file: key_file.as_ref().to_path_buf(),
            passphrase: Some(Zeroizing::new(passphrase.into())),
        }
    }
}

impl Encryption {
    /// The key ring this unlocks, as one line of text to carry to another of the user's devices
    /// by hand (a password manager, a QR code; never through a sync remote or a backup of the
    /// store): `memloop-ring1:` and base64 of the ring with every key rewrapped under
    /// `passphrase` (Argon2id). The key file is read, not changed. [`Encryption::import_ring`]
    /// reads it back.
    ///
    /// # Errors
    /// [`KeyError`] when the key file is missing, exposed, damaged or not unlocked by this
    /// option's key or passphrase, or `passphrase` is empty (the engine's
    /// [`Error::Key`](../enum.Error.html#variant.Key) holds it: `?` converts).
    pub fn export_ring(&self, passphrase: &str) -> Result<Zeroizing<String>, KeyError> {
        let mut ring = ring::KeyRing::load(self)?;
        // The sync key-encryption key travels with the ring (a ring made before sync has none
        // yet): devices that share it read each other's key directory.
        ring.ensure(ring::Label::SyncKek, 0)?;
        ring.export(passphrase)
    }

    /// Writes the ring exported as `text` (by [`Encryption::export_ring`] on another device)
    /// to this option's key file, which must not exist yet, unlocked by a new random key in
    /// it or by this option's passphrase. The ring keeps its id and every key, so the stores it
    /// unlocks (copies, or a synced replica) open with the new key file.
    ///
    /// # Errors
    /// [`KeyError::Malformed`] for text that is not an exported ring, [`KeyError::Wrong`] for
    /// the wrong `passphrase`, [`KeyError::Io`] when the key file exists or cannot be written.
    pub fn import_ring(&self, text: &str, passphrase: &str) -> Result<(), KeyError> {
        ring::KeyRing::import(text, passphrase, self)
    }
}

impl std::fmt::Debug for Encryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encryption")
            .field("key_file", &self.key_file)
            .field("passphrase", &self.passphrase.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Why a key could not be used. Nothing was written or created when one of these is
/// returned from an open.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The store is encrypted and no key file was given, or it is not there.
    #[error(
        "{path}: the store is encrypted: give its key file (--key-file / MEMLOOP_KEY_FILE){detail}"
    )]
    Missing {
        /// The store directory or the key file looked for.
        path: PathBuf,
        /// What was missing.
        detail: String,
    },
    /// The key file or passphrase is not this store's, or the passphrase is wrong.
    #[error("{path}: wrong key: {detail}")]
    Wrong {
        /// The key file.
        path: PathBuf,
        /// What did not match.
        detail: String,
    },
    /// The key file is damaged or truncated.
    #[error("{path}: key file is damaged: {detail}")]
    Malformed {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A key was given for a store that is not encrypted.
    #[error("{path}: the store is not encrypted; export it and import into a new store opened with a key to encrypt it")]
    NotEncrypted {
        /// The store directory.
        path: PathBuf,
    },
    /// A sealed record failed authentication: a byte of it was changed, or it was moved.
    #[error("{what}: sealed record fails authentication (tampered or moved)")]
    Tampered {
        /// Which record.
        what: String,
    },
    /// The key file may be read or written by other users (its mode or ACL): refused, as ssh
    /// refuses a private key others can read.
    #[error("{path}: the key file may be read or written by other users ({why})")]
    Exposed {
        /// The key file.
        path: PathBuf,
        /// What lets them (its mode bits, or its ACL) and how to fix it.
        why: String,
    },
    /// Reading or writing the key file failed.
    #[error("{path}: {op}: {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The cause.
        source: std::io::Error,
    },
}

impl KeyError {
    pub(crate) fn malformed(path: &Path, detail: impl Into<String>) -> KeyError {
        KeyError::Malformed {
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }

    pub(crate) fn io(path: &Path, op: &'static str) -> impl FnOnce(std::io::Error) -> KeyError {
        let path = path.to_path_buf();
        move |source| KeyError::Io { path, op, source }
    }
}
