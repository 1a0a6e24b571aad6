//! What an agent does with its memory beyond remember and recall: tasks with their outcome and
//! reflection (`task.rs` the value types, `record_task.rs` the recording), subjects observed
//! over time (`subjects.rs`), and five-level feedback on what a memory contributed
//! (`feedback.rs`).

mod feedback;
mod record_task;
mod subjects;

pub use crate::vocabulary::{Task, TaskIds};
