#![allow(dead_code)] // each including test uses a part of it

//! How one door's answer to a case of `contract/cases.json` is held to the case. Every Rust
//! test file that runs the table (engine, CLI, C) includes this file with `#[path]`; the MCP
//! and Python suites carry the same rule in Python.

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
