//! The requests and answers every door speaks, as plain values: what a recall asks for and
//! returns (`recall.rs`) and the one recall request every door parses (`recall_request.rs`), what a context is asked for (`context.rs`), a task an agent records
//! (`task.rs`), a conversation's turn (`turn.rs`) an event about a subject (`observe.rs`),
//! an export or import (`transfer_request.rs`), a sync (`sync_request.rs`) and the options of an
//! open (`open_request.rs`); a sweep's request is a `Scope`. Each request checks itself; carrying it
//! out on a store is the feature folders' job, above the handle.

mod by_id;
mod context;
mod context_params;
mod conversation_request;
mod cue;
mod list_request;
mod observe;
mod open_request;
mod operation;
mod recall;
mod recall_request;
mod remember_request;
mod selection;
mod sync_request;
mod task;
mod transfer_request;
mod turn;
mod when;

pub use by_id::{FeedbackRequest, ForgetRequest, IdRequest, Update, UpdateRequest};
pub use context::{
    ContextMode, ContextRequest, DocumentIds, DocumentRef, Structures, CHUNK_OVERLAP, CHUNK_TOKENS,
};
pub use context_params::ContextParams;
pub use conversation_request::{ConversationRequest, TurnRequest};
pub use cue::{Cue, Cues};
pub use list_request::{ListRequest, Listing, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};
pub use observe::{ObserveRequest, SubjectEvent};
pub use open_request::OpenRequest;
pub use operation::{Door, NoFields};
pub(crate) use recall::check_k;
pub use recall::{
    EventMatch, Explanation, FeedbackState, Hit, NewestFirst, PreferenceMatch, QuantityMatch,
    Query, Strategy, TimeMatch, DEFAULT_K, MAX_K,
};
pub use recall_request::RecallRequest;
pub use remember_request::RememberRequest;
pub use selection::Selection;
pub use sync_request::{SyncRequest, Synced};
pub use task::{Task, TaskIds};
pub use transfer_request::{ExportRequest, Exported, ImportRequest, TransferFormat};
pub use turn::Turn;
pub use when::When;
