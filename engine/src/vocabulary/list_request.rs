//! A listing as every door asks for it: the memories passing a filter, by ascending id, a page
//! at a time, with no query and no ranking (what a key-value view of the store, such as the
//! LangGraph store adapter, or a browser of memories, reads).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::selection::Selection;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::invalid::InvalidInput;
use crate::item::Scope;

/// The page size when a listing names none.
pub const DEFAULT_LIST_LIMIT: usize = 1_000;

/// The largest page a listing returns.
pub const MAX_LIST_LIMIT: usize = 100_000;

/// `list`: the memories passing a filter, oldest id first. Every field may be left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRequest {
    /// Which memories: namespace, kinds, tags, history, as-of.
    #[serde(flatten)]
    pub selection: Selection,
    /// Only this user's, agent's or session's memories.
    #[serde(flatten)]
    pub scope: Scope,
    /// How many to return (default 1000, at most 100000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// How many of the passing memories to skip first.
    #[serde(default)]
    pub offset: usize,
}

/// A checked listing: the filter, how many to skip and how many to return.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Which memories.
    pub filter: MemoryFilter,
    /// Skipped first.
    pub offset: usize,
    /// Returned at most.
    pub limit: usize,
}

impl ListRequest {
    /// The listing: defaults filled in, every field checked.
    ///
    /// # Errors
    /// [`InvalidInput`] naming the field: an unknown kind, a limit outside
    /// `1..=MAX_LIST_LIMIT`.
    pub fn check(self) -> Result<Listing> {
        let limit = self.limit.unwrap_or(DEFAULT_LIST_LIMIT);
        if limit == 0 || limit > MAX_LIST_LIMIT {
            return Err(InvalidInput::Field {
                field: "limit",
                reason: format!("{limit} is outside 1..={MAX_LIST_LIMIT}"),
            }
            .into());
        }
        // The filter fields mean what a recall's mean.
        let filter = self.selection.filter(&self.scope)?;
        Ok(Listing {
            filter,
            offset: self.offset,
            limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bounds() {
        let l = ListRequest::default().check().unwrap();
        assert_eq!((l.offset, l.limit), (0, DEFAULT_LIST_LIMIT));
        assert!(l.filter.is_unrestricted());
        for limit in [0, MAX_LIST_LIMIT + 1] {
            let r = ListRequest {
                limit: Some(limit),
                ..Default::default()
            };
            assert!(r.check().unwrap_err().to_string().contains("limit"));
        }
        let r: ListRequest = serde_json::from_str(r#"{"kinds": ["gossip"]}"#).unwrap();
        assert!(r.check().is_err());
        assert!(serde_json::from_str::<ListRequest>(r#"{"limt": 3}"#).is_err());
    }
}
