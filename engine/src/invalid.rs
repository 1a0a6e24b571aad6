//! What was wrong with a request: the reason inside [`crate::Error::InvalidInput`], one variant
//! per kind of mistake, so callers (and tests) match on the case instead of on message text.

use std::path::PathBuf;

use crate::id::MemoryId;

/// Why a request was refused. Nothing changed when one is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidInput {
    /// The query text is empty or only whitespace.
    #[error("query text is empty")]
    EmptyQuery,
    /// A number of hits outside `1..=max`.
    #[error("k = {k} is outside 1..={max}")]
    K {
        /// The number asked for.
        k: usize,
        /// The most one request may ask for.
        max: usize,
    },
    /// A memory's text says nothing: empty, or only whitespace or control characters.
    #[error("text is empty (only whitespace or control characters)")]
    EmptyText,
    /// A memory's text is over [`crate::Options::max_text_bytes`].
    #[error("text is {bytes} bytes, over the limit of {limit} (Options::max_text_bytes; split it, or store it as a document of chunks)")]
    TextTooLong {
        /// Its length in bytes.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// An importance outside [0, 1].
    #[error("importance {0} is outside [0, 1]")]
    Importance(f32),
    /// An empty namespace.
    #[error("namespace is empty")]
    EmptyNamespace,
    /// An empty tag.
    #[error("a tag is empty")]
    EmptyTag,
    /// A validity window that ends before it begins.
    #[error("valid_until {until} is not after valid_from {from}")]
    Validity {
        /// The start, ms.
        from: i64,
        /// The end, ms.
        until: i64,
    },
    /// An empty user, agent or session name (the field names which).
    #[error("{0} is empty (leave it out for a memory that belongs to no {0})")]
    EmptyScope(&'static str),
    /// A conversation call with no turns.
    #[error("a conversation needs at least one turn")]
    EmptyConversation,
    /// A turn whose speaker is empty.
    #[error("speaker is empty")]
    EmptySpeaker,
    /// A scope whose session is not the conversation's.
    #[error("the scope's session {scope:?} is not the conversation's session {session:?}")]
    ScopeSession {
        /// The scope's session.
        scope: String,
        /// The conversation's.
        session: String,
    },
    /// An extractor output naming a turn it was not given.
    #[error("the extractor named turn {turn}, but was given {turns} turns")]
    ExtractedTurn {
        /// The index it named.
        turn: usize,
        /// How many turns it was given.
        turns: usize,
    },
    /// An extractor output of kind turn (turns come from the conversation only).
    #[error("an extracted memory cannot be a turn (facts, triples, …)")]
    ExtractedTurnKind,
    /// A vector of the wrong dimension, or zero, or with a non-finite component.
    #[error("vector: {0}")]
    Vector(String),
    /// One input of several was refused (`at` names it: `memory 3`, `document "notes"`).
    #[error("{at}: {reason}")]
    At {
        /// Which input.
        at: String,
        /// What was wrong with it.
        reason: Box<InvalidInput>,
    },
    /// `update` of a version that a newer one superseded.
    #[error("memory {id} was superseded by {by}; update the current version")]
    Superseded {
        /// The memory asked for.
        id: MemoryId,
        /// The version that replaced it.
        by: MemoryId,
    },
    /// A feedback level outside 1..=5.
    #[error("feedback level {0} is outside 1..=5 (1 = harmful … 5 = decisive)")]
    FeedbackLevel(u8),
    /// An empty subject.
    #[error("subject is empty")]
    EmptySubject,
    /// A task with an empty request.
    #[error("task request is empty")]
    EmptyTaskRequest,
    /// A task whose step `0` is empty.
    #[error("task step {0} is empty")]
    EmptyTaskStep(usize),
    /// A context key share outside (0, 1].
    #[error("key share {0} is outside (0, 1]")]
    KeyShare(f32),
    /// A document with an empty key or text.
    #[error("document key and text must not be empty")]
    EmptyDocument,
    /// An export path that would replace one of the store's own files.
    #[error("{}: an export cannot be written over {file} in the store directory {} (it is the store's own file)", path.display(), store.display())]
    OwnFile {
        /// The path asked for.
        path: PathBuf,
        /// The store file it would replace.
        file: String,
        /// The store directory.
        store: PathBuf,
    },
    /// An option of [`crate::Options`] out of its range.
    #[error("{0}")]
    Options(String),
    /// The reranker returned the wrong number of scores, or a non-finite one.
    #[error(
        "the reranker returned {returned} scores for {candidates} candidates (all must be finite)"
    )]
    RerankerScores {
        /// Scores returned.
        returned: usize,
        /// Candidates given.
        candidates: usize,
    },
    /// The query refiner returned an empty query text.
    #[error("the refiner returned an empty query")]
    EmptyRefinement,
    /// A store directory another user owns or others can write (see
    /// [`crate::Options::allow_unsafe_directory`]).
    #[error("{}: refusing a store directory that {why}: whoever can write it can replace the store's files or answer on its socket (Options::allow_unsafe_directory / --allow-unsafe-directory overrides)", path.display())]
    UnsafeDirectory {
        /// The directory.
        path: PathBuf,
        /// Who else can write it.
        why: String,
    },
    /// A field holds a value no write makes (an imported record's time, strength, count …).
    #[error("{field} {reason}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// A strategy name that is none of the strategies.
    #[error("unknown strategy {0:?} (single, lexical, rerank, iterative)")]
    UnknownStrategy(String),
    /// A kind name that is none of the kinds.
    #[error("unknown kind {0:?}, not one of chunk, triple, fact, summary, task, reflection, subject, document, turn")]
    UnknownKind(String),
    /// An event name that is none of a subject's events.
    #[error("unknown event {0:?}, not one of created, modified, executed, deleted")]
    UnknownEvent(String),
    /// A time that is neither RFC 3339 nor Unix seconds.
    #[error(
        "{field}: `{text}` is neither Unix seconds nor an RFC 3339 time like 2026-11-22T10:00:00Z"
    )]
    Time {
        /// The field.
        field: &'static str,
        /// What was given.
        text: String,
    },
    /// A hook the caller installed (a C or Python callback) failed.
    #[error("{0}")]
    Hook(String),
}

impl InvalidInput {
    /// This reason, naming the input it is about.
    pub(crate) fn at(self, at: impl Into<String>) -> InvalidInput {
        InvalidInput::At {
            at: at.into(),
            reason: Box::new(self),
        }
    }

    /// The innermost reason (through every [`InvalidInput::At`]).
    pub fn reason(&self) -> &InvalidInput {
        match self {
            InvalidInput::At { reason, .. } => reason.reason(),
            other => other,
        }
    }
}
