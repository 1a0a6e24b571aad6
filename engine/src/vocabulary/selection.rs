//! Which memories a request reaches beside its scope: namespace, kinds, tags, history and a
//! time, declared once and flattened into every request that filters (recall, context, list).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::when::When;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::item::{Kind, Scope};

/// The filter fields of a request. Every field may be left out: all current memories.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// Only this namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Only these kinds (any of them).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Only memories with every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Also superseded versions (the history of facts that changed), not only the current
    /// ones (`include_superseded` is the same field).
    #[serde(default, alias = "include_superseded")]
    pub history: bool,
    /// What was true at this time, older versions of facts included (default: the current
    /// versions): RFC 3339 or Unix seconds as text, or milliseconds since the Unix epoch as
    /// an integer.
    #[serde(default)]
    pub as_of: Option<When>,
}

impl Selection {
    /// The engine's filter for these fields within `scope`.
    ///
    /// # Errors
    /// [`crate::InvalidInput`] naming the field: an unknown kind, a time that is not one.
    pub fn filter(&self, scope: &Scope) -> Result<MemoryFilter> {
        let kinds = self
            .kinds
            .iter()
            .map(|name| Kind::named(name))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(MemoryFilter {
            namespace: self.namespace.clone(),
            kinds,
            tags: self.tags.clone(),
            include_superseded: self.history,
            user: scope.user.clone(),
            agent: scope.agent.clone(),
            session: scope.session.clone(),
            as_of: self.as_of.as_ref().map(|w| w.millis("as_of")).transpose()?,
            ..Default::default()
        })
    }
}
