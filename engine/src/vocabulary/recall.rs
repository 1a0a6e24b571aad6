//! What a recall asks for ([`Query`]) and what it returns ([`Hit`]): value types shared by the
//! memory façade, the retrieval strategies and the bindings.

use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::invalid::InvalidInput;
use crate::item::{Kind, MemoryItem, Tier};
use crate::store::Store;

/// The most hits one recall returns.
pub const MAX_K: usize = 10_000;

/// How many hits a recall returns when a request does not say: the one default every door
/// uses.
pub const DEFAULT_K: usize = 5;

/// A recall request: query text, how many hits, and a filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The query text.
    pub text: String,
    /// Hits wanted (default [`DEFAULT_K`]).
    pub k: usize,
    /// Which memories may be returned.
    pub filter: MemoryFilter,
    /// Search beam; `None` uses [`crate::Options::recall_ef`].
    pub ef: Option<usize>,
}

impl Query {
    /// Top [`DEFAULT_K`] current memories for `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Query {
            text: text.into(),
            k: DEFAULT_K,
            filter: MemoryFilter::default(),
            ef: None,
        }
    }
    /// Sets the number of hits.
    pub fn k(mut self, k: usize) -> Self {
        self.k = k;
        self
    }
    /// Sets the whole filter.
    pub fn filter(mut self, filter: MemoryFilter) -> Self {
        self.filter = filter;
        self
    }
    /// Only this namespace.
    pub fn namespace(mut self, ns: impl Into<String>) -> Self {
        self.filter.namespace = Some(ns.into());
        self
    }
    /// Also this kind.
    pub fn kind(mut self, kind: Kind) -> Self {
        self.filter.kinds.push(kind);
        self
    }
    /// Also requires this tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.filter.tags.push(tag.into());
        self
    }

    /// Checks the request once, where it enters: text that says something, `k` in
    /// 1..=[`MAX_K`].
    pub(crate) fn check(&self) -> Result<()> {
        if self.text.trim().is_empty() {
            return Err(InvalidInput::EmptyQuery.into());
        }
        check_k(self.k)
    }
}

/// Checks a number of hits: 1..=[`MAX_K`].
pub(crate) fn check_k(k: usize) -> Result<()> {
    if k == 0 || k > MAX_K {
        return Err(InvalidInput::K { k, max: MAX_K }.into());
    }
    Ok(())
}

/// One recalled memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The memory.
    pub item: MemoryItem,
    /// Cosine similarity to the query.
    pub score: f32,
    /// Position in the result, from 0.
    pub rank: usize,
    /// Why it surfaced.
    pub explain: Explanation,
}

/// What a hit serialises as, flat, as every door shows it: `id`, `score`, `rank`, `kind`,
/// `namespace`, `tier`, `text`, `explain`, and the whole `item`. One definition gives both its
/// JSON and its JSON schema.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "Hit")]
struct HitShape<'a> {
    /// The memory's id.
    id: crate::item::MemoryId,
    /// Its score for this query (cosine, fused or reranked).
    score: f32,
    /// Its place in the answer, from 0.
    rank: usize,
    /// Its kind.
    kind: Kind,
    /// Its namespace.
    namespace: &'a str,
    /// Its tier.
    tier: Tier,
    /// Its text.
    text: &'a str,
    /// Why it surfaced.
    explain: &'a Explanation,
    /// The whole memory.
    item: &'a MemoryItem,
}

impl<'a> From<&'a Hit> for HitShape<'a> {
    fn from(h: &'a Hit) -> Self {
        HitShape {
            id: h.item.id,
            score: h.score,
            rank: h.rank,
            kind: h.item.kind,
            namespace: &h.item.namespace,
            tier: h.item.tier,
            text: &h.item.text,
            explain: &h.explain,
            item: &h.item,
        }
    }
}

impl serde::Serialize for Hit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        HitShape::from(self).serialize(s)
    }
}

impl schemars::JsonSchema for Hit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        HitShape::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        HitShape::json_schema(generator)
    }
}

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

    /// Every strategy, with the defaults above: what the doors offer by name (the inspector's
    /// list, [`Strategy::parse`]).
    pub const ALL: [Strategy; 4] = [
        Strategy::Single,
        Strategy::Lexical,
        Strategy::RERANK,
        Strategy::ITERATIVE,
    ];

    /// Parses `single`, `lexical`, `rerank` or `iterative` (with the defaults above).
    pub fn parse(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Checks the strategy's own numbers (an iterative round returns at most [`MAX_K`]).
    /// The strategy named `name`, or the one error every door gives for a name that is none.
    pub fn named(name: &str) -> std::result::Result<Strategy, InvalidInput> {
        Strategy::parse(name).ok_or_else(|| InvalidInput::UnknownStrategy(name.to_string()))
    }

    pub(crate) fn check(&self) -> Result<()> {
        match *self {
            Strategy::Iterative { per_round, .. } => check_k(per_round.max(1)),
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
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
    /// Ranked in another memory's place: the two state the same fact with different values,
    /// and the one whose validity began last (at or before the time asked about) ranks first.
    pub newest_first: Option<NewestFirst>,
    /// The boost for a preference: the query asks for advice, and it states a taste or a habit
    /// of its speaker.
    pub preference: Option<PreferenceMatch>,
    /// The boost for a quantity: the query asks how many or how much of its asker's things,
    /// and it states a number in the first person.
    pub quantity: Option<QuantityMatch>,
    /// The boost for an event: the query is its asker's (in the first person), and it says
    /// what its speaker did ("I went", "I've finished", "I just bought").
    pub event: Option<EventMatch>,
    /// In a store that keeps sentence vectors (format 2, a model pooling by sentences), for
    /// the rerank and iterative strategies: the cosine of its best sentence with the query
    /// (its pooled cosine, `vector`, for a memory of one sentence or without sentence
    /// vectors). Below the default fusion's first places it adds half of itself.
    pub sentence: Option<f32>,
}

/// The feedback a memory received (see [`crate::Memory::feedback`]).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
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

/// Why a hit took another's place: it and `place_of` state the same fact with different
/// values (the same subject and predicate, another value), and within such a group the value
/// whose validity began last takes the best place (and that place's score).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct NewestFirst {
    /// The memory whose place (and score) this hit took.
    pub place_of: crate::item::MemoryId,
    /// True when this hit is the newer of the two values (moved up), false when the older
    /// (moved down).
    pub newer: bool,
}

/// Why a hit's score was raised as a preference.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PreferenceMatch {
    /// What matched: the query's words asking for advice and the memory's stating a taste.
    pub cue: String,
    /// The fraction the score was raised by.
    pub boost: f32,
}

/// Why a hit's score was raised as an event of its speaker's.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct EventMatch {
    /// What matched: the memory's words saying what its speaker did ("i just bought").
    pub cue: String,
    /// The fraction the score was raised by.
    pub boost: f32,
}

/// Why a hit's score was raised as a quantity.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct QuantityMatch {
    /// What matched: the query's words asking how many or how much (or an age), and the
    /// memory's number (or the age it states).
    pub cue: String,
    /// The fraction the score was raised by; for a memory stating the asker's own age, asked,
    /// the score added (it rises above the best hit).
    pub boost: f32,
}

/// Why a hit's score was raised for time.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct TimeMatch {
    /// What matched: the query's window ("May 2023: 2023-05-01 to 2023-06-01") or "asks when".
    pub cue: String,
    /// The fraction the score was raised by.
    pub boost: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_is_parsed_by_its_name_and_named_by_the_refusal() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::parse(s.name()), Some(s));
        }
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        let refusal = Strategy::named("magic").unwrap_err().to_string();
        assert!(
            refusal.ends_with(&format!("({})", names.join(", "))),
            "{refusal}"
        );
    }
}
