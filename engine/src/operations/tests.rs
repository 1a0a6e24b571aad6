//! The registry generated from its list: names, docs, schemas, requests and doors.

use super::*;
use crate::vocabulary::Door;
use serde_json::json;

#[test]
fn every_operation_is_named_once_and_found_by_its_name() {
    let mut names: Vec<&str> = Operation::ALL.map(Operation::name).to_vec();
    for op in Operation::ALL {
        assert_eq!(Operation::named(op.name()).unwrap(), op);
        assert!(!op.doc().is_empty());
        assert_eq!(op.request_schema()["type"], "object", "{}", op.name());
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Operation::ALL.len());
    assert!(Operation::named("drop_table").is_err());
}

#[test]
fn the_shared_scope_and_selection_parse_strictly_in_every_request() {
    // The scope's and selection's fields are read beside a request's own ...
    let r = Request::parse(
        "recall",
        json!({"query": "q", "user": "ana", "kinds": ["fact"], "include_superseded": true}),
    )
    .unwrap();
    let Request::Recall(r) = r else {
        panic!("{r:?}")
    };
    assert_eq!(r.scope.user.as_deref(), Some("ana"));
    assert!(r.selection.history);
    let Request::List(l) =
        Request::parse("list", json!({"as_of": 5, "session": "s", "limit": 3})).unwrap()
    else {
        panic!()
    };
    assert_eq!((l.scope.session.as_deref(), l.limit), (Some("s"), Some(3)));
    // ... and a field that none of them takes is refused, in every request that has them.
    for (op, fields) in [
        ("recall", json!({"query": "q", "user": "ana", "usr": "x"})),
        ("context", json!({"query": "q", "explain": true})),
        ("list", json!({"namespace": "n", "page": 2})),
        (
            "remember",
            json!({"text": "t", "agent": "a", "sesion": "s"}),
        ),
        ("update", json!({"id": 1, "user": "u", "colour": "red"})),
        ("feedback", json!({"id": 1, "level": 3, "x": 1})),
        ("get", json!({"id": 1, "history": true})),
        ("forget", json!({"user": "u", "namespace": "n"})),
        ("export", json!({"path": "/tmp/x", "limit": 5})),
        ("sweep", json!({"user": "u", "now": 1})),
        ("stats", json!({"verbose": true})),
        (
            "remember_conversation",
            json!({"session": "s", "turns": [], "tags": []}),
        ),
    ] {
        assert!(Request::parse(op, fields.clone()).is_err(), "{op} {fields}");
    }
    // A wrong type in a shared part is refused too.
    assert!(Request::parse("recall", json!({"query": "q", "user": 7})).is_err());
    assert!(Request::parse("recall", json!({"query": "q", "history": "yes"})).is_err());
}

#[test]
fn the_doors_that_lack_an_operation_say_why() {
    for op in Operation::ALL {
        for door in Door::ALL {
            if let Some(why) = op.absent_from(door) {
                assert!(why.len() > 20, "{} {door:?}", op.name());
            }
        }
        assert!(op.on(Door::Rust) && op.on(Door::Python) && op.on(Door::Node));
    }
    assert!(!Operation::Export.on(Door::Mcp));
    assert!(Operation::List.on(Door::Mcp) && Operation::List.on(Door::Cli));
}

#[test]
fn every_request_sent_as_its_fields_is_read_back_the_same() {
    // What a door sends to another process (`Request::fields`) parses to the same request.
    let mut covered = Vec::new();
    for (op, fields) in [
        (
            "remember",
            json!({"text": "t", "kind": "fact", "tags": ["a"], "importance": 0.5,
                   "valid_from": "2024-05-01T00:00:00Z", "valid_until": 1714521600000_u64,
                   "user": "u", "head": "h", "relation": "r", "tail": "x"}),
        ),
        (
            "update",
            json!({"id": 3, "text": "t", "tags": [], "pinned": true, "session": "s"}),
        ),
        (
            "remember_conversation",
            json!({"session": "s", "turns": [{"speaker": "ana", "text": "hi",
                   "time": "2024-05-01T00:00:00Z"}]}),
        ),
        (
            "recall",
            json!({"query": "q", "k": 3, "strategy": "rerank", "explain": true,
                   "kinds": ["fact"], "history": true, "as_of": "1714521600", "agent": "a"}),
        ),
        (
            "context",
            json!({"query": "q", "budget": 100, "mode": "documents", "key_share": 0.5,
                   "namespace": "n"}),
        ),
        ("feedback", json!({"id": 1, "level": 4})),
        (
            "record_task",
            json!({"request": "r", "steps": ["a", "b"], "outcome": "failure",
                   "reflection": "x"}),
        ),
        (
            "observe",
            json!({"subject": "f.rs", "event": "modified", "content": "c"}),
        ),
        ("get", json!({"id": 7, "user": "u"})),
        ("list", json!({"limit": 3, "offset": 2, "tags": ["t"]})),
        ("forget", json!({"user": "u"})),
        ("explain_decay", json!({"id": 2})),
        ("stats", json!({})),
        ("sweep", json!({"agent": "a"})),
        (
            "export",
            json!({"path": "/tmp/x.mlx", "format": "parquet", "since": 4, "plaintext": true}),
        ),
        ("import", json!({"path": "/tmp/x.mlx"})),
        ("sync", json!({"remote": "file:///tmp/r", "compact": true})),
    ] {
        let request = Request::parse(op, fields.clone()).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(request.operation().name(), op);
        let sent = request.fields();
        assert_eq!(
            Request::parse(op, sent.clone()).unwrap(),
            request,
            "{op}: {sent}"
        );
        covered.push(request.operation());
    }
    assert_eq!(
        covered,
        Operation::ALL,
        "every operation, in the registry's order"
    );
}
