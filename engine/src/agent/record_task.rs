//! Tasks as memories (MaxMind): three precisions, outcomes kept, reflections on failure (SAGE).

use crate::error::Result;
use crate::invalid::InvalidInput;
use crate::item::{Kind, NewMemory, Outcome};
use crate::memory::Memory;
use crate::vocabulary::{Task, TaskIds};

impl Memory {
    /// Records a finished task as a task memory at three precisions (made by the summarizer,
    /// [`crate::context::Extractive`] by default) labelled with its outcome, and for a failure a
    /// reflection memory sourced to it (`task/<id>`), so later contexts can say "this approach
    /// failed". Both outcomes are kept.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty request or step; the summarizer's error; as
    /// [`Memory::remember`].
    pub fn record_task(&self, task: &Task) -> Result<TaskIds> {
        if task.request.trim().is_empty() {
            return Err(InvalidInput::EmptyTaskRequest.into());
        }
        if let Some(i) = task.steps.iter().position(|s| s.trim().is_empty()) {
            return Err(InvalidInput::EmptyTaskStep(i).into());
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
