//! A conversation's turns as every door gives them: each turn's time as text (RFC 3339 or
//! Unix seconds) or milliseconds, the session they belong to and whose they are. It becomes
//! the engine's [`Turn`]s and [`Scope`] through [`ConversationRequest::into_parts`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::turn::Turn;
use super::when::When;
use crate::error::Result;
use crate::invalid::InvalidInput;
use crate::item::Scope;

/// `remember_conversation`: turns of a chat, each kept with its speaker and time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationRequest {
    /// The conversation's id; later calls with the same id continue it.
    pub session: String,
    /// The turns, in order.
    pub turns: Vec<TurnRequest>,
    /// Whose conversation it is (its user and agent; a session given must be `session`).
    #[serde(flatten, serialize_with = "owner")]
    pub scope: Scope,
}

/// A conversation's scope as it is written beside its own `session`: its user and agent, each
/// only when given (a `session` key written twice would be read back as the second).
fn owner<S: serde::Serializer>(scope: &Scope, serializer: S) -> Result<S::Ok, S::Error> {
    /// The user and agent of a conversation.
    #[derive(Serialize)]
    struct Owner<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        user: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<&'a str>,
    }
    Owner {
        user: scope.user.as_deref(),
        agent: scope.agent.as_deref(),
    }
    .serialize(serializer)
}

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnRequest {
    /// Who spoke.
    pub speaker: String,
    /// What they said.
    pub text: String,
    /// When: RFC 3339 or Unix seconds as text, or milliseconds as an integer.
    pub time: When,
}

impl ConversationRequest {
    /// The session, its turns and the scope they are remembered in.
    ///
    /// # Errors
    /// [`InvalidInput`] naming the turn whose time is not one.
    pub fn into_parts(self) -> Result<(String, Vec<Turn>, Scope)> {
        let turns = (self.turns.into_iter().enumerate())
            .map(|(i, t)| {
                let time = t
                    .time
                    .millis("time")
                    .map_err(|e| e.at(format!("turn {i}")))?;
                Ok(Turn::new(t.speaker, t.text, time))
            })
            .collect::<std::result::Result<Vec<Turn>, InvalidInput>>()?;
        Ok((self.session, turns, self.scope))
    }
}
