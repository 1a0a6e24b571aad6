//! Conversations as memories: each turn a [`Kind::Turn`] memory with its speaker, session and
//! time, the turns of a session linked in order, a session summary kept current, and facts
//! drawn from the turns by an optional [`Extractor`].
//!
//! A turn's text is stored as "speaker: text" (what is embedded and indexed, so a question
//! naming a person finds what they said), its `subject` is the speaker, its `valid_from` the
//! time it was spoken, and its source `session/<session>` with the span `(n, n + 1)`: it is
//! turn `n` of the session, numbered from 0 across every call for that session.

mod summary;

pub use crate::hooks::{Extracted, Extractor};
pub use crate::vocabulary::Turn;

use serde::Serialize;

use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::invalid::InvalidInput;
use crate::item::{Kind, MemoryId, MemoryItem, NewMemory, Scope, Source};
use crate::memory::views::Scoped;
use crate::memory::Memory;
use crate::remember::dedup::Remembered;
use crate::vocabulary::Update;
use summary::{session_summary, Line};

/// What [`Memory::remember_conversation`] stored.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ConversationReport {
    /// The session.
    pub session: String,
    /// The turns' memories, in the order given (each its own: a turn is never merged).
    pub turns: Vec<MemoryId>,
    /// The number of the first new turn in the session (turns are numbered from 0).
    pub first_turn: u64,
    /// The session summary's current version.
    pub summary: MemoryId,
    /// What the extractor drew from the turns, each as remembered (merged, superseding …).
    pub extracted: Vec<Remembered>,
}

/// "3 turns of session s1 (turns 0 to 2), its summary memory 9, 1 fact drawn from them".
impl std::fmt::Display for ConversationReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.turns.len() as u64;
        write!(
            f,
            "{n} turns of session {} (turns {} to {}), its summary memory {}",
            self.session,
            self.first_turn,
            (self.first_turn + n).saturating_sub(1),
            self.summary
        )?;
        match self.extracted.len() {
            0 => Ok(()),
            1 => f.write_str(", 1 fact drawn from them"),
            k => write!(f, ", {k} facts drawn from them"),
        }
    }
}

/// The source document of a session's turns.
fn session_document(session: &str) -> String {
    format!("session/{session}")
}

/// The turn number of `item` in `document`, if it is a turn of it.
fn turn_number(item: &MemoryItem, document: &str) -> Option<u64> {
    item.sources
        .iter()
        .find(|s| s.document == document)
        .and_then(|s| s.span)
        .map(|(n, _)| n)
}

impl Memory {
    /// Remembers turns of conversation `session` for `scope` (its user and agent; its session, if
    /// set, must be `session`). Each turn becomes a [`crate::Kind::Turn`] memory ("speaker: text",
    /// valid from the turn's time, numbered after the session's earlier turns); the session's
    /// summary memory is rewritten over all its turns by the summarizer hook; the
    /// [`crate::plug::Extractor`] hook, if set, turns the new turns into facts sourced to their
    /// turn.
    ///
    /// The hooks run before anything is written, so their errors store nothing. The turns are
    /// written in one transaction, the extracted facts in a second (with the usual de-duplication:
    /// a new value of a fact supersedes the old), the summary in a third.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty session, no turns, an empty speaker or text, a
    /// scope of another session, or an extractor output naming no given turn; the hooks' errors;
    /// [`crate::Error::Embed`], [`crate::Error::Store`], [`crate::Error::Index`].
    pub fn remember_conversation(
        &self,
        session: &str,
        turns: &[Turn],
        scope: &Scope,
    ) -> Result<ConversationReport> {
        let scope = conversation_scope(session, scope)?;
        if turns.is_empty() {
            return Err(InvalidInput::EmptyConversation.into());
        }
        let document = session_document(session);
        let earlier = self.session_turns(&scope, &document)?;
        let first_turn = earlier
            .iter()
            .flat_map(|t| &t.sources)
            .filter(|s| s.document == document)
            .filter_map(|s| s.span.map(|(_, end)| end))
            .max()
            .unwrap_or(0);
        let max_bytes = self.inner.options.max_text_bytes;
        let mut memories = Vec::with_capacity(turns.len());
        for (i, (turn, n)) in turns.iter().zip(first_turn..).enumerate() {
            let at = || format!("turn {i}");
            if turn.speaker.trim().is_empty() {
                return Err(InvalidInput::EmptySpeaker.at(at()).into());
            }
            let memory = NewMemory {
                text: format!("{}: {}", turn.speaker, turn.text),
                kind: Kind::Turn,
                subject: Some(turn.speaker.clone()),
                source: Some(Source {
                    document: document.clone(),
                    span: Some((n, n + 1)),
                }),
                valid_from: Some(turn.time),
                ..NewMemory::default()
            }
            .scope(scope.clone());
            crate::item::check_text(&turn.text, max_bytes)
                .and_then(|()| memory.validate(max_bytes, self.inner.now()))
                .map_err(|e| e.at(at()))?;
            memories.push(memory);
        }
        let extracted = self.extract(session, turns, &scope, first_turn, &document)?;
        let lines: Vec<Line<'_>> = earlier
            .iter()
            .map(|t| Line {
                text: &t.text,
                speaker: t.subject.as_deref().unwrap_or(""),
                time: t.valid_from,
            })
            .chain(memories.iter().zip(turns).map(|(m, t)| Line {
                text: &m.text,
                speaker: &t.speaker,
                time: t.time,
            }))
            .collect();
        let summary = session_summary(
            self.inner.options.hooks.summarizer.as_ref(),
            session,
            &lines,
            max_bytes,
        )?;
        // Checked before any turn is written: a summary that cannot be kept must not leave
        // the turns behind it stored and the session failing on every later call.
        summary
            .validate(max_bytes, self.inner.now())
            .map_err(|e| e.at("the session summary"))?;
        let ids = self.remember_distinct(memories)?;
        let extracted = if extracted.is_empty() {
            Vec::new()
        } else {
            self.advanced().remember_batch_explained(extracted)?
        };
        let summary = self.keep_summary(summary, &scope, &document)?;
        Ok(ConversationReport {
            session: session.to_string(),
            turns: ids,
            first_turn,
            summary,
            extracted,
        })
    }

    /// The turns of exactly `scope` (its session set) sourced to `document`, in order.
    fn session_turns(&self, scope: &Scope, document: &str) -> Result<Vec<MemoryItem>> {
        let mut turns: Vec<(u64, MemoryItem)> = self
            .advanced()
            .scan(
                &MemoryFilter::new().kind(Kind::Turn).scope(scope.clone()),
                usize::MAX,
            )?
            .into_iter()
            .filter(|t| t.scope() == *scope)
            .filter_map(|t| Some((turn_number(&t, document)?, t)))
            .collect();
        turns.sort_by_key(|(n, _)| *n);
        Ok(turns.into_iter().map(|(_, t)| t).collect())
    }

    /// The extractor's memories for `turns` (numbered from `first_turn`), checked, sourced to
    /// their turn, in the conversation's scope, valid from the turn's time unless they say.
    fn extract(
        &self,
        session: &str,
        turns: &[Turn],
        scope: &Scope,
        first_turn: u64,
        document: &str,
    ) -> Result<Vec<NewMemory>> {
        let Some(extractor) = &self.inner.options.hooks.extractor else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (i, e) in extractor.extract(session, turns)?.into_iter().enumerate() {
            let at = || format!("extracted memory {i}");
            let Some(turn) = turns.get(e.turn) else {
                let wrong = InvalidInput::ExtractedTurn {
                    turn: e.turn,
                    turns: turns.len(),
                };
                return Err(wrong.at(at()).into());
            };
            if e.memory.kind == Kind::Turn {
                return Err(InvalidInput::ExtractedTurnKind.at(at()).into());
            }
            let n = first_turn + e.turn as u64;
            let mut memory = NewMemory {
                source: Some(Source {
                    document: document.to_string(),
                    span: Some((n, n + 1)),
                }),
                valid_from: e.memory.valid_from.or(Some(turn.time)),
                ..e.memory
            }
            .scope(scope.clone());
            if memory
                .valid_until
                .is_some_and(|u| Some(u) <= memory.valid_from)
            {
                memory.valid_until = None;
            }
            memory
                .validate(self.inner.options.max_text_bytes, self.inner.now())
                .map_err(|e| e.at(at()))?;
            out.push(memory);
        }
        Ok(out)
    }

    /// Writes the session summary: a new version of the current one, or the first.
    fn keep_summary(&self, summary: NewMemory, scope: &Scope, document: &str) -> Result<MemoryId> {
        let current = self
            .advanced()
            .scan(
                &MemoryFilter::new().kind(Kind::Summary).scope(scope.clone()),
                usize::MAX,
            )?
            .into_iter()
            .find(|s| s.scope() == *scope && s.sources.iter().any(|d| d.document == document));
        match current {
            Some(old) if old.text == summary.text => Ok(old.id),
            Some(old) => self.update(
                old.id,
                Update {
                    text: Some(summary.text),
                    concise: summary.concise,
                    brief: summary.brief,
                    ..Update::default()
                },
            ),
            None => {
                let summary = NewMemory {
                    source: Some(Source {
                        document: document.to_string(),
                        span: None,
                    }),
                    ..summary
                }
                .scope(scope.clone());
                Ok(self.remember_distinct(vec![summary])?[0])
            }
        }
    }
}

/// `scope` with its session set to `session` (which must not be empty, nor contradict it).
fn conversation_scope(session: &str, scope: &Scope) -> Result<Scope> {
    if session.is_empty() {
        return Err(InvalidInput::EmptyScope("session").into());
    }
    if let Some(other) = scope.session.as_deref().filter(|s| *s != session) {
        return Err(InvalidInput::ScopeSession {
            scope: other.to_string(),
            session: session.to_string(),
        }
        .into());
    }
    let scope = Scope {
        session: Some(session.to_string()),
        ..scope.clone()
    };
    scope.validate()?;
    Ok(scope)
}

impl<'a> Scoped<'a> {
    /// The turns of conversation `session` remembered for `scope` (exactly that user and
    /// agent), in the order they were spoken.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty session or a scope of another session;
    /// [`crate::Error::Store`].
    pub fn conversation(&self, session: &str) -> Result<Vec<MemoryItem>> {
        let scope = &self.scope;
        let scope = conversation_scope(session, scope)?;
        self.memory
            .session_turns(&scope, &session_document(session))
    }
}
