//! Opening an index file: map it, validate the header and the section layout in O(1), and hand
//! out typed views. Section *contents* are checked by [`BaseFile::verify`] (checksums) and,
//! cheaply, at every use: neighbour ids and offsets read from the file are bounds-checked, so a
//! corrupted section can give wrong answers but never a panic or an out-of-bounds read.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::mmap::{Anonymous, Mapped};
use zerocopy::FromBytes;

use super::header::{
    Header, CHECKSUM_XXH3, HEADER_LEN, INT8_PLANES_VERSION, MAGIC, METRIC_IP, MIN_FORMAT_VERSION,
};
use super::stamp::FileStamp;
use super::{section_seed, Section, ALIGN, FORMAT_VERSION};
use crate::encoding::VectorEncoding;
use crate::error::{IndexError, Result};
use crate::params::{Params, MAX_LEVEL};

/// The bytes of an index file: mapped, or (an encrypted store's, decrypted) in memory.
enum Bytes {
    Mapped(Mapped),
    /// Held in anonymous memory (page-aligned, so every section is aligned for its typed
    /// view), asked to be backed by transparent huge pages: a search touches vectors all over
    /// the file, and with 4 KiB pages it spent 15-25% longer in TLB misses than on the page
    /// cache's large folios of a mapped file.
    /// The second field is the length in bytes (the map has at least one).
    Owned(Anonymous, usize),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(m, len) => &m[..*len],
        }
    }
}

/// A validated index file, memory-mapped or held in memory.
pub(crate) struct BaseFile {
    path: PathBuf,
    map: Bytes,
    pub(crate) params: Params,
    pub(crate) len: u32,
    pub(crate) entry: Option<(u32, usize)>,
    pub(crate) checkpoint: u64,
    pub(crate) owner: [u8; 16],
    /// The stamp of the file mapped, taken from the open handle.
    pub(crate) stamp: Option<FileStamp>,
    ranges: [Range<usize>; 8],
    checksums: [u64; 8],
}

impl std::fmt::Debug for BaseFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish()
    }
}

impl BaseFile {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| IndexError::io(path, "open index file", e))?;
        let meta = file
            .metadata()
            .map_err(|e| IndexError::io(path, "stat index file", e))?;
        let file_len = meta.len();
        let stamp = FileStamp::of(&meta);
        let map = crate::mmap::map_readonly(&file)
            .map_err(|e| IndexError::io(path, "map index file", e))?;
        Self::parse(path, Bytes::Mapped(map), file_len, stamp)
    }

    /// An index file's bytes held in memory (`label` names it in errors): the same checks as
    /// [`BaseFile::open`].
    pub(crate) fn from_bytes(label: &Path, bytes: &[u8]) -> Result<Self> {
        let mut memory = crate::mmap::anonymous(bytes.len())
            .map_err(|e| IndexError::io(label, "allocate memory for the index", e))?;
        memory[..bytes.len()].copy_from_slice(bytes);
        Self::parse(
            label,
            Bytes::Owned(memory, bytes.len()),
            bytes.len() as u64,
            None,
        )
    }

    fn parse(path: &Path, map: Bytes, file_len: u64, stamp: Option<FileStamp>) -> Result<Self> {
        let corrupted = |section: &'static str, detail: String| IndexError::Corrupted {
            path: path.to_path_buf(),
            section,
            detail,
        };
        if map.len() >= MAGIC.len() && map[..MAGIC.len()] != MAGIC {
            return Err(IndexError::NotAnIndex {
                path: path.to_path_buf(),
            });
        }
        let Ok((h, _)) = Header::ref_from_prefix(&map[..]) else {
            return Err(IndexError::Truncated {
                path: path.to_path_buf(),
                what: "header",
                needed: HEADER_LEN as u64,
                actual: file_len,
            });
        };
        let version = h.format_version.get();
        let stored = h.header_checksum.get();
        let computed = h.compute_checksum();
        if stored != computed {
            // A future version may lay its header out differently; report that first.
            if version > FORMAT_VERSION {
                return Err(IndexError::UnsupportedVersion {
                    path: path.to_path_buf(),
                    found: version,
                    min: MIN_FORMAT_VERSION,
                    max: FORMAT_VERSION,
                });
            }
            return Err(IndexError::ChecksumMismatch {
                path: path.to_path_buf(),
                section: "header",
                expected: stored,
                got: computed,
            });
        }
        if !(MIN_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(IndexError::UnsupportedVersion {
                path: path.to_path_buf(),
                found: version,
                min: MIN_FORMAT_VERSION,
                max: FORMAT_VERSION,
            });
        }
        if h.checksum_algo.get() != CHECKSUM_XXH3 {
            return Err(corrupted(
                "header",
                format!("unknown checksum algorithm {}", h.checksum_algo.get()),
            ));
        }
        if h.metric.get() != METRIC_IP {
            return Err(corrupted(
                "header",
                format!("unknown metric {}", h.metric.get()),
            ));
        }
        if h.reserved.iter().any(|b| *b != 0) {
            return Err(corrupted("header", "reserved bytes are not zero".into()));
        }
        // Version 1 had reserved (zero) bytes here, which read as f32.
        let vectors = match VectorEncoding::from_tag(h.vector_encoding.get()) {
            Some(e) if version >= 2 || e == VectorEncoding::F32 => e,
            _ => {
                return Err(corrupted(
                    "header",
                    format!(
                        "vector encoding {} in a version {version} file",
                        h.vector_encoding.get()
                    ),
                ))
            }
        };
        let params = Params {
            dim: h.dim.get() as usize,
            m: h.m.get() as usize,
            m0: h.m0.get() as usize,
            ef_construction: h.ef_construction.get() as usize,
            ef_search: h.ef_search.get() as usize,
            ml: f64::from_bits(h.ml_bits.get()),
            seed: h.seed.get(),
            exact_below: f32::from_bits(h.exact_below_bits.get()),
            vectors,
        };
        params
            .validate()
            .map_err(|e| corrupted("header", e.to_string()))?;
        let n = h.node_count.get();
        if n >= u64::from(u32::MAX) {
            return Err(corrupted(
                "header",
                format!("node count {n} exceeds the u32 node id space"),
            ));
        }
        let max_level = h.max_level.get() as usize;
        if max_level > MAX_LEVEL {
            return Err(corrupted(
                "header",
                format!("max level {max_level} exceeds {MAX_LEVEL}"),
            ));
        }
        let entry = match h.entry_point.get() {
            u32::MAX if n == 0 => None,
            e if u64::from(e) < n => Some((e, max_level)),
            e => {
                return Err(corrupted(
                    "header",
                    format!("entry point {e} is not a node (n = {n})"),
                ))
            }
        };
        let dim = params.dim as u64;
        // An int8 index keeps no f32 vectors, and its codes are nibble planes from version 4;
        // one written before (its codes whole, and up to version 2 its f32 vectors too) is not
        // read: an owner rebuilds it from its store, as for any file it cannot use.
        if vectors == VectorEncoding::Int8 && version < INT8_PLANES_VERSION {
            return Err(IndexError::UnsupportedVersion {
                path: path.to_path_buf(),
                found: version,
                min: INT8_PLANES_VERSION,
                max: FORMAT_VERSION,
            });
        }
        let vectors_len = if vectors == VectorEncoding::Int8 {
            0
        } else {
            n * dim * 4
        };
        let expected_len = [
            vectors_len,
            n * (1 + params.m0 as u64) * 4,
            n,
            n * 4,
            h.upper_words.get().saturating_mul(4),
            n * 8,
            n * 16,
            n * vectors.code_len(params.dim) as u64,
        ];
        let mut ranges: [Range<usize>; 8] = Default::default();
        let mut checksums = [0u64; 8];
        for &s in Section::present(vectors) {
            let i = s as usize;
            let e = &h.sections[i];
            let (off, len) = (e.offset.get(), e.length.get());
            if len != expected_len[i] {
                return Err(corrupted(
                    s.name(),
                    format!("length {len}, expected {}", expected_len[i]),
                ));
            }
            if off % ALIGN != 0 || off < HEADER_LEN as u64 {
                return Err(corrupted(
                    s.name(),
                    format!("offset {off} is not a 64-byte boundary after the header"),
                ));
            }
            let end = off
                .checked_add(len)
                .ok_or_else(|| corrupted(s.name(), "offset overflows".into()))?;
            if end > file_len || end > map.len() as u64 {
                return Err(IndexError::Truncated {
                    path: path.to_path_buf(),
                    what: s.name(),
                    needed: end,
                    actual: file_len,
                });
            }
            ranges[i] = off as usize..end as usize;
            checksums[i] = e.checksum.get();
        }
        for unused in &h.sections[Section::present(vectors).len()..] {
            if unused.offset.get() != 0 || unused.length.get() != 0 || unused.checksum.get() != 0 {
                return Err(corrupted(
                    "header",
                    "unused section slot is not zero".into(),
                ));
            }
        }
        let checkpoint = h.checkpoint.get();
        let owner = h.owner;
        let base = BaseFile {
            path: path.to_path_buf(),
            map,
            params,
            len: n as u32,
            entry,
            checkpoint,
            owner,
            stamp,
            ranges,
            checksums,
        };
        // Alignment of typed views follows from the 64-byte offsets and the page-aligned map;
        // check it once here so accessors never see a failed cast.
        let aligned = bytemuck::try_cast_slice::<u8, f32>(base.bytes(Section::Vectors)).is_ok()
            && bytemuck::try_cast_slice::<u8, u32>(base.bytes(Section::Level0)).is_ok()
            && bytemuck::try_cast_slice::<u8, u32>(base.bytes(Section::UpperOffsets)).is_ok()
            && bytemuck::try_cast_slice::<u8, u32>(base.bytes(Section::Upper)).is_ok()
            && bytemuck::try_cast_slice::<u8, u64>(base.bytes(Section::ExtIds)).is_ok()
            && bytemuck::try_cast_slice::<u8, u64>(base.bytes(Section::IdIndex)).is_ok()
            && {
                let scales = base.split_codes().1;
                scales.is_empty() || bytemuck::try_cast_slice::<u8, f32>(scales).is_ok()
            };
        if !aligned {
            return Err(corrupted(
                "header",
                "sections are not aligned in memory".into(),
            ));
        }
        Ok(base)
    }

    /// Checks every section checksum, and that the padding between sections is zero and
    /// nothing trails the last section (so every byte of the file is covered by a check).
    pub(crate) fn verify(&self) -> Result<()> {
        let mut covered: Vec<Range<usize>> = self.ranges.to_vec();
        covered.sort_by_key(|r| r.start);
        let mut pos = HEADER_LEN;
        for r in covered
            .iter()
            .chain(std::iter::once(&(self.map.len()..self.map.len())))
        {
            let gap = self.map.get(pos..r.start.max(pos)).unwrap_or(&[]);
            if gap.iter().any(|b| *b != 0) {
                return Err(IndexError::Corrupted {
                    path: self.path.clone(),
                    section: "padding",
                    detail: format!("non-zero bytes between offsets {pos} and {}", r.start),
                });
            }
            pos = pos.max(r.end);
        }
        for &s in Section::present(self.params.vectors) {
            let i = s as usize;
            let got = xxhash_rust::xxh3::xxh3_64_with_seed(self.bytes(s), section_seed(i));
            if got != self.checksums[i] {
                return Err(IndexError::ChecksumMismatch {
                    path: self.path.clone(),
                    section: s.name(),
                    expected: self.checksums[i],
                    got,
                });
            }
        }
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn bytes(&self, s: Section) -> &[u8] {
        self.map.get(self.ranges[s as usize].clone()).unwrap_or(&[])
    }

    pub(crate) fn vectors(&self) -> &[f32] {
        bytemuck::try_cast_slice(self.bytes(Section::Vectors)).unwrap_or(&[])
    }
    /// The codes of a compressed index (empty for f32; an int8 index's planes, without the
    /// scales after them), the int8 scales (empty otherwise), and the bytes of one node's code
    /// in the first.
    pub(crate) fn code_parts(&self) -> (&[u8], &[f32], usize) {
        let (codes, scales) = self.split_codes();
        let stride = self.params.vectors.code_stride(self.params.dim);
        (
            codes,
            bytemuck::try_cast_slice(scales).unwrap_or(&[]),
            stride,
        )
    }

    /// The codes section as its codes and the scales that end an int8 index's section (empty
    /// otherwise).
    fn split_codes(&self) -> (&[u8], &[u8]) {
        let codes = self.bytes(Section::Codes);
        let end = self.len as usize * self.params.vectors.code_stride(self.params.dim);
        codes.split_at(end.min(codes.len()))
    }
    pub(crate) fn level0(&self) -> &[u32] {
        bytemuck::try_cast_slice(self.bytes(Section::Level0)).unwrap_or(&[])
    }
    pub(crate) fn levels(&self) -> &[u8] {
        self.bytes(Section::Levels)
    }
    pub(crate) fn upper_offsets(&self) -> &[u32] {
        bytemuck::try_cast_slice(self.bytes(Section::UpperOffsets)).unwrap_or(&[])
    }
    pub(crate) fn upper(&self) -> &[u32] {
        bytemuck::try_cast_slice(self.bytes(Section::Upper)).unwrap_or(&[])
    }
    pub(crate) fn ext_ids(&self) -> &[u64] {
        bytemuck::try_cast_slice(self.bytes(Section::ExtIds)).unwrap_or(&[])
    }
    /// (external id, node) pairs, sorted by external id.
    pub(crate) fn id_index(&self) -> &[[u64; 2]] {
        bytemuck::try_cast_slice(self.bytes(Section::IdIndex)).unwrap_or(&[])
    }

    /// Node of an external id by binary search (wrong, never unsafe, on a corrupted section).
    pub(crate) fn find(&self, ext: u64) -> Option<u32> {
        let idx = self.id_index();
        let pos = idx.binary_search_by_key(&ext, |p| p[0]).ok()?;
        let node = idx.get(pos)?[1];
        (node < u64::from(self.len)).then_some(node as u32)
    }

    #[inline]
    pub(crate) fn level(&self, node: u32) -> usize {
        self.levels()
            .get(node as usize)
            .map_or(0, |l| (*l as usize).min(MAX_LEVEL))
    }

    /// Neighbour list of `node` at `level`, as stored (ids still need a bounds check).
    pub(crate) fn links(&self, node: u32, level: usize) -> &[u32] {
        let stride;
        let block = if level == 0 {
            stride = 1 + self.params.m0;
            let s = node as usize * stride;
            self.level0().get(s..s + stride)
        } else {
            if self.level(node) < level {
                return &[];
            }
            stride = 1 + self.params.m;
            let Some(&off) = self.upper_offsets().get(node as usize) else {
                return &[];
            };
            let s = off as usize + (level - 1) * stride;
            self.upper().get(s..s + stride)
        };
        block.map_or(&[], block_links)
    }
}

/// The neighbour ids of one stored block `[count, id, id, …]`, the count clamped to the block
/// (a corrupted count cannot read past it).
#[inline]
pub(crate) fn block_links(block: &[u32]) -> &[u32] {
    match block.split_first() {
        Some((count, ids)) => &ids[..(*count as usize).min(ids.len())],
        None => &[],
    }
}
