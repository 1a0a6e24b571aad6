//! The MCP tools' arguments that the engine's vocabulary does not define yet (a
//! conversation's turns, an observation, none), with the JSON schema a model reads
//! (schemars, from the doc comments). Every other tool takes the engine's request type
//! (`memloop::RememberRequest`, `UpdateRequest`, `RecallRequest`, `ContextParams`, `Task`,
//! `FeedbackRequest`, `ForgetRequest`, `IdRequest`). The CLI's forwarded commands send the
//! same fields.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

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

/// `stats`: no arguments.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}
