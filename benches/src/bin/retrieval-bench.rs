//! `retrieval-bench`: retrieval quality on labelled data, through the whole engine.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin retrieval-bench -- \
//!     (--beir DIR | --locomo FILE) --strategy exact,single,rerank,iterative --json
//! ```
//! BEIR (SciFact): the corpus is one store (document text = title + " " + text), the test
//! queries and qrels judge. LoCoMo: each conversation is its own store, its turns the memories
//! ("speaker: text", plus " (image: caption)" when the turn shared one); a question's evidence
//! turns are its relevant items. `exact` is brute-force cosine over the same vectors (the
//! published baseline); the others go through `Memory::retrieve` (HNSW, BM25, reranking,
//! refinement). Prints one JSON object per strategy with nDCG@10 and Recall@10 averaged over
//! the queries. The data is read by path and never copied.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use memloop::{Durability, ForgetPolicy, Memory, MemoryId, NewMemory, Options, Query, Strategy};
use serde_json::{json, Value};

#[derive(Parser, Debug)]
#[command(about = "retrieval quality (nDCG@10, Recall@10) on BEIR or LoCoMo")]
struct Args {
    /// A BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/test.tsv).
    #[arg(long, conflicts_with = "locomo", required_unless_present = "locomo")]
    beir: Option<PathBuf>,
    /// The LoCoMo JSON file.
    #[arg(long)]
    locomo: Option<PathBuf>,
    /// Strategies, comma-separated: exact, single, rerank, iterative.
    #[arg(
        long,
        default_value = "exact,single,rerank,iterative",
        value_delimiter = ','
    )]
    strategy: Vec<String>,
    /// Model directory (default: the default model's cache).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Use only the first N queries of each corpus (0: all).
    #[arg(long, default_value_t = 0)]
    limit_queries: usize,
    /// Print JSON lines only.
    #[arg(long)]
    json: bool,
}

/// Documents and judged queries of one store.
struct Corpus {
    docs: Vec<(String, String)>,
    /// Query text and its relevant document keys.
    queries: Vec<(String, Vec<String>)>,
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("a line of {}", path.display())))
        .collect()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn load_beir(dir: &Path) -> Result<Vec<Corpus>> {
    let docs = read_jsonl(&dir.join("corpus.jsonl"))?
        .iter()
        .map(|d| {
            let text = format!("{} {}", str_of(d, "title"), str_of(d, "text"));
            (str_of(d, "_id").to_string(), text.trim().to_string())
        })
        .collect();
    let texts: HashMap<String, String> = read_jsonl(&dir.join("queries.jsonl"))?
        .iter()
        .map(|q| (str_of(q, "_id").to_string(), str_of(q, "text").to_string()))
        .collect();
    let qrels =
        std::fs::read_to_string(dir.join("qrels/test.tsv")).context("reading qrels/test.tsv")?;
    let mut relevant: Vec<(String, Vec<String>)> = Vec::new();
    for line in qrels.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 3 || f[2].trim() == "0" {
            continue;
        }
        match relevant.iter_mut().find(|(q, _)| q == f[0]) {
            Some((_, docs)) => docs.push(f[1].to_string()),
            None => relevant.push((f[0].to_string(), vec![f[1].to_string()])),
        }
    }
    let queries = relevant
        .into_iter()
        .map(|(q, docs)| {
            Ok((
                texts
                    .get(&q)
                    .with_context(|| format!("query {q} has no text"))?
                    .clone(),
                docs,
            ))
        })
        .collect::<Result<_>>()?;
    Ok(vec![Corpus { docs, queries }])
}

fn load_locomo(path: &Path) -> Result<Vec<Corpus>> {
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let Some(conversations) = data.as_array() else {
        bail!("{}: expected a list of conversations", path.display());
    };
    let mut out = Vec::new();
    for c in conversations {
        let conv = &c["conversation"];
        let mut docs = Vec::new();
        for s in 1.. {
            let Some(turns) = conv.get(format!("session_{s}")).and_then(Value::as_array) else {
                break;
            };
            for t in turns {
                let mut text = format!("{}: {}", str_of(t, "speaker"), str_of(t, "text"));
                if let Some(cap) = t.get("blip_caption").and_then(Value::as_str) {
                    text.push_str(&format!(" (image: {cap})"));
                }
                docs.push((str_of(t, "dia_id").to_string(), text));
            }
        }
        let keys: std::collections::HashSet<&str> = docs.iter().map(|d| d.0.as_str()).collect();
        let queries = c["qa"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|q| {
                let evidence: Vec<String> = q["evidence"]
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|e| keys.contains(e))
                    .map(String::from)
                    .collect();
                (!evidence.is_empty()).then(|| (str_of(q, "question").to_string(), evidence))
            })
            .collect();
        out.push(Corpus { docs, queries });
    }
    Ok(out)
}

/// nDCG@10 and Recall@10 of `ranking` against binary relevance.
fn score(ranking: &[String], relevant: &[String]) -> (f64, f64) {
    let rel = |k: &String| relevant.contains(k);
    let dcg: f64 = ranking
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, k)| rel(k))
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(10))
        .map(|i| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let mut found: Vec<&String> = ranking.iter().take(10).filter(|k| rel(k)).collect();
    found.dedup();
    (dcg / ideal, found.len() as f64 / relevant.len() as f64)
}

fn progress(label: &str, done: usize, total: usize) {
    eprint!("\r{label}: {done}/{total}");
    if done == total {
        eprintln!();
    }
    let _ = std::io::stderr().flush();
}

fn main() -> Result<()> {
    let a = Args::parse();
    let (name, corpora) = match (&a.beir, &a.locomo) {
        (Some(dir), _) => (
            dir.file_name()
                .map_or("beir".into(), |n| n.to_string_lossy().into_owned()),
            load_beir(dir)?,
        ),
        (None, Some(file)) => ("locomo".to_string(), load_locomo(file)?),
        _ => bail!("give --beir DIR or --locomo FILE"),
    };
    for s in &a.strategy {
        if s != "exact" && Strategy::parse(s).is_none() {
            bail!("unknown strategy {s:?} (exact, single, rerank, iterative)");
        }
    }
    let model = Arc::new(memloop::load_model(a.model.as_deref())?);
    // Per strategy: (sum nDCG, sum recall, queries, seconds).
    let mut totals: Vec<(f64, f64, usize, f64)> = vec![(0.0, 0.0, 0, 0.0); a.strategy.len()];
    for (ci, corpus) in corpora.iter().enumerate() {
        let t = Instant::now();
        let mut vectors = Vec::with_capacity(corpus.docs.len());
        for chunk in corpus.docs.chunks(64) {
            let texts: Vec<&str> = chunk.iter().map(|d| d.1.as_str()).collect();
            vectors.extend(model.embed_documents(&texts)?);
            progress(
                &format!("embedding corpus {}", ci + 1),
                vectors.len(),
                corpus.docs.len(),
            );
        }
        let embed_s = t.elapsed().as_secs_f64();
        let dir = tempfile::tempdir()?;
        let options = Options {
            durability: Durability::Grouped,
            dedup_threshold: None,
            forgetting: ForgetPolicy::disabled(),
            ..Options::with_embedder(model.clone())
        };
        let memory = Memory::open(dir.path(), options)?;
        let batch: Vec<(NewMemory, Vec<f32>)> = corpus
            .docs
            .iter()
            .zip(&vectors)
            .map(|((key, text), v)| (NewMemory::new(text).subject(key), v.clone()))
            .collect();
        let ids = memory.remember_embedded(batch)?;
        // Exact duplicates merge: a memory stands for every key stored under it.
        let mut keys: HashMap<MemoryId, Vec<String>> = HashMap::new();
        for (id, (key, _)) in ids.iter().zip(&corpus.docs) {
            keys.entry(*id).or_default().push(key.clone());
        }
        let n_queries = if a.limit_queries > 0 {
            a.limit_queries.min(corpus.queries.len())
        } else {
            corpus.queries.len()
        };
        for (si, s) in a.strategy.iter().enumerate() {
            let t = Instant::now();
            for (q, relevant) in &corpus.queries[..n_queries] {
                let ranking: Vec<String> = if s == "exact" {
                    let qv = model.embed_query(q)?;
                    let mut scored: Vec<(f32, usize)> = vectors
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (v.iter().zip(&qv).map(|(x, y)| x * y).sum(), i))
                        .collect();
                    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
                    scored
                        .iter()
                        .take(10)
                        .map(|&(_, i)| corpus.docs[i].0.clone())
                        .collect()
                } else {
                    let strategy = Strategy::parse(s).expect("checked");
                    memory
                        .retrieve(&Query::new(q.as_str()).k(10), strategy)?
                        .iter()
                        .flat_map(|h| keys.get(&h.item.id).cloned().unwrap_or_default())
                        .collect()
                };
                let (ndcg, recall) = score(&ranking, relevant);
                totals[si].0 += ndcg;
                totals[si].1 += recall;
                totals[si].2 += 1;
            }
            totals[si].3 += t.elapsed().as_secs_f64();
        }
        eprintln!(
            "corpus {}: {} docs embedded in {embed_s:.1} s, {n_queries} queries",
            ci + 1,
            corpus.docs.len()
        );
    }
    for (s, (ndcg, recall, n, secs)) in a.strategy.iter().zip(totals) {
        let line = json!({"dataset": name, "strategy": s, "queries": n,
            "ndcg_at_10": ndcg / n as f64, "recall_at_10": recall / n as f64,
            "ms_per_query": secs * 1e3 / n as f64});
        println!("{line}");
    }
    Ok(())
}
