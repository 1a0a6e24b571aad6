//! A finished task as the caller describes it ([`Task`]) and the memories it became
//! ([`TaskIds`]): value types shared by the memory façade and the summarizer hook.

use crate::item::{MemoryId, Outcome};

/// `record_task`: a finished task to remember (on failure, with a reflection of what to do
/// differently next time).
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// What was asked.
    pub request: String,
    /// What was done, in order.
    #[serde(default)]
    pub steps: Vec<String>,
    /// How it ended: success or failure.
    pub outcome: Outcome,
    /// What to do differently (failures); a default one is written when absent.
    #[serde(default)]
    pub reflection: Option<String>,
    /// Namespace (default: `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
}

impl Task {
    /// A task with no steps.
    pub fn new(request: impl Into<String>, outcome: Outcome) -> Self {
        Task {
            request: request.into(),
            steps: Vec::new(),
            outcome,
            reflection: None,
            namespace: None,
            tags: Vec::new(),
        }
    }

    /// Adds a step.
    pub fn step(mut self, step: impl Into<String>) -> Self {
        self.steps.push(step.into());
        self
    }

    /// Sets the reflection.
    pub fn reflection(mut self, reflection: impl Into<String>) -> Self {
        self.reflection = Some(reflection.into());
        self
    }

    /// `success` or `failure`.
    pub(crate) fn outcome_word(&self) -> &'static str {
        match self.outcome {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
        }
    }

    /// The original precision: request, numbered steps, outcome.
    pub(crate) fn original(&self) -> String {
        let mut text = format!("Task: {}\n", self.request);
        if !self.steps.is_empty() {
            text.push_str("Steps:\n");
            for (i, s) in self.steps.iter().enumerate() {
                text.push_str(&format!("{}. {s}\n", i + 1));
            }
        }
        text.push_str(&format!("Outcome: {}", self.outcome_word()));
        text
    }
}

/// The memories a task became.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct TaskIds {
    /// The task memory.
    pub task: MemoryId,
    /// The reflection memory (failures only).
    pub reflection: Option<MemoryId>,
}
