//! The HNSW graph: construction (insert, neighbour selection), deletion with repair, and
//! persistence by compaction into a new file.

mod delete;
mod insert;
mod save;
mod select;
pub(crate) mod store;

use std::path::Path;
use std::sync::atomic::Ordering;

use parking_lot::{Mutex, RwLock};

use crate::error::{IndexError, Result};
use crate::format::stamp::FileStamp;
use crate::format::{BaseFile, Section};
use crate::params::Params;
use crate::simd::DotFn;
pub use insert::NearHits;
use store::Store;

/// A memory-mapped HNSW index over L2-normalised f32 vectors with inner-product similarity and
/// `u64` external ids.
///
/// `Index` is `Send + Sync`: searches run from any number of threads while other threads insert
/// or delete. Changes since the last [`Index::open`] live in memory; [`Index::save`] writes them
/// (compacted) to a new file.
pub struct Index {
    pub(crate) params: Params,
    pub(crate) store: Store,
    /// (node, level) of the entry point.
    entry: RwLock<Option<(u32, usize)>>,
    /// Serialises the reservation step of inserts (id checks and node allocation).
    reserve: Mutex<()>,
    /// Inserts and deletes hold the read side; `save` the write side, so a file never holds a
    /// half-applied change.
    gate: RwLock<()>,
    pub(crate) dot: DotFn,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("params", &self.params)
            .field("len", &self.len())
            .finish()
    }
}

/// Counts describing an index's memory and file layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexStats {
    /// Live items.
    pub live: usize,
    /// Nodes in the mapped file.
    pub mapped_nodes: usize,
    /// Nodes inserted since open (in memory).
    pub fresh_nodes: usize,
    /// Tombstones awaiting compaction by the next save.
    pub tombstones: usize,
}

impl Index {
    /// An empty in-memory index.
    ///
    /// # Errors
    /// [`IndexError::InvalidParameter`] if `params` are out of range.
    pub fn new(params: Params) -> Result<Self> {
        params.validate()?;
        Ok(Self::from_parts(params, None))
    }

    /// Opens a saved index by mapping it: O(1) in the file size (the header and section layout
    /// are validated; section checksums are checked by [`Index::verify`]). Contents read from the
    /// file are bounds-checked at every use, so even a corrupted file cannot cause a panic or an
    /// out-of-bounds read.
    ///
    /// The file must not be modified or truncated by another program while it is open:
    /// truncation makes reads of the lost pages fault (SIGBUS). memloop itself never writes into
    /// a saved file; it writes a new one and renames it.
    ///
    /// # Errors
    /// [`IndexError::Io`], [`IndexError::NotAnIndex`], [`IndexError::UnsupportedVersion`],
    /// [`IndexError::Truncated`], [`IndexError::Corrupted`], [`IndexError::ChecksumMismatch`]
    /// (header only).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let base = BaseFile::open(path.as_ref())?;
        let params = base.params;
        Ok(Self::from_parts(params, Some(base)))
    }

    /// An index from a file's bytes held in memory (an encrypted store decrypts its file
    /// before opening it); `label` names it in errors. The same checks as [`Index::open`].
    ///
    /// # Errors
    /// As [`Index::open`], but never [`IndexError::Io`].
    pub fn from_bytes(label: impl AsRef<Path>, bytes: &[u8]) -> Result<Self> {
        let base = BaseFile::from_bytes(label.as_ref(), bytes)?;
        let params = base.params;
        Ok(Self::from_parts(params, Some(base)))
    }

    /// [`Index::open`] followed by [`Index::verify`]: reads the whole file once.
    ///
    /// # Errors
    /// As both.
    pub fn open_verified(path: impl AsRef<Path>) -> Result<Self> {
        let index = Self::open(path)?;
        index.verify()?;
        Ok(index)
    }

    fn from_parts(params: Params, base: Option<BaseFile>) -> Self {
        let entry = base.as_ref().and_then(|b| b.entry);
        Index {
            params,
            store: Store::new(base),
            entry: RwLock::new(entry),
            reserve: Mutex::new(()),
            gate: RwLock::new(()),
            dot: crate::simd::kernel().1,
        }
    }

    /// Checks every section checksum of the mapped file and that every stored neighbour id and
    /// count is in range. Does nothing for an index that was never saved.
    ///
    /// # Errors
    /// [`IndexError::ChecksumMismatch`] or [`IndexError::Corrupted`] naming the section.
    pub fn verify(&self) -> Result<()> {
        let Some(base) = &self.store.base else {
            return Ok(());
        };
        base.verify()?;
        let n = base.len;
        for node in 0..n {
            for level in 0..=base.level(node) {
                if let Some(bad) = base.links(node, level).iter().find(|&&x| x >= n) {
                    return Err(IndexError::Corrupted {
                        path: base.path().to_path_buf(),
                        section: if level == 0 {
                            Section::Level0
                        } else {
                            Section::Upper
                        }
                        .name(),
                        detail: format!(
                            "node {node} level {level} links to {bad}, past the {n} nodes"
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Changes the pass fraction below which filtered searches scan exactly (see
    /// [`Params::exact_below`]); 0 always walks the graph, 1 always scans.
    ///
    /// # Errors
    /// [`IndexError::InvalidParameter`] outside 0..=1.
    pub fn set_exact_below(&mut self, fraction: f32) -> Result<()> {
        let mut p = self.params;
        p.exact_below = fraction;
        p.validate()?;
        self.params = p;
        Ok(())
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.params.dim
    }

    /// Number of live items.
    pub fn len(&self) -> usize {
        self.store.view().live()
    }

    /// True if no live items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if `id` is a live item.
    pub fn contains(&self, id: u64) -> bool {
        self.store.view().find(id).is_some()
    }

    /// The stored (normalised) vector of `id`; in an int8 index, which keeps only codes, the
    /// vector its code stands for (within half a quantisation step per dimension).
    pub fn vector(&self, id: u64) -> Option<Vec<f32>> {
        let v = self.store.view();
        let node = v.find(id)?;
        Some(match self.params.vectors {
            crate::VectorEncoding::Int8 => {
                crate::encoding::dequantize_i8(v.code(node), v.scale(node), self.params.dim)
            }
            crate::VectorEncoding::F32 | crate::VectorEncoding::Bf16 => v.vector(node).to_vec(),
        })
    }

    /// How construction compares two stored nodes in this index.
    pub(crate) fn node_sim(&self) -> select::NodeSim {
        select::NodeSim {
            encoding: self.params.vectors,
            dot: self.dot,
        }
    }

    /// The caller's checkpoint number stored by the [`Index::save`] this index was opened from
    /// (0 for a new index).
    pub fn checkpoint(&self) -> u64 {
        self.store.base.as_ref().map_or(0, |b| b.checkpoint)
    }

    /// The owner recorded by the [`Index::save_owned`] this index was opened from; `None` for
    /// an index built in memory or saved without one.
    pub fn owner(&self) -> Option<[u8; 16]> {
        self.store
            .base
            .as_ref()
            .map(|b| b.owner)
            .filter(|o| *o != [0; 16])
    }

    /// The stamp (length, times, inode) of the file this index was opened from, taken when it
    /// was opened; `None` for an index built in memory or off Unix. A caller that verified the
    /// file can keep the stamp and trust a later open showing the same one (see [`FileStamp`]).
    pub fn file_stamp(&self) -> Option<FileStamp> {
        self.store.base.as_ref().and_then(|b| b.stamp)
    }

    /// Memory and layout counts.
    pub fn stats(&self) -> IndexStats {
        let v = self.store.view();
        let tombstones = self.store.deleted_count.load(Ordering::Acquire);
        IndexStats {
            live: v.len() as usize - tombstones,
            mapped_nodes: self.store.base_len as usize,
            fresh_nodes: (v.len() - self.store.base_len) as usize,
            tombstones,
        }
    }

    /// Every live external id, in node order.
    pub fn ids(&self) -> Vec<u64> {
        let v = self.store.view();
        (0..v.len())
            .filter(|&n| !v.is_deleted(n))
            .map(|n| v.ext(n))
            .collect()
    }

    pub(crate) fn entry(&self) -> Option<(u32, usize)> {
        *self.entry.read()
    }
}
