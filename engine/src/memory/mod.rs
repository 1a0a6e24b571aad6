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

mod apply;
mod background;
mod checkpoint;
mod embed;
mod index_file;
mod index_stamp;
mod index_state;
pub(crate) mod lineage;
mod open;
mod verify;
pub(crate) mod views;

pub(crate) use apply::Applied;
pub use verify::CheckReport;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use rustc_hash::FxHashMap;

use index_state::IndexState;

use crate::catalog::CatalogSlot;
use crate::clock::{Clock, Timestamp};
use crate::embedder::TextEmbedder;
use crate::item::MemoryId;
use crate::merge::ErasureBound;
use crate::options::Options;
use crate::store::lock::ProcessLock;
use crate::store::Store;

/// Name of the index file in a store directory.
pub(crate) const INDEX_FILE: &str = "index.mlx";

/// A memory store, open for reading and writing. `Send + Sync`: share it with an `Arc`.
///
/// Its face is this page: the calls most programs make (open, remember, get, update, forget,
/// feedback, recall, context, conversations, tasks, subjects), each written in the feature
/// folder that carries it out, and four views for the rest, so the handle itself stays small
/// (tantivy's `Index` and redb's `Database` show their faces the same way):
///
/// - [`Memory::scoped`]: a caller confined to a user, agent or session, every call enforced
///   in the engine (a memory outside the scope is not found);
/// - [`Memory::admin`]: the store's upkeep: checkpoints, checks, sweeps, keys, receipts, what
///   opening found;
/// - [`Memory::advanced`]: the lower-level calls tools, importers and benchmarks make (a raw
///   filter scan, recall by vector, contexts of given hits, documents);
/// - [`Memory::transfer`]: exports, imports and sync.
///
/// Every operation of the registry is also one call: [`Memory::call`].
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
    pub(crate) inner: Arc<Inner>,
    background: Option<background::Background>,
}

/// State shared with the background checkpointer.
pub(crate) struct Inner {
    pub(crate) dir: PathBuf,
    pub(crate) store: Arc<Store>,
    /// The index in use and its lifecycle (saved, trusted, verified, rebuilt).
    pub(crate) index: IndexState,
    pub(crate) catalog: CatalogSlot,
    pub(crate) embedder: Arc<dyn TextEmbedder>,
    pub(crate) fingerprint: String,
    /// Whether the store keeps its memories' sentence vectors and recall scores by them
    /// (format 2, a model pooling by sentences).
    pub(crate) sentences: bool,
    pub(crate) options: Options,
    pub(crate) writer: Mutex<WriterState>,
    /// Recall access times and reinforcements not yet written (flushed with the next write or
    /// checkpoint).
    pub(crate) accessed: Mutex<FxHashMap<MemoryId, Touch>>,
    /// The BM25 index over memory text, built on first use.
    pub(crate) lexical: RwLock<Option<crate::lexical::LexicalIndex>>,
    /// Serialises subject observations (read, merge, embed, write).
    pub(crate) observing: Mutex<()>,
    /// Ties the index file to this database (recorded in its header at save).
    pub(crate) store_id: [u8; 16],
    /// The background thread's (or a post-write sweep's) last failure, until something
    /// succeeds.
    pub(crate) background_error: Mutex<Option<String>>,
    pub(crate) open_report: OpenReport,
    /// The scopes this store erased or carried an erasure out for, each with its bound (the
    /// time of the device that made it), read from the receipt log on first use and dropped
    /// whenever a receipt is logged: [`Inner::created_now`].
    pub(crate) erasure_bounds: Mutex<Option<Vec<ErasureBound>>>,
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
    pub(crate) unsaved: u64,
    /// When the first of them happened.
    pub(crate) first_unsaved: Option<Instant>,
    /// Commits not yet fsynced (grouped durability).
    pub(crate) unflushed: bool,
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
    /// The index file showed the stamp this store recorded when it saved it, so it was
    /// searched before its full check (which runs in the background, and rebuilds it if it
    /// fails); false when searches waited for the check, or the index was rebuilt or new.
    pub index_trusted_by_stamp: bool,
}

/// Counts describing a store.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
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

/// Bytes a store takes on disk, by file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DiskUsage {
    /// The database: every memory, vector and log.
    pub database: u64,
    /// The saved index (0 before the first checkpoint).
    pub index: u64,
}

impl Memory {
    /// True if `dir` holds a store (so opening it reads it rather than creating one).
    pub fn exists(dir: impl AsRef<Path>) -> bool {
        crate::store::is_store(dir.as_ref())
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The clock all times come from.
    pub fn clock(&self) -> &Clock {
        &self.inner.options.clock
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Counts.
    ///
    /// # Errors
    /// [`crate::Error::Store`].
    pub fn stats(&self) -> crate::error::Result<Stats> {
        let tiers = self.inner.catalog.get()?.read().tiers();
        Ok(Stats {
            memories: self.inner.store.count()?,
            working: tiers[0],
            long_term: tiers[1],
            indexed: self.inner.index.len(),
            seq: self.inner.store.meta_u64("seq")?,
            checkpoint: self.inner.index.saved(),
            model: self.inner.fingerprint.clone(),
        })
    }

    /// Closes a store shared through an [`Arc`] once every other holder has let it go: calls
    /// in flight on other threads finish first (what a binding's close does).
    ///
    /// # Errors
    /// As [`Memory::close`].
    pub fn close_shared(mut memory: Arc<Memory>) -> crate::error::Result<()> {
        let memory = loop {
            match Arc::try_unwrap(memory) {
                Ok(m) => break m,
                Err(shared) => {
                    memory = shared;
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        };
        memory.close()
    }

    /// Stops the background checkpointer and writes a final checkpoint.
    ///
    /// # Errors
    /// As [`Admin::checkpoint`](crate::Admin::checkpoint); the store is closed either way and
    /// nothing acknowledged is lost (the next open replays what the checkpoint missed).
    pub fn close(mut self) -> crate::error::Result<()> {
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
