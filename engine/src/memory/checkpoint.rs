//! Checkpoints: the index saved with the sequence number it covers. The change log is kept
//! (change exports read it back to any sequence number; `pruned_through` records where stores
//! written before that pruned it).

use super::{Inner, Memory};
use crate::error::Result;
use crate::memory::views::Admin;

impl Memory {}

impl Inner {
    /// Saves the index; with `compact`, also rewrites a mostly-free database file (seconds on
    /// a large file, so background checkpoints leave it to close and explicit checkpoints:
    /// redb reuses freed pages meanwhile).
    pub(crate) fn checkpoint(&self, compact: bool) -> Result<()> {
        self.checkpoint_with(compact, false)
    }

    /// [`Inner::checkpoint`]; with `resave`, the index file is written even when it covers
    /// every change already (after its key was replaced).
    pub(crate) fn checkpoint_with(&self, compact: bool, resave: bool) -> Result<()> {
        // A save never rewrites an index it has not verified.
        self.ensure_index_verified()?;
        let mut w = self.writer.lock();
        // The index file must never claim changes the database could still lose.
        self.flush_locked(&mut w)?;
        let seq = self.store.meta_u64("seq")?;
        let (path, generation) = super::index_file::current(&self.dir, &self.store)?;
        if !resave && seq == self.saved() && (path.exists() || seq == 0) {
            return Ok(());
        }
        let index = self.index.current();
        let mut reopened = super::index_file::save_next(
            &index,
            &self.dir,
            &self.store,
            generation,
            seq,
            self.store_id,
        )?;
        reopened.set_exact_below(index.params().exact_below)?;
        if let Some(stamp) = reopened.file_stamp() {
            // Best effort: without it the next open verifies the file before searching it.
            let _ = super::index_stamp::record(&self.store, stamp);
        }
        self.index.saved_as(reopened, seq);
        w.unsaved = 0;
        w.first_unsaved = None;
        if compact {
            self.store.compact_if_sparse()?;
        }
        Ok(())
    }
}

impl<'a> Admin<'a> {
    /// Makes every write durable, saves the index (compacted, atomically replacing the old
    /// file) and prunes the change log it covers. Writes wait while it runs; reads do not.
    /// Also runs in the background (see [`crate::Options::checkpoint_every`]) and on close.
    /// When live data fills less than a third of the database file (after much forgetting), the
    /// file is rewritten here and on close (reads and writes wait meanwhile).
    ///
    /// # Errors
    /// [`crate::Error::Index`] or [`crate::Error::Store`]; the previous checkpoint then stays
    /// valid and nothing is lost.
    pub fn checkpoint(&self) -> Result<()> {
        self.memory.inner.checkpoint(true)
    }

    /// Checkpoints, then rewrites the database file now whatever its free space (checkpoints
    /// do it on their own when live data fills under a third of a file of 4 MiB or more):
    /// every table is copied into a fresh file, which is synced and renamed over the old one.
    /// A crash leaves the old file or the new one. Reads and writes wait meanwhile.
    ///
    /// # Errors
    /// As [`Admin::checkpoint`]; [`crate::Error::Io`] for the rename.
    pub fn compact(&self) -> Result<()> {
        self.memory.inner.checkpoint(false)?;
        let _w = self.memory.inner.writer.lock();
        self.memory.inner.store.rewrite()
    }
}
