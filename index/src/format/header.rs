//! The fixed 512-byte file header.
//!
//! | offset | size | field            | meaning                                        |
//! |--------|------|------------------|------------------------------------------------|
//! | 0      | 8    | magic            | `\x89MLIDX\r\n` ([`MAGIC`])                   |
//! | 8      | 4    | format_version   | [`FORMAT_VERSION`]                             |
//! | 12     | 4    | checksum_algo    | 1 = XXH3-64                                    |
//! | 16     | 4    | dim              | vector dimension                               |
//! | 20     | 4    | metric           | 1 = inner product on unit vectors              |
//! | 24     | 4    | m                | M                                              |
//! | 28     | 4    | m0               | M0                                             |
//! | 32     | 4    | ef_construction  |                                                |
//! | 36     | 4    | ef_search        | default search ef                              |
//! | 40     | 8    | node_count       | n                                              |
//! | 48     | 8    | seed             | level generator seed                           |
//! | 56     | 8    | ml_bits          | mL as f64 bits                                 |
//! | 64     | 4    | entry_point      | node id, u32::MAX when empty                   |
//! | 68     | 4    | max_level        | level of the entry point                       |
//! | 72     | 4    | exact_below_bits | filter threshold as f32 bits                   |
//! | 76     | 4    | section_count    | 7 (f32) or 8 (with the codes section)          |
//! | 80     | 8    | checkpoint       | caller's sequence number at save               |
//! | 88     | 8    | upper_words      | u32 words in the upper section                 |
//! | 96     | 192  | sections         | 8 × (offset u64, length u64, checksum u64)     |
//! | 288    | 16   | owner            | caller's id of the data the file belongs to    |
//! | 304    | 4    | vector_encoding  | 0 = f32, 1 = bf16, 2 = int8 (zero in 1; int8 read from 4) |
//! | 308    | 196  | reserved         | zero                                           |
//! | 504    | 8    | header_checksum  | XXH3-64 of bytes 0..504                        |

use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// PNG-style magic: a non-ASCII first byte, the name, CR LF to catch text-mode transfers.
pub(crate) const MAGIC: [u8; 8] = *b"\x89MLIDX\r\n";
/// Format version written by this build (independent of the crate version).
pub(crate) const FORMAT_VERSION: u32 = 4;
/// The first version whose int8 codes are nibble planes with the scales apart; an int8 file of
/// an earlier version is not read.
pub(crate) const INT8_PLANES_VERSION: u32 = 4;
/// Oldest format version this build reads.
pub(crate) const MIN_FORMAT_VERSION: u32 = 1;
/// Checksum algorithm tag: XXH3-64.
pub(crate) const CHECKSUM_XXH3: u32 = 1;
/// Metric tag: inner product on L2-normalised vectors.
pub(crate) const METRIC_IP: u32 = 1;
/// Header size in bytes.
pub(crate) const HEADER_LEN: usize = 512;
/// Bytes covered by the header checksum.
pub(crate) const HEADER_CHECKED: usize = 504;

/// Where one section lies and its checksum.
#[derive(Debug, Clone, Copy, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub(crate) struct SectionEntry {
    pub offset: U64,
    pub length: U64,
    pub checksum: U64,
}

/// The header, exactly as on disk.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub(crate) struct Header {
    pub magic: [u8; 8],
    pub format_version: U32,
    pub checksum_algo: U32,
    pub dim: U32,
    pub metric: U32,
    pub m: U32,
    pub m0: U32,
    pub ef_construction: U32,
    pub ef_search: U32,
    pub node_count: U64,
    pub seed: U64,
    pub ml_bits: U64,
    pub entry_point: U32,
    pub max_level: U32,
    pub exact_below_bits: U32,
    pub section_count: U32,
    pub checkpoint: U64,
    pub upper_words: U64,
    pub sections: [SectionEntry; 8],
    pub owner: [u8; 16],
    pub vector_encoding: U32,
    pub reserved: [u8; 196],
    pub header_checksum: U64,
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER_LEN);
const _: () = assert!(std::mem::size_of::<SectionEntry>() == 24);

impl Header {
    pub(crate) fn compute_checksum(&self) -> u64 {
        let bytes = self.as_bytes();
        xxhash_rust::xxh3::xxh3_64_with_seed(&bytes[..HEADER_CHECKED], 0x6d6c_6864_7200_0000)
    }
}
