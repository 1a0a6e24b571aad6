//! Retrieval strategies on top of recall, and the parts callers may replace.
//!
//! The strategies follow "On the Structural Memory of LLM Agents" (Zeng et al., 2024):
//! - [`Strategy::Single`]: the top K by vector similarity.
//! - [`Strategy::Lexical`]: the top K by BM25 alone (no embedding).
//! - [`Strategy::Rerank`]: a wider candidate set from the vector index *and* the BM25 lexical
//!   index, ordered by a [`Reranker`] (by default [`ScoreFusion`], a weighted sum of the two
//!   scores, each normalised over the candidates), top K kept.
//! - [`Strategy::Iterative`]: N rounds of T results each, the query refined after each round by
//!   a [`QueryRefiner`] (by default [`Rocchio`] pseudo-relevance feedback on embeddings), then
//!   the refined query's candidates and every round's results reranked, top K kept.
//!
//! Every hit carries an [`Explanation`] of its score.

mod hooks;
mod hybrid;
mod lexical;
mod query;
mod recall;
mod serve;
mod text;
mod time_cues;
mod vector;

pub use hooks::{
    FusionReranker, QueryRefiner, RefineInput, Refinement, Reranker, Rocchio, ScoreFusion,
};
pub(crate) use lexical::LexicalIndex;
pub use query::{Hit, Query, DEFAULT_K, MAX_K};
pub(crate) use text::Analyzer;
pub use time_cues::TimeMatch;

use crate::error::Result;
use crate::item::Tier;
use crate::store::Store;

/// How a query becomes hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The top K by vector similarity.
    #[default]
    Single,
    /// The top K by BM25 over the memories' text (the query is not embedded).
    Lexical,
    /// `candidates` from the vector index and as many from the lexical index, reranked.
    Rerank {
        /// Candidates taken from each index (at least K).
        candidates: usize,
    },
    /// `rounds` rounds of `per_round` results, the query refined after each, then reranked.
    Iterative {
        /// Refinement rounds.
        rounds: usize,
        /// Results per round (fed to the refiner).
        per_round: usize,
    },
}

impl Strategy {
    /// Candidates taken from each index by [`Strategy::RERANK`] and by the final stage of an
    /// iterative retrieval.
    pub const DEFAULT_CANDIDATES: usize = 50;
    /// Rerank with [`Strategy::DEFAULT_CANDIDATES`] from each index.
    pub const RERANK: Strategy = Strategy::Rerank {
        candidates: Strategy::DEFAULT_CANDIDATES,
    };
    /// Iterative with 2 rounds of 5 results.
    pub const ITERATIVE: Strategy = Strategy::Iterative {
        rounds: 2,
        per_round: 5,
    };

    /// Parses `single`, `lexical`, `rerank` or `iterative` (with the defaults above).
    pub fn parse(name: &str) -> Option<Strategy> {
        match name {
            "single" => Some(Strategy::Single),
            "lexical" => Some(Strategy::Lexical),
            "rerank" => Some(Strategy::RERANK),
            "iterative" => Some(Strategy::ITERATIVE),
            _ => None,
        }
    }

    /// Checks the strategy's own numbers (an iterative round returns at most [`MAX_K`]).
    pub(crate) fn check(&self) -> Result<()> {
        match *self {
            Strategy::Iterative { per_round, .. } => query::check_k(per_round.max(1)),
            _ => Ok(()),
        }
    }

    /// The name [`Strategy::parse`] reads.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Single => "single",
            Strategy::Lexical => "lexical",
            Strategy::Rerank { .. } => "rerank",
            Strategy::Iterative { .. } => "iterative",
        }
    }
}

/// Why a memory surfaced: every signal that went into its score.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Explanation {
    /// Cosine similarity to the (final) query vector.
    pub vector: Option<f32>,
    /// Position in the vector ranking, from 0 (absent: not among the vector candidates).
    pub vector_rank: Option<usize>,
    /// BM25 score against the query text.
    pub lexical: Option<f32>,
    /// Position in the lexical ranking, from 0 (absent: not among the lexical candidates).
    pub lexical_rank: Option<usize>,
    /// The reranker's score (absent for single-step recall).
    pub fused: Option<f32>,
    /// The memory's importance.
    pub importance: f32,
    /// Its tier.
    pub tier: Tier,
    /// Its retention now (1 when forgetting is off or it is pinned).
    pub retention: f64,
    /// Feedback received so far.
    pub feedback: Option<FeedbackState>,
    /// The boost for time: the query names a time it was valid (spoken) in, or asks when and
    /// it says when.
    pub time: Option<TimeMatch>,
}

/// The feedback a memory received (see [`crate::Memory::feedback`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FeedbackState {
    /// Number of feedbacks.
    pub count: u32,
    /// Sum of their levels (mean = sum / count).
    pub sum: u32,
    /// The latest level, 1..=5.
    pub last: u8,
    /// Steps the memory is served above (+) or below (−) the precision its rank gives, −2..=2.
    pub precision_shift: i8,
}

impl FeedbackState {
    /// Decodes a stored feedback record.
    pub(crate) fn decode(store: &Store, bytes: &[u8]) -> Result<FeedbackState> {
        serde_json::from_slice(bytes).map_err(|e| store.corrupt(format!("feedback record: {e}")))
    }
}
