//! The sha256 of a model's weights file, remembered between processes.
//!
//! Every store records the fingerprint of the model that wrote it, so every open needs the
//! sha256 of the weights (90 MB for MiniLM: tens of milliseconds of a cold start). The hash is
//! kept in `cache_dir()/fingerprints/`, against the file's length, modification time, change
//! time, inode and device. Any write to the file changes its change time, which no user-space
//! call can set back, so a file with the same stamp has the same content and its hash is not
//! read again; any other stamp rehashes. A cache that cannot be read or written is ignored
//! (the hash is then computed every time, as without a cache).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{EmbedError, Result};

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
    dev: u64,
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Some(Stamp {
            len: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            dev: meta.dev(),
        })
    }

    /// Without a change time no stamp is trusted: the file is always hashed.
    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Option<Stamp> {
        None
    }
}

/// One remembered hash.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    path: PathBuf,
    stamp: Stamp,
    sha256: String,
}

/// The sha256 of `path` (lowercase hex), from the cache in `cache` when the file's stamp is the
/// one the hash was taken at; otherwise read and hashed, and remembered there.
///
/// # Errors
/// [`EmbedError::MissingFile`] if the file cannot be read.
pub(crate) fn weights_sha256(path: &Path, cache: Option<&Path>) -> Result<String> {
    let missing = |e: std::io::Error| EmbedError::MissingFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    // WASI resolves no links (its file systems have none, and no `realpath`): the path as given.
    let full = match std::fs::canonicalize(path) {
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => std::path::absolute(path),
        resolved => resolved,
    }
    .map_err(missing)?;
    let stamp = Stamp::of(&std::fs::metadata(&full).map_err(missing)?);
    // One slot per weights file, named by the hash of its path.
    let name = hex(&Sha256::digest(full.as_os_str().as_encoded_bytes()));
    let slot = cache.map(|dir| dir.join(format!("{}.json", &name[..32])));
    if let (Some(slot), Some(stamp)) = (&slot, &stamp) {
        let known = std::fs::read(slot)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Entry>(&bytes).ok());
        if let Some(e) = known.filter(|e| e.path == full && e.stamp == *stamp) {
            if e.sha256.len() == 64 && e.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(e.sha256);
            }
        }
    }
    let mut file = std::fs::File::open(&full).map_err(missing)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(missing)?;
    let sha = hex(&hasher.finalize());
    // Remembered only if the file did not change while it was read.
    let after = std::fs::metadata(&full).ok().as_ref().and_then(Stamp::of);
    if let (Some(slot), Some(stamp)) = (slot, stamp.filter(|s| after.as_ref() == Some(s))) {
        let entry = Entry {
            path: full,
            stamp,
            sha256: sha.clone(),
        };
        let _ = remember(&slot, &entry);
    }
    Ok(sha)
}

/// Writes `entry` to `slot` whole or not at all (a temporary file renamed over it).
fn remember(slot: &Path, entry: &Entry) -> std::io::Result<()> {
    let dir = slot.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = slot.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(
        &tmp,
        serde_json::to_vec(entry).map_err(std::io::Error::other)?,
    )?;
    std::fs::rename(&tmp, slot).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha_of(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "no file stamp off Unix (docs/limits.md): the weights are hashed at every load"
    )]
    fn the_hash_is_remembered_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (file, cache) = (
            dir.path().join("model.safetensors"),
            dir.path().join("cache"),
        );
        std::fs::write(&file, b"weights version one").unwrap();
        let first = weights_sha256(&file, Some(&cache)).unwrap();
        assert_eq!(first, sha_of(b"weights version one"));
        let slots: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
        assert_eq!(slots.len(), 1, "one remembered hash");
        let slot = slots[0].as_ref().unwrap().path();

        // The cache is what answers while the stamp holds: a planted hash comes back.
        let mut entry: Entry = serde_json::from_slice(&std::fs::read(&slot).unwrap()).unwrap();
        entry.sha256 = "ab".repeat(32);
        std::fs::write(&slot, serde_json::to_vec(&entry).unwrap()).unwrap();
        assert_eq!(
            weights_sha256(&file, Some(&cache)).unwrap(),
            "ab".repeat(32)
        );

        // Rewriting the file (same length) changes its stamp: it is hashed again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, b"weights version two").unwrap();
        assert_eq!(
            weights_sha256(&file, Some(&cache)).unwrap(),
            sha_of(b"weights version two")
        );
        // A damaged cache entry is ignored, and without a cache the file is always read.
        std::fs::write(&slot, b"{not json").unwrap();
        assert_eq!(
            weights_sha256(&file, Some(&cache)).unwrap(),
            sha_of(b"weights version two")
        );
        assert_eq!(
            weights_sha256(&file, None).unwrap(),
            sha_of(b"weights version two")
        );
        assert!(matches!(
            weights_sha256(&dir.path().join("absent"), Some(&cache)),
            Err(EmbedError::MissingFile { .. })
        ));
    }
}
