//! `record_task`: a finished task and its reflection.

use crate::agent::{Task, TaskIds};
use crate::error::Result;
use crate::memory::Memory;
use crate::vocabulary::Door;

use super::operate::{Operate, INSPECTOR_LOOKS};

/// [`super::Operation::RecordTask`].
pub(super) struct RecordTask;

impl Operate for RecordTask {
    const NAME: &'static str = "record_task";
    const DOC: &'static str = "Record a finished task: the request, the steps taken, the \
        outcome (success or failure) and, for a failure, what to do differently. Later \
        contexts can then say what worked and what failed.";
    const SCOPED: bool = false;
    const READS_ONLY: bool = false;
    type Request = Task;
    type Answer = TaskIds;

    fn absent_from(door: Door) -> Option<&'static str> {
        (door == Door::Inspector).then_some(INSPECTOR_LOOKS)
    }

    fn run(memory: &Memory, task: Task) -> Result<TaskIds> {
        memory.record_task(&task)
    }

    fn text(_: &Task, ids: &TaskIds) -> String {
        match ids.reflection {
            Some(r) => format!(
                "Task recorded as memory {}, its reflection as memory {r}.",
                ids.task
            ),
            None => format!("Task recorded as memory {}.", ids.task),
        }
    }
}
