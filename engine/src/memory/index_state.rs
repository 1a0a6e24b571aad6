//! The index's lifecycle in one place: the index in use, the change its file on disk covers,
//! whether it may be searched and changed (trusted: verified, or its file's stamp is the one
//! this store recorded) and whether it passed its full check (verified), and why it was
//! rebuilt in this session. `Inner` holds one; `open.rs` makes it, `verify.rs` checks and
//! rebuilds through it, `checkpoint.rs` saves through it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use memloop_index::Index;
use parking_lot::{Mutex, RwLock};

/// The index in use and where it stands.
pub(crate) struct IndexState {
    current: RwLock<Arc<Index>>,
    /// Sequence number the index file on disk covers.
    saved_seq: AtomicU64,
    verified: AtomicBool,
    trusted: AtomicBool,
    /// Held while the full check reads the index file (not the writer lock, so writes to a
    /// trusted index go on meanwhile).
    pub(crate) verifying: Mutex<()>,
    rebuilt: Mutex<Option<String>>,
}

impl IndexState {
    /// An index as opened: its file covers `index.checkpoint()`; `rebuilt` says why it was
    /// rebuilt from the database on open, if it was.
    pub(crate) fn new(
        index: Index,
        verified: bool,
        trusted: bool,
        rebuilt: Option<String>,
    ) -> Self {
        IndexState {
            saved_seq: AtomicU64::new(index.checkpoint()),
            current: RwLock::new(Arc::new(index)),
            verified: AtomicBool::new(verified),
            trusted: AtomicBool::new(trusted || verified),
            verifying: Mutex::new(()),
            rebuilt: Mutex::new(rebuilt),
        }
    }

    /// The index in use (a later swap does not change the one returned).
    pub(crate) fn current(&self) -> Arc<Index> {
        self.current.read().clone()
    }

    /// How many vectors the index in use holds.
    pub(crate) fn len(&self) -> usize {
        self.current.read().len()
    }

    /// True if `index` is still the one in use.
    pub(crate) fn is_current(&self, index: &Arc<Index>) -> bool {
        Arc::ptr_eq(index, &self.current.read())
    }

    /// The change the index file on disk covers.
    pub(crate) fn saved(&self) -> u64 {
        self.saved_seq.load(Ordering::Acquire)
    }

    /// True once the index may be searched and changed.
    pub(crate) fn is_trusted(&self) -> bool {
        self.trusted.load(Ordering::Acquire)
    }

    /// True once the index passed its full check (until then it is not saved).
    pub(crate) fn is_verified(&self) -> bool {
        self.verified.load(Ordering::Acquire)
    }

    /// The full check passed (or the index was rebuilt): verified and trusted.
    pub(crate) fn mark_verified(&self) {
        self.verified.store(true, Ordering::Release);
        self.trusted.store(true, Ordering::Release);
    }

    /// The index was saved through change `seq` and `reopened` from its file (under the
    /// writer lock).
    pub(crate) fn saved_as(&self, reopened: Index, seq: u64) {
        *self.current.write() = Arc::new(reopened);
        self.saved_seq.store(seq, Ordering::Release);
    }

    /// `fresh`, rebuilt from the database because of `why`, replaces the index in use
    /// (under the writer lock); nothing on disk covers it, so the next checkpoint saves it.
    pub(crate) fn rebuilt(&self, fresh: Index, why: String) {
        *self.current.write() = Arc::new(fresh);
        self.saved_seq.store(0, Ordering::Release);
        *self.rebuilt.lock() = Some(why);
        self.mark_verified();
    }

    /// Why the index was rebuilt from the database in this session, if it was.
    pub(crate) fn rebuilt_because(&self) -> Option<String> {
        self.rebuilt.lock().clone()
    }
}
