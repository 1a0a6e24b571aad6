//! `sweep` as every door asks for it: everything, or one scope's memories.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::item::Scope;

/// `sweep`: apply forgetting now, to every memory or to one user's, agent's or session's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepRequest {
    /// Only this user's memories.
    #[serde(default)]
    pub user: Option<String>,
    /// Only this agent's.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only this session's.
    #[serde(default)]
    pub session: Option<String>,
}

impl SweepRequest {
    /// The scope swept; `None` for a sweep of everything (no field given).
    pub fn scope(&self) -> Option<Scope> {
        let scope = Scope {
            user: self.user.clone(),
            agent: self.agent.clone(),
            session: self.session.clone(),
        };
        (!scope.is_empty()).then_some(scope)
    }
}
