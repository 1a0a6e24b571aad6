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
mod id;
mod in_call;
mod invalid;
mod item;
mod lexical;
mod memory;
mod merge;
mod operations;
mod options;
mod platform;
mod remember;
pub mod retrieve;
mod store;
mod sync;
pub mod time;
mod transfer;
mod vocabulary;

pub use remember::dedup;

// What most programs name: the handle and its views, how it opens, what it stores and
// returns, the registry's one call, and the errors.
pub use agent::Task;
pub use clock::{Clock, Timestamp};
pub use context::Context;
pub use crypt::Encryption;
pub use dedup::{RememberAction, Remembered};
pub use embedder::{HashingEmbedder, TextEmbedder};
pub use error::{Error, Result, StoreError};
pub use error_code::{Builtin, ErrorCategory, ErrorClass, ErrorCode, ERROR_CLASSES};
pub use filter::MemoryFilter;
pub use invalid::InvalidInput;
pub use item::{Kind, MemoryId, MemoryItem, NewMemory, Scope, Tier};
pub use memory::views::{Admin, Advanced, Scoped, Transfer};
pub use memory::{Memory, Stats};
pub use operations::{Answer, Operate, Operation, Request, Told};
pub use options::{Durability, Hooks, Options};
pub use retrieve::{Hit, Query, Strategy};
pub use transfer::salvage;
pub use vocabulary::Door;

/// Every request of the vocabulary, as the doors parse them (one per operation of
/// [`Operation`], and the options of an open), with the parts they share.
pub mod requests {
    pub use crate::vocabulary::{
        ContextParams, ConversationRequest, ExportRequest, FeedbackRequest, ForgetRequest,
        IdRequest, ImportRequest, ListRequest, Listing, NoFields, ObserveRequest, OpenRequest,
        RecallRequest, RememberRequest, Selection, SubjectEvent, SyncRequest, TransferFormat,
        TurnRequest, Update, UpdateRequest, When, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT,
    };
}

/// The answers of the operations ([`Answer`]'s variants) and of the handle's other calls.
pub mod answers {
    pub use crate::agent::TaskIds;
    pub use crate::catalog::Census;
    pub use crate::conversation::ConversationReport;
    pub use crate::forget::{DecayReport, ScopeErasure, SweepReport};
    pub use crate::memory::{CheckReport, DiskUsage, IndexRecovery, OpenReport};
    pub use crate::operations::{ForgetAnswer, Forgotten, Listed, Observed, Recalled, Updated};
    pub use crate::retrieve::{Explanation, FeedbackState};
    pub use crate::store::salvage::SalvageReport;
    pub use crate::transfer::{ChangeExport, ColumnarFormat, ImportReport};
    pub use crate::vocabulary::{Exported, Synced};
}

/// What a memory is made of beside its text, and the bounds of ids, times and texts.
pub mod items {
    pub use crate::item::{
        content_hash, Outcome, Source, Triple, DEFAULT_NAMESPACE, MAX_ID, MAX_TIME, MIN_TIME,
    };
    pub use crate::options::{DEFAULT_MAX_TEXT_BYTES, MAX_TEXT_BYTES_LIMIT};
}

/// The model: loading one, where the default lives, the device and precision it runs at, and
/// how the index stores its vectors.
pub mod model {
    pub use crate::embedder::{load_model, load_model_at, load_model_on, load_model_with};
    pub use memloop_embed::Precision as EncoderPrecision;
    pub use memloop_embed::{
        default_model_dir, fetch_default_model, sentences, DeviceChoice, DocumentPooling,
        DocumentVectors, SentenceVector,
    };
    pub use memloop_index::VectorEncoding;
}

/// Encryption keys and erasure receipts: checking a receipt or a receipt log; files private to
/// their user on every platform.
pub mod privacy {
    pub use crate::crypt::{
        verify_receipt, verify_receipt_chain, ChainError, ErasureReceipt, KeyError, ReceiptError,
    };
    pub use crate::platform::{create_new_private, exposed};
    #[cfg(windows)]
    pub use crate::platform::{other_user_of_process, with_private_security};
}

/// The replaceable parts a binding plugs in: the extractor of conversations, and the re-entry
/// guard a binding's callbacks run under.
pub mod plug {
    pub use crate::conversation::{Extracted, Extractor, Turn};
    pub use crate::in_call::InCall;
}

/// Storage faults injected by tests of crash safety (`Options::faults`).
pub mod faults {
    pub use crate::store::faults::{Fault, StorageFaults};
}

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
