//! The MCP tools' arguments that the engine's vocabulary does not define yet (an
//! observation, none), with the JSON schema a model reads (schemars, from the doc comments).
//! Every other tool takes the engine's request type (`memloop::RememberRequest`,
//! `UpdateRequest`, `ConversationRequest`, `RecallRequest`, `ContextParams`, `Task`,
//! `FeedbackRequest`, `ForgetRequest`, `IdRequest`). The CLI's forwarded commands send the
//! same fields.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

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
