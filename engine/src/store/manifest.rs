//! `manifest.json`: a human-readable description of the store (format version, model).
//!
//! The database holds the same facts and is the source of truth; the manifest is rewritten from
//! it whenever it is missing or stale, so tools can inspect a store without opening it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The largest manifest read back; anything bigger is replaced unread.
const MAX_MANIFEST_BYTES: u64 = 64 * 1024;

/// Store directory format version: what a new store is written as, and the newest this build
/// opens. Version 2 keeps a memory's sentences' vectors (the `sentences` table), which a
/// version 1 build would neither write nor delete with the memory; version 1 stores are
/// opened and written as they are (no sentence vectors).
pub(crate) const STORE_VERSION: u32 = 2;

/// The manifest's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub(crate) format: String,
    pub(crate) version: u32,
    pub(crate) model: String,
    pub(crate) dim: usize,
    /// An encrypted store's AEAD, key-encryption key source (Argon2id parameters and salt for
    /// a passphrase) and key ring id; no secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) encryption: Option<serde_json::Value>,
}

impl Manifest {
    /// The manifest of a store of format `version` with `model` (its fingerprint) and `dim`.
    pub(crate) fn new(model: String, dim: usize, version: u32) -> Self {
        Manifest {
            format: "memloop-store".into(),
            version,
            model,
            dim,
            encryption: None,
        }
    }

    /// The manifest in `dir`, if one is there, small and well-formed (a hint: the database
    /// holds the truth).
    pub(crate) fn read(dir: &Path) -> Option<Manifest> {
        let path = dir.join("manifest.json");
        let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_MANIFEST_BYTES);
        let bytes = small.then(|| std::fs::read(&path).ok()).flatten()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes the manifest into `dir` unless an identical one is there (atomic replace).
    pub(crate) fn sync_to(
        &self,
        dir: &Path,
        faults: Option<&std::sync::Arc<super::faults::StorageFaults>>,
    ) -> Result<()> {
        // A manifest is a few hundred bytes; a larger file is not believed, nor read whole.
        if Manifest::read(dir).as_ref() == Some(self) {
            return Ok(());
        }
        let path = dir.join("manifest.json");
        let json = serde_json::to_vec_pretty(self).expect("a manifest always serialises");
        crate::store::write_atomic(&path, &json, faults)
    }
}
