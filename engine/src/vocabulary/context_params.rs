//! A context as every door asks for it: a recall's fields (what to retrieve, with the same
//! names, defaults and checks, the selection and scope shared with every request) plus the
//! budget, the mode and the key share, turned into the engine's [`ContextRequest`] by
//! [`ContextParams::into_request`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::context::{ContextMode, ContextRequest};
use super::recall_request::RecallRequest;
use super::selection::Selection;
use crate::error::Result;
use crate::item::Scope;

/// `context`: relevant memories assembled into text under a token budget. What to retrieve
/// has a recall's fields, names, defaults and checks (`k` defaults to 8 here); a context's
/// blocks carry their scores, so it has no `explain`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextParams {
    /// What the context is for, in natural language.
    pub query: String,
    /// The most tokens the context may take (default 500).
    #[serde(default)]
    pub budget: Option<usize>,
    /// memories (the memories themselves, default) or documents (the documents they come
    /// from).
    #[serde(default)]
    pub mode: Option<ContextMode>,
    /// The share of the memories labelled "Key Reference", in (0, 1] (default 1/3).
    #[serde(default)]
    pub key_share: Option<f32>,
    /// How many memories to consider (default 8, at most 10000).
    #[serde(default)]
    pub k: Option<usize>,
    /// How they are retrieved: single, lexical, rerank or iterative (as a recall's).
    #[serde(default)]
    pub strategy: Option<String>,
    /// Which memories: namespace, kinds, tags, history, as-of.
    #[serde(flatten)]
    pub selection: Selection,
    /// Only this user's, agent's or session's memories.
    #[serde(flatten)]
    pub scope: Scope,
}

impl ContextParams {
    /// The engine's context request: the defaults filled in, every field checked.
    ///
    /// # Errors
    /// What [`RecallRequest::into_query`] refuses; a key share outside (0, 1] is refused
    /// when the context is built.
    pub fn into_request(self) -> Result<ContextRequest> {
        let recall = RecallRequest {
            query: self.query,
            k: self.k,
            strategy: self.strategy,
            explain: false,
            selection: self.selection,
            scope: self.scope,
        };
        let (query, strategy) = recall.query_with(ContextRequest::DEFAULT_K)?;
        let mut request =
            ContextRequest::new("", self.budget.unwrap_or(ContextRequest::DEFAULT_BUDGET));
        request.query = query;
        request.strategy = strategy;
        request.mode = self.mode.unwrap_or_default();
        if let Some(share) = self.key_share {
            request.key_share = share;
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> std::result::Result<ContextParams, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn defaults_are_the_engines() {
        let r = parse(r#"{"query": "tea"}"#)
            .unwrap()
            .into_request()
            .unwrap();
        assert_eq!(r.budget, ContextRequest::DEFAULT_BUDGET);
        assert_eq!(r.query.k, ContextRequest::DEFAULT_K);
        assert_eq!(r.mode, ContextMode::Memories);
    }

    #[test]
    fn the_recall_fields_mean_what_they_mean_in_a_recall() {
        let r = parse(r#"{"query": "q", "budget": 50, "k": 3, "mode": "documents", "user": "ana", "kinds": ["fact"], "as_of": "1714521600"}"#)
            .unwrap()
            .into_request()
            .unwrap();
        assert_eq!(
            (r.budget, r.query.k, r.mode),
            (50, 3, ContextMode::Documents)
        );
        assert_eq!(r.query.filter.user.as_deref(), Some("ana"));
        assert_eq!(r.query.filter.as_of, Some(1_714_521_600_000));
    }

    #[test]
    fn unknown_fields_and_values_are_refused() {
        for json in [
            r#"{"query": "q", "mode": "poetry"}"#,
            r#"{"query": "q", "budgett": 5}"#,
            r#"{"query": "q", "explain": true}"#,
            r#"{"query": "q", "budget": -1}"#,
            r#"{"budget": 5}"#,
        ] {
            assert!(parse(json).is_err(), "{json}");
        }
        assert!(parse(r#"{"query": "q", "strategy": "magic"}"#)
            .unwrap()
            .into_request()
            .is_err());
    }
}
