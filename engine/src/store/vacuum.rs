//! Rewriting the database file when most of it is free space or half-empty pages.
//!
//! redb's own `compact` moves pages towards the start of the file and truncates it, but it never
//! merges pages: forgetting every other memory leaves every page half full and the file as large
//! as before. A rewrite copies every table, in key order, into a fresh file beside the old one,
//! syncs it and renames it over `store.redb` (then syncs the directory), so a crash at any moment
//! leaves either the old file or the new one, never a mix. A leftover `store.redb.rewrite` from an
//! interrupted rewrite is deleted on open.

use std::path::{Path, PathBuf};

use redb::{Key, ReadableDatabase, ReadableTable, TableDefinition, Value};

use super::{
    db, Store, CATALOG, CHANGES, FEEDBACK, FORGET_LOG, HASHES, ITEMS, META, RECEIPTS, SENTENCES,
    SUBJECTS, SUBJECT_STATE, SYNC_COUNTS, SYNC_GIDS, SYNC_LOCALS, VECTORS,
};
use crate::error::{Error, Result};

/// Files smaller than this are never rewritten (not worth it).
const MIN_FILE: u64 = 4 << 20;

/// The temporary file of a rewrite, beside `store.redb`.
pub(crate) fn rewrite_path(path: &Path) -> PathBuf {
    path.with_extension("redb.rewrite")
}

/// Space accounting of the database file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Usage {
    /// Length of the file.
    pub(crate) file: u64,
    /// Bytes of keys, values and tree metadata: what a rewrite must keep.
    pub(crate) live: u64,
}

impl Store {
    /// The file's length and the bytes it holds that are live.
    pub(crate) fn usage(&self) -> Result<Usage> {
        let file = std::fs::metadata(&self.path)
            .map_err(|e| Error::io(&self.path, "stat", e))?
            .len();
        self.ensure_writable()?;
        let tx = self.db.read().begin_write().map_err(db)?;
        let st = tx.stats().map_err(db)?;
        tx.abort().map_err(db)?;
        Ok(Usage {
            file,
            live: st.stored_bytes() + st.metadata_bytes(),
        })
    }

    /// Rewrites the file when live data fills less than a third of it (a freshly written file
    /// is about 1.5x its live bytes, so this triggers once about half of it was forgotten).
    /// Reads and writes wait while it runs. Returns whether it rewrote.
    pub(crate) fn compact_if_sparse(&self) -> Result<bool> {
        let usage = self.usage()?;
        if usage.file < MIN_FILE || usage.live * 3 > usage.file {
            return Ok(false);
        }
        self.rewrite()?;
        Ok(true)
    }

    /// Copies every table into a fresh file and swaps it in atomically.
    pub(crate) fn rewrite(&self) -> Result<()> {
        self.ensure_writable()?;
        let tmp = rewrite_path(&self.path);
        remove_if_exists(&tmp)?;
        let mut guard = self.db.write();
        {
            let fresh = super::open_database(&tmp, self.faults.as_ref())?;
            let from = guard.begin_read().map_err(db)?;
            let mut to = fresh.begin_write().map_err(db)?;
            to.set_durability(redb::Durability::Immediate).map_err(db)?;
            copy(&from, &to, ITEMS)?;
            copy(&from, &to, VECTORS)?;
            copy(&from, &to, CATALOG)?;
            copy(&from, &to, HASHES)?;
            copy(&from, &to, CHANGES)?;
            copy(&from, &to, META)?;
            copy(&from, &to, FORGET_LOG)?;
            copy(&from, &to, FEEDBACK)?;
            copy(&from, &to, SUBJECTS)?;
            copy(&from, &to, SUBJECT_STATE)?;
            copy(&from, &to, RECEIPTS)?;
            copy(&from, &to, SYNC_GIDS)?;
            copy(&from, &to, SYNC_LOCALS)?;
            copy(&from, &to, SYNC_COUNTS)?;
            copy(&from, &to, SENTENCES)?;
            to.commit().map_err(db)?;
        }
        // The old database closes before the rename (Windows refuses to rename over an open
        // file); a stand-in holds its place meanwhile, and nothing reads it: the guard is held.
        let stand_in = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(db)?;
        self.set_attached(super::Attached::Detached);
        drop(std::mem::replace(&mut *guard, stand_in));
        let renamed = self
            .file_op(&self.path, "rename rewritten database")
            .and_then(|()| {
                std::fs::rename(&tmp, &self.path).map_err(|e| Error::io(&self.path, "rename", e))
            })
            .and_then(|()| super::files::sync_parent(&self.path));
        // The new file, or the old one where the rename failed: either holds every commit.
        *guard = super::open_database(&self.path, self.faults.as_ref())?;
        self.set_attached(super::Attached::Live);
        renamed
    }
}

/// Deletes `path` if it exists.
pub(crate) fn remove_if_exists(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, "remove", e)),
        _ => Ok(()),
    }
}

/// Copies one table, in key order.
fn copy<K: Key + 'static, V: Value + 'static>(
    from: &redb::ReadTransaction,
    to: &redb::WriteTransaction,
    def: TableDefinition<K, V>,
) -> Result<()> {
    let src = from.open_table(def).map_err(db)?;
    let mut dst = to.open_table(def).map_err(db)?;
    for entry in src.iter().map_err(db)? {
        let (k, v) = entry.map_err(db)?;
        dst.insert(k.value(), v.value()).map_err(db)?;
    }
    Ok(())
}
