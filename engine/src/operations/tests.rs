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
