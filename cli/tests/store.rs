//! The store commands through the real binary and the real default model.

mod common;

use common::memloop_in;
use serde_json::Value;

#[test]
fn remember_get_recall_forget_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let r = memloop_in(
        s,
        &[
            "remember",
            "Alice prefers tea over coffee",
            "--kind",
            "fact",
            "--namespace",
            "alice",
            "--tag",
            "prefs",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let alice: u64 = r.out.trim().parse().unwrap();
    let r = memloop_in(
        s,
        &["remember", "The CI pipeline caches cargo builds", "--json"],
        "",
    );
    let ci: Value = serde_json::from_str(r.out.trim()).unwrap();
    let ci = ci["id"].as_u64().unwrap();
    assert_ne!(alice, ci);
    // An exact duplicate prints the survivor's id.
    let r = memloop_in(
        s,
        &[
            "remember",
            "Alice prefers tea over coffee",
            "--kind",
            "fact",
            "--namespace",
            "alice",
        ],
        "",
    );
    assert_eq!(r.out.trim().parse::<u64>().unwrap(), alice);

    let r = memloop_in(s, &["get", &alice.to_string(), "--json"], "");
    let item: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(item["text"], "Alice prefers tea over coffee");
    assert_eq!(item["kind"], "fact");
    assert_eq!(item["count"], 2);
    assert_eq!(item["tags"][0], "prefs");

    let r = memloop_in(
        s,
        &[
            "recall",
            "what does Alice like to drink?",
            "--k",
            "2",
            "--json",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let answer: Value = serde_json::from_str(&r.out).unwrap();
    let hits = answer["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["id"], alice);
    assert!(hits[0]["score"].as_f64().unwrap() > hits[1]["score"].as_f64().unwrap());
    for f in ["id", "score", "rank", "kind", "text", "namespace"] {
        assert!(hits[0].get(f).is_some(), "hit lacks {f}");
    }
    let r = memloop_in(
        s,
        &[
            "recall",
            "drink",
            "--namespace",
            "alice",
            "--kind",
            "chunk",
            "--json",
        ],
        "",
    );
    assert_eq!(r.out.trim(), r#"{"hits":[]}"#);
    let r = memloop_in(
        s,
        &["recall", "what does Alice like to drink?", "--k", "1"],
        "",
    );
    assert!(r.out.contains("Alice prefers tea"), "{}", r.out);

    assert!(memloop_in(s, &["forget", &ci.to_string()], "").ok);
    let r = memloop_in(s, &["get", &ci.to_string()], "");
    assert!(!r.ok && r.err.contains(&format!("no memory with id {ci}")));
}

#[test]
fn ingest_prints_ids_in_order_and_rejects_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let input = "{\"text\":\"Paris is the capital of France\",\"kind\":\"fact\",\"tags\":[\"geo\"]}\n\n{\"text\":\"Rust has no garbage collector\",\"namespace\":\"tech\"}\n";
    let r = memloop_in(s, &["ingest", "-", "--jsonl", "--batch", "1"], input);
    assert!(r.ok, "{}", r.err);
    let ids: Vec<u64> = r
        .out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 2);
    let r = memloop_in(s, &["get", &ids[1].to_string(), "--json"], "");
    assert!(r.out.contains("\"namespace\":\"tech\""));

    let file = dir.path().join("in.jsonl");
    std::fs::write(&file, "{\"text\":\"fine\"}\n{\"text\": 3}\n").unwrap();
    let r = memloop_in(s, &["ingest", file.to_str().unwrap(), "--jsonl"], "");
    assert!(!r.ok && r.err.contains("line 2"), "{}", r.err);
    let r = memloop_in(
        s,
        &["ingest", "-", "--jsonl"],
        "{\"text\":\"x\",\"color\":1}\n",
    );
    assert!(!r.ok && r.err.contains("unknown field"), "{}", r.err);
    // stdin is JSON Lines without the flag.
    let r = memloop_in(s, &["ingest", "-"], "{\"text\":\"no flag needed\"}\n");
    assert!(r.ok && r.out.lines().count() == 1, "{} {}", r.out, r.err);
    let r = memloop_in(s, &["ingest", "/nonexistent.jsonl", "--jsonl"], "");
    assert!(!r.ok && r.err.contains("/nonexistent.jsonl"));
    let r = memloop_in(
        s,
        &["ingest", "-", "--jsonl", "--grouped"],
        "{\"text\":\"grouped one\"}\n{\"text\":\"grouped two\"}\n",
    );
    assert!(r.ok);
    assert_eq!(r.out.lines().count(), 2);
}

#[test]
fn export_import_moves_memories_between_stores() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let input = "{\"text\":\"The deploy key lives in vault\"}\n{\"text\":\"Lunch is at noon\",\"namespace\":\"team\"}\n";
    assert!(memloop_in(a.path(), &["ingest", "-", "--jsonl"], input).ok);
    let file = a.path().join("x.mlx");
    let r = memloop_in(a.path(), &["export", file.to_str().unwrap()], "");
    assert!(r.ok, "{}", r.err);
    assert_eq!(
        serde_json::from_str::<Value>(&r.out).unwrap()["exported"],
        2
    );
    let r = memloop_in(b.path(), &["import", file.to_str().unwrap()], "");
    let rep: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(
        (rep["added"].as_u64(), rep["reembedded"].as_bool()),
        (Some(2), Some(false))
    );
    let r = memloop_in(b.path(), &["import", file.to_str().unwrap()], "");
    assert_eq!(serde_json::from_str::<Value>(&r.out).unwrap()["added"], 0);
    let r = memloop_in(
        b.path(),
        &["recall", "where is the deploy key", "--k", "1", "--json"],
        "",
    );
    assert!(r.out.contains("vault"));
    let r = memloop_in(b.path(), &["export", "/nonexistent-dir/x.mlx"], "");
    assert!(!r.ok && r.err.contains("nonexistent-dir"));
    std::fs::write(&file, b"garbage").unwrap();
    let r = memloop_in(b.path(), &["import", file.to_str().unwrap()], "");
    assert!(
        !r.ok && r.err.contains("not a memloop export file"),
        "{}",
        r.err
    );
}

#[test]
fn errors_are_clear_and_exit_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let r = memloop_in(s, &["remember", "x", "--kind", "poem"], "");
    assert!(!r.ok && r.err.contains("unknown kind \"poem\""));
    let r = memloop_in(s, &["remember", "  "], "");
    assert!(!r.ok && r.err.contains("text is empty"), "{}", r.err);
    let r = memloop_in(s, &["remember", "x", "--importance", "3"], "");
    assert!(!r.ok && r.err.contains("importance"), "{}", r.err);
    let r = memloop_in(s, &["recall", "x", "--k", "0"], "");
    assert!(!r.ok && r.err.contains("k = 0"), "{}", r.err);
    let r = memloop_in(s, &["--model", "/nonexistent/model", "remember", "x"], "");
    assert!(!r.ok && r.err.contains("/nonexistent/model"), "{}", r.err);
    let r = memloop_in(s, &["--dedup-threshold", "7", "remember", "x"], "");
    assert!(!r.ok && r.err.contains("not a cosine"));
    let r = memloop_in(s, &["get", "notanumber"], "");
    assert!(!r.ok);
    let r = memloop_in(s, &["forget", "12345"], "");
    assert!(
        !r.ok && r.err.contains("no memory with id 12345"),
        "{}",
        r.err
    );
}

#[test]
fn a_second_process_gets_a_locked_error_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let held = memloop::Memory::open(dir.path(), memloop::Options::default()).unwrap();
    let started = std::time::Instant::now();
    let r = memloop_in(dir.path(), &["remember", "hello"], "");
    assert!(!r.ok);
    assert!(
        r.err.contains(&format!(
            "store is locked by process {}",
            std::process::id()
        )),
        "{}",
        r.err
    );
    assert!(started.elapsed().as_secs() < 10);
    drop(held);
    assert!(memloop_in(dir.path(), &["remember", "hello"], "").ok);
}

#[test]
fn sweep_and_stats_report_forgetting() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    assert!(memloop_in(s, &["remember", "a passing remark about the weather"], "").ok);
    assert!(
        memloop_in(
            s,
            &[
                "remember",
                "the house rule: no shoes inside",
                "--kind",
                "fact",
                "--importance",
                "1"
            ],
            ""
        )
        .ok
    );
    let r = memloop_in(s, &["stats", "--json"], "");
    let st: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(
        (
            st["memories"].as_u64(),
            st["working"].as_u64(),
            st["long_term"].as_u64()
        ),
        (Some(2), Some(2), Some(0))
    );
    let r = memloop_in(s, &["sweep", "--json"], "");
    let sw: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(
        (sw["demoted"].as_u64(), sw["forgotten"].as_u64()),
        (Some(0), Some(0))
    );
    // 60 days on: the chunk (S = 30 days) is long-term, the important fact still working.
    let in_60_days = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 60 * 86_400)
        .to_string();
    let r = memloop_in(s, &["sweep", "--now", &in_60_days, "--json"], "");
    assert!(r.ok, "{}", r.err);
    let sw: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(
        (
            sw["demoted"].as_u64(),
            sw["forgotten"].as_u64(),
            sw["long_term"].as_u64()
        ),
        (Some(1), Some(0), Some(1))
    );
    let r = memloop_in(s, &["sweep", "--now", "2100-01-01T00:00:00Z", "--json"], "");
    let sw: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(
        (sw["forgotten"].as_u64(), sw["memories"].as_u64()),
        (Some(2), Some(0))
    );
    let r = memloop_in(s, &["sweep", "--now", "next tuesday"], "");
    assert!(!r.ok && r.err.contains("RFC 3339"), "{}", r.err);
    let r = memloop_in(s, &["stats"], "");
    assert!(r.ok && r.out.contains("0 memories"), "{}", r.out);
}

/// The hostile user's first finding: `remember` of a changed fact after the old one is not
/// swallowed; the caller is told it superseded the old version, and recall says 5433.
#[test]
fn remember_reports_a_changed_fact_as_a_new_version() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let remember = |text: &str| {
        let r = memloop_in(s, &["remember", text, "--kind", "fact", "--json"], "");
        assert!(r.ok, "{}", r.err);
        serde_json::from_str::<Value>(r.out.trim()).unwrap()
    };
    let old = remember("The staging database listens on port 5432.");
    assert_eq!(old["action"], "new");
    let new = remember("The staging database listens on port 5433.");
    assert_eq!(new["action"], "superseded");
    assert_eq!(new["previous"], old["id"]);
    assert_ne!(new["id"], old["id"]);
    let same = remember("the staging database listens on port 5433");
    assert_eq!(
        (&same["action"], &same["id"]),
        (&Value::from("merged"), &new["id"])
    );
    let r = memloop_in(
        s,
        &[
            "remember",
            "The staging database listens on port 5434.",
            "--kind",
            "fact",
        ],
        "",
    );
    assert!(
        r.err.contains("supersedes"),
        "the plain output says so: {}",
        r.err
    );
    let top = top_hit(s, "staging database port");
    assert!(top.contains("5434"), "{top}");
}

/// `memloop stats | head -1` closed the pipe before stats wrote: that ends the command quietly
/// (status 141, as SIGPIPE would), not with a panic.
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    assert!(memloop_in(s, &["remember", "the pipe test memory"], "").ok);
    for args in [["stats", "--json"], ["recall", "pipe"]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memloop"))
            .arg("--store")
            .arg(s)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the model has loaded
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
    }
}

/// `memloop check` on a sound store, then on one whose index file was damaged: the index is
/// rebuilt from the database and the store is sound again.
#[test]
fn check_verifies_and_repairs_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    for text in [
        "The CI pipeline caches cargo builds.",
        "Alice prefers tea.",
        "Deploys run on Tuesday.",
    ] {
        assert!(memloop_in(s, &["remember", text], "").ok);
    }
    let r = memloop_in(s, &["check", "--json"], "");
    assert!(r.ok, "{}", r.err);
    let report: Value = serde_json::from_str(r.out.trim()).unwrap();
    assert_eq!(report["memories"], 3);
    assert!(report["index_rebuilt"].is_null() && report["problems"].as_array().unwrap().is_empty());
    // `index.mlx`, or on Windows its latest generation `index-<n>.mlx` (the one left once
    // the store is closed).
    let index = std::fs::read_dir(s)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("index") && n.ends_with(".mlx"))
        })
        .expect("the index file");
    let mut bytes = std::fs::read(&index).unwrap();
    let n = bytes.len();
    bytes[600..n.min(600 + 1024)]
        .iter_mut()
        .for_each(|b| *b ^= 0x33);
    std::fs::write(&index, &bytes).unwrap();
    let r = memloop_in(s, &["check"], "");
    assert!(r.ok, "{}", r.err);
    assert!(
        r.out.contains("index rebuilt from the database"),
        "{}",
        r.out
    );
    let top = top_hit(s, "what does Alice drink");
    assert!(top.contains("Alice prefers tea"), "{top}");
}

/// A damaged database: commands fail with a message (no panic), and `check --salvage` exports
/// every readable memory, which a new store imports.
#[test]
fn a_damaged_database_is_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("mem");
    for text in [
        "Alice prefers tea.",
        "Deploys run on Tuesday.",
        "DAMAGED-MARKER-TEXT",
    ] {
        assert!(memloop_in(&s, &["remember", text], "").ok);
    }
    let db = s.join("store.redb");
    let mut bytes = std::fs::read(&db).unwrap();
    let marker = b"DAMAGED-MARKER-TEXT";
    while let Some(at) = bytes.windows(marker.len()).position(|w| w == marker) {
        bytes[at..at + marker.len()].fill(0xff);
    }
    std::fs::write(&db, &bytes).unwrap();
    let r = memloop_in(&s, &["recall", "tea"], "");
    assert!(!r.err.contains("panicked"), "{}", r.err);
    let out = dir.path().join("rescued.mlx");
    let r = memloop_in(
        &s,
        &["check", "--salvage", out.to_str().unwrap(), "--json"],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let report: Value = serde_json::from_str(r.out.trim()).unwrap();
    assert_eq!(
        (report["saved"].as_u64(), report["skipped"].as_u64()),
        (Some(2), Some(1))
    );
    let fresh = dir.path().join("new");
    let r = memloop_in(&fresh, &["import", out.to_str().unwrap()], "");
    assert!(r.ok, "{}", r.err);
    let top = top_hit(&fresh, "what does Alice drink");
    assert!(top.contains("Alice prefers tea"), "{top}");
}

/// The JSON of the best hit for `query` in store `s` (`recall --k 1 --json`).
fn top_hit(s: &std::path::Path, query: &str) -> String {
    let r = memloop_in(s, &["recall", query, "--k", "1", "--json"], "");
    assert!(r.ok, "{}", r.err);
    r.out
}

#[test]
fn users_are_kept_apart_and_one_is_erased() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    for (user, text) in [
        ("ana", "Ana keeps her bike in the blue shed"),
        ("bo", "Bo keeps his bike in the red garage"),
    ] {
        let r = memloop_in(
            s,
            &["remember", text, "--user", user, "--agent", "helper"],
            "",
        );
        assert!(r.ok, "{}", r.err);
    }
    for user in ["ana", "bo"] {
        let r = memloop_in(
            s,
            &[
                "recall",
                "where is the bike",
                "--user",
                user,
                "--k",
                "5",
                "--json",
            ],
            "",
        );
        assert!(r.ok, "{}", r.err);
        let answer: Value = serde_json::from_str(r.out.trim()).unwrap();
        let hits = answer["hits"].as_array().unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0]["item"]["user"], user);
        let r = memloop_in(
            s,
            &[
                "context", "bike", "--budget", "100", "--user", user, "--json",
            ],
            "",
        );
        assert!(r.ok, "{}", r.err);
        let blocks = serde_json::from_str::<Value>(r.out.trim()).unwrap()["blocks"].clone();
        assert_eq!(blocks.as_array().unwrap().len(), 1);
    }
    let r = memloop_in(s, &["forget", "--user", "ana", "--json"], "");
    assert!(r.ok, "{}", r.err);
    let report: Value = serde_json::from_str(r.out.trim()).unwrap();
    assert_eq!(report["memories"], 1);
    let r = memloop_in(s, &["recall", "bike", "--user", "ana", "--json"], "");
    assert_eq!(r.out.trim(), r#"{"hits":[]}"#);
    let r = memloop_in(s, &["forget"], "");
    assert!(!r.ok && r.err.contains("--user"), "{}", r.err);
    let r = memloop_in(s, &["forget", "1", "--user", "bo"], "");
    assert!(!r.ok && r.err.contains("not both"), "{}", r.err);
}

#[test]
fn as_of_answers_what_held_then() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let r = memloop_in(
        s,
        &[
            "remember",
            "Carol's office is in building A on the north campus",
            "--kind",
            "fact",
            "--valid-from",
            "2024-01-01T00:00:00Z",
            "--valid-until",
            "2024-06-01T00:00:00Z",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let office: u64 = r.out.trim().parse().unwrap();
    let hits = |at: &str| {
        let r = memloop_in(
            s,
            &["recall", "where is Carol's office", "--as-of", at, "--json"],
            "",
        );
        assert!(r.ok, "{}", r.err);
        let answer: Value = serde_json::from_str(r.out.trim()).unwrap();
        answer["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(hits("2024-03-01T00:00:00Z"), vec![office]);
    assert_eq!(hits("1717200000"), Vec::<u64>::new()); // 2024-06-01, when it ended
    let r = memloop_in(s, &["recall", "x", "--as-of", "last tuesday"], "");
    assert!(!r.ok && r.err.contains("RFC 3339"), "{}", r.err);
}

#[test]
fn conversations_ingest_and_sweep_by_scope() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let turns = concat!(
        r#"{"speaker": "Ana", "text": "I started a pottery class yesterday.", "time": "2023-05-08T13:56:00Z"}"#,
        "\n",
        r#"{"speaker": "Bo", "text": "How was it?", "time": 1683554220}"#,
        "\n"
    );
    let r = memloop_in(
        s,
        &["conversation", "s1", "-", "--user", "ana", "--json"],
        turns,
    );
    assert!(r.ok, "{}", r.err);
    let report: Value = serde_json::from_str(r.out.trim()).unwrap();
    assert_eq!(report["first_turn"], 0);
    assert_eq!(report["turns"].as_array().unwrap().len(), 2);
    // A bad line anywhere stores nothing of the file.
    let bad = format!("{turns}{{\"speaker\": \"Ana\", \"text\": \"hi\", \"time\": \"noon\"}}\n");
    let r = memloop_in(s, &["conversation", "s1", "-", "--user", "ana"], &bad);
    assert!(!r.ok && r.err.contains("line 3"), "{}", r.err);
    let r = memloop_in(s, &["conversation", "s1", "--show", "--user", "ana"], "");
    assert!(r.ok, "{}", r.err);
    assert_eq!(
        r.out.lines().collect::<Vec<_>>(),
        [
            "[2023-05-08 13:56] Ana: I started a pottery class yesterday.",
            "[2023-05-08 13:57] Bo: How was it?"
        ]
    );
    let r = memloop_in(s, &["conversation", "s1", "--show", "--user", "bo"], "");
    assert!(r.ok && r.out.is_empty(), "{} {}", r.out, r.err);

    // Ingested lines take the flags' scope unless they name their own.
    let lines = concat!(
        r#"{"text": "Bo's locker is number 12", "kind": "fact"}"#,
        "\n",
        r#"{"text": "Cy's locker is number 40", "kind": "fact", "user": "cy"}"#,
        "\n"
    );
    let r = memloop_in(s, &["ingest", "-", "--user", "bo", "--json"], lines);
    assert!(r.ok, "{}", r.err);
    assert_eq!(
        top_hit_of(s, "locker number", "bo"),
        "Bo's locker is number 12"
    );
    assert_eq!(
        top_hit_of(s, "locker number", "cy"),
        "Cy's locker is number 40"
    );
    let doc = s.join("notes.md");
    std::fs::write(&doc, "# Notes\nshared text").unwrap();
    let r = memloop_in(s, &["ingest", doc.to_str().unwrap(), "--user", "bo"], "");
    assert!(
        !r.ok && r.err.contains("documents are not scoped"),
        "{}",
        r.err
    );

    // list (scan is the same command): what a filter admits, scoped.
    let scanned = |args: &[&str]| -> Vec<Value> {
        let mut full = vec!["scan", "--json"];
        full.extend_from_slice(args);
        let r = memloop_in(s, &full, "");
        assert!(r.ok, "{}", r.err);
        let answer: Value = serde_json::from_str(r.out.trim()).unwrap();
        answer["memories"].as_array().unwrap().clone()
    };
    let turns = scanned(&["--kind", "turn", "--user", "ana"]);
    assert_eq!(turns.len(), 2);
    assert!(turns
        .iter()
        .all(|t| t["user"] == "ana" && t["kind"] == "turn"));
    let bo = scanned(&["--user", "bo"]);
    assert_eq!(bo.len(), 1);
    assert_eq!(bo[0]["text"], "Bo's locker is number 12");
    assert!(scanned(&["--user", "nobody"]).is_empty());

    let r = memloop_in(s, &["sweep", "--user", "ana", "--json"], "");
    assert!(r.ok, "{}", r.err);
    let swept: Value = serde_json::from_str(r.out.trim()).unwrap();
    assert_eq!(swept["forgotten"], 0);
}

fn top_hit_of(s: &std::path::Path, query: &str, user: &str) -> String {
    let r = memloop_in(
        s,
        &["recall", query, "--user", user, "--k", "1", "--json"],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let answer: Value = serde_json::from_str(r.out.trim()).unwrap();
    answer["hits"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The issue's new-user case: a fact that changed is updated from the command line, so the
/// old version stops being valid where the new one begins, and the current answer is the
/// new one; a triple is remembered with its parts; engine errors exit with their category.
#[test]
fn update_closes_the_old_version_and_triples_have_flags() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let r = memloop_in(
        s,
        &[
            "remember",
            "Alice lives in Paris.",
            "--kind",
            "fact",
            "--valid-from",
            "2020-01-01T00:00:00Z",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let paris: u64 = r.out.trim().parse().unwrap();
    let r = memloop_in(
        s,
        &[
            "update",
            &paris.to_string(),
            "--text",
            "Alice lives in Berlin.",
            "--valid-from",
            "2024-06-01T00:00:00Z",
            "--json",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let done: Value = serde_json::from_str(r.out.trim()).unwrap();
    let berlin = done["id"].as_u64().unwrap();
    assert_eq!(done["previous"].as_u64(), Some(paris));
    let top = |extra: &[&str]| {
        let mut args = vec!["recall", "where does Alice live?", "--json"];
        args.extend_from_slice(extra);
        let r = memloop_in(s, &args, "");
        assert!(r.ok, "{}", r.err);
        let answer: Value = serde_json::from_str(r.out.trim()).unwrap();
        answer["hits"][0]["id"].as_u64()
    };
    assert_eq!(top(&[]), Some(berlin));
    assert_eq!(top(&["--as-of", "2022-01-01T00:00:00Z"]), Some(paris));
    let old = memloop_in(s, &["get", &paris.to_string(), "--json"], "");
    let old: Value = serde_json::from_str(old.out.trim()).unwrap();
    assert_eq!(old["superseded_by"].as_u64(), Some(berlin));
    assert!(old["valid_until"].as_i64().is_some());

    let r = memloop_in(
        s,
        &[
            "remember",
            "Alice works at Acme",
            "--kind",
            "triple",
            "--head",
            "Alice",
            "--relation",
            "works_at",
            "--tail",
            "Acme",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let id = r.out.trim().to_string();
    let got = memloop_in(s, &["get", &id, "--json"], "");
    let got: Value = serde_json::from_str(got.out.trim()).unwrap();
    assert_eq!(got["triple"]["relation"], "works_at");
    let r = memloop_in(s, &["remember", "half a triple", "--head", "Alice"], "");
    assert!(!r.ok, "a triple needs all three parts");

    // Exit status by category: not found (4), invalid input (3).
    let status = |args: &[&str]| {
        let mut full = vec!["--store", s.to_str().unwrap()];
        full.extend_from_slice(args);
        std::process::Command::new(env!("CARGO_BIN_EXE_memloop"))
            .args(&full)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(status(&["update", "9999", "--importance", "0.5"]), Some(4));
    assert_eq!(
        status(&["update", &berlin.to_string(), "--importance", "7"]),
        Some(3)
    );
}
