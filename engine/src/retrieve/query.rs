//! What a recall asks for ([`Query`]) and what it returns ([`Hit`]): value types shared by the
//! memory façade, the retrieval strategies and the bindings.

use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::invalid::InvalidInput;
use crate::item::{Kind, MemoryItem};

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
    pub explain: crate::retrieve::Explanation,
}

/// A hit serialises flat, as the CLI and the C and Python bindings show it: `id`, `score`,
/// `rank`, `kind`, `namespace`, `tier`, `text`, `explain`, and the whole `item`.
impl serde::Serialize for Hit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut h = s.serialize_struct("Hit", 9)?;
        h.serialize_field("id", &self.item.id)?;
        h.serialize_field("score", &self.score)?;
        h.serialize_field("rank", &self.rank)?;
        h.serialize_field("kind", &self.item.kind)?;
        h.serialize_field("namespace", &self.item.namespace)?;
        h.serialize_field("tier", &self.item.tier)?;
        h.serialize_field("text", &self.item.text)?;
        h.serialize_field("explain", &self.explain)?;
        h.serialize_field("item", &self.item)?;
        h.end()
    }
}
