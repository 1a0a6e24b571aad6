//! The JSON requests the entry points accept that the engine's vocabulary does not define yet
//! (a recall and a context are `memloop::requests::RecallRequest` and `memloop::requests::ContextParams`).
//! Unknown fields and wrong types are errors.

use memloop::{items::Outcome as TaskOutcome, Task};
use serde::Deserialize;

use crate::status::{Failure, Outcome};

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
