//! Answers as JavaScript sees them: the engine's serde output with camelCase keys, and every
//! integer a `number` when it is one exactly (up to 2^53 − 1), a `bigint` above, so an id
//! never rounds silently.

use serde::Serialize;
use serde_json::{Map, Number, Value};

/// The largest integer a JavaScript number holds exactly.
pub const MAX_SAFE: u64 = (1 << 53) - 1;

/// `value` as a plain JavaScript object: camelCase keys, safe numbers.
pub fn plain(value: &impl Serialize) -> napi::Result<Value> {
    let v = serde_json::to_value(value).map_err(|e| {
        crate::errors::failure("store", &format!("an answer failed to encode: {e}"))
    })?;
    Ok(for_js(v))
}

fn for_js(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (camel_case(&k), for_js(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(for_js).collect()),
        Value::Number(n) => Value::Number(safe_number(n)),
        other => other,
    }
}

/// An integer up to 2^53 − 1 in magnitude as a float (a JavaScript number); a larger `u64`
/// stays one (napi makes it a `bigint`).
fn safe_number(n: Number) -> Number {
    if let Some(u) = n.as_u64() {
        if u <= MAX_SAFE {
            return Number::from_f64(u as f64).unwrap_or(n);
        }
        return n;
    }
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= MAX_SAFE {
            return Number::from_f64(i as f64).unwrap_or(n);
        }
    }
    n
}

/// Whether every number in `v` is a double, as [`plain`] leaves safe integers: a JSON text of
/// it reads back the same numbers in JavaScript.
pub fn all_doubles(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().all(all_doubles),
        Value::Object(map) => map.values().all(all_doubles),
        _ => true,
    }
}

/// A request's JavaScript fields as the vocabulary names them: camelCase keys made
/// snake_case (`keyShare` → `key_share`), at every depth (a conversation's turns).
pub fn from_js(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (snake_case(&k), from_js(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(from_js).collect()),
        Value::Number(n) => Value::Number(integral(n)),
        other => other,
    }
}

/// A JavaScript number that holds an integer exactly (every number arrives as a double) as an
/// integer, so an id, a count or a time in milliseconds reads as the integer it is.
fn integral(n: Number) -> Number {
    match n.as_f64() {
        Some(x) if n.is_f64() && x.fract() == 0.0 && x.abs() <= MAX_SAFE as f64 => {
            Number::from(x as i64)
        }
        _ => n,
    }
}

/// `validFrom` → `valid_from`.
pub fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `valid_from` → `validFrom`.
pub fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_camel_case_and_ids_never_round() {
        let v = for_js(serde_json::json!({
            "valid_from": 1_700_000_000_000_u64,
            "id": u64::MAX,
            "safe_id": MAX_SAFE,
            "list": [{"superseded_by": null}],
        }));
        assert_eq!(v["validFrom"].as_f64(), Some(1_700_000_000_000.0));
        assert_eq!(v["id"].as_u64(), Some(u64::MAX));
        assert_eq!(v["safeId"].as_f64(), Some(MAX_SAFE as f64));
        assert!(v["list"][0]["supersededBy"].is_null());
    }

    #[test]
    fn request_keys_read_back_as_the_vocabulary_names_them() {
        let v =
            from_js(serde_json::json!({"keyShare": 0.5, "turns": [{"speaker": "a"}], "asOf": 1}));
        assert_eq!(
            v,
            serde_json::json!({"key_share": 0.5, "turns": [{"speaker": "a"}], "as_of": 1})
        );
        for key in ["valid_from", "as_of", "id", "key_share"] {
            assert_eq!(snake_case(&camel_case(key)), key);
        }
    }
}
