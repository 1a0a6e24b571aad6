//! Retrieval strategies on top of recall, and the parts callers may replace.
//!
//! The strategies follow "On the Structural Memory of LLM Agents" (Zeng et al., 2024):
//! - [`Strategy::Single`]: the top K by vector similarity.
//! - [`Strategy::Rerank`]: a wider candidate set from the vector index *and* the BM25 lexical
//!   index, ordered by a [`Reranker`] (by default [`FusionReranker`], reciprocal-rank fusion of
//!   the two rankings), top K kept.
//! - [`Strategy::Iterative`]: N rounds of T results each, the query refined after each round by
//!   a [`QueryRefiner`] (by default [`Rocchio`] pseudo-relevance feedback on embeddings), then
//!   the refined query's candidates and every round's results reranked, top K kept.
//!
//! Every hit carries an [`Explanation`] of its score.

mod lexical;
mod text;

pub(crate) use lexical::LexicalIndex;

use crate::error::Result;
use crate::item::Tier;
use crate::query::Hit;

/// How a query becomes hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The top K by vector similarity.
    #[default]
    Single,
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

    /// Parses `single`, `rerank` or `iterative` (with the defaults above).
    pub fn parse(name: &str) -> Option<Strategy> {
        match name {
            "single" => Some(Strategy::Single),
            "rerank" => Some(Strategy::RERANK),
            "iterative" => Some(Strategy::ITERATIVE),
            _ => None,
        }
    }

    /// The name [`Strategy::parse`] reads.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Single => "single",
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

/// Orders candidates: one score per candidate, higher is better.
///
/// Candidates carry their vector and lexical scores and ranks in [`Hit::explain`].
pub trait Reranker: Send + Sync {
    /// Scores `candidates` for `query`.
    ///
    /// # Errors
    /// Any error aborts the retrieval and is returned to the caller.
    fn rerank(&self, query: &str, candidates: &[Hit]) -> Result<Vec<f32>>;
}

/// Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): the sum over the vector and
/// lexical rankings of 1 / (k + rank), rank from 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionReranker {
    /// The damping constant (60 in the paper).
    pub k: f32,
}

impl Default for FusionReranker {
    fn default() -> Self {
        FusionReranker { k: 60.0 }
    }
}

impl Reranker for FusionReranker {
    fn rerank(&self, _query: &str, candidates: &[Hit]) -> Result<Vec<f32>> {
        Ok(candidates
            .iter()
            .map(|h| {
                [h.explain.vector_rank, h.explain.lexical_rank]
                    .into_iter()
                    .flatten()
                    .map(|r| 1.0 / (self.k + r as f32 + 1.0))
                    .sum()
            })
            .collect())
    }
}

/// What a refiner sees after a round.
#[derive(Debug)]
pub struct RefineInput<'a> {
    /// The query text of this round.
    pub query: &'a str,
    /// Its vector.
    pub vector: &'a [f32],
    /// The round's results, best first.
    pub hits: &'a [Hit],
    /// Their stored vectors, in the same order.
    pub hit_vectors: &'a [Vec<f32>],
    /// The round, from 0.
    pub round: usize,
}

/// A refined query.
#[derive(Debug, Clone, PartialEq)]
pub enum Refinement {
    /// New query text (embedded, and used for lexical scores).
    Text(String),
    /// A new query vector (the text stays).
    Vector(Vec<f32>),
}

/// Refines a query from a round of results (an LLM rewriting it, or pseudo-relevance feedback).
pub trait QueryRefiner: Send + Sync {
    /// The next round's query.
    ///
    /// # Errors
    /// Any error aborts the retrieval and is returned to the caller.
    fn refine(&self, input: &RefineInput<'_>) -> Result<Refinement>;
}

/// Rocchio pseudo-relevance feedback: q' = α·q + β·mean(top results), normalised (Rocchio, "Relevance
/// feedback in information retrieval", 1971; no negative term, as usual for pseudo-feedback).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rocchio {
    /// Weight of the current query.
    pub alpha: f32,
    /// Weight of the results' centroid.
    pub beta: f32,
}

impl Default for Rocchio {
    fn default() -> Self {
        Rocchio {
            alpha: 1.0,
            beta: 0.5,
        }
    }
}

impl QueryRefiner for Rocchio {
    fn refine(&self, input: &RefineInput<'_>) -> Result<Refinement> {
        let n = input.hit_vectors.len();
        let mut q: Vec<f32> = input.vector.iter().map(|x| x * self.alpha).collect();
        if n > 0 {
            let w = self.beta / n as f32;
            for v in input.hit_vectors {
                for (qi, vi) in q.iter_mut().zip(v) {
                    *qi += w * vi;
                }
            }
        }
        // A zero vector (the hits cancelled the query out) stays as it is: it matches nothing.
        let _ = memloop_index::simd::normalize(&mut q);
        Ok(Refinement::Vector(q))
    }
}
