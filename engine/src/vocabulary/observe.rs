//! `observe`: an event about a subject (a file, a service), as every door takes it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::invalid::InvalidInput;

/// What happened to a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectEvent {
    /// It came into being; its content replaces anything known before.
    Created,
    /// It changed; new content replaces the stale.
    Modified,
    /// It was run; the content (if any) is its latest output.
    Executed,
    /// It is gone; the summary becomes "deleted at …".
    Deleted,
}

impl SubjectEvent {
    /// Parses `created`, `modified`, `executed` or `deleted` (or the verb: `create`, …).
    pub fn parse(s: &str) -> Option<SubjectEvent> {
        match s {
            "created" | "create" => Some(SubjectEvent::Created),
            "modified" | "modify" => Some(SubjectEvent::Modified),
            "executed" | "execute" => Some(SubjectEvent::Executed),
            "deleted" | "delete" => Some(SubjectEvent::Deleted),
            _ => None,
        }
    }

    /// The event named `s`, or the one error every door gives for a name that is none.
    pub fn named(s: &str) -> Result<SubjectEvent, InvalidInput> {
        SubjectEvent::parse(s).ok_or_else(|| InvalidInput::UnknownEvent(s.to_string()))
    }
}

/// `observe`: an event about a subject (a file, a service), merged into its one memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveRequest {
    /// The subject: a file path, a service name.
    pub subject: String,
    /// created, modified, executed or deleted.
    pub event: String,
    /// What it is now (its content, or a command's output).
    #[serde(default)]
    pub content: Option<String>,
}

impl ObserveRequest {
    /// The event, checked.
    ///
    /// # Errors
    /// [`InvalidInput::UnknownEvent`] for a name that is no event.
    pub fn event(&self) -> Result<SubjectEvent, InvalidInput> {
        SubjectEvent::named(&self.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_once() {
        assert_eq!(SubjectEvent::named("created"), Ok(SubjectEvent::Created));
        assert_eq!(SubjectEvent::named("execute"), Ok(SubjectEvent::Executed));
        let e = SubjectEvent::named("renamed").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown event \"renamed\", not one of created, modified, executed, deleted"
        );
    }
}
