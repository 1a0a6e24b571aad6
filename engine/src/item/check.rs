//! The one check of a stored memory's fields: what `remember` refuses in a request, an import
//! refuses in a file, so nothing a file says can put a memory in a state no call could.

use super::{check_precisions, check_scope, check_text, MemoryItem};
use crate::clock::Timestamp;
use crate::invalid::InvalidInput;

/// The earliest time a memory may carry: 0001-01-01T00:00:00Z, in ms.
pub const MIN_TIME: Timestamp = -62_135_596_800_000;
/// The latest time a memory may carry: 9999-12-31T23:59:59.999Z, in ms.
pub const MAX_TIME: Timestamp = 253_402_300_799_999;

/// `t` lies in [`MIN_TIME`]..=[`MAX_TIME`].
pub(crate) fn check_time(field: &'static str, t: Timestamp) -> Result<(), InvalidInput> {
    if (MIN_TIME..=MAX_TIME).contains(&t) {
        Ok(())
    } else {
        Err(InvalidInput::Field {
            field,
            reason: format!("{t} ms is outside years 1 to 9999"),
        })
    }
}

impl MemoryItem {
    /// Checks every field as a request's are checked, and those a request cannot set
    /// (times, strength, count, version links) for values no write makes: text within
    /// `max_text_bytes` and saying something, importance in [0, 1], no empty namespace, tag,
    /// scope name, subject or source, times within years 1 to 9999, a validity window that
    /// ends after it begins, a finite strength ≥ 0, a count ≥ 1, no version link to itself.
    pub(crate) fn check(&self, max_text_bytes: usize) -> Result<(), InvalidInput> {
        check_text(&self.text, max_text_bytes)?;
        check_precisions(&self.concise, &self.brief, max_text_bytes)?;
        if !(0.0..=1.0).contains(&self.importance) {
            return Err(InvalidInput::Importance(self.importance));
        }
        if self.namespace.is_empty() {
            return Err(InvalidInput::EmptyNamespace);
        }
        if self.tags.iter().any(String::is_empty) {
            return Err(InvalidInput::EmptyTag);
        }
        check_scope(self.scope_fields())?;
        if self.subject.as_deref() == Some("") {
            return Err(InvalidInput::EmptySubject);
        }
        for s in &self.sources {
            if s.document.is_empty() {
                return Err(field("sources", "a source document is empty"));
            }
            if s.span.is_some_and(|(a, b)| a > b) {
                return Err(field("sources", "a span ends before it begins"));
            }
        }
        for (name, t) in [
            ("created", self.created),
            ("updated", self.updated),
            ("accessed", self.accessed),
            ("decay_anchor", self.decay_anchor),
            ("valid_from", self.valid_from),
        ] {
            check_time(name, t)?;
        }
        if let Some(until) = self.valid_until {
            check_time("valid_until", until)?;
        }
        // A version superseded the moment it began holds an empty window (until = from).
        if let Some(until) = self.valid_until.filter(|&u| u < self.valid_from) {
            return Err(InvalidInput::Validity {
                from: self.valid_from,
                until,
            });
        }
        if !(self.strength.is_finite() && self.strength >= 0.0) {
            return Err(field(
                "strength",
                format!("{} is not a finite number ≥ 0", self.strength),
            ));
        }
        if self.count == 0 {
            return Err(field(
                "count",
                "is 0 (a memory was remembered at least once)",
            ));
        }
        if self.supersedes == Some(self.id) || self.superseded_by == Some(self.id) {
            return Err(field("superseded_by", "a memory cannot replace itself"));
        }
        Ok(())
    }
}

fn field(field: &'static str, reason: impl Into<String>) -> InvalidInput {
    InvalidInput::Field {
        field,
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::MemoryId;
    use crate::item::NewMemory;

    fn item() -> MemoryItem {
        let mut i = NewMemory::new("The freezer is kept at -18 degrees.")
            .into_item(MemoryId::new(7), 1_000);
        i.strength = 3600.0;
        i
    }

    #[test]
    fn a_written_memory_passes_and_each_bad_field_is_named() {
        assert_eq!(item().check(1024), Ok(()));
        type Spoil = fn(&mut MemoryItem);
        let cases: Vec<(Spoil, &str)> = vec![
            (|i| i.text = "x".repeat(2048), "text is 2048 bytes"),
            (|i| i.text = "\u{0}".into(), "text is empty"),
            (|i| i.brief = Some("y".repeat(2048)), "brief"),
            (|i| i.importance = f32::NAN, "importance"),
            (|i| i.importance = 7.0, "importance"),
            (|i| i.strength = f64::NAN, "strength"),
            (|i| i.strength = f64::NEG_INFINITY, "strength"),
            (|i| i.valid_until = Some(500), "valid_until"),
            (|i| i.created = i64::MIN, "created"),
            (|i| i.decay_anchor = i64::MAX, "decay_anchor"),
            (|i| i.user = Some(String::new()), "user is empty"),
            (|i| i.namespace = String::new(), "namespace is empty"),
            (|i| i.tags = vec![String::new()], "a tag is empty"),
            (
                |i| i.superseded_by = Some(MemoryId::new(7)),
                "replace itself",
            ),
            (|i| i.count = 0, "count"),
            (|i| i.subject = Some(String::new()), "subject is empty"),
        ];
        for (spoil, says) in cases {
            let mut i = item();
            spoil(&mut i);
            let e = i.check(1024).expect_err(says).to_string();
            assert!(e.contains(says), "{e:?} should say {says:?}");
        }
    }
}
