//! Node storage: an immutable mapped base plus the changes made since it was opened.
//!
//! - Nodes `0..base_len` live in the mapped file ([`BaseFile`]). Their vectors are never copied;
//!   their neighbour lists are read from the file until a change copies that node's lists into
//!   the striped `overlay` (copy-on-write per node), so open costs O(1) and memory grows with
//!   the changes, not with the file.
//! - Nodes `base_len..` were inserted since open and live in `fresh`, each with its own lock.
//! - Deletions are tombstones: an atomic bit per base node, a flag per fresh node. Tombstoned
//!   nodes stay traversable until the next save compacts them away.
//!
//! Lock order (outermost first): `Index::reserve`, `fresh`, then any one of `fresh_ids`, an
//! overlay stripe or a fresh node's `links`. Code holding a node's links lock only reads
//! vectors; it never takes another links lock.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use rustc_hash::FxHashMap;

use crate::format::read::block_links;
use crate::format::BaseFile;

const STRIPES: usize = 256;

/// Per-level neighbour lists of one node; index = level.
pub(crate) type Links = Vec<Vec<u32>>;

/// A node inserted since the index was opened.
pub(crate) struct FreshNode {
    pub vector: Box<[f32]>,
    /// The compressed code of `vector` (empty in an f32 index; in an int8 index, its planes).
    pub code: Box<[u8]>,
    /// The scale of an int8 code (0 otherwise).
    pub scale: f32,
    pub ext: u64,
    pub level: u8,
    pub deleted: AtomicBool,
    pub links: Mutex<Links>,
}

/// All nodes: the mapped base and the in-memory changes.
pub(crate) struct Store {
    pub base: Option<BaseFile>,
    pub base_len: u32,
    pub fresh: RwLock<Vec<FreshNode>>,
    pub fresh_ids: RwLock<FxHashMap<u64, u32>>,
    overlay: Box<[RwLock<FxHashMap<u32, Links>>]>,
    overlay_len: AtomicUsize,
    base_deleted: Box<[AtomicU64]>,
    pub deleted_count: AtomicUsize,
}

impl Store {
    pub(crate) fn new(base: Option<BaseFile>) -> Self {
        let base_len = base.as_ref().map_or(0, |b| b.len);
        Store {
            base,
            base_len,
            fresh: RwLock::new(Vec::new()),
            fresh_ids: RwLock::new(FxHashMap::default()),
            overlay: (0..STRIPES)
                .map(|_| RwLock::new(FxHashMap::default()))
                .collect(),
            overlay_len: AtomicUsize::new(0),
            base_deleted: (0..(base_len as usize).div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            deleted_count: AtomicUsize::new(0),
        }
    }

    /// A consistent view for one operation: holds the read side of `fresh`.
    pub(crate) fn view(&self) -> View<'_> {
        let (vectors, level0) = match &self.base {
            Some(b) => (b.vectors(), b.level0()),
            None => (&[][..], &[][..]),
        };
        let (codes, scales, code_stride) = self
            .base
            .as_ref()
            .map_or((&[][..], &[][..], 0), |b| b.code_parts());
        let (dim, stride) = self
            .base
            .as_ref()
            .map_or((0, 1), |b| (b.params.dim, 1 + b.params.m0));
        View {
            store: self,
            fresh: self.fresh.read(),
            vectors,
            level0,
            codes,
            scales,
            dim,
            stride,
            code_stride,
        }
    }
}

/// Read access to every node for the duration of one search, insert or delete.
pub(crate) struct View<'a> {
    store: &'a Store,
    fresh: RwLockReadGuard<'a, Vec<FreshNode>>,
    /// The mapped vectors and level-0 lists, resolved once per view (hot path of every search).
    vectors: &'a [f32],
    level0: &'a [u32],
    /// The mapped codes of a compressed index (empty for f32; an int8 index's planes), each
    /// `code_stride` bytes, and an int8 index's scales.
    codes: &'a [u8],
    scales: &'a [f32],
    dim: usize,
    stride: usize,
    code_stride: usize,
}

impl<'a> View<'a> {
    /// Total nodes, tombstones included.
    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.store.base_len + self.fresh.len() as u32
    }

    /// Live nodes (total minus tombstones).
    pub(crate) fn live(&self) -> usize {
        (self.len() as usize).saturating_sub(self.store.deleted_count.load(Ordering::Acquire))
    }

    #[inline]
    fn fresh_node(&self, node: u32) -> Option<&FreshNode> {
        node.checked_sub(self.store.base_len)
            .and_then(|i| self.fresh.get(i as usize))
    }

    #[inline]
    pub(crate) fn vector(&self, node: u32) -> &[f32] {
        if node < self.store.base_len {
            let s = node as usize * self.dim;
            self.vectors.get(s..s + self.dim).unwrap_or(&[])
        } else {
            self.fresh_node(node).map_or(&[], |f| &f.vector)
        }
    }

    /// The compressed code of `node`: a bf16 code, or an int8 code's planes (empty in an f32
    /// index or for a node out of range).
    #[inline]
    pub(crate) fn code(&self, node: u32) -> &[u8] {
        if node < self.store.base_len {
            let s = node as usize * self.code_stride;
            self.codes.get(s..s + self.code_stride).unwrap_or(&[])
        } else {
            self.fresh_node(node).map_or(&[], |f| &f.code)
        }
    }

    /// The scale of `node`'s int8 code (0 in another index or for a node out of range).
    #[inline]
    pub(crate) fn scale(&self, node: u32) -> f32 {
        if node < self.store.base_len {
            self.scales.get(node as usize).copied().unwrap_or(0.0)
        } else {
            self.fresh_node(node).map_or(0.0, |f| f.scale)
        }
    }

    /// Starts loading the scale of a mapped node's int8 code (nothing for a fresh one).
    #[inline]
    pub(crate) fn prefetch_scale(&self, node: u32) {
        if let Some(s) = self.scales.get(node as usize..) {
            crate::simd::prefetch_bytes(s);
        }
    }

    #[inline]
    pub(crate) fn level(&self, node: u32) -> usize {
        if node < self.store.base_len {
            self.store.base.as_ref().map_or(0, |b| b.level(node))
        } else {
            self.fresh_node(node).map_or(0, |f| f.level as usize)
        }
    }

    #[inline]
    pub(crate) fn ext(&self, node: u32) -> u64 {
        if node < self.store.base_len {
            self.store
                .base
                .as_ref()
                .and_then(|b| b.ext_ids().get(node as usize).copied())
                .unwrap_or(u64::MAX)
        } else {
            self.fresh_node(node).map_or(u64::MAX, |f| f.ext)
        }
    }

    #[inline]
    pub(crate) fn is_deleted(&self, node: u32) -> bool {
        if self.store.deleted_count.load(Ordering::Relaxed) == 0 {
            return false;
        }
        if node < self.store.base_len {
            let word = &self.store.base_deleted[node as usize / 64];
            word.load(Ordering::Acquire) & (1 << (node % 64)) != 0
        } else {
            self.fresh_node(node)
                .is_none_or(|f| f.deleted.load(Ordering::Acquire))
        }
    }

    /// Sets the tombstone of `node`; false if it was already set.
    pub(crate) fn mark_deleted(&self, node: u32) -> bool {
        let newly = if node < self.store.base_len {
            let bit = 1u64 << (node % 64);
            self.store.base_deleted[node as usize / 64].fetch_or(bit, Ordering::AcqRel) & bit == 0
        } else {
            self.fresh_node(node)
                .is_some_and(|f| !f.deleted.swap(true, Ordering::AcqRel))
        };
        if newly {
            self.store.deleted_count.fetch_add(1, Ordering::AcqRel);
        }
        newly
    }

    /// Node of a live external id.
    pub(crate) fn find(&self, ext: u64) -> Option<u32> {
        if let Some(&n) = self.store.fresh_ids.read().get(&ext) {
            return (!self.is_deleted(n)).then_some(n);
        }
        let n = self.store.base.as_ref()?.find(ext)?;
        (!self.is_deleted(n) && self.ext(n) == ext).then_some(n)
    }

    /// Calls `f` with the node of every live id in `ids` (one lock acquisition for all).
    pub(crate) fn for_each_found(&self, ids: &[u64], mut f: impl FnMut(u32)) {
        let fresh_ids = self.store.fresh_ids.read();
        for &ext in ids {
            let node = match fresh_ids.get(&ext) {
                Some(&n) => Some(n),
                None => self
                    .store
                    .base
                    .as_ref()
                    .and_then(|b| b.find(ext))
                    .filter(|&n| self.ext(n) == ext),
            };
            if let Some(n) = node.filter(|&n| !self.is_deleted(n)) {
                f(n);
            }
        }
    }

    /// The stored level-0 block `[count, ids…]` of a mapped node (`None` for a fresh one).
    #[inline]
    fn level0_block(&self, node: u32) -> Option<&'a [u32]> {
        let s = node as usize * self.stride;
        self.level0.get(s..s + self.stride)
    }

    /// Starts loading the level-0 list of a mapped node (nothing for a fresh one).
    #[inline]
    pub(crate) fn prefetch_links0(&self, node: u32) {
        if let Some(block) = self.level0_block(node) {
            crate::simd::prefetch_span(bytemuck::cast_slice(block));
        }
    }

    /// Copies the neighbours of `node` at `level` into `out` (ids outside the graph dropped).
    pub(crate) fn links_into(&self, node: u32, level: usize, out: &mut Vec<u32>) {
        out.clear();
        let len = self.len();
        if node < self.store.base_len {
            if self.store.overlay_len.load(Ordering::Acquire) != 0 {
                let stripe = self.store.overlay[node as usize % STRIPES].read();
                if let Some(links) = stripe.get(&node) {
                    if let Some(l) = links.get(level) {
                        out.extend_from_slice(l);
                    }
                    return;
                }
            }
            if level == 0 {
                if let Some(block) = self.level0_block(node) {
                    out.extend(block_links(block).iter().copied().filter(|&n| n < len));
                }
            } else if let Some(b) = &self.store.base {
                out.extend(b.links(node, level).iter().copied().filter(|&n| n < len));
            }
        } else if let Some(f) = self.fresh_node(node) {
            if let Some(l) = f.links.lock().get(level) {
                out.extend_from_slice(l);
            }
        }
    }

    /// Runs `f` on the mutable neighbour list of `node` at `level` under that node's lock.
    ///
    /// `f` must not call back into methods that take links locks (`links_into`, this one).
    pub(crate) fn with_links_mut<R>(
        &self,
        node: u32,
        level: usize,
        f: impl FnOnce(&mut Vec<u32>) -> R,
    ) -> Option<R> {
        if node < self.store.base_len {
            let base = self.store.base.as_ref()?;
            let node_level = base.level(node);
            if level > node_level {
                return None;
            }
            let len = self.len();
            let mut stripe = self.store.overlay[node as usize % STRIPES].write();
            let links = stripe.entry(node).or_insert_with(|| {
                self.store.overlay_len.fetch_add(1, Ordering::AcqRel);
                (0..=node_level)
                    .map(|l| {
                        base.links(node, l)
                            .iter()
                            .copied()
                            .filter(|&n| n < len)
                            .collect()
                    })
                    .collect()
            });
            links.get_mut(level).map(f)
        } else {
            let fresh = self.fresh_node(node)?;
            let mut links = fresh.links.lock();
            links.get_mut(level).map(f)
        }
    }
}
