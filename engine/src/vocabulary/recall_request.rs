//! A recall as every door asks for it: the one request type the MCP `recall` tool (its JSON
//! schema too), the C ABI's `memloop_recall` and the command line's forwarded `recall` parse,
//! with its defaults and checks written once, and [`RecallRequest::into_query`], which turns
//! it into the engine's [`Query`] and [`Strategy`] or a typed [`crate::InvalidInput`] naming the
//! field.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::recall::{check_k, Query, Strategy, DEFAULT_K};
use super::selection::Selection;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::item::Scope;

/// `recall`: the memories most related to a query. Every field but `query` may be left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    /// What to look for, in natural language.
    pub query: String,
    /// How many memories to return (default 5, at most 10000; a context considers 8).
    #[serde(default)]
    pub k: Option<usize>,
    /// single (vector similarity), lexical (keywords, BM25), rerank (vector and keyword
    /// candidates, fused) or iterative (the query refined over rounds); default single.
    #[serde(default)]
    pub strategy: Option<String>,
    /// Say why each memory surfaced (vector and keyword scores, retention, feedback).
    #[serde(default)]
    pub explain: bool,
    /// Which memories: namespace, kinds, tags, history, as-of.
    #[serde(flatten)]
    pub selection: Selection,
    /// Only this user's, agent's or session's memories.
    #[serde(flatten)]
    pub scope: Scope,
}

impl RecallRequest {
    /// The engine's query and strategy: the defaults filled in, every field checked.
    ///
    /// # Errors
    /// [`crate::InvalidInput`] naming the field: an unknown strategy or kind, a time that is not
    /// one, `k` outside `1..=MAX_K`.
    pub fn into_query(self) -> Result<(Query, Strategy)> {
        self.query_with(DEFAULT_K)
    }

    /// The same, with `default_k` where the request names no `k` (a context considers more
    /// memories than a recall returns).
    pub(crate) fn query_with(self, default_k: usize) -> Result<(Query, Strategy)> {
        let strategy = match self.strategy.as_deref() {
            Some(name) => Strategy::named(name)?,
            None => Strategy::Single,
        };
        let k = self.k.unwrap_or(default_k);
        check_k(k)?;
        let filter = self.filter()?;
        Ok((Query::new(self.query).k(k).filter(filter), strategy))
    }

    /// The memories its filter fields name (namespace, kinds, tags, history, scope, as-of).
    ///
    /// # Errors
    /// [`crate::InvalidInput`] naming the field: an unknown kind, a time that is not one.
    pub(crate) fn filter(&self) -> Result<MemoryFilter> {
        self.selection.filter(&self.scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn parse(json: &str) -> RecallRequest {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn defaults_are_the_engines() {
        let (q, s) = parse(r#"{"query": "tea"}"#).into_query().unwrap();
        assert_eq!((q.k, s), (DEFAULT_K, Strategy::Single));
        assert!(!q.filter.include_superseded);
    }

    #[test]
    fn both_spellings_of_history_and_of_a_time_mean_the_same() {
        let a = parse(r#"{"query": "q", "history": true, "as_of": "1714521600"}"#);
        let b = parse(r#"{"query": "q", "include_superseded": true, "as_of": 1714521600000}"#);
        let c = parse(r#"{"query": "q", "history": true, "as_of": "2024-05-01T00:00:00Z"}"#);
        let (a, b, c) = (a.into_query(), b.into_query(), c.into_query());
        assert_eq!(a.as_ref().unwrap().0, b.unwrap().0);
        assert_eq!(a.unwrap().0, c.unwrap().0);
    }

    #[test]
    fn bad_fields_are_typed_errors_naming_them() {
        for (json, needle) in [
            (r#"{"query": "q", "strategy": "magic"}"#, "unknown strategy"),
            (r#"{"query": "q", "kinds": ["gossip"]}"#, "unknown kind"),
            (r#"{"query": "q", "as_of": "yesterday-ish"}"#, "as_of"),
            (r#"{"query": "q", "k": 0}"#, "k = 0"),
            (r#"{"query": "q", "k": 10001}"#, "k = 10001"),
        ] {
            match parse(json).into_query() {
                Err(Error::InvalidInput(e)) => assert!(e.to_string().contains(needle), "{e}"),
                other => panic!("{json}: {other:?}"),
            }
        }
        assert!(serde_json::from_str::<RecallRequest>(r#"{"query": "q", "kk": 1}"#).is_err());
    }
}
