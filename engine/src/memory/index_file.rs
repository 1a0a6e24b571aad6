//! The index file on disk: mapped as it is for a plain store; for an encrypted store, sealed
//! whole under the ring's index key (the store's id as associated data), decrypted into memory
//! on open and never written in the clear.

use std::path::Path;

use memloop_index::Index;

use crate::crypt::ring::Label;
use crate::crypt::seal::{Opened, Table};
use crate::error::Result;
use crate::store::sealing::Sealing;
use crate::store::{write_atomic, Store};

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
pub(crate) fn save(
    index: &Index,
    path: &Path,
    store: &Store,
    seq: u64,
    store_id: [u8; 16],
) -> Result<Index> {
    store.file_op(path, "save index")?;
    let Sealing(Some(sealer)) = &store.sealing else {
        index.save_owned(path, seq, store_id)?;
        return Ok(Index::open(path)?);
    };
    let bytes = index.to_bytes(seq, store_id)?;
    let sealed = sealer.seal(Table::Index, &store_id, Label::Index, &bytes)?;
    write_atomic(path, &sealed, store.faults.as_ref())?;
    Ok(Index::from_bytes(path, &bytes)?)
}
