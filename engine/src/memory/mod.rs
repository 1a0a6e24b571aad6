//! [`Memory`]: one open store directory.
//!
//! Concurrency: every write takes the writer lock, commits one redb transaction, then applies
//! the change to the index and the catalog; reads (get, scan, recall) never take it, so they run
//! concurrently with a writer and with each other. Lock order: writer → index slot → catalog.
//!
//! Durability: the database commit is the acknowledgement. The index is a cache of the
//! database, checkpointed to `index.mlx` with the sequence number it covers; on open, logged
//! changes past that number are replayed into it, and an index that fails any check is rebuilt
//! from the stored vectors.

mod background;
mod checkpoint;
mod context;
mod feedback;
mod import;
mod open;
mod read;
mod retrieve;
mod subjects;
mod sweep;
mod tasks;
mod verify;
mod write;

pub(crate) use write::unit;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use memloop_index::Index;
use parking_lot::{Mutex, RwLock};
use rustc_hash::FxHashMap;

pub use crate::query::{Hit, Query};
pub use crate::task::{Task, TaskIds};
pub use context::{
    ContextMode, ContextRequest, DocumentIds, DocumentRef, Structures, CHUNK_OVERLAP, CHUNK_TOKENS,
};
pub use subjects::SubjectEvent;
pub use sweep::{DecayReport, ForgetEvent, SweepReport};
pub use verify::CheckReport;
pub use write::Update;

use crate::catalog::CatalogSlot;
use crate::clock::{Clock, Timestamp};
use crate::embedder::TextEmbedder;
use crate::item::MemoryId;
use crate::options::Options;
use crate::store::lock::ProcessLock;
use crate::store::Store;

/// Name of the index file in a store directory.
pub(crate) const INDEX_FILE: &str = "index.mlx";

/// A memory store, open for reading and writing. `Send + Sync`: share it with an `Arc`.
///
/// ```no_run
/// use memloop::{Memory, NewMemory, Options, Query};
/// # fn main() -> memloop::Result<()> {
/// let memory = Memory::open("./agent-memory", Options::default())?;
/// let id = memory.remember(NewMemory::new("The deploy key lives in vault/prod/deploy"))?;
/// let hits = memory.recall(&Query::new("where is the deploy key?").k(3))?;
/// assert_eq!(hits[0].item.id, id);
/// # Ok(()) }
/// ```
pub struct Memory {
    inner: Arc<Inner>,
    background: Option<background::Background>,
}

/// State shared with the background checkpointer.
pub(crate) struct Inner {
    dir: PathBuf,
    store: Arc<Store>,
    index: RwLock<Arc<Index>>,
    catalog: CatalogSlot,
    embedder: Arc<dyn TextEmbedder>,
    fingerprint: String,
    options: Options,
    writer: Mutex<WriterState>,
    /// Recall access times and reinforcements not yet written (flushed with the next write or
    /// checkpoint).
    accessed: Mutex<FxHashMap<MemoryId, Touch>>,
    /// The BM25 index over memory text, built on first use.
    lexical: RwLock<Option<crate::retrieve::LexicalIndex>>,
    /// Serialises subject observations (read, merge, embed, write).
    observing: Mutex<()>,
    /// Sequence number the index file on disk covers.
    saved_seq: AtomicU64,
    /// Ties the index file to this database (recorded in its header at save).
    store_id: [u8; 16],
    /// The index passed its full check (see `verify`): until then it is not searched or saved.
    index_verified: AtomicBool,
    /// Why the index was rebuilt from the database in this session, if it was.
    index_rebuilt: Mutex<Option<String>>,
    /// The background thread's (or a post-write sweep's) last failure, until something
    /// succeeds.
    background_error: Mutex<Option<String>>,
    open_report: OpenReport,
    _lock: ProcessLock,
}

/// A recall's effect on a memory, kept in memory until the next write.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Touch {
    pub(crate) accessed: Timestamp,
    /// Strength, anchor and count after the reinforcement.
    pub(crate) reinforced: Option<(f64, Timestamp, u32)>,
}

impl Touch {
    /// Applies the touch to `item`.
    pub(crate) fn apply(&self, item: &mut crate::item::MemoryItem) {
        item.accessed = item.accessed.max(self.accessed);
        if let Some((strength, anchor, n)) = self.reinforced {
            if anchor >= item.decay_anchor {
                item.strength = strength;
                item.decay_anchor = anchor;
                item.reinforced = n;
                item.tier = crate::item::Tier::Working;
            }
        }
    }
}

/// Bookkeeping guarded by the writer lock.
#[derive(Debug, Default)]
pub(crate) struct WriterState {
    /// Changes since the last checkpoint.
    unsaved: u64,
    /// When the first of them happened.
    first_unsaved: Option<Instant>,
    /// Commits not yet fsynced (grouped durability).
    unflushed: bool,
}

/// What opening the store found and did with the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexRecovery {
    /// The index file was current.
    Clean,
    /// `n` logged changes were replayed into it.
    Replayed(usize),
    /// The index was rebuilt from the stored vectors, for this reason.
    Rebuilt(String),
}

/// Figures from [`Memory::open`].
#[derive(Debug, Clone)]
pub struct OpenReport {
    /// What happened to the index.
    pub index: IndexRecovery,
    /// Time to open the store and index, excluding loading the model.
    pub store_open: std::time::Duration,
}

/// Counts describing a store.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Live memories (superseded versions included).
    pub memories: usize,
    /// Memories in the working tier.
    pub working: usize,
    /// Memories in the long-term tier.
    pub long_term: usize,
    /// Vectors in the index.
    pub indexed: usize,
    /// Last change sequence number.
    pub seq: u64,
    /// Sequence number covered by the index file.
    pub checkpoint: u64,
    /// Model fingerprint.
    pub model: String,
}

impl Memory {
    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The clock all times come from.
    pub fn clock(&self) -> &Clock {
        &self.inner.options.clock
    }

    /// The embedder.
    pub fn embedder(&self) -> &Arc<dyn TextEmbedder> {
        &self.inner.embedder
    }

    /// The embedding model's fingerprint recorded in the store.
    pub fn fingerprint(&self) -> &str {
        &self.inner.fingerprint
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// What opening found.
    pub fn open_report(&self) -> &OpenReport {
        &self.inner.open_report
    }

    /// Counts.
    ///
    /// # Errors
    /// [`crate::Error::Store`].
    pub fn stats(&self) -> crate::Result<Stats> {
        let tiers = self.inner.catalog.get()?.read().tiers();
        Ok(Stats {
            memories: self.inner.store.count()?,
            working: tiers[0],
            long_term: tiers[1],
            indexed: self.inner.index.read().len(),
            seq: self.inner.store.meta_u64("seq")?,
            checkpoint: self
                .inner
                .saved_seq
                .load(std::sync::atomic::Ordering::Acquire),
            model: self.inner.fingerprint.clone(),
        })
    }

    /// Stops the background checkpointer and writes a final checkpoint.
    ///
    /// # Errors
    /// As [`Memory::checkpoint`]; the store is closed either way and nothing acknowledged is
    /// lost (the next open replays what the checkpoint missed).
    pub fn close(mut self) -> crate::Result<()> {
        if let Some(bg) = self.background.take() {
            bg.stop();
        }
        self.inner.checkpoint(true)
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        if let Some(bg) = self.background.take() {
            bg.stop();
            // Errors cannot be reported from drop; `close` reports them. Nothing is lost
            // either way: the database holds every acknowledged write.
            let _ = self.inner.checkpoint(true);
        }
    }
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("dir", &self.inner.dir)
            .field("model", &self.inner.fingerprint)
            .finish()
    }
}
