//! `memloop embed` through the real binary.

mod common;

use std::path::PathBuf;

fn memloop(args: &[&str], stdin: &str) -> (bool, String, String) {
    let r = common::memloop(args, stdin);
    (r.ok, r.out, r.err)
}

fn nomic_tiny() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../embed/tests/fixtures/nomic-tiny")
        .display()
        .to_string()
}

#[test]
fn embeds_json_lines_in_order() {
    let (ok, out, err) = memloop(
        &["embed", "--model", &nomic_tiny(), "--batch", "2"],
        "\"hello world\"\n\"\"\n\"third line\"\n",
    );
    assert!(ok, "{err}");
    let rows: Vec<Vec<f32>> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.len() == 64));
    let norm: f32 = rows[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5);
    // Query mode uses the query prefix, so it differs from document mode for nomic models.
    let (ok, q, _) = memloop(
        &["embed", "--model", &nomic_tiny(), "--query"],
        "\"hello world\"\n",
    );
    assert!(ok);
    assert_ne!(q.lines().next(), out.lines().next());
}

#[test]
fn default_model_embeds() {
    let (ok, out, err) = memloop(&["embed"], "\"What is the capital of Australia?\"\n");
    assert!(ok, "{err}");
    let row: Vec<f32> = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(row.len(), 384);
}

#[test]
fn bad_input_and_bad_model_fail_with_messages() {
    let (ok, _, err) = memloop(&["embed", "--model", &nomic_tiny()], "\"fine\"\nnot json\n");
    assert!(!ok);
    assert!(err.contains("line 2"), "{err}");
    let (ok, _, err) = memloop(&["embed", "--model", &nomic_tiny()], "{\"text\": 1}\n");
    assert!(!ok && err.contains("JSON string"), "{err}");
    let (ok, _, err) = memloop(&["embed", "--model", "/nonexistent/model"], "\"x\"\n");
    assert!(!ok && err.contains("config.json"), "{err}");
    let (ok, _, err) = memloop(&["embed", "--bogus"], "");
    assert!(!ok && err.contains("--bogus"), "{err}");
}
