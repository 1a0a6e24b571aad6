//! Retrieval strategies on top of recall, and the parts callers may replace.
//!
//! The strategies follow "On the Structural Memory of LLM Agents" (Zeng et al., 2024):
//! - [`Strategy::Single`]: the top K by vector similarity.
//! - [`Strategy::Lexical`]: the top K by BM25 alone (no embedding).
//! - [`Strategy::Rerank`]: a wider candidate set from the vector index *and* the BM25 lexical
//!   index, ordered by a [`Reranker`] (by default [`ScoreFusion`], a weighted sum of the two
//!   scores, each normalised over the candidates; [`CrossEncoderReranker`] reads the best of
//!   them with the query through a cross-encoder), top K kept.
//! - [`Strategy::Iterative`]: N rounds of T results each, the query refined after each round by
//!   a [`QueryRefiner`] (by default [`Rocchio`] pseudo-relevance feedback on embeddings), then
//!   the refined query's candidates and every round's results reranked, top K kept.
//!
//! Every hit carries an [`Explanation`] of its score.
//!
//! With the default fusion, the reranked candidates are then ordered by their best sentence
//! (`sentences`): a memory of several sentences is scored by the one closest to the query.
//!
//! Whatever the strategy, among memories stating the same fact with different values the one
//! whose validity began last ranks first (`newest_first`).
//! A query asking for advice raises the memories that state the user's tastes and habits
//! (`preference`); one asking how many or how much of the asker's, those that state a number,
//! and one asking the asker's age finds and raises where they said it (`quantities`); any query
//! of its asker's (in the first person), those saying what their speaker did (`events`).
//! Each of these is a [`Cue`], a named step that [`crate::Options::cues`] switches off
//! (`cues`).

mod cue_step;
mod cues;
mod events;
mod hybrid;
mod list;
mod newest_first;
mod preferences;
mod quantities;
mod recall;
mod rescore;
mod sentences;
mod serve;
mod time_cues;
mod vector;

pub use crate::vocabulary::{Cue, Cues};
pub(crate) use newest_first::{fact_key, states_another_value};

pub use crate::hooks::{
    CrossEncoderReranker, FusionReranker, QueryRefiner, RefineInput, Refinement, Reranker, Rocchio,
    ScoreFusion,
};

pub use crate::vocabulary::{
    EventMatch, Explanation, FeedbackState, Hit, NewestFirst, PreferenceMatch, QuantityMatch,
    Query, Strategy, TimeMatch, DEFAULT_K, MAX_K,
};

/// A hit of `text` scoring `score`, unexplained: the cue steps' tests rank pools of them.
#[cfg(test)]
fn test_hit(id: u64, text: &str, score: f32) -> Hit {
    Hit {
        item: crate::item::NewMemory::new(text).into_item(crate::item::MemoryId::new(id), 0),
        score,
        rank: 0,
        explain: Explanation::default(),
    }
}

/// Orders `hits` best first, equal scores by id (two stores with the same memories rank them
/// alike): after a reranker or a boost changed their scores.
fn best_first(hits: &mut [Hit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.item.id.cmp(&b.item.id)));
}
