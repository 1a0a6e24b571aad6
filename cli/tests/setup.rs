//! `init`, `model fetch`, `ingest` of text, markdown and folders, missing stores, `--help`, and
//! `demo`, through the real binary.

mod common;

use std::process::Command;

use common::{memloop, memloop_in};

#[test]
fn init_creates_a_store_and_reports_an_existing_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("mem");
    let r = memloop_in(&s, &["init"], "");
    assert!(r.ok, "{}", r.err);
    assert!(
        r.out.starts_with("created store") && r.out.contains("all-MiniLM-L6-v2"),
        "{}",
        r.out
    );
    assert!(s.join("store.redb").is_file());
    memloop_in(&s, &["remember", "the build uses cargo"], "");
    let r = memloop_in(&s, &["init", "--json"], "");
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v["created"], false);
    assert_eq!(v["memories"], 1);
    // Errors: a model that is not there; a store path that is a file.
    let r = memloop_in(
        &dir.path().join("other"),
        &["--model", "/nonexistent/model", "init"],
        "",
    );
    assert!(!r.ok && r.err.contains("/nonexistent/model"), "{}", r.err);
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = memloop_in(&file, &["init"], "");
    assert!(!r.ok && r.err.contains("cannot open store"), "{}", r.err);
}

#[test]
fn commands_that_read_need_an_existing_store() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("typo");
    for args in [
        &["recall", "x"][..],
        &["get", "1"],
        &["stats"],
        &["sweep"],
        &["context", "x", "--budget", "10"],
        &["feedback", "1", "5"],
        &["forget", "1"],
        &["export", "out.mlx"],
    ] {
        let r = memloop_in(&s, args, "");
        assert!(!r.ok, "{args:?}");
        assert!(
            r.err.contains("no memloop store at") && r.err.contains("init"),
            "{args:?}: {}",
            r.err
        );
    }
    assert!(!s.exists(), "a read command created the store");
}

#[test]
fn model_fetch_is_idempotent_and_explains_a_missing_python() {
    // scripts/test.sh fetched the model, so this finds the verified copy and downloads nothing.
    let r = memloop(&["model", "fetch"], "");
    assert!(r.ok, "{}", r.err);
    let dir = std::path::PathBuf::from(r.out.trim());
    assert!(dir.join("model.safetensors").is_file());
    assert!(!r.err.contains("downloading"), "{}", r.err);
    // An empty folder needs a download; without python3 on PATH the error says what is missing.
    let empty = tempfile::tempdir().unwrap();
    let target = empty.path().join("model");
    let out = Command::new(env!("CARGO_BIN_EXE_memloop"))
        .args(["model", "fetch", "--dir"])
        .arg(&target)
        .env("PATH", "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("python3") && err.contains("is it installed"),
        "{err}"
    );
    assert!(!target.exists(), "a failed fetch left a partial model");
}

#[test]
fn ingest_takes_text_markdown_and_folders() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("sub")).unwrap();
    let long: String = (0..120)
        .map(|i| format!("Sentence {i} explains how the deploy pipeline handles step {i}. "))
        .collect();
    std::fs::write(docs.join("pipeline.md"), format!("# Pipeline\n\n{long}")).unwrap();
    std::fs::write(
        docs.join("sub/cache.txt"),
        "The build cache lives in S3 and expires after a week.",
    )
    .unwrap();
    std::fs::write(docs.join("sub/image.png"), [0u8, 1, 2]).unwrap(); // skipped in folders
    std::fs::write(docs.join(".hidden.md"), "never read").unwrap();
    std::fs::write(
        dir.path().join("memories.jsonl"),
        "{\"text\": \"Alice is on call this week\", \"kind\": \"fact\"}\n",
    )
    .unwrap();
    let s = dir.path().join("mem");
    let jsonl = dir.path().join("memories.jsonl");
    let r = memloop_in(
        &s,
        &[
            "ingest",
            docs.to_str().unwrap(),
            jsonl.to_str().unwrap(),
            "--json",
        ],
        "",
    );
    assert!(r.ok, "{}", r.err);
    let lines: Vec<serde_json::Value> = r
        .out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let docs_out: Vec<_> = lines
        .iter()
        .filter(|v| v.get("document").is_some())
        .collect();
    assert_eq!(docs_out.len(), 2, "{}", r.out);
    assert!(docs_out[0]["document"]
        .as_str()
        .unwrap()
        .ends_with("pipeline.md"));
    assert!(
        docs_out[0]["chunks"].as_u64().unwrap() >= 5,
        "a long file is chunked: {}",
        r.out
    );
    assert_eq!(docs_out[1]["chunks"], 1);
    let summary = lines.last().unwrap();
    assert_eq!(summary["documents"], 2);
    assert_eq!(summary["memories"], 1);
    // Chunks are recalled with their source file and span.
    let r = memloop_in(
        &s,
        &[
            "recall",
            "where is the build cache stored?",
            "--k",
            "1",
            "--kind",
            "chunk",
            "--json",
        ],
        "",
    );
    let answer: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    let hits = &answer["hits"];
    assert!(
        hits[0]["text"].as_str().unwrap().contains("S3"),
        "{}",
        r.out
    );
    let source = &hits[0]["item"]["sources"][0];
    assert!(source["document"].as_str().unwrap().ends_with("cache.txt"));
    assert!(source["span"].is_array());
    let r = memloop_in(
        &s,
        &["recall", "who is on call?", "--k", "1", "--kind", "fact"],
        "",
    );
    assert!(r.out.contains("Alice"), "{}", r.out);
    // Piped: no progress bar on stderr; a human summary on stdout.
    let r = memloop_in(
        &s,
        &["ingest", docs.join("sub/cache.txt").to_str().unwrap()],
        "",
    );
    assert!(
        r.ok && r.out.starts_with("ingested 1 documents") && r.err.is_empty(),
        "{} / {}",
        r.out,
        r.err
    );
}

#[test]
fn ingest_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("mem");
    let r = memloop_in(&s, &["ingest", "/nonexistent/notes.md"], "");
    assert!(
        !r.ok && r.err.contains("/nonexistent/notes.md: no such file"),
        "{}",
        r.err
    );
    let png = dir.path().join("a.png");
    std::fs::write(&png, [0u8]).unwrap();
    let r = memloop_in(&s, &["ingest", png.to_str().unwrap()], "");
    assert!(!r.ok && r.err.contains("a.png: not a text"), "{}", r.err);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let r = memloop_in(&s, &["ingest", empty.to_str().unwrap()], "");
    assert!(
        !r.ok && r.err.contains("no .txt, .md or .jsonl files"),
        "{}",
        r.err
    );
    let bad = dir.path().join("bad.md");
    std::fs::write(&bad, [0xffu8, 0xfe, 0x00]).unwrap();
    let r = memloop_in(&s, &["ingest", bad.to_str().unwrap()], "");
    assert!(!r.ok && r.err.contains("bad.md is not UTF-8"), "{}", r.err);
    // A folder whose last file is not UTF-8: nothing of the earlier files is committed.
    let folder = dir.path().join("notes");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("a.md"), "The cache lives in redis.").unwrap();
    std::fs::write(folder.join("b.md"), "Deploys happen on Tuesdays.").unwrap();
    std::fs::write(folder.join("c.md"), [b'o', b'k', 0xff]).unwrap();
    let r = memloop_in(&s, &["ingest", folder.to_str().unwrap()], "");
    assert!(!r.ok && r.err.contains("c.md is not UTF-8"), "{}", r.err);
    assert!(r.err.contains("nothing was ingested"), "{}", r.err);
    let r = memloop_in(&s, &["stats", "--json"], "");
    if r.ok {
        let stats: serde_json::Value = serde_json::from_str(&r.out).unwrap();
        assert_eq!(stats["memories"], 0, "{}", r.out);
    }
    let r = memloop_in(&s, &["ingest"], "");
    assert!(!r.ok && r.err.contains("required"), "{}", r.err);
}

#[test]
fn every_command_has_help_with_examples() {
    let r = memloop(&["--help"], "");
    assert!(r.ok && r.out.contains("Examples:") && r.out.contains("memloop demo"));
    for cmd in [
        "demo", "init", "model", "remember", "get", "recall", "context", "feedback", "observe",
        "task", "ingest", "forget", "export", "import", "sweep", "stats", "check", "embed",
    ] {
        let r = memloop(&[cmd, "--help"], "");
        assert!(r.ok, "{cmd}: {}", r.err);
        assert!(
            r.out.contains("Example"),
            "{cmd} --help has no example:\n{}",
            r.out
        );
    }
    let r = memloop(&["frobnicate"], "");
    assert!(
        !r.ok && r.err.contains("unrecognized subcommand"),
        "{}",
        r.err
    );
}

#[test]
fn the_demo_runs_the_whole_loop_on_the_real_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("demo-store");
    let r = memloop(
        &["demo", "--speeches", "3", "--dir", store.to_str().unwrap()],
        "",
    );
    assert!(r.ok, "{}\n{}", r.out, r.err);
    for section in [
        "Ingest",
        "Recall",
        "Context under a budget",
        "Tasks",
        "Feedback",
        "Forgetting",
    ] {
        assert!(r.out.contains(section), "no {section} section:\n{}", r.out);
    }
    assert!(
        r.out.contains("3 addresses") && r.out.contains("1790 George Washington"),
        "{}",
        r.out
    );
    assert!(r.out.contains("tokens of 300"), "{}", r.out);
    assert!(
        r.out.contains("reflection #") && r.out.contains("rated 5"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("day 400") && r.out.contains("demo finished in"),
        "{}",
        r.out
    );
    // The store it kept is a real store.
    let r = memloop_in(&store, &["stats", "--json"], "");
    assert!(r.ok, "{}", r.err);
    // Errors: a missing model is named; a bad count is refused.
    let r = memloop(
        &["--model", "/nonexistent/model", "demo", "--speeches", "1"],
        "",
    );
    assert!(!r.ok && r.err.contains("/nonexistent/model"), "{}", r.err);
    let r = memloop(&["demo", "--speeches", "x"], "");
    assert!(!r.ok && r.err.contains("invalid value"), "{}", r.err);
}

/// `--precision int8` writes a store in its own embedding space: it recalls by meaning, the
/// store records the choice (a later open without the flag follows it; an explicit f32 open is
/// refused with the model named, never mixed), and
/// `embed --precision int8` writes vectors close to f32's.
#[test]
fn an_int8_store_recalls_by_meaning_and_refuses_f32() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("mem");
    let int8 = |args: &[&str]| {
        let mut all = vec!["--precision", "int8"];
        all.extend_from_slice(args);
        memloop_in(&s, &all, "")
    };
    assert!(int8(&["remember", "The staging database listens on port 5433"]).ok);
    assert!(int8(&["remember", "Ana takes green tea in the afternoon"]).ok);
    let r = int8(&[
        "recall",
        "which port does staging use?",
        "--k",
        "1",
        "--json",
    ]);
    assert!(r.ok, "{}", r.err);
    assert!(r.out.contains("5433"), "{}", r.out);
    // Without the flag a store is opened at its own precision; asking for the other is refused.
    let r = memloop_in(
        &s,
        &["recall", "which port does staging use?", "--k", "1"],
        "",
    );
    assert!(r.ok && r.out.contains("5433"), "{}", r.err);
    let r = memloop_in(
        &s,
        &["--precision", "f32", "recall", "port", "--k", "1"],
        "",
    );
    assert!(
        !r.ok && r.err.contains("all-MiniLM-L6-v2+int8"),
        "{}",
        r.err
    );
    let r = memloop_in(&s, &["--precision", "int4", "recall", "port"], "");
    assert!(
        !r.ok && r.err.contains("neither `f32` nor `int8`"),
        "{}",
        r.err
    );
    let vectors = |precision: &str| -> Vec<f32> {
        let r = memloop(
            &["embed", "--precision", precision],
            "\"the port of the staging database\"\n",
        );
        assert!(r.ok, "{}", r.err);
        serde_json::from_str(r.out.trim()).unwrap()
    };
    let (a, b) = (vectors("int8"), vectors("f32"));
    let cos: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    assert!(cos > 0.99 && cos < 1.0, "cosine {cos}");
}
