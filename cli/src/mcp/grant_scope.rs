//! A scoped token's tool call, bound to its scope: the scope's fields set in the arguments
//! (the request vocabulary's `user` / `agent`), a different one given refused, and the tools
//! that have no scope (`observe`, `record_task`, `stats`) refused. The engine then acts in that
//! scope (`recall` filters by it, `get` / `update` / `forget` / `feedback` / `explain_decay`
//! answer "not found" outside it, `remember` stores into it), so the binding holds in the
//! engine call, not in this layer alone.

use serde_json::Value;

use super::tokens::Grant;

/// `arguments` of tool `name` as `grant` may send them.
///
/// # Errors
/// The reason, for a tool without a scope or arguments naming another scope.
pub fn bind(grant: &Grant, name: &str, arguments: Value) -> Result<Value, String> {
    let bound = [("user", &grant.scope.user), ("agent", &grant.scope.agent)];
    if bound.iter().all(|(_, v)| v.is_none()) {
        return Ok(arguments);
    }
    let who = bound
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
        .collect::<Vec<_>>()
        .join(", ");
    if !memloop::Operation::named(name).is_ok_and(memloop::Operation::scoped) {
        return Err(format!(
            "this token acts as {who}; `{name}` reaches the whole store, so it is not allowed"
        ));
    }
    let mut map = match arguments {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        _ => return Ok(arguments), // the tool refuses it as it refuses any non-object
    };
    for (key, value) in bound {
        let Some(value) = value else { continue };
        match map.get(key) {
            None | Some(Value::Null) => {
                map.insert(key.to_string(), Value::String(value.clone()));
            }
            Some(Value::String(given)) if given == value => {}
            Some(other) => {
                return Err(format!(
                    "this token acts as {who}; the call names {key} {other}"
                ))
            }
        }
    }
    Ok(Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn alice() -> Grant {
        Grant {
            scope: memloop::Scope {
                user: Some("alice".into()),
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_scoped_token_acts_as_its_scope() {
        let g = alice();
        assert_eq!(
            bind(&g, "recall", json!({"query": "q"})).unwrap(),
            json!({"query": "q", "user": "alice"})
        );
        assert_eq!(
            bind(&g, "get", json!({"id": 3, "user": "alice"})).unwrap(),
            json!({"id": 3, "user": "alice"})
        );
        assert!(bind(&g, "recall", json!({"query": "q", "user": "bob"})).is_err());
        assert!(bind(&g, "forget", json!({"user": 7})).is_err());
        assert!(bind(&g, "stats", Value::Null).is_err());
        assert!(bind(&g, "observe", json!({})).is_err());
        assert_eq!(
            bind(&Grant::default(), "stats", Value::Null).unwrap(),
            Value::Null
        );
    }
}
