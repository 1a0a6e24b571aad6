//! `--reranker-model`: a cross-encoder directory through the real binary and the real default
//! model (a tiny BERT cross-encoder the test builds, held to transformers' logits in the
//! embedder's tests), and refused where another process serves the store with its own.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use common::memloop_in;
use serde_json::Value;

#[path = "../../embed/tests/integration/tiny_cross_encoder.rs"]
mod tiny_cross_encoder;

fn scores(store: &Path, extra: &[&str]) -> Vec<f64> {
    let mut args = vec![
        "recall",
        "how do I reset my router?",
        "--strategy",
        "rerank",
        "--json",
    ];
    args.extend_from_slice(extra);
    let r = memloop_in(store, &args, "");
    assert!(r.ok, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).unwrap();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect()
}

#[test]
fn a_cross_encoder_reranks_and_belongs_to_the_serving_process() {
    let dir = tempfile::tempdir().unwrap();
    let (store, model) = (dir.path().join("store"), dir.path().join("ce"));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../embed/tests/fixtures");
    tiny_cross_encoder::write(&model, &fixtures);
    for text in [
        "Hold the reset button on the router for ten seconds.",
        "Unplug the router, wait a minute, then plug it back in.",
        "My sister moved to Lisbon last spring.",
    ] {
        let r = memloop_in(&store, &["remember", text], "");
        assert!(r.ok, "{}", r.err);
    }
    let model_arg = model.to_str().unwrap();
    // Fused scores lie in [0, 1] (three candidates: all within the fusion's first places, one
    // weight); a candidate the cross-encoder read scores 2 + sigmoid(logit).
    let fused = scores(&store, &[]);
    assert!(
        !fused.is_empty() && fused.iter().all(|s| (0.0..=1.0).contains(s)),
        "{fused:?}"
    );
    let read = scores(&store, &["--reranker-model", model_arg]);
    assert!(
        read.len() == fused.len() && read.iter().all(|s| *s > 2.0 && *s < 3.0),
        "{read:?}"
    );

    let bad = memloop_in(
        &store,
        &["recall", "router", "--reranker-model", "/nonexistent/ce"],
        "",
    );
    assert!(
        !bad.ok && bad.err.contains("/nonexistent/ce"),
        "{}",
        bad.err
    );

    // While `memloop mcp` serves the store, a command that would forward refuses a reranker of
    // its own (the server's applies there), and so does a second server.
    let mut server = Command::new(env!("CARGO_BIN_EXE_memloop"))
        .args(["--store", store.to_str().unwrap(), "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("serving it"), "{line}");
    let forwarded = memloop_in(&store, &["recall", "router", "--json"], "");
    assert!(forwarded.ok, "{}", forwarded.err);
    let refused = memloop_in(
        &store,
        &["recall", "router", "--reranker-model", model_arg],
        "",
    );
    assert!(
        !refused.ok && refused.err.contains("--reranker-model"),
        "{}",
        refused.err
    );
    let second = memloop_in(&store, &["--reranker-model", model_arg, "mcp"], "");
    assert!(
        !second.ok && second.err.contains("--reranker-model"),
        "{}",
        second.err
    );
    // No MCP session was started: closing its input ends the server.
    drop(server.stdin.take());
    server.wait().unwrap();
}
