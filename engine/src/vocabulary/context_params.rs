//! A context as every door asks for it: a recall's fields (what to retrieve, with the same
//! names, defaults and checks) plus the budget, the mode and the key share, turned into the
//! engine's [`ContextRequest`] by [`ContextParams::into_request`].

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::context::{ContextMode, ContextRequest};
use super::recall_request::RecallRequest;
use crate::error::Result;

/// `context`: relevant memories assembled into text under a token budget.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ContextParams {
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
    /// What to retrieve: the query and the recall's filters (`k` defaults to 8 here).
    #[serde(flatten)]
    pub recall: RecallRequest,
}

/// The fields a context adds to a recall's.
const OWN: [&str; 3] = ["budget", "mode", "key_share"];

impl<'de> Deserialize<'de> for ContextParams {
    /// The context's own fields, then the rest read as a [`RecallRequest`], so an unknown
    /// field is refused as a recall refuses it.
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(d)?;
        if map.contains_key("explain") {
            return Err(D::Error::custom(
                "unknown field `explain`: a context's blocks carry their scores",
            ));
        }
        let mut take = |name: &str| map.remove(name).filter(|v| !v.is_null());
        let (budget, mode, key_share) = (take(OWN[0]), take(OWN[1]), take(OWN[2]));
        Ok(ContextParams {
            budget: own_field(OWN[0], budget)?,
            mode: own_field(OWN[1], mode)?,
            key_share: own_field(OWN[2], key_share)?,
            recall: RecallRequest::deserialize(Value::Object(map)).map_err(D::Error::custom)?,
        })
    }
}

/// One of the context's own fields, read from its JSON value.
fn own_field<T: serde::de::DeserializeOwned, E: serde::de::Error>(
    name: &str,
    value: Option<Value>,
) -> std::result::Result<Option<T>, E> {
    value
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| E::custom(format!("{name}: {e}")))
}

impl ContextParams {
    /// The engine's context request: the defaults filled in, every field checked.
    ///
    /// # Errors
    /// What [`RecallRequest::into_query`] refuses; a key share outside (0, 1] is refused
    /// when the context is built.
    pub fn into_request(self) -> Result<ContextRequest> {
        let (query, strategy) = self.recall.query_with(ContextRequest::DEFAULT_K)?;
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
