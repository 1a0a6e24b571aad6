//! The cross-door contract (`contract/cases.json`) on the Rust API: the requests parsed as
//! `RecallRequest` / `ContextParams`, run on a store seeded with the table's memories; an
//! `open` case's as `OpenRequest`, opening a fresh store. The CLI,
//! MCP, C and Python run the same table (cli/tests/contract.rs,
//! cli/tests/mcp_clients/test_contract.py, ffi/tests/c/contract.c, python/tests/test_contract.py).

use memloop::{
    requests::ContextParams, requests::OpenRequest, requests::RecallRequest,
    requests::RememberRequest, Error, Memory, MemoryId, Options,
};
use serde_json::Value;

use crate::common::hashing;

#[path = "../../../contract/check.rs"]
mod check;
use check::{answers, bless, check, check_whole, record, table, whole_answer_calls, Whole};

/// A case's outcome as the table writes it: the ids, or the error code's name.
fn outcome(memory: &Memory, op: &str, request: &Value) -> Result<Vec<MemoryId>, String> {
    // A request that does not parse is invalid input, on every door.
    let invalid = |_: serde_json::Error| "invalid_input".to_string();
    let engine = |e: Error| e.code().name().to_string();
    match op {
        "recall" => {
            let r: RecallRequest = serde_json::from_value(request.clone()).map_err(invalid)?;
            let (query, strategy) = r.into_query().map_err(engine)?;
            let hits = memory.retrieve(&query, strategy).map_err(engine)?;
            Ok(hits.iter().map(|h| h.item.id).collect())
        }
        "context" => {
            let r: ContextParams = serde_json::from_value(request.clone()).map_err(invalid)?;
            let context = memory
                .context(&r.into_request().map_err(engine)?)
                .map_err(engine)?;
            Ok(context.blocks.iter().map(|b| b.id).collect())
        }
        "remember" => {
            let r: RememberRequest = serde_json::from_value(request.clone()).map_err(invalid)?;
            let id = memory.remember(r.into_new_memory().map_err(engine)?);
            Ok(vec![id.map_err(engine)?])
        }
        "open" => {
            // A fresh store with the request's options (the test embedder in place of a model).
            let mut r: OpenRequest = serde_json::from_value(request.clone()).map_err(invalid)?;
            r.hashing_embedder = Some(256);
            let options = Options::from_request(r).map_err(|e| engine(e.into()))?;
            let dir = crate::common::tempdir();
            Memory::open(dir.path().join("opened"), options).map_err(engine)?;
            Ok(Vec::new())
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn the_rust_api_keeps_the_contract() {
    let dir = crate::common::tempdir();
    let memory = Memory::open(dir.path(), hashing(256, &memloop::Clock::System)).unwrap();
    let table = table();
    for (i, seed) in table["memories"].as_array().unwrap().iter().enumerate() {
        let m: RememberRequest = serde_json::from_value(seed.clone()).unwrap();
        let id = memory.remember(m.into_new_memory().unwrap()).unwrap();
        assert_eq!(id, MemoryId::new(i as u64 + 1), "ids follow the seeds");
    }
    let cases = table["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let got = outcome(&memory, c["op"].as_str().unwrap(), &c["request"])
                .map(|ids| ids.into_iter().map(MemoryId::get).collect());
            check(c, &got).err()
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The contract store: the table's `store` options, seeded with its memories through the
/// registry's `remember`.
fn contract_store(dir: &std::path::Path, table: &Value) -> Memory {
    let request: OpenRequest = serde_json::from_value(table["store"].clone()).unwrap();
    let memory = Memory::open(dir, Options::from_request(request).unwrap()).unwrap();
    for (i, seed) in table["memories"].as_array().unwrap().iter().enumerate() {
        let request = memloop::Request::parse("remember", seed.clone()).unwrap();
        let Ok(memloop::Answer::Remember(done)) = memory.call(request) else {
            panic!("seed {i}")
        };
        assert_eq!(done.id, MemoryId::new(i as u64 + 1), "ids follow the seeds");
    }
    memory
}

/// One whole answer of the Rust door: `Memory::call`'s answer as JSON, or the error's code.
fn whole(memory: &Memory, op: &str, request: &Value) -> Whole {
    let code = |e: Error| e.code().name().to_string();
    let request = memloop::Request::parse(op, request.clone()).map_err(|e| code(e.into()))?;
    memory.call(request).map(|a| a.to_json()).map_err(code)
}

#[test]
fn the_rust_api_gives_the_registrys_whole_answers() {
    let dir = crate::common::tempdir();
    let table = table();
    let memory = contract_store(dir.path(), &table);
    let got: Vec<Value> = whole_answer_calls(&table)
        .iter()
        .map(|(name, op, request)| record(name, &whole(&memory, op, request)))
        .collect();
    if bless(&got) {
        return;
    }
    check_whole(&got, &answers()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_table_covers_every_operation_of_the_registry() {
    // Each operation is run by the whole-answer pass, or the table says why it is not.
    let table = table();
    let run: std::collections::BTreeSet<String> = whole_answer_calls(&table)
        .into_iter()
        .map(|(_, op, _)| op)
        .collect();
    for op in memloop::Operation::ALL {
        let why = table["not_compared"][op.name()].as_str();
        assert!(
            run.contains(op.name()) != why.is_some(),
            "{}: run by the table, or named in not_compared with the reason, not both",
            op.name()
        );
    }
    for op in &run {
        assert!(
            op == "drop_table" || memloop::Operation::named(op).is_ok(),
            "the table runs `{op}`, which the registry does not have"
        );
    }
}
