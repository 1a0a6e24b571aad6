//! The MCP tools' arguments that the engine's vocabulary does not define yet, with the JSON
//! schema a model reads (schemars, from the doc comments); `remember`, `recall`, `context`
//! and `record_task` take `memloop::RememberRequest`, `RecallRequest`, `ContextParams` and
//! `Task`. The CLI's forwarded commands send the same fields.

use memloop::Scope;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// `update`: a new version of a memory, or new metadata for it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The memory to change (its current version).
    pub id: u64,
    /// The new text: a new version is made and the old one kept as history, its validity
    /// closed where the new one's begins.
    #[serde(default)]
    pub text: Option<String>,
    /// A new shorter version.
    #[serde(default)]
    pub concise: Option<String>,
    /// A new shortest version.
    #[serde(default)]
    pub brief: Option<String>,
    /// Replaces the tags.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// New importance, 0 to 1.
    #[serde(default)]
    pub importance: Option<f32>,
    /// Pin (never forget) or unpin.
    #[serde(default)]
    pub pinned: Option<bool>,
    /// When the new text became true (RFC 3339 or Unix seconds; default now): where the old
    /// version's validity ends.
    #[serde(default)]
    pub valid_from: Option<String>,
    /// When it stopped being true, if it did.
    #[serde(default)]
    pub valid_until: Option<String>,
    /// Act as this user: a memory of another user is not found.
    #[serde(default)]
    pub user: Option<String>,
    /// Act as this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Act within this session.
    #[serde(default)]
    pub session: Option<String>,
}

/// `forget`: one memory by id, or everything of a user, agent or session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetArgs {
    /// The memory to forget; or leave it out and name a scope to erase all of it.
    #[serde(default)]
    pub id: Option<u64>,
    /// Erase everything of this user, from every file of the store.
    #[serde(default)]
    pub user: Option<String>,
    /// Erase everything of this agent (with `user`: of that user's agent only).
    #[serde(default)]
    pub agent: Option<String>,
    /// Erase everything of this session.
    #[serde(default)]
    pub session: Option<String>,
}

/// `remember_conversation`: turns of a chat, each kept with its speaker and time.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationArgs {
    /// The conversation (session) the turns belong to; later calls with the same session
    /// continue it.
    pub session: String,
    /// The turns, in the order they were spoken.
    pub turns: Vec<TurnArgs>,
    /// The user the conversation belongs to.
    #[serde(default)]
    pub user: Option<String>,
    /// The agent it belongs to.
    #[serde(default)]
    pub agent: Option<String>,
}

/// One turn of a conversation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnArgs {
    /// Who spoke.
    pub speaker: String,
    /// What they said.
    pub text: String,
    /// When: RFC 3339 (2023-05-08T13:56:00Z) or Unix seconds.
    pub time: String,
}

/// `feedback`: how much a memory helped.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackArgs {
    /// The memory's id (from recall or context).
    pub id: u64,
    /// 1 harmful, 2 useless, 3 somewhat useful, 4 useful, 5 decisive.
    pub level: u8,
    /// Act as this user: a memory of another user is not found (nor read, rated or
    /// forgotten).
    #[serde(default)]
    pub user: Option<String>,
    /// Act as this agent: a memory of another agent is not found.
    #[serde(default)]
    pub agent: Option<String>,
    /// Act within this session: a memory of another session is not found.
    #[serde(default)]
    pub session: Option<String>,
}

/// `observe`: an event about a subject (a file, a service), merged into its one memory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveArgs {
    /// The subject: a file path, a service name.
    pub subject: String,
    /// created, modified, executed or deleted.
    pub event: String,
    /// What it is now (its content, or a command's output).
    #[serde(default)]
    pub content: Option<String>,
}

/// `get`, `forget`, `explain_decay`: one memory by id.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The memory's id.
    pub id: u64,
    /// Act as this user: a memory of another user is not found (nor read, rated or
    /// forgotten).
    #[serde(default)]
    pub user: Option<String>,
    /// Act as this agent: a memory of another agent is not found.
    #[serde(default)]
    pub agent: Option<String>,
    /// Act within this session: a memory of another session is not found.
    #[serde(default)]
    pub session: Option<String>,
}

impl IdArgs {
    /// The scope the caller acts in.
    pub(crate) fn scope(&self) -> Scope {
        Scope {
            user: self.user.clone(),
            agent: self.agent.clone(),
            session: self.session.clone(),
        }
    }
}

/// `stats`: no arguments.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}
