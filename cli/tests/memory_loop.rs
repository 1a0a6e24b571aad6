//! The memory-loop commands through the real binary and the real default model: context,
//! feedback, observe, task, recall --strategy --explain, and their errors.

mod common;

use common::memloop_in;
use serde_json::Value;

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn task_observe_feedback_and_context_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let r = memloop_in(
        s,
        &[
            "task",
            "--request",
            "deploy the api to staging",
            "--outcome",
            "failure",
            "--step",
            "build the docker image",
            "--step",
            "apply the helm chart without migrations",
            "--json",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let ids = json(&r.out);
    let failed = ids["task"].as_u64().unwrap();
    assert!(ids["reflection"].as_u64().is_some());
    let r = memloop_in(
        s,
        &[
            "task",
            "--request",
            "deploy the api to staging",
            "--outcome",
            "success",
            "--step",
            "run the migrations",
            "--step",
            "apply the helm chart",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let succeeded: u64 = r.out.trim().parse().unwrap();
    assert_ne!(failed, succeeded);

    let r = memloop_in(
        s,
        &["observe", "src/main.rs", "created", "prints hello"],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let subject: u64 = r.out.trim().parse().unwrap();
    let r = memloop_in(
        s,
        &[
            "observe",
            "src/main.rs",
            "modified",
            "parses arguments with clap",
        ],
        "",
    );
    assert_eq!(r.out.trim().parse::<u64>().unwrap(), subject);
    let r = memloop_in(s, &["get", &subject.to_string(), "--json"], "");
    let item = json(&r.out);
    assert!(item["text"]
        .as_str()
        .unwrap()
        .contains("parses arguments with clap"));
    assert_eq!(item["count"], 2);

    let r = memloop_in(s, &["feedback", &succeeded.to_string(), "5", "--json"], "");
    assert!(r.ok, "{}", r.err);
    assert_eq!(json(&r.out)["count"], 1);

    for strategy in ["single", "rerank", "iterative"] {
        let r = memloop_in(
            s,
            &[
                "context",
                "how do I deploy the api?",
                "--budget",
                "60",
                "--strategy",
                strategy,
                "--json",
            ],
            "",
        );
        assert!(r.ok, "{strategy}: {}", r.err);
        let ctx = json(&r.out);
        assert!(ctx["tokens"].as_u64().unwrap() <= 60, "{ctx}");
        let blocks = ctx["blocks"].as_array().unwrap();
        assert!(!blocks.is_empty());
        assert_eq!(blocks[0]["label"], "Key Reference");
        for b in blocks {
            assert!(["original", "concise", "brief"].contains(&b["precision"].as_str().unwrap()));
            assert!(b["id"].as_u64().is_some() && b["text"].as_str().is_some());
        }
    }
    let r = memloop_in(s, &["context", "deploy", "--budget", "500"], "");
    assert!(r.ok && r.out.starts_with("Key Reference:\n"), "{}", r.out);

    let r = memloop_in(
        s,
        &[
            "recall",
            "deploy the api",
            "--strategy",
            "rerank",
            "--explain",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    assert!(
        r.out.contains("lexical") && r.out.contains("fused"),
        "{}",
        r.out
    );
    let r = memloop_in(
        s,
        &["recall", "deploy the api", "--strategy", "rerank", "--json"],
        "",
    );
    let hits = &json(&r.out)["hits"];
    assert!(hits[0]["explain"]["lexical"].as_f64().unwrap() > 0.0);
}

#[test]
fn loop_commands_reject_bad_input_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let r = memloop_in(s, &["remember", "a memory"], "");
    let id = r.out.trim().to_string();
    for (args, needle) in [
        (vec!["feedback", id.as_str(), "0"], "not in 1..=5"),
        (vec!["feedback", id.as_str(), "6"], "not in 1..=5"),
        (vec!["feedback", "999", "3"], "999"),
        (
            vec!["observe", "f.txt", "renamed"],
            "unknown event \"renamed\", not one of created, modified, executed, deleted",
        ),
        (
            vec!["export", "x.mlx", "--since", "3"],
            "since needs format arrow or parquet",
        ),
        (
            vec!["export", "x.mlx", "--format", "csv"],
            "format \"csv\" is not one of mlx, arrow, parquet",
        ),
        (
            vec!["import", "x.mlx", "--format", "csv"],
            "format \"csv\" is not one of mlx, arrow, parquet",
        ),
        (vec!["observe", " ", "created"], "subject is empty"),
        (
            vec!["task", "--request", "x", "--outcome", "maybe"],
            "possible values",
        ),
        (
            vec!["task", "--request", " ", "--outcome", "success"],
            "request is empty",
        ),
        (
            vec!["context", "q", "--budget", "10", "--strategy", "magic"],
            "unknown strategy",
        ),
        (
            vec!["context", " ", "--budget", "10"],
            "query text is empty",
        ),
        (
            vec!["recall", "q", "--strategy", "magic"],
            "unknown strategy",
        ),
    ] {
        let r = memloop_in(s, &args, "");
        assert!(!r.ok, "{args:?} succeeded");
        assert!(r.err.contains(needle), "{args:?}: {}", r.err);
    }
    // The vocabulary's checks are invalid input (exit 3), not a parse failure of the flags.
    for args in [
        &["observe", "f.txt", "renamed"][..],
        &["export", "x.mlx", "--format", "csv"],
        &["import", "x.mlx", "--format", "csv"],
    ] {
        let r = memloop_in(s, args, "");
        assert_eq!(r.code, Some(3), "{args:?}: {}", r.err);
    }
    // A budget of zero is valid and gives an empty context.
    let r = memloop_in(s, &["context", "a memory", "--budget", "0", "--json"], "");
    assert!(r.ok, "{}", r.err);
    assert_eq!(json(&r.out)["tokens"], 0);
}
