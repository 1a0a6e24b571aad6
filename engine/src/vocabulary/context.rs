//! What a caller asks a context or a document for, and what a stored document became.

use super::recall::{Query, Strategy};
use crate::item::MemoryId;

/// What a context is made of (`"memories"` or `"documents"` in JSON).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ContextMode {
    /// The memories themselves.
    #[default]
    Memories,
    /// The source documents (or spans) the memories point to, de-duplicated.
    Documents,
}

/// A context request: what to retrieve and how many tokens it may take.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    /// The query (its `k` is how many memories are retrieved).
    pub query: Query,
    /// Token budget; the context never exceeds it.
    pub budget: usize,
    /// Retrieval strategy.
    pub strategy: Strategy,
    /// Share of the retrieved memories labelled "Key Reference" (at least one). Default 1/3.
    pub key_share: f32,
    /// Memories or their documents.
    pub mode: ContextMode,
}

impl ContextRequest {
    /// How many memories a context considers when a request does not say: the one default
    /// every door uses.
    pub const DEFAULT_K: usize = 8;
    /// The token budget of a context when a request does not say (the MCP tool's default).
    pub const DEFAULT_BUDGET: usize = 500;

    /// The best [`ContextRequest::DEFAULT_K`] memories for `query` in at most `budget`
    /// tokens, single-step.
    pub fn new(query: impl Into<String>, budget: usize) -> Self {
        ContextRequest {
            query: Query::new(query).k(Self::DEFAULT_K),
            budget,
            strategy: Strategy::Single,
            key_share: 1.0 / 3.0,
            mode: ContextMode::Memories,
        }
    }
}

/// A source document behind one or more hits.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DocumentRef {
    /// The document key (as given to [`crate::Advanced::remember_document`] or in a memory's source).
    pub document: String,
    /// Its stored document memory, if it was stored.
    pub id: Option<MemoryId>,
    /// Its text (the whole document when stored, else the span's memory text).
    pub text: String,
    /// The hits that point to it, best first.
    pub hits: Vec<MemoryId>,
    /// The best of their scores.
    pub score: f32,
}

/// Caller-supplied structures stored with a document (see [`crate::Advanced::remember_document`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Structures {
    /// (head, relation, tail) triples.
    pub triples: Vec<(String, String, String)>,
    /// Atomic facts.
    pub facts: Vec<String>,
    /// Summaries.
    pub summaries: Vec<String>,
}

/// The memories a document became.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DocumentIds {
    /// The document memory.
    pub document: MemoryId,
    /// Its chunks, in order.
    pub chunks: Vec<MemoryId>,
    /// Triples, facts and summaries, in that order.
    pub structures: Vec<MemoryId>,
}

/// Chunk size and overlap of [`crate::Advanced::remember_document`], in tokens.
pub const CHUNK_TOKENS: usize = 200;
/// Overlap between consecutive chunks, in tokens.
pub const CHUNK_OVERLAP: usize = 40;
