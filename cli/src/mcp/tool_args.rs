//! The MCP tools' arguments that the engine's vocabulary does not define (none), with the
//! JSON schema a model reads (schemars, from the doc comments). Every other tool takes the
//! engine's request type (`memloop::RememberRequest`, `UpdateRequest`, `ConversationRequest`,
//! `RecallRequest`, `ContextParams`, `Task`, `FeedbackRequest`, `ForgetRequest`, `IdRequest`,
//! `ObserveRequest`). The CLI's forwarded commands send the
//! same fields.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// `stats`: no arguments.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}
