//! The parts a caller may replace, as traits with their default implementations: how
//! retrieval candidates are reranked and queries refined (`retrieval.rs`; a cross-encoder's
//! second stage in `cross_encoder.rs`), how a memory is
//! summarized to its shorter precisions (`summarize.rs`), how text is counted against a
//! budget (`tokens.rs`) and how a conversation's turns become facts (`extractor.rs`).
//! [`crate::Hooks`] in the options holds one of each; nothing here knows the store.

mod cross_encoder;
mod extractor;
mod retrieval;
mod summarize;
mod tokens;

pub use cross_encoder::CrossEncoderReranker;
pub use extractor::{Extracted, Extractor};
pub use retrieval::{
    FusionReranker, QueryRefiner, RefineInput, Refinement, Reranker, Rocchio, ScoreFusion,
};
pub(crate) use summarize::{extract, extract_for};
pub use summarize::{Extractive, Summarizer, Summary};
pub use tokens::TokenCounter;
