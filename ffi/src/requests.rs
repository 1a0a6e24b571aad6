//! The JSON requests the entry points accept. Unknown fields and wrong types are errors.

use memloop::{
    ContextMode, ContextRequest, Kind, MemoryFilter, Outcome as TaskOutcome, Strategy, Task,
};
use serde::Deserialize;

use crate::status::{Failure, Outcome};

fn context_k() -> usize {
    ContextRequest::DEFAULT_K
}

/// `memloop_remember_conversation`'s request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConversationRequest {
    pub(crate) session: String,
    pub(crate) turns: Vec<memloop::Turn>,
    #[serde(default)]
    pub(crate) user: Option<String>,
    #[serde(default)]
    pub(crate) agent: Option<String>,
}

fn strategy(name: Option<&str>, arg: &str) -> Outcome<Strategy> {
    match name {
        None => Ok(Strategy::Single),
        Some(s) => Strategy::named(s).map_err(|e| Failure::invalid(format!("{arg}: {e}"))),
    }
}

/// `memloop_context`'s request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextJson {
    query: String,
    budget: usize,
    #[serde(default = "context_k")]
    k: usize,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    kinds: Vec<Kind>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    strategy: Option<String>,
    #[serde(default)]
    key_share: Option<f32>,
    #[serde(default)]
    documents: bool,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    session: Option<String>,
    #[serde(default)]
    as_of: Option<i64>,
}

impl ContextJson {
    /// The engine's request.
    pub fn into_request(self, arg: &str) -> Outcome<ContextRequest> {
        let mut r = ContextRequest::new(self.query, self.budget);
        r.query = r.query.k(self.k).filter(MemoryFilter {
            namespace: self.namespace,
            kinds: self.kinds,
            tags: self.tags,
            user: self.user,
            agent: self.agent,
            session: self.session,
            as_of: self.as_of,
            ..Default::default()
        });
        r.strategy = strategy(self.strategy.as_deref(), arg)?;
        if let Some(share) = self.key_share {
            r.key_share = share;
        }
        if self.documents {
            r.mode = ContextMode::Documents;
        }
        Ok(r)
    }
}

/// `memloop_record_task`'s task: `success` as a boolean, or the engine's `outcome`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskJson {
    request: String,
    #[serde(default)]
    steps: Vec<String>,
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    outcome: Option<TaskOutcome>,
    #[serde(default)]
    reflection: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
}

impl TaskJson {
    /// The engine's task.
    pub fn into_task(self, arg: &str) -> Outcome<Task> {
        let outcome = match (self.success, self.outcome) {
            (Some(true), None) => TaskOutcome::Success,
            (Some(false), None) => TaskOutcome::Failure,
            (None, Some(o)) => o,
            (Some(_), Some(_)) => {
                return Err(Failure::invalid(format!(
                    "{arg}: give \"success\" or \"outcome\", not both"
                )))
            }
            (None, None) => {
                return Err(Failure::invalid(format!(
                    "{arg}: missing field `success` (true or false)"
                )))
            }
        };
        let mut task = Task::new(self.request, outcome);
        task.steps = self.steps;
        task.reflection = self.reflection;
        task.namespace = self.namespace;
        task.tags = self.tags;
        Ok(task)
    }
}
