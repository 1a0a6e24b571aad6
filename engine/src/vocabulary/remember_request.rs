//! A memory to remember as every door that takes fields asks for it (the MCP `remember`
//! tool and its JSON schema, the command line's `remember` in process and forwarded): times
//! as text or milliseconds, a triple as three fields, the kind by name. It becomes the
//! engine's [`NewMemory`] through [`RememberRequest::into_new_memory`], whose checks are
//! `remember`'s.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::when::When;
use crate::error::Result;
use crate::invalid::InvalidInput;
use crate::item::{Kind, NewMemory, Scope};

/// `remember`: store one memory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberRequest {
    /// The memory in full: a fact, an observation, a decision, a chunk of a document.
    pub text: String,
    /// What it is: chunk, fact, triple, summary, task, reflection, subject or document
    /// (default chunk; a fact or triple that says something new about the same thing replaces
    /// the old version, which is kept as history).
    #[serde(default)]
    pub kind: Option<String>,
    /// A shorter version (one or two sentences) served when the context is tight.
    #[serde(default)]
    pub concise: Option<String>,
    /// The shortest version (a few words) served when the context is tighter still.
    #[serde(default)]
    pub brief: Option<String>,
    /// Labels to filter by later.
    #[serde(default)]
    pub tags: Vec<String>,
    /// A separate space of memories (a user, a project); default "default".
    #[serde(default)]
    pub namespace: Option<String>,
    /// How much it matters, 0 to 1 (default 0.5); important memories are forgotten later.
    #[serde(default)]
    pub importance: Option<f32>,
    /// For a triple: the subject entity (give head, relation and tail together).
    #[serde(default)]
    pub head: Option<String>,
    /// For a triple: the relation.
    #[serde(default)]
    pub relation: Option<String>,
    /// For a triple: the object entity.
    #[serde(default)]
    pub tail: Option<String>,
    /// Whose memory it is: a user (one app serves many; memories of one user never reach
    /// another's recall or context), an agent, a session.
    #[serde(flatten)]
    pub scope: Scope,
    /// When what it says became true: RFC 3339 (2024-05-01T00:00:00Z) or Unix seconds as
    /// text, or milliseconds as an integer; default now.
    #[serde(default)]
    pub valid_from: Option<When>,
    /// When it stopped being true, if it did.
    #[serde(default)]
    pub valid_until: Option<When>,
}

impl RememberRequest {
    /// The engine's new memory: the kind by name, the triple whole, the times read.
    ///
    /// # Errors
    /// [`InvalidInput`] naming the field: an unknown kind, a triple given in part, a time
    /// that is not one. The memory's own checks run when it is remembered.
    pub fn into_new_memory(self) -> Result<NewMemory> {
        let mut m = NewMemory::new(self.text);
        if let Some(name) = &self.kind {
            m = m.kind(Kind::named(name)?);
        }
        match (&self.head, &self.relation, &self.tail) {
            (Some(h), Some(r), Some(t)) => m = m.triple(h, r, t),
            (None, None, None) => {}
            _ => {
                return Err(InvalidInput::Field {
                    field: "triple",
                    reason: "needs head, relation and tail together".into(),
                }
                .into())
            }
        }
        let time = |w: &Option<When>, field| w.as_ref().map(|w| w.millis(field)).transpose();
        m.valid_from = time(&self.valid_from, "valid_from")?;
        m.valid_until = time(&self.valid_until, "valid_until")?;
        m.concise = self.concise;
        m.brief = self.brief;
        m.tags = self.tags;
        m.namespace = self.namespace;
        m.importance = self.importance;
        m.user = self.scope.user;
        m.agent = self.scope.agent;
        m.session = self.scope.session;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn fields_become_the_new_memory() {
        let r: RememberRequest = serde_json::from_str(
            r#"{"text": "Alice lives in Berlin.", "kind": "triple", "head": "Alice",
                "relation": "lives in", "tail": "Berlin", "user": "alice",
                "valid_from": "2024-06-01T00:00:00Z", "valid_until": 1893456000000}"#,
        )
        .unwrap();
        let m = r.into_new_memory().unwrap();
        assert_eq!(m.kind, Kind::Triple);
        assert_eq!(m.triple.unwrap().tail, "Berlin");
        assert_eq!(m.user.as_deref(), Some("alice"));
        assert_eq!(m.valid_from, Some(1_717_200_000_000));
        assert_eq!(m.valid_until, Some(1_893_456_000_000));
    }

    #[test]
    fn a_partial_triple_an_unknown_kind_and_a_bad_time_are_refused() {
        for json in [
            r#"{"text": "x", "head": "Alice"}"#,
            r#"{"text": "x", "kind": "poem"}"#,
            r#"{"text": "x", "valid_from": "soon"}"#,
        ] {
            let r: RememberRequest = serde_json::from_str(json).unwrap();
            assert!(
                matches!(r.into_new_memory(), Err(Error::InvalidInput(_))),
                "{json}"
            );
        }
    }
}
