//! What to remember: [`NewMemory`], its setters and its one check, and how it becomes a
//! stored item.

use serde::{Deserialize, Serialize};

use super::hash::memory_hash;
use super::{
    check_precisions, check_scope, check_text, check_time, check_validity, fields_of, Kind,
    MemoryId, MemoryItem, Outcome, Scope, Source, Tier, Triple, DEFAULT_NAMESPACE,
};
use crate::clock::Timestamp;
use crate::invalid::InvalidInput;

/// What to remember: the text and its metadata. Build with [`NewMemory::new`] and the setters,
/// or deserialize from JSON (`{"text": …, "kind": "fact", "tags": […]}`; unknown fields are an
/// error).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewMemory {
    /// The original text (required, non-empty).
    pub text: String,
    /// Kind (default chunk).
    #[serde(default)]
    pub kind: Kind,
    /// Concise version.
    #[serde(default)]
    pub concise: Option<String>,
    /// Brief version.
    #[serde(default)]
    pub brief: Option<String>,
    /// Triple fields.
    #[serde(default)]
    pub triple: Option<Triple>,
    /// Subject key.
    #[serde(default)]
    pub subject: Option<String>,
    /// Source document and span.
    #[serde(default)]
    pub source: Option<Source>,
    /// Namespace (default [`DEFAULT_NAMESPACE`]).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Importance in [0, 1] (default 0.5).
    #[serde(default)]
    pub importance: Option<f32>,
    /// Task outcome.
    #[serde(default)]
    pub outcome: Option<Outcome>,
    /// Never forget it.
    #[serde(default)]
    pub pinned: bool,
    /// The user it belongs to.
    #[serde(default)]
    pub user: Option<String>,
    /// The agent it belongs to.
    #[serde(default)]
    pub agent: Option<String>,
    /// The session it belongs to.
    #[serde(default)]
    pub session: Option<String>,
    /// When what it says became true, ms since the Unix epoch (default: now).
    #[serde(default)]
    pub valid_from: Option<Timestamp>,
    /// When it stopped being true, if it did (ms; after `valid_from`).
    #[serde(default)]
    pub valid_until: Option<Timestamp>,
}

impl NewMemory {
    /// A chunk with this text in the default namespace.
    pub fn new(text: impl Into<String>) -> Self {
        NewMemory {
            text: text.into(),
            ..Default::default()
        }
    }
    /// Sets the kind.
    pub fn kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }
    /// Sets the namespace.
    pub fn namespace(mut self, ns: impl Into<String>) -> Self {
        self.namespace = Some(ns.into());
        self
    }
    /// Adds a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }
    /// Sets the importance.
    pub fn importance(mut self, importance: f32) -> Self {
        self.importance = Some(importance);
        self
    }
    /// Sets the concise and brief versions.
    pub fn precisions(mut self, concise: impl Into<String>, brief: impl Into<String>) -> Self {
        self.concise = Some(concise.into());
        self.brief = Some(brief.into());
        self
    }
    /// Sets the source.
    pub fn source(mut self, document: impl Into<String>, span: Option<(u64, u64)>) -> Self {
        self.source = Some(Source {
            document: document.into(),
            span,
        });
        self
    }
    /// Sets the subject key.
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }
    /// Sets the triple fields (and nothing else: the text stays as given).
    pub fn triple(mut self, head: &str, relation: &str, tail: &str) -> Self {
        self.triple = Some(Triple {
            head: head.into(),
            relation: relation.into(),
            tail: tail.into(),
        });
        self
    }
    /// Sets the outcome.
    pub fn outcome(mut self, outcome: Outcome) -> Self {
        self.outcome = Some(outcome);
        self
    }
    /// Pins it.
    pub fn pinned(mut self, pinned: bool) -> Self {
        self.pinned = pinned;
        self
    }
    /// Puts it in a scope (user, agent, session).
    pub fn scope(mut self, scope: Scope) -> Self {
        self.user = scope.user;
        self.agent = scope.agent;
        self.session = scope.session;
        self
    }
    /// The scope it is given.
    pub(crate) fn scope_fields(&self) -> [Option<&str>; 3] {
        fields_of(&self.user, &self.agent, &self.session)
    }

    /// Checks the input (trimming nothing): rejects empty text, text over `max_text_bytes`
    /// ([`crate::Options::max_text_bytes`]), importance outside [0, 1], empty tags or namespace.
    /// A `valid_until` without `valid_from` must lie after `now` (the window then begins).
    pub(crate) fn validate(
        &self,
        max_text_bytes: usize,
        now: Timestamp,
    ) -> Result<(), InvalidInput> {
        check_text(&self.text, max_text_bytes)?;
        if let Some(i) = self.importance {
            if !(0.0..=1.0).contains(&i) {
                return Err(InvalidInput::Importance(i));
            }
        }
        if matches!(&self.namespace, Some(ns) if ns.is_empty()) {
            return Err(InvalidInput::EmptyNamespace);
        }
        if self.tags.iter().any(|t| t.is_empty()) {
            return Err(InvalidInput::EmptyTag);
        }
        check_precisions(&self.concise, &self.brief, max_text_bytes)?;
        if let Some(from) = self.valid_from {
            check_time("valid_from", from)?;
            check_validity(from, self.valid_until)?;
        }
        if let Some(until) = self.valid_until {
            check_time("valid_until", until)?;
            if self.valid_from.is_none() {
                check_validity(now, Some(until))?;
            }
        }
        check_scope(self.scope_fields())
    }

    /// The hash it is de-duplicated by, the one its item will have
    /// ([`MemoryItem::content_hash`]).
    pub(crate) fn content_hash(&self) -> [u8; 32] {
        let (ns, scope) = (self.namespace_or_default(), self.scope_fields());
        memory_hash(ns, scope, self.kind, &self.text, self.source.as_ref())
    }

    /// The namespace, defaulted.
    pub(crate) fn namespace_or_default(&self) -> &str {
        self.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
    }

    /// The item this input becomes under `id` at time `now`.
    pub(crate) fn into_item(self, id: MemoryId, now: Timestamp) -> MemoryItem {
        let namespace = self.namespace_or_default().to_string();
        let mut tags = self.tags;
        tags.sort();
        tags.dedup();
        MemoryItem {
            id,
            kind: self.kind,
            text: self.text,
            concise: self.concise,
            brief: self.brief,
            triple: self.triple,
            subject: self.subject,
            sources: self.source.into_iter().collect(),
            namespace,
            tags,
            created: now,
            updated: now,
            accessed: now,
            importance: self.importance.unwrap_or(0.5),
            outcome: self.outcome,
            count: 1,
            pinned: self.pinned,
            supersedes: None,
            superseded_by: None,
            tier: Tier::Working,
            strength: 0.0,
            decay_anchor: now,
            reinforced: 0,
            user: self.user,
            agent: self.agent,
            session: self.session,
            valid_from: self.valid_from.unwrap_or(now),
            valid_until: self.valid_until,
        }
    }
}
