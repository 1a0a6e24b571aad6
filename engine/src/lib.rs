//! # memloop
//!
//! ## Brief overview
//! An embedded, on-device long-term memory engine for LLM agents. Point [`Memory::open`] at a
//! directory: memories are embedded locally (all-MiniLM-L6-v2 by default, through
//! `memloop-embed`), stored durably in redb, and recalled through a memory-mapped HNSW index
//! (`memloop-index`).
//!
//! - [`Memory`]: [`Memory::remember`] / [`Memory::remember_batch`] (exact duplicates merge;
//!   a near-duplicate merges only if it says the same, and a fact saying something else
//!   supersedes the old version: [`dedup`], [`Memory::remember_explained`]), [`Memory::get`], [`Memory::update`] (keeps history),
//!   [`Memory::forget`], [`Advanced::scan`], [`Memory::recall`] with a [`MemoryFilter`],
//!   [`Admin::checkpoint`], [`Transfer::export`] / [`Transfer::import`].
//! - [`MemoryItem`] / [`NewMemory`] / [`Kind`]: what is stored.
//! - [`Options`]: model, [`Clock`], [`Durability`], de-duplication threshold, index settings.
//! - [`Error`]: every failure, typed.
//!
//! Guarantees: an acknowledged write (one that returned `Ok` in [`Durability::Synced`] mode)
//! survives `kill -9` and power loss; the index is a cache that is replayed or rebuilt from the
//! database, never trusted over it; one process writes a store at a time, a second gets
//! [`Error::Locked`] at once.
//!
//! ```
//! use std::sync::Arc;
//! use memloop::{HashingEmbedder, Kind, Memory, NewMemory, Options, Query};
//! # fn main() -> memloop::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! // A model-free embedder keeps this example fast; `Options::default()` loads MiniLM.
//! let options = Options::with_embedder(Arc::new(HashingEmbedder::new(64)));
//! let memory = Memory::open(dir.path(), options)?;
//! let id = memory.remember(NewMemory::new("the build uses cargo nextest").kind(Kind::Fact))?;
//! let again = memory.remember(NewMemory::new("the build uses cargo nextest").kind(Kind::Fact))?;
//! assert_eq!(id, again); // merged, not copied
//! assert_eq!(memory.get(id)?.unwrap().count, 2);
//! let hits = memory.recall(&Query::new("which build tool").k(1).kind(Kind::Fact))?;
//! assert_eq!(hits[0].item.id, id);
//! # Ok(()) }
//! ```
#![deny(unsafe_code)]

mod agent;
mod catalog;
mod clock;
mod codec;
mod contained;
pub mod context;
mod conversation;
mod crypt;
mod decay;
mod embedder;
mod error;
mod error_code;
mod filter;
pub mod forget;
#[doc(hidden)]
pub mod fuzzing;
mod hooks;
mod in_call;
mod invalid;
mod item;
mod lexical;
mod memory;
mod operations;
mod options;
mod remember;
pub mod retrieve;
mod store;
pub mod time;
mod transfer;
mod vocabulary;

pub use remember::dedup;

pub use agent::{Task, TaskIds};
pub use catalog::Census;
pub use clock::{Clock, Timestamp};
pub use context::{
    Block, Context, ContextMode, ContextRequest, DocumentIds, DocumentRef, Precision, Structures,
    CHUNK_OVERLAP, CHUNK_TOKENS,
};
pub use conversation::{ConversationReport, Extracted, Extractor, Turn};
pub use crypt::{
    verify_receipt, verify_receipt_chain, ChainError, Encryption, ErasureReceipt, KeyError,
    ReceiptError,
};
pub use dedup::{RememberAction, Remembered};
pub use embedder::{
    load_model, load_model_at, load_model_on, load_model_with, HashingEmbedder, TextEmbedder,
};
pub use error::StoreError;
pub use error::{Error, Result};
pub use error_code::{ErrorCategory, ErrorCode};
pub use filter::MemoryFilter;
pub use forget::{
    DecayModel, DecayReport, ForgetEvent, ForgetPolicy, ForgetReason, RetentionPoint, ScopeErasure,
    SweepReport, CURVE_POINTS,
};
pub use in_call::InCall;
pub use invalid::InvalidInput;
pub use item::{
    content_hash, Kind, MemoryId, MemoryItem, NewMemory, Outcome, Scope, Source, Tier, Triple,
    DEFAULT_NAMESPACE, MAX_ID, MAX_TIME, MIN_TIME,
};
pub use memloop_embed::DeviceChoice;
pub use memloop_embed::DocumentPooling;
pub use memloop_embed::Precision as EncoderPrecision;
pub use memloop_embed::{default_model_dir, fetch_default_model};
pub use memloop_index::VectorEncoding;
pub use memory::{CheckReport, DiskUsage, IndexRecovery, Memory, OpenReport, Stats};
pub use options::{Durability, Hooks, Options, DEFAULT_MAX_TEXT_BYTES, MAX_TEXT_BYTES_LIMIT};

pub use operations::{
    Admin, Advanced, Answer, Forgotten, Listed, Observed, Recalled, Scoped, Transfer, Updated,
};
pub use retrieve::{Explanation, FeedbackState, Hit, Query, Strategy, DEFAULT_K, MAX_K};
pub use store::faults::{Fault, StorageFaults};
pub use store::salvage::SalvageReport;
pub use transfer::salvage;
pub use transfer::{ChangeExport, ColumnarFormat, ImportReport};
pub use vocabulary::{
    ContextParams, ConversationRequest, Door, ExportRequest, Exported, FeedbackRequest,
    ForgetRequest, IdRequest, ImportRequest, ListRequest, Listing, NoFields, ObserveRequest,
    OpenRequest, Operation, RecallRequest, RememberRequest, Request, Selection, SubjectEvent,
    TransferFormat, TurnRequest, Update, UpdateRequest, When, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT,
};

#[cfg(test)]
mod tests {
    /// `Memory` is shared across threads: reads run concurrently with a writer.
    #[test]
    fn memory_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<crate::Memory>();
        assert_send_sync::<crate::Options>();
    }
}
