//! The index file on disk: mapped as it is for a plain store; for an encrypted store, sealed
//! whole under the ring's index key (the store's id as associated data), decrypted into memory
//! on open and never written in the clear.
//!
//! Which file is current is recorded in the database (`meta` key `index_generation`):
//! generation 0 is `index.mlx`, generation n is `index-n.mlx`. Where a rename may replace a
//! mapped file (Unix) every save writes `index.mlx` and renames it into place. Where it may
//! not (Windows refuses to rename over or delete a file while a view of it is mapped, and
//! readers may still hold the previous index), a save writes the next generation beside the
//! current one, records it, and deletes older generations once nothing maps them: a crash
//! before the record leaves the old file current and the new one unused, deleted at the next
//! open or save.

use std::path::{Path, PathBuf};

use memloop_index::Index;

use crate::crypt::ring::Label;
use crate::crypt::seal::{Opened, Table};
use crate::error::Result;
use crate::store::sealing::Sealing;
use crate::store::{write_atomic, Store, Tx};

/// The `meta` key naming the current generation.
const GENERATION: &str = "index_generation";

/// The file name of index generation `n`.
fn file_name(n: u64) -> String {
    if n == 0 {
        super::INDEX_FILE.to_string()
    } else {
        format!("index-{n}.mlx")
    }
}

/// The path of store `dir`'s current index file, and its generation.
pub(crate) fn current(dir: &Path, store: &Store) -> Result<(PathBuf, u64)> {
    let n = store.meta_u64(GENERATION)?;
    Ok((dir.join(file_name(n)), n))
}

/// Deletes index files of `dir` other than generation `keep`: older generations, ones a crash
/// left unrecorded and their temporary files. One still mapped (Windows) stays until a later
/// call.
pub(crate) fn remove_stale(dir: &Path, keep: u64) {
    let keep = file_name(keep);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let stale = |n: &&str| {
            *n != keep && (*n == super::INDEX_FILE || crate::store::is_index_generation(n))
        };
        if let Some(name) = name.to_str().filter(stale) {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
}

/// Saves `index` as the store's next index generation after generation `now` (see the
/// module's documentation), records it, and returns the saved index reopened from the file.
pub(crate) fn save_next(
    index: &Index,
    dir: &Path,
    store: &Store,
    now: u64,
    seq: u64,
    store_id: [u8; 16],
) -> Result<Index> {
    let next = if crate::platform::RENAME_REPLACES_MAPPED {
        0
    } else {
        now + 1
    };
    let reopened = save(index, &dir.join(file_name(next)), store, seq, store_id)?;
    if next != now {
        let mut tx = Tx::begin(store, true)?;
        tx.set_meta(GENERATION, &next.to_le_bytes())?;
        tx.commit()?;
    }
    remove_stale(dir, next);
    Ok(reopened)
}

/// Why an encrypted store's index file cannot be used (it is then rebuilt).
pub(crate) enum Unusable {
    /// Sealed under an index key since replaced (an erasure happened after it was written).
    KeyReplaced,
    /// The index file or its decryption failed.
    Failed(crate::error::Error),
}

/// Opens the index file at `path`: mapped, or decrypted into memory. With `verified`, every
/// checksum is checked too.
pub(crate) fn open(
    path: &Path,
    store: &Store,
    store_id: [u8; 16],
    verified: bool,
) -> Result<Index, Unusable> {
    let Sealing(Some(sealer)) = &store.sealing else {
        let opened = if verified {
            Index::open_verified(path)
        } else {
            Index::open(path)
        };
        return opened.map_err(|e| Unusable::Failed(e.into()));
    };
    let sealed = std::fs::read(path)
        .map_err(|e| Unusable::Failed(crate::error::Error::io(path, "read", e)))?;
    let plain = match sealer.open(Table::Index, &store_id, &sealed) {
        Ok(Opened::Plain(p)) => p,
        Ok(Opened::Erased) => return Err(Unusable::KeyReplaced),
        Err(e) => return Err(Unusable::Failed(e.into())),
    };
    let index = Index::from_bytes(path, &plain).map_err(|e| Unusable::Failed(e.into()))?;
    if verified {
        index.verify().map_err(|e| Unusable::Failed(e.into()))?;
    }
    Ok(index)
}

/// Saves `index` to `path` (atomically) recording `seq`, and returns the saved index reopened
/// from the file's bytes (mapped, or in memory for an encrypted store).
fn save(index: &Index, path: &Path, store: &Store, seq: u64, store_id: [u8; 16]) -> Result<Index> {
    store.file_op(path, "save index")?;
    let Sealing(Some(sealer)) = &store.sealing else {
        // Private from the moment it exists (an ACL for this user alone on Windows).
        index.save_owned_with(path, seq, store_id, crate::platform::create_own_file)?;
        return Ok(Index::open(path)?);
    };
    let bytes = index.to_bytes(seq, store_id)?;
    let sealed = sealer.seal(Table::Index, &store_id, Label::Index, &bytes)?;
    write_atomic(path, &sealed, store.faults.as_ref())?;
    Ok(Index::from_bytes(path, &bytes)?)
}
