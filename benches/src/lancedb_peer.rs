//! LanceDB as a retrieval peer: `benches/lancedb_rank.py` run on one corpus, in the Python
//! environment of `scripts/bench-venv.sh`.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

/// LanceDB's rankings of every query: full-text search and hybrid search, keys best first.
pub struct LanceRankings {
    /// Full-text search (its native FTS index, default tokenizer).
    pub fts: Vec<Vec<String>>,
    /// Hybrid search (vector and FTS, its default RRF reranker).
    pub hybrid: Vec<Vec<String>>,
    /// The LanceDB version that answered.
    pub version: String,
}

/// Runs LanceDB with `python` on documents `(key, text)` with their `vectors` and the queries
/// `(text, vector)`, `k` results each: [`rank_many`] on one corpus.
pub fn rank(
    python: &Path,
    docs: &[(String, String)],
    vectors: &[Vec<f32>],
    queries: &[(&str, Vec<f32>)],
    k: usize,
) -> Result<LanceRankings> {
    let corpus = Corpus {
        docs: docs.to_vec(),
        vectors: vectors.to_vec(),
        queries: queries
            .iter()
            .map(|(text, v)| (text.to_string(), v.clone()))
            .collect(),
    };
    rank_many(python, &[corpus], k)?
        .corpora
        .pop()
        .context("LanceDB returned no rankings")
}

/// One corpus for [`rank_many`]: documents `(key, text)`, their vectors, and queries
/// `(text, vector)`.
pub struct Corpus {
    /// The documents.
    pub docs: Vec<(String, String)>,
    /// Their vectors.
    pub vectors: Vec<Vec<f32>>,
    /// The queries.
    pub queries: Vec<(String, Vec<f32>)>,
}

/// LanceDB's rankings of several corpora, in order.
pub struct ManyRankings {
    /// Per corpus, as [`rank`] gives them.
    pub corpora: Vec<LanceRankings>,
    /// Seconds LanceDB took to create the tables from the given vectors and index their text.
    pub ingest_seconds: f64,
    /// The LanceDB version that answered.
    pub version: String,
}

/// [`rank`] over several corpora in one Python process (each its own table).
pub fn rank_many(python: &Path, corpora: &[Corpus], k: usize) -> Result<ManyRankings> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("lancedb_rank.py");
    let dir = tempfile::tempdir()?;
    let (input, output) = (dir.path().join("in.json"), dir.path().join("out.json"));
    let corpora_json: Vec<Value> = corpora
        .iter()
        .map(|c| {
            let docs: Vec<Value> = c
                .docs
                .iter()
                .zip(&c.vectors)
                .map(|((key, text), v)| json!({"key": key, "text": text, "vector": v}))
                .collect();
            let queries: Vec<Value> = c
                .queries
                .iter()
                .map(|(text, v)| json!({"text": text, "vector": v}))
                .collect();
            json!({"docs": docs, "queries": queries})
        })
        .collect();
    std::fs::write(&input, json!({"corpora": corpora_json, "k": k}).to_string())?;
    let status = std::process::Command::new(python)
        .arg(&script)
        .arg(&input)
        .arg(&output)
        .status()
        .with_context(|| {
            format!(
                "running {} (make it with `bash scripts/bench-venv.sh`)",
                python.display()
            )
        })?;
    if !status.success() {
        bail!("{} failed: {status}", script.display());
    }
    let out: Value = serde_json::from_str(&std::fs::read_to_string(&output)?)?;
    let version = out["lancedb"].as_str().unwrap_or("?").to_string();
    let lists = |v: &Value| -> Vec<Vec<String>> {
        v.as_array()
            .map(|ls| {
                ls.iter()
                    .map(|l| {
                        l.as_array()
                            .map(|keys| {
                                keys.iter()
                                    .filter_map(|k| k.as_str().map(String::from))
                                    .collect()
                            })
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let corpora = out["corpora"]
        .as_array()
        .context("corpora rankings missing")?
        .iter()
        .map(|c| LanceRankings {
            fts: lists(&c["fts"]),
            hybrid: lists(&c["hybrid"]),
            version: version.clone(),
        })
        .collect();
    Ok(ManyRankings {
        corpora,
        version,
        ingest_seconds: out["ingest_seconds"].as_f64().unwrap_or(0.0),
    })
}
