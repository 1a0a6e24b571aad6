//! `sentence-latency`: what keeping a memory's sentence vectors costs a recall in a large store.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin sentence-latency -- \
//!     --longmemeval ../shared/datasets/longmemeval/longmemeval_s_dev.json.gz \
//!     --size 100000 --dir /tmp/sl --json
//! ```
//! One store of `--size` memories made through the engine's own embedding (so each keeps its
//! sentences' vectors, as an application's memories do): LongMemEval-S's distinct user turns
//! (`user: …`, as a conversation stores them), then its assistant turns cut to their first two
//! sentences (`assistant: …`) until the size is reached. Embeddings come through the
//! benchmarks' cache (`--cache`, shared with `retrieval-bench`, which holds the user turns);
//! the rest are computed once and cached. The store is kept in `--dir` and reused.
//!
//! Then the data's questions are recalled with the default `rerank` strategy (k 10), in rounds
//! that alternate the default fusion (sentence weight 0.5: each candidate's sentence vectors
//! read and scored) with the fusion at weight 0, which reads none and ranks as before sentence
//! vectors were kept: the same store, handle and questions. Each round reopens the store and
//! makes one untimed pass first. The question's embedding is read from the cache, so the times
//! are the engine's own (search, candidates, sentences, fusion), where the sentences' share is
//! largest. Prints p50 / p99 / mean per fusion, their ratio, and the index's and the
//! database's bytes per memory.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use memloop::forget::ForgetPolicy;
use memloop::retrieve::ScoreFusion;
use memloop::{Durability, Memory, NewMemory, Options, Query, Strategy, TextEmbedder};
use memloop_benches::embed_cache::{dir_of, CachingEmbedder};
use memloop_benches::longmemeval;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "recall latency with and without sentence vectors, in one large store")]
struct Args {
    /// LongMemEval-S JSON (optionally .gz): its turns fill the store, its questions ask.
    #[arg(long)]
    longmemeval: PathBuf,
    /// Memories in the store.
    #[arg(long, default_value_t = 100_000)]
    size: usize,
    /// Where the store is kept (made when absent, reused when it holds `--size` memories).
    #[arg(long)]
    dir: PathBuf,
    /// Rounds of each fusion, alternating.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Embedding cache (as `retrieval-bench`'s); `none` turns it off.
    #[arg(long, default_value = "~/.cache/memloop/retrieval-bench")]
    cache: String,
    /// The index's vectors for a new store (`f32` or `int8`; default: a new store's, int8).
    #[arg(long)]
    index_vectors: Option<memloop_index::VectorEncoding>,
    /// Print JSON only.
    #[arg(long)]
    json: bool,
}

/// The memories: distinct user turns, then assistant turns' first two sentences, `size` in all.
fn memories(questions: &[longmemeval::LmeQuestion], size: usize) -> Result<Vec<String>> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(size);
    let sessions = || questions.iter().flat_map(|q| &q.sessions);
    for role in ["user", "assistant"] {
        for s in sessions() {
            for t in s.turns.iter().filter(|t| t.role == role) {
                let content = t.content.trim();
                if content.is_empty() {
                    continue;
                }
                let text = if role == "user" {
                    format!("user: {content}")
                } else {
                    let opening: Vec<&str> = memloop::model::sentences(content)
                        .into_iter()
                        .take(2)
                        .collect();
                    format!("assistant: {}", opening.join(" "))
                };
                if seen.insert(text.clone()) {
                    out.push(text);
                    if out.len() == size {
                        return Ok(out);
                    }
                }
            }
        }
    }
    bail!(
        "the data holds {} distinct memories, fewer than {size}",
        out.len()
    )
}

fn options(
    embedder: Arc<dyn TextEmbedder>,
    sentence_weight: f32,
    index_vectors: Option<memloop_index::VectorEncoding>,
) -> Options {
    let mut o = Options {
        index_vectors,
        durability: Durability::Grouped,
        dedup_threshold: None,
        forgetting: ForgetPolicy::disabled(),
        ..Options::with_embedder(embedder)
    };
    o.hooks.reranker = Arc::new(ScoreFusion {
        sentence_weight,
        ..ScoreFusion::default()
    });
    o
}

fn file_bytes(dir: &Path, prefix: &str) -> Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_name().to_string_lossy().starts_with(prefix) {
            total += e.metadata()?.len();
        }
    }
    Ok(total)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() -> Result<()> {
    let a = Args::parse();
    let questions = longmemeval::load(&a.longmemeval)?;
    let model: Arc<dyn TextEmbedder> = Arc::new(memloop::model::load_model_with(
        None,
        memloop::model::DeviceChoice::Cpu,
        memloop::model::EncoderPrecision::F32,
        memloop::model::DocumentPooling::Sentences,
    )?);
    let cached = Arc::new(CachingEmbedder::new(model, dir_of(&a.cache)?.as_deref())?);
    let embedder: Arc<dyn TextEmbedder> = cached.clone();
    let made = {
        let m = Memory::open(&a.dir, options(embedder.clone(), 0.5, a.index_vectors))?;
        let n = m.stats()?.memories;
        if n != a.size && n != 0 {
            bail!("{} holds {n} memories, not {}", a.dir.display(), a.size);
        }
        if n == 0 {
            let texts = memories(&questions, a.size)?;
            let t = Instant::now();
            let bar = indicatif::ProgressBar::new(texts.len() as u64);
            for chunk in texts.chunks(1_000) {
                m.remember_batch(chunk.iter().map(NewMemory::new).collect())?;
                bar.inc(chunk.len() as u64);
            }
            bar.finish_and_clear();
            m.close()?;
            Some(t.elapsed().as_secs_f64())
        } else {
            m.close()?;
            None
        }
    };
    let asked: Vec<&str> = questions.iter().map(|q| q.question.as_str()).collect();
    // Embedded once here, so each recall reads its question's vector from the cache.
    for q in &asked {
        cached.embed_query(q)?;
    }
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let weights = [0.5f32, 0.0];
    for _ in 0..a.rounds {
        for (i, w) in weights.iter().enumerate() {
            let m = Memory::open(&a.dir, options(embedder.clone(), *w, a.index_vectors))?;
            let recall = |q: &str| m.retrieve(&Query::new(q).k(10), Strategy::RERANK);
            for q in &asked {
                recall(q)?;
            }
            for q in &asked {
                let t = Instant::now();
                let hits = recall(q)?;
                times[i].push(t.elapsed().as_secs_f64() * 1e3);
                let explained = hits.iter().any(|h| h.explain.sentence.is_some());
                if explained != (*w > 0.0) {
                    bail!("weight {w}: sentences explained: {explained}");
                }
            }
            m.close()?;
        }
    }
    let figures: Vec<serde_json::Value> = times
        .iter_mut()
        .zip(weights)
        .map(|(t, w)| {
            t.sort_by(f64::total_cmp);
            json!({
                "sentence_weight": w,
                "recalls": t.len(),
                "p50_ms": percentile(t, 0.5),
                "p99_ms": percentile(t, 0.99),
                "mean_ms": t.iter().sum::<f64>() / t.len() as f64,
            })
        })
        .collect();
    let ratio = figures[0]["p50_ms"].as_f64().context("p50")?
        / figures[1]["p50_ms"].as_f64().context("p50")?;
    let n = a.size as f64;
    let out = json!({
        "memories": a.size,
        "ingest_s": made,
        "cache": { "embedded": cached.counts().embedded, "cached": cached.counts().cached },
        "with_sentences": figures[0],
        "without": figures[1],
        "p50_ratio": ratio,
        "index_bytes_per_memory": file_bytes(&a.dir, "index")? as f64 / n,
        "database_bytes_per_memory": file_bytes(&a.dir, "store.redb")? as f64 / n,
    });
    if a.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}
