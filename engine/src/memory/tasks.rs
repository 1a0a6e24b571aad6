//! Tasks as memories (MaxMind): three precisions, outcomes kept, reflections on failure (SAGE).

use super::Memory;
use crate::error::{Error, Result};
use crate::item::{Kind, MemoryId, NewMemory, Outcome};

/// A finished task to remember.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// What was asked.
    pub request: String,
    /// What was done, in order.
    #[serde(default)]
    pub steps: Vec<String>,
    /// Whether it worked.
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
    fn original(&self) -> String {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TaskIds {
    /// The task memory.
    pub task: MemoryId,
    /// The reflection memory (failures only).
    pub reflection: Option<MemoryId>,
}

impl Memory {
    /// Records a finished task as a task memory at three precisions (made by the summarizer,
    /// [`crate::context::Extractive`] by default) labelled with its outcome, and for a failure a
    /// reflection memory sourced to it (`task/<id>`), so later contexts can say "this approach
    /// failed". Both outcomes are kept.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an empty request or step; the summarizer's error; as
    /// [`Memory::remember`].
    pub fn record_task(&self, task: &Task) -> Result<TaskIds> {
        if task.request.trim().is_empty() {
            return Err(Error::InvalidInput("task request is empty".into()));
        }
        if let Some(i) = task.steps.iter().position(|s| s.trim().is_empty()) {
            return Err(Error::InvalidInput(format!("task step {i} is empty")));
        }
        let original = task.original();
        let summary = self
            .inner
            .options
            .hooks
            .summarizer
            .summarize_task(task, &original)?;
        let mut memory = NewMemory::new(original)
            .kind(Kind::Task)
            .precisions(summary.concise, summary.brief)
            .outcome(task.outcome);
        memory.namespace = task.namespace.clone();
        memory.tags = task.tags.clone();
        let id = self.remember_distinct(vec![memory])?[0];
        let reflection = match task.outcome {
            Outcome::Success => None,
            Outcome::Failure => {
                let text = match &task.reflection {
                    Some(r) if !r.trim().is_empty() => {
                        format!("Reflection on the failed task \"{}\": {r}", task.request)
                    }
                    _ => format!(
                        "Reflection on the failed task \"{}\": the approach ({}) failed; do not repeat it as is.",
                        task.request,
                        if task.steps.is_empty() { "no steps".to_string() } else { task.steps.join("; ") }
                    ),
                };
                let mut memory = NewMemory::new(text)
                    .kind(Kind::Reflection)
                    .outcome(Outcome::Failure)
                    .source(format!("task/{id}"), None);
                memory.namespace = task.namespace.clone();
                memory.tags = task.tags.clone();
                Some(self.remember_distinct(vec![memory])?[0])
            }
        };
        Ok(TaskIds {
            task: id,
            reflection,
        })
    }
}
