//! The parts of retrieval a caller may replace: the [`Reranker`] and the [`QueryRefiner`], with
//! their defaults ([`FusionReranker`], [`Rocchio`]).

use super::query::Hit;
use crate::error::Result;

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
        // The engine makes it a unit vector; a zero vector (the hits cancelled the query out)
        // is refused there as an invalid refinement.
        Ok(Refinement::Vector(q))
    }
}
