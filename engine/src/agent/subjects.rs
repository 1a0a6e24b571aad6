//! Subjects: one memory per subject (a file path, a service), its summary merged from events.

use crate::clock::Timestamp;
use crate::error::Result;
use crate::hooks::extract;
use crate::invalid::InvalidInput;
use crate::item::{Kind, MemoryId, NewMemory, DEFAULT_NAMESPACE};
use crate::memory::Memory;
use crate::store::SUBJECT_STATE;
use crate::time::format_rfc3339;
use crate::vocabulary::SubjectEvent;

/// What is known of a subject, merged from its events (kept beside its memory).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct SubjectState {
    content: Option<String>,
    created: Option<Timestamp>,
    modified: Option<Timestamp>,
    executions: u32,
    last_executed: Option<Timestamp>,
    last_output: Option<String>,
    deleted: Option<Timestamp>,
    events: u32,
}

impl SubjectState {
    fn apply(&mut self, event: SubjectEvent, content: Option<&str>, now: Timestamp) {
        self.events += 1;
        let content = content
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from);
        match event {
            SubjectEvent::Created => {
                *self = SubjectState {
                    content,
                    created: Some(now),
                    events: self.events,
                    ..Default::default()
                };
            }
            SubjectEvent::Modified => {
                if content.is_some() {
                    self.content = content;
                }
                self.modified = Some(now);
                self.deleted = None;
            }
            SubjectEvent::Executed => {
                self.executions += 1;
                self.last_executed = Some(now);
                if content.is_some() {
                    self.last_output = content;
                }
            }
            SubjectEvent::Deleted => {
                self.deleted = Some(now);
                self.content = None;
                self.last_output = None;
            }
        }
    }

    /// The three precisions of the summary.
    fn render(&self, subject: &str) -> (String, String, String) {
        if let Some(t) = self.deleted {
            let text = format!("{subject}: deleted at {}.", format_rfc3339(t));
            return (text.clone(), text.clone(), text);
        }
        let mut dates = Vec::new();
        if let Some(t) = self.created {
            dates.push(format!("created {}", format_rfc3339(t)));
        }
        if let Some(t) = self.modified {
            dates.push(format!("modified {}", format_rfc3339(t)));
        }
        let dates = if dates.is_empty() {
            String::new()
        } else {
            format!(" ({})", dates.join(", "))
        };
        let content = self.content.as_deref().unwrap_or("no content recorded.");
        let runs = match self.last_executed {
            Some(t) => format!(
                " Executed {} time{}, last at {}",
                self.executions,
                if self.executions == 1 { "" } else { "s" },
                format_rfc3339(t)
            ),
            None => String::new(),
        };
        let output = match &self.last_output {
            Some(o) => format!(": {o}"),
            None => ".".into(),
        };
        let original = format!(
            "{subject}{dates}: {content}{runs}{}",
            if runs.is_empty() {
                String::new()
            } else {
                output
            }
        );
        let concise = format!(
            "{subject}: {}{runs}{}",
            extract(content).concise,
            if runs.is_empty() { "" } else { "." }
        );
        let status = match (self.modified, self.created) {
            (Some(t), _) => format!("modified {}", format_rfc3339(t)),
            (None, Some(t)) => format!("created {}", format_rfc3339(t)),
            _ => "observed".into(),
        };
        let brief = match self.executions {
            0 => format!("{subject}: {status}"),
            n => format!("{subject}: {status}, executed {n}x"),
        };
        (original, concise, brief)
    }
}

impl Memory {
    /// Records an event about `subject` (a file path, a service) in the default namespace and
    /// returns the id of its one subject memory, created on the first event and updated in
    /// place (re-embedded) on the next: its summary merges the events, newer content replacing
    /// the stale, a deletion leaving a short "deleted at …" summary; its count is the number of
    /// events.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty subject; as [`Memory::remember`].
    pub fn observe(
        &self,
        subject: &str,
        event: SubjectEvent,
        content: Option<&str>,
    ) -> Result<MemoryId> {
        let subject = subject.trim();
        if subject.is_empty() {
            return Err(InvalidInput::EmptySubject.into());
        }
        let _serial = self.inner.observing.lock();
        let store = &self.inner.store;
        let existing = store.by_subject(DEFAULT_NAMESPACE, Kind::Subject, subject, [None; 3])?;
        let mut state = match existing {
            Some(id) => match store.side(SUBJECT_STATE, id)? {
                Some(b) => serde_json::from_slice(&b)
                    .map_err(|e| store.corrupt(format!("subject state of {id}: {e}")))?,
                // Imported memories come without their state: start from the summary.
                None => SubjectState {
                    content: store.item(id)?.map(|i| i.text),
                    ..Default::default()
                },
            },
            None => SubjectState::default(),
        };
        let now = self.inner.now();
        state.apply(event, content, now);
        let (original, concise, brief) = state.render(subject);
        let vector = self.inner.embed_one(&original)?;
        let json = serde_json::to_vec(&state).expect("subject state always serialises");
        self.inner.write(|inner, tx, applied| {
            let current = match existing {
                Some(id) => inner.current(id)?,
                None => None,
            };
            let id = match current {
                Some(mut item) => {
                    tx.unhash(&item.content_hash(), item.id, item.scope_fields()[0])?;
                    item.text = original;
                    item.concise = Some(concise);
                    item.brief = Some(brief);
                    item.count = state.events;
                    item.updated = now;
                    tx.put(&item, Some(&vector))?;
                    applied.replaced.push((item.id, vector));
                    let id = item.id;
                    applied.items.push(item);
                    id
                }
                None => {
                    let m = NewMemory::new(original)
                        .kind(Kind::Subject)
                        .subject(subject)
                        .precisions(concise, brief);
                    inner
                        .insert_new(tx, applied, m, (vector, &[]), None, None)?
                        .id
                }
            };
            tx.put_side(SUBJECT_STATE, id, &json)?;
            Ok(id)
        })
    }
}
