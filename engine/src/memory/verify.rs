//! The index is verified before it is believed, and never saved unverified.
//!
//! Opening a store runs the cheap checks only (header checksum, sizes, the store id and
//! checkpoint sequence the file records), so open stays O(1) in the index size. The full check
//! (every section's checksum, every link in range) runs on the background thread right after
//! open, and before the first save. Searches and writes wait for it too, unless the file shows
//! the stamp this store recorded when it saved it (`index_stamp`: unchanged since the save),
//! so a store opens and answers at once whatever its size. A file that fails the check is
//! replaced by an index rebuilt from the stored vectors: a damaged file is never searched once
//! verified, and never saved again.

use std::sync::Arc;

use memloop_index::Index;

use super::{Inner, Memory};
use crate::error::Result;
use crate::memory::views::Admin;

/// What [`crate::Admin::check`] found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckReport {
    /// Memories in the database (superseded versions included).
    pub memories: usize,
    /// Vectors in the index.
    pub indexed: usize,
    /// Why the index file was rebuilt from the database during this session, if it was.
    pub index_rebuilt: Option<String>,
    /// Problems that remain (items or vectors the database cannot decode); empty when the
    /// store is sound.
    pub problems: Vec<String>,
}

impl CheckReport {
    /// True when nothing is wrong now (an index rebuilt from the database is sound).
    pub fn is_sound(&self) -> bool {
        self.problems.is_empty()
    }
}

impl Memory {}

impl Inner {
    /// Makes sure the index may be searched and changed: verified, or trusted by its stamp
    /// (see `index_stamp`), else fully checked now.
    pub(crate) fn ensure_index_trusted(&self) -> Result<()> {
        if self.index.is_trusted() {
            return Ok(());
        }
        self.ensure_index_verified()
    }

    /// Runs the full index check once (later calls return at once): on failure the index is
    /// rebuilt from the stored vectors and swapped in, and the next checkpoint saves it.
    ///
    /// The check reads only the mapped file, which nothing writes, so it holds `verifying`
    /// rather than the writer lock: writes to a trusted index go on meanwhile. The writer lock
    /// is taken only to swap a damaged index out.
    pub(crate) fn ensure_index_verified(&self) -> Result<()> {
        if self.index.is_verified() {
            return Ok(());
        }
        let _v = self.index.verifying.lock();
        if self.index.is_verified() {
            return Ok(());
        }
        let index = self.index.current();
        let outcome = index.verify();
        let _w = self.writer.lock();
        if !self.index.is_current(&index) {
            // Swapped meanwhile (`check` rebuilt it): check what is there now.
            return self.verify_index_locked();
        }
        self.settle_check(&index, outcome)
    }

    /// Runs the full check again now, whatever was checked before.
    pub(crate) fn reverify_index(&self) -> Result<()> {
        let _v = self.index.verifying.lock();
        let _w = self.writer.lock();
        self.verify_index_locked()
    }

    /// The full check under the writer lock; rebuilds the index when it fails.
    fn verify_index_locked(&self) -> Result<()> {
        let index = self.index.current();
        let outcome = index.verify();
        self.settle_check(&index, outcome)
    }

    /// Acts on the full check of `index` (under the writer lock): marks it verified, or swaps
    /// in an index rebuilt from the database when its file failed.
    fn settle_check(
        &self,
        index: &Index,
        outcome: std::result::Result<(), memloop_index::IndexError>,
    ) -> Result<()> {
        let Err(damage) = outcome else {
            self.index.mark_verified();
            return Ok(());
        };
        let fresh = Index::new(super::open::params(&self.options, index.dim())?)?;
        super::open::rebuild(&self.store, &fresh)?;
        // Nothing on disk covers the rebuilt index: the next checkpoint saves it.
        self.index
            .rebuilt(fresh, format!("index file failed verification: {damage}"));
        Ok(())
    }

    /// The index to search, trusted first.
    pub(crate) fn verified_index(&self) -> Result<Arc<Index>> {
        self.ensure_index_trusted()?;
        Ok(self.index.current())
    }
}

impl<'a> Admin<'a> {
    /// Verifies the whole store now: the index file's checksums and links (rebuilding the
    /// index from the database if they fail), then every item and vector in the database,
    /// and that the index holds one vector per memory. Reads the whole store.
    ///
    /// # Errors
    /// [`crate::Error::Store`] / [`crate::Error::Index`] when the check itself cannot run;
    /// damage it finds is reported in [`crate::answers::CheckReport::problems`].
    pub fn check(&self) -> Result<CheckReport> {
        // Read the file again even if it passed at open: it may have changed on disk since.
        self.memory.inner.reverify_index()?;
        let (memories, mut problems) = self
            .memory
            .inner
            .store
            .check_records(self.memory.inner.embedder.dim())?;
        let indexed = self.memory.inner.index.len();
        if indexed != memories {
            problems.push(format!(
                "the index holds {indexed} vectors, the database {memories} memories"
            ));
        }
        Ok(CheckReport {
            memories,
            indexed,
            index_rebuilt: self.memory.inner.index.rebuilt_because(),
            problems,
        })
    }
}
