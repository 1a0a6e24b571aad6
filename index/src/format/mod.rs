//! The index file format: the only place where bytes become structs.
//!
//! A file is a 512-byte header followed by 64-byte-aligned sections (byte tables in
//! `FORMAT.md` at the repository root):
//!
//! | # | section        | contents                                                      |
//! |---|----------------|---------------------------------------------------------------|
//! | 0 | vectors        | `n × dim` f32, L2-normalised, node order                      |
//! | 1 | level0         | `n × (1 + M0)` u32: count, then neighbour node ids            |
//! | 2 | levels         | `n` u8: each node's top level                                 |
//! | 3 | upper_offsets  | `n` u32: word offset of the node's upper block, or u32::MAX   |
//! | 4 | upper          | per node with level L ≥ 1: L × (1 + M) u32 blocks             |
//! | 5 | ext_ids        | `n` u64: each node's external id                              |
//! | 6 | id_index       | `n × (u64 external id, u64 node)`, sorted by external id      |
//! | 7 | codes          | bf16 / int8 only: `n × code_len` bytes (int8: planes, then scales) |
//!
//! Everything is little-endian. Each section has an XXH3-64 checksum seeded with the section's
//! number (so swapped or zero-filled sections do not validate), and the header carries its own.

use crate::encoding::VectorEncoding;

pub(crate) mod header;
pub(crate) mod read;
pub(crate) mod stamp;
pub(crate) mod write;

pub(crate) use header::FORMAT_VERSION;
pub(crate) use read::BaseFile;
pub(crate) use write::{create_private, SectionWriter};

/// Sections, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Section {
    Vectors = 0,
    Level0 = 1,
    Levels = 2,
    UpperOffsets = 3,
    Upper = 4,
    ExtIds = 5,
    IdIndex = 6,
    Codes = 7,
}

impl Section {
    pub(crate) const ALL: [Section; 8] = [
        Section::Vectors,
        Section::Level0,
        Section::Levels,
        Section::UpperOffsets,
        Section::Upper,
        Section::ExtIds,
        Section::IdIndex,
        Section::Codes,
    ];

    /// The sections a file of `encoding` holds (an f32 index has no codes section; its slot
    /// stays zero, as in format version 1).
    pub(crate) fn present(encoding: VectorEncoding) -> &'static [Section] {
        match encoding {
            VectorEncoding::F32 => &Self::ALL[..7],
            VectorEncoding::Bf16 | VectorEncoding::Int8 => &Self::ALL,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Section::Vectors => "vectors section",
            Section::Level0 => "level-0 adjacency section",
            Section::Levels => "levels section",
            Section::UpperOffsets => "upper-offsets section",
            Section::Upper => "upper adjacency section",
            Section::ExtIds => "external-ids section",
            Section::IdIndex => "id-index section",
            Section::Codes => "codes section",
        }
    }
}

/// Section alignment in bytes.
pub(crate) const ALIGN: u64 = 64;

/// XXH3-64 seeded per section number.
pub(crate) fn section_seed(section: usize) -> u64 {
    0x6d6c_6964_7800_0000 ^ (section as u64 + 1)
}
