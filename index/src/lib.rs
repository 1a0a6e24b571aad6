//! # memloop-index
//!
//! ## Brief overview
//! A memory-mapped HNSW index (Malkov & Yashunin, 2018) over L2-normalised `f32` vectors with
//! inner-product similarity and `u64` external ids. It knows vectors and ids, nothing of text.
//!
//! - [`UnitVector`] / [`UnitVectors`]: finite vectors of length 1, normalised once where they
//!   are made; what insert and search take.
//! - [`Index`]: insert (one, or a parallel batch; [`Index::insert_batch_near`] also reports
//!   what each item's linking search found near it, [`NearHits`]), [`Index::search`] /
//!   [`Index::search_filtered`], [`Index::delete`] with neighbour repair, [`Index::save`] to a
//!   write-once file and [`Index::open`] in O(1) through `mmap`.
//! - [`Params`]: `m`, `ef_construction`, `ef_search`, `ml`, and how searches read the vectors
//!   ([`VectorEncoding`]: f32; bf16 codes re-scored exactly; int8 codes alone), built with
//!   [`Params::builder`].
//! - [`Filter`] / [`IdFilter`]: restrict results; very selective filters switch to an exact scan.
//! - [`Rescore`]: f32 vectors the caller keeps, re-scoring an int8 index's best candidates
//!   ([`Index::search_rescored`]); an int8 index keeps only its codes.
//! - [`SearchScratch`]: reusable per-thread buffers for allocation-free searches.
//! - [`IndexError`]: every failure, typed.
//!
//! ```
//! use memloop_index::{Index, Params, UnitVector, UnitVectors};
//! # fn main() -> Result<(), memloop_index::IndexError> {
//! let index = Index::new(Params::builder(3).m(8).build()?)?;
//! let rows = vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.7, 0.7, 0.0];
//! index.insert_batch(&[10, 11, 12], &UnitVectors::new(rows, 3)?)?;
//! let query = UnitVector::new(vec![0.9, 0.1, 0.0])?;
//! let hits = index.search(&query, 2, 16)?;
//! assert_eq!(hits[0].id, 10);
//!
//! let dir = tempfile::tempdir().unwrap();
//! index.save(dir.path().join("idx"), 1)?;
//! let reopened = Index::open(dir.path().join("idx"))?;
//! assert_eq!(reopened.search(&query, 2, 16)?, hits);
//! # Ok(()) }
//! ```
#![deny(unsafe_code)]

mod encoding;
mod error;
mod format;
mod graph;
mod mmap;
mod params;
mod platform;
mod search;
pub mod simd;
mod unit;

pub use encoding::VectorEncoding;
pub use error::{IndexError, Result};
pub use format::stamp::{FileStamp, FILE_STAMP_LEN};
pub use graph::{Index, IndexStats, NearHits};
pub use params::{Params, ParamsBuilder, DEFAULT_EXACT_BELOW, MAX_DIM, MAX_LEVEL, MAX_M};
pub use search::{Filter, Hit, IdFilter, Rescore, SearchScratch};
pub use unit::{UnitVector, UnitVectors};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Index>();
    }
}
