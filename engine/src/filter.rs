//! Which memories a recall, scan or export may touch.

use crate::clock::Timestamp;
use crate::item::{fields_of, scope_covers, Kind, MemoryItem, Scope};

/// Restricts recalls, scans and exports. The default matches every current (not superseded)
/// memory; each set field narrows it further, and all must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryFilter {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only these kinds (empty: any kind).
    pub kinds: Vec<Kind>,
    /// Only memories carrying every one of these tags.
    pub tags: Vec<String>,
    /// Only memories created at or after this time.
    pub created_from: Option<Timestamp>,
    /// Only memories created before this time.
    pub created_until: Option<Timestamp>,
    /// Also superseded versions (out of default ranking).
    pub include_superseded: bool,
    /// Only this user's memories.
    pub user: Option<String>,
    /// Only this agent's memories.
    pub agent: Option<String>,
    /// Only this session's memories.
    pub session: Option<String>,
    /// What was valid at this time (ms): memories with `valid_from <= as_of < valid_until`,
    /// superseded versions included when they held then. `None`: the current versions.
    pub as_of: Option<Timestamp>,
}

impl MemoryFilter {
    /// The default filter: every current memory.
    pub fn new() -> Self {
        Self::default()
    }
    /// True if only `include_superseded` may be set: no namespace, kind, tag or time bound.
    pub fn is_unrestricted(&self) -> bool {
        self.namespace.is_none()
            && self.kinds.is_empty()
            && self.tags.is_empty()
            && self.created_from.is_none()
            && self.created_until.is_none()
            && self.scope_fields().iter().all(Option::is_none)
            && self.as_of.is_none()
    }

    /// Only what was valid at `t` (ms), superseded versions included when they held then.
    pub fn as_of(mut self, t: Timestamp) -> Self {
        self.as_of = Some(t);
        self
    }

    /// Only memories of this scope: each field it sets must match (a field it leaves out is
    /// not constrained: `Scope::user("ana")` reaches all of Ana's agents and sessions).
    pub fn scope(mut self, scope: Scope) -> Self {
        self.user = scope.user;
        self.agent = scope.agent;
        self.session = scope.session;
        self
    }

    /// The scope fields it constrains: user, agent, session.
    pub(crate) fn scope_fields(&self) -> [Option<&str>; 3] {
        fields_of(&self.user, &self.agent, &self.session)
    }

    /// Only this namespace.
    pub fn namespace(mut self, ns: impl Into<String>) -> Self {
        self.namespace = Some(ns.into());
        self
    }
    /// Also this kind.
    pub fn kind(mut self, kind: Kind) -> Self {
        self.kinds.push(kind);
        self
    }
    /// Also requires this tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }
    /// Only memories created in `[from, until)`.
    pub fn created_between(mut self, from: Timestamp, until: Timestamp) -> Self {
        self.created_from = Some(from);
        self.created_until = Some(until);
        self
    }
    /// Also superseded versions.
    pub fn include_superseded(mut self, yes: bool) -> Self {
        self.include_superseded = yes;
        self
    }

    /// True if `item` passes (what the catalog tests without reading items, for one item read).
    pub(crate) fn matches(&self, item: &MemoryItem) -> bool {
        self.namespace
            .as_ref()
            .is_none_or(|ns| *ns == item.namespace)
            && (self.kinds.is_empty() || self.kinds.contains(&item.kind))
            && self.tags.iter().all(|t| item.tags.contains(t))
            && self.created_from.is_none_or(|t| item.created >= t)
            && self.created_until.is_none_or(|t| item.created < t)
            && self.admits_version(item)
            && scope_covers(self.scope_fields(), item.scope_fields())
    }

    /// True if `item` is a version this filter reaches: the current one, any with
    /// `include_superseded`, or the one valid at `as_of`.
    pub(crate) fn admits_version(&self, item: &MemoryItem) -> bool {
        match self.as_of {
            Some(t) => item.valid_at(t),
            None => self.include_superseded || !item.is_superseded(),
        }
    }
}
