//! The memory item and its stable on-disk encoding.
//!
//! An item is stored as one version byte followed by its bincode (`=2.0.1`, standard config)
//! encoding; a later format adds a new version and keeps decoding the old ones.

use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
pub(crate) use crate::id::IdRange;
pub use crate::id::{MemoryId, MAX_ID};
use crate::invalid::InvalidInput;

mod check;
mod encoding;
mod hash;
mod new;

pub(crate) use check::check_time;
pub use check::{MAX_TIME, MIN_TIME};
pub use hash::content_hash;
pub(crate) use hash::memory_hash;
pub use new::NewMemory;

/// Namespace used when none is given.
pub const DEFAULT_NAMESPACE: &str = "default";

/// What a memory is (the structural-memory paper's kinds plus MaxMind's tasks and reflections).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Encode,
    Decode,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A span of a document.
    #[default]
    Chunk,
    /// A (head, relation, tail) triple.
    Triple,
    /// An atomic fact.
    Fact,
    /// A summary of other memories or documents.
    Summary,
    /// A task the agent carried out.
    Task,
    /// A lesson drawn from a task (SAGE's reflection).
    Reflection,
    /// The merged record of a subject (a file, a tool, …).
    Subject,
    /// A whole document.
    Document,
    /// A turn of a conversation: what one speaker said, when (see
    /// [`crate::Memory::remember_conversation`]); its `subject` is the speaker.
    Turn,
}

impl Kind {
    /// Every kind, in declaration order.
    pub const ALL: [Kind; 9] = [
        Kind::Chunk,
        Kind::Triple,
        Kind::Fact,
        Kind::Summary,
        Kind::Task,
        Kind::Reflection,
        Kind::Subject,
        Kind::Document,
        Kind::Turn,
    ];

    /// The lowercase name used in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Chunk => "chunk",
            Kind::Triple => "triple",
            Kind::Fact => "fact",
            Kind::Summary => "summary",
            Kind::Task => "task",
            Kind::Reflection => "reflection",
            Kind::Subject => "subject",
            Kind::Document => "document",
            Kind::Turn => "turn",
        }
    }

    /// Parses a lowercase name.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The kind named `s`, or the one error every door gives for a name that is none.
    pub fn named(s: &str) -> Result<Kind, InvalidInput> {
        Kind::parse(s).ok_or_else(|| InvalidInput::UnknownKind(s.to_string()))
    }

    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_code(c: u8) -> Option<Kind> {
        Kind::ALL.get(c as usize).copied()
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// Where a memory stands in forgetting (forgotten memories are deleted, so have no tier).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Encode,
    Decode,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Retention at or above θ1: served at full precision.
    #[default]
    Working,
    /// Retention between θ2 and θ1: still searchable, served at a lower precision.
    LongTerm,
}

impl Tier {
    /// `working` or `long_term`, as it serialises.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Working => "working",
            Tier::LongTerm => "long_term",
        }
    }
}

/// How a task ended.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It worked.
    Success,
    /// It did not.
    Failure,
}

/// A (head, relation, tail) triple.
#[derive(
    Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Triple {
    /// The subject entity.
    pub head: String,
    /// The relation.
    pub relation: String,
    /// The object entity.
    pub tail: String,
}

/// Where a memory came from: a document id and an optional byte span in it.
#[derive(
    Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The document's id (a path, URL, message id …).
    pub document: String,
    /// Start and end offsets in the document, if known.
    #[serde(default)]
    pub span: Option<(u64, u64)>,
}

/// One stored memory.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemoryItem {
    /// The id.
    pub id: MemoryId,
    /// What it is.
    pub kind: Kind,
    /// The original text (the precision that is embedded).
    pub text: String,
    /// A concise version, if any.
    pub concise: Option<String>,
    /// A brief version, if any.
    pub brief: Option<String>,
    /// Triple fields, for [`Kind::Triple`].
    pub triple: Option<Triple>,
    /// The subject key, for memories about one subject (a file path, a tool name); for a
    /// [`Kind::Turn`], its speaker.
    pub subject: Option<String>,
    /// Where it came from; a merged duplicate adds its sources here (provenance).
    pub sources: Vec<Source>,
    /// The namespace (a user, an agent, a project).
    pub namespace: String,
    /// Free-form tags, sorted and unique.
    pub tags: Vec<String>,
    /// When it was first remembered.
    pub created: Timestamp,
    /// When its content or metadata last changed.
    pub updated: Timestamp,
    /// When it was last returned by a recall.
    pub accessed: Timestamp,
    /// Importance in [0, 1].
    pub importance: f32,
    /// How the task ended, for tasks.
    pub outcome: Option<Outcome>,
    /// How many times it was remembered (duplicates merged into it).
    pub count: u32,
    /// Pinned memories are never forgotten.
    pub pinned: bool,
    /// The older version this one replaced.
    pub supersedes: Option<MemoryId>,
    /// The newer version that replaced this one; set means out of default ranking.
    pub superseded_by: Option<MemoryId>,
    /// Forgetting tier.
    pub tier: Tier,
    /// Decay strength S in seconds (retention falls by e per S for Ebbinghaus decay, by 1 per
    /// S for linear decay); grows with each reinforcement.
    pub strength: f64,
    /// When the decay clock last restarted (creation or the last reinforcement).
    pub decay_anchor: Timestamp,
    /// Times it was reinforced (recall hits, positive feedback).
    pub reinforced: u32,
    /// The user it belongs to, if any (see [`Scope`]).
    pub user: Option<String>,
    /// The agent it belongs to, if any.
    pub agent: Option<String>,
    /// The session (run, conversation) it belongs to, if any.
    pub session: Option<String>,
    /// When what it says became true (default: when it was remembered).
    pub valid_from: Timestamp,
    /// When it stopped being true, if it did: set when a newer version of a fact supersedes
    /// it (at the new version's `valid_from`), or given by the caller.
    pub valid_until: Option<Timestamp>,
}

/// Who a memory belongs to: a user, an agent, a session, each optional. Memories of one scope
/// never merge with another's, and a filter naming a scope reaches only its memories.
///
/// Every request of the vocabulary carries one, flattened (`"user"`, `"agent"`, `"session"`
/// beside the request's own fields): the fields are declared here once.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// The user: a memory of another user is never reached (acted on, recalled, listed).
    #[serde(default)]
    pub user: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// The session (a conversation, a run).
    #[serde(default)]
    pub session: Option<String>,
}

impl Scope {
    /// A user's scope.
    pub fn user(user: impl Into<String>) -> Scope {
        Scope {
            user: Some(user.into()),
            ..Scope::default()
        }
    }
    /// True when no field is set (memories that belong to no one in particular).
    pub fn is_empty(&self) -> bool {
        self.user.is_none() && self.agent.is_none() && self.session.is_none()
    }
    /// The three fields in order: user, agent, session.
    pub(crate) fn fields(&self) -> [Option<&str>; 3] {
        fields_of(&self.user, &self.agent, &self.session)
    }
    /// Refuses empty names (a scope field is absent or names someone).
    pub(crate) fn validate(&self) -> Result<(), InvalidInput> {
        check_scope(self.fields())
    }

    /// Checks the scope of a call confined to one (`call` names it in the error): its names
    /// valid, and at least one of them set.
    ///
    /// # Errors
    /// [`InvalidInput::EmptyScope`] for an empty name, [`InvalidInput::Options`] for a scope
    /// that names no one.
    pub fn require_named(&self, call: &str) -> Result<(), InvalidInput> {
        self.validate()?;
        if self.is_empty() {
            return Err(InvalidInput::Options(format!(
                "{call} needs a user, an agent or a session"
            )));
        }
        Ok(())
    }
}

/// "user ana, agent planner": the fields it sets.
impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = ["user", "agent", "session"]
            .into_iter()
            .zip(self.fields())
            .filter_map(|(field, name)| name.map(|n| format!("{field} {n}")));
        f.write_str(&set.collect::<Vec<_>>().join(", "))
    }
}

/// The user, agent and session of anything that carries the three fields.
pub(crate) fn fields_of<'a>(
    user: &'a Option<String>,
    agent: &'a Option<String>,
    session: &'a Option<String>,
) -> [Option<&'a str>; 3] {
    [user.as_deref(), agent.as_deref(), session.as_deref()]
}

/// True if a memory of scope `has` is within `want`: each field `want` sets, `has` has too.
pub(crate) fn scope_covers(want: [Option<&str>; 3], has: [Option<&str>; 3]) -> bool {
    want.iter()
        .zip(has)
        .all(|(w, h)| w.is_none_or(|w| h == Some(w)))
}

/// A validity window ends after it begins.
pub(crate) fn check_validity(
    from: Timestamp,
    until: Option<Timestamp>,
) -> Result<(), InvalidInput> {
    match until {
        Some(until) if until <= from => Err(InvalidInput::Validity { from, until }),
        _ => Ok(()),
    }
}

/// A scope field is absent or names someone: never the empty string.
fn check_scope(fields: [Option<&str>; 3]) -> Result<(), InvalidInput> {
    for (field, value) in ["user", "agent", "session"].into_iter().zip(fields) {
        if value == Some("") {
            return Err(InvalidInput::EmptyScope(field));
        }
    }
    Ok(())
}

impl MemoryItem {
    /// True if a newer version replaced it.
    pub fn is_superseded(&self) -> bool {
        self.superseded_by.is_some()
    }

    /// True if what it says held at time `t`: `valid_from <= t < valid_until`.
    pub fn valid_at(&self, t: Timestamp) -> bool {
        self.valid_from <= t && self.valid_until.is_none_or(|until| t < until)
    }

    /// Its user, agent and session.
    pub(crate) fn scope_fields(&self) -> [Option<&str>; 3] {
        fields_of(&self.user, &self.agent, &self.session)
    }

    /// Who it belongs to.
    pub fn scope(&self) -> Scope {
        Scope {
            user: self.user.clone(),
            agent: self.agent.clone(),
            session: self.session.clone(),
        }
    }

    /// The content hash duplicates are detected by (namespace, scope, kind, text).
    pub fn content_hash(&self) -> [u8; 32] {
        let (ns, scope) = (&self.namespace, self.scope_fields());
        memory_hash(ns, scope, self.kind, &self.text, self.sources.first())
    }
}

/// A memory's text must say something (not only whitespace or control characters such as
/// `\u{0}`) and fit in `max_bytes`.
pub(crate) fn check_text(text: &str, max_bytes: usize) -> Result<(), InvalidInput> {
    if text.len() > max_bytes {
        return Err(InvalidInput::TextTooLong {
            bytes: text.len(),
            limit: max_bytes,
        });
    }
    if !text.chars().any(|c| !c.is_whitespace() && !c.is_control()) {
        return Err(InvalidInput::EmptyText);
    }
    Ok(())
}

/// A memory's shorter versions fit in `max_bytes` too.
pub(crate) fn check_precisions(
    concise: &Option<String>,
    brief: &Option<String>,
    max_bytes: usize,
) -> Result<(), InvalidInput> {
    for (field, text) in [("concise", concise), ("brief", brief)] {
        if let Some(t) = text.as_ref().filter(|t| t.len() > max_bytes) {
            return Err(InvalidInput::TextTooLong {
                bytes: t.len(),
                limit: max_bytes,
            }
            .at(field));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_kind_names_every_kind_in_order() {
        let text = Kind::named("gossip").unwrap_err().to_string();
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        assert!(text.ends_with(&names.join(", ")), "{text}");
        assert_eq!(Kind::named("fact"), Ok(Kind::Fact));
    }

    #[test]
    fn encoding_round_trips_and_rejects_bad_versions() {
        let item = NewMemory::new("the sky is blue")
            .kind(Kind::Fact)
            .tag("b")
            .tag("a")
            .tag("b")
            .source("doc", Some((1, 5)))
            .into_item(MemoryId::new(7), 99);
        assert_eq!(item.tags, ["a", "b"]);
        let bytes = item.encode();
        assert_eq!(MemoryItem::decode(&bytes).unwrap(), item);
        let mut future = bytes.clone();
        future[0] = 9;
        assert!(MemoryItem::decode(&future)
            .unwrap_err()
            .contains("version 9"));
        assert!(MemoryItem::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(MemoryItem::decode(&[]).is_err());
    }

    /// Items written by versions 1 and 2 of the encoding read back with the later fields at
    /// their defaults (bincode writes a tuple's elements, like a struct's fields, in order and
    /// unprefixed, so nested tuples give the old layouts).
    #[test]
    fn versions_one_and_two_still_decode() {
        let mut item = NewMemory::new("an old memory")
            .kind(Kind::Fact)
            .tag("t")
            .source("doc", Some((2, 9)))
            .into_item(MemoryId::new(5), 1_000);
        item.updated = 2_000;
        item.accessed = 3_000;
        item.count = 2;
        item.pinned = true;
        item.supersedes = Some(MemoryId::new(4));
        let v1 = (
            (
                item.id,
                item.kind,
                &item.text,
                &item.concise,
                &item.brief,
                &item.triple,
            ),
            (
                &item.subject,
                &item.sources,
                &item.namespace,
                &item.tags,
                item.created,
            ),
            (
                item.updated,
                item.accessed,
                item.importance,
                item.outcome,
                item.count,
            ),
            (item.pinned, item.supersedes, item.superseded_by),
        );
        let encode = |version: u8, body: &dyn Fn(&mut Vec<u8>)| {
            let mut out = vec![version];
            body(&mut out);
            out
        };
        let config = bincode::config::standard();
        let one = encode(1, &|out| {
            bincode::encode_into_std_write(v1, out, config).unwrap();
        });
        let decoded = MemoryItem::decode(&one).unwrap();
        let defaults = MemoryItem {
            tier: Tier::Working,
            strength: 0.0,
            decay_anchor: item.created,
            reinforced: 0,
            user: None,
            agent: None,
            session: None,
            valid_from: item.created,
            valid_until: None,
            ..item.clone()
        };
        assert_eq!(decoded, defaults);
        let two = encode(2, &|out| {
            let decay = (Tier::LongTerm, 86_400.0f64, 1_500i64, 3u32);
            bincode::encode_into_std_write((v1, decay), out, config).unwrap();
        });
        let decoded = MemoryItem::decode(&two).unwrap();
        assert_eq!(
            decoded,
            MemoryItem {
                tier: Tier::LongTerm,
                strength: 86_400.0,
                decay_anchor: 1_500,
                reinforced: 3,
                ..defaults
            }
        );
        assert!(MemoryItem::decode(&two[..two.len() - 1]).is_err());
    }

    #[test]
    fn content_hash_separates_namespace_kind_and_text() {
        let a = content_hash("ab", Kind::Fact, "c");
        assert_ne!(a, content_hash("a", Kind::Fact, "bc"));
        assert_ne!(a, content_hash("ab", Kind::Chunk, "c"));
        assert_eq!(a, content_hash("ab", Kind::Fact, "c"));
    }

    #[test]
    fn new_memory_json_rejects_unknown_fields_and_bad_values() {
        let m: NewMemory = serde_json::from_str(r#"{"text":"x","kind":"fact"}"#).unwrap();
        assert_eq!(m.kind, Kind::Fact);
        assert!(serde_json::from_str::<NewMemory>(r#"{"text":"x","colour":1}"#).is_err());
        assert!(serde_json::from_str::<NewMemory>(r#"{"text":"x","kind":"poem"}"#).is_err());
        assert!(NewMemory::new(" ").validate(100, 0).is_err());
        assert!(NewMemory::new("\u{0}").validate(100, 0).is_err());
        assert!(NewMemory::new("\u{0} \u{7f}\t").validate(100, 0).is_err());
        assert!(NewMemory::new("x")
            .importance(2.0)
            .validate(100, 0)
            .is_err());
        assert!(NewMemory::new("x".repeat(101)).validate(100, 0).is_err());
        assert!(NewMemory::new("x".repeat(100)).validate(100, 0).is_ok());
    }
}
