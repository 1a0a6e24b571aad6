#![allow(dead_code)] // each including test uses a part of it

//! How one door's answer to a case of `contract/cases.json` is held to the case. Every Rust
//! test file that runs the table (engine, CLI, C) includes this file with `#[path]`; the MCP
//! and Python suites carry the same rule in Python (`contract/whole.py`).

use serde_json::Value;

/// The table, read from the repository's `contract/` beside the including crate.
pub fn table() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../contract/cases.json");
    let text = std::fs::read_to_string(&path).expect("contract/cases.json");
    serde_json::from_str(&text).expect("the contract table parses")
}

/// A door's answer: the ids of the hits or blocks in order, or the error code's name.
pub type Answer = Result<Vec<u64>, String>;

/// The ids of a JSON array of hits or blocks, each with an `id`.
pub fn ids_of(hits: &Value) -> Vec<u64> {
    let array = hits.as_array().expect("an array of hits or blocks");
    array
        .iter()
        .map(|h| h["id"].as_u64().expect("an id"))
        .collect()
}

/// `Ok` when `got` is what `case` wants; `Err` says how it differs.
pub fn check(case: &Value, got: &Answer) -> Result<(), String> {
    let list = |key: &str| -> Vec<u64> {
        let mut ids: Vec<u64> = case[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        if key == "ids_any_order" {
            ids.sort_unstable();
        }
        ids
    };
    let fine = match got {
        Err(code) => case["error"].as_str() == Some(code.as_str()),
        Ok(got) if case.get("ids").is_some() => *got == list("ids"),
        Ok(got) if case.get("ids_any_order").is_some() => {
            let mut sorted = got.clone();
            sorted.sort_unstable();
            sorted == list("ids_any_order")
        }
        Ok(got) => case["count"].as_u64() == Some(got.len() as u64),
    };
    if fine {
        Ok(())
    } else {
        Err(format!("{}: got {got:?}, want {case}", case["name"]))
    }
}

/// The whole-answer pass's requests, in order: the table's cases but `open`, then its calls,
/// each as (name, operation, request).
pub fn whole_answer_calls(table: &Value) -> Vec<(String, String, Value)> {
    let cases = table["cases"].as_array().unwrap().iter();
    let calls = table["calls"].as_array().unwrap().iter();
    cases
        .chain(calls)
        .filter(|c| c["op"] != "open")
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["op"].as_str().unwrap().to_string(),
                c["request"].clone(),
            )
        })
        .collect()
}

/// The recorded whole answers (contract/answers.json): one `{"name", "answer"}` or
/// `{"name", "error"}` per whole-answer call, in order.
pub fn answers() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../contract/answers.json");
    let text = std::fs::read_to_string(&path).expect("contract/answers.json");
    serde_json::from_str(&text).expect("contract/answers.json parses")
}

/// A door's whole answer to one call: the answer's JSON, or the error code's name.
pub type Whole = Result<Value, String>;

/// The record of `got` for call `name`, as answers.json keeps it.
pub fn record(name: &str, got: &Whole) -> Value {
    match got {
        Ok(answer) => serde_json::json!({"name": name, "answer": answer}),
        Err(code) => serde_json::json!({"name": name, "error": code}),
    }
}

/// `Ok` when every call's answer equals the recorded one; `Err` lists each difference with the
/// path of its first differing field.
pub fn check_whole(got: &[Value], want: &Value) -> Result<(), String> {
    let want = want.as_array().expect("answers.json is an array");
    let mut problems = Vec::new();
    if got.len() != want.len() {
        problems.push(format!("{} answers, want {}", got.len(), want.len()));
    }
    for (g, w) in got.iter().zip(want) {
        if let Some(path) = first_difference(g, w, String::new()) {
            problems.push(format!(
                "{}: differs at `{path}`: got {}, want {}",
                w["name"],
                at(g, &path),
                at(w, &path)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The path (`answer/hits/0/score`) of the first field where `a` and `b` differ.
pub fn first_difference(a: &Value, b: &Value, path: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (u, v) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if x.contains_key(k) != y.contains_key(k) {
                    return Some(format!("{path}/{k}"));
                }
                first_difference(u, v, format!("{path}/{k}"))
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, format!("{path}/{i}"))),
        (Value::Number(x), Value::Number(y)) => {
            let same = match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p == q,
                _ => x == y,
            };
            (!same).then_some(path)
        }
        _ => (a != b).then_some(path),
    }
}

/// The value at `path` in `v` (for messages).
fn at(v: &Value, path: &str) -> String {
    let mut cur = v;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        cur = match cur {
            Value::Object(m) => m.get(part).unwrap_or(&Value::Null),
            Value::Array(a) => part
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get(i))
                .unwrap_or(&Value::Null),
            _ => &Value::Null,
        };
    }
    let text = cur.to_string();
    text.chars().take(200).collect()
}

/// Writes `got` as the recorded answers (`MEMLOOP_BLESS_CONTRACT=1`); true when it did.
pub fn bless(got: &[Value]) -> bool {
    if std::env::var_os("MEMLOOP_BLESS_CONTRACT").is_none() {
        return false;
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../contract/answers.json");
    let mut text = String::from("[\n");
    for (i, g) in got.iter().enumerate() {
        text.push_str("  ");
        text.push_str(&g.to_string());
        text.push_str(if i + 1 < got.len() { ",\n" } else { "\n" });
    }
    text.push_str("]\n");
    std::fs::write(path, text).expect("write contract/answers.json");
    true
}
