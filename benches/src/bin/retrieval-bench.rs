//! `retrieval-bench`: retrieval quality on labelled data, through the whole engine.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin retrieval-bench -- \
//!     (--beir DIR [--split test|train] | --locomo FILE [--conversations]
//!      | --longmemeval FILE [--all-turns]) \
//!     --strategy exact,single,lexical,rerank,iterative,bm25,lancedb-fts,lancedb-hybrid --json
//! ```
//! BEIR (SciFact): the corpus is one store (document text = title + " " + text), the split's
//! queries and qrels judge. LoCoMo: each conversation is its own store, its turns the memories
//! ("speaker: text", plus " (image: caption)" when the turn shared one); a question's evidence
//! turns are its relevant items. `exact` is brute-force cosine over the same vectors (the
//! published baseline); `single`, `lexical`, `rerank` and `iterative` go through
//! `Memory::retrieve`; the peers rank the same documents: `bm25` is plain Okapi BM25
//! (`memloop_benches::plain_bm25`), `lancedb-fts` and `lancedb-hybrid` are LanceDB with its
//! defaults on the same vectors (`benches/lancedb_rank.py`, in the environment
//! `scripts/bench-venv.sh` makes). Prints one JSON object per strategy with nDCG@10 and
//! Recall@10 averaged over the queries (and per category on LoCoMo). The data is read by path
//! and never copied; document embeddings are cached under `--cache`.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use memloop::retrieve::{CrossEncoderReranker, Cue, Cues, Reranker, ScoreFusion};
use memloop::{
    context::ContextRequest, forget::ForgetPolicy, plug::Turn, Clock, Durability, Kind, Memory,
    MemoryFilter, MemoryId, NewMemory, Options, Query, Scope, Strategy, TextEmbedder,
};
use memloop_benches::embed_cache::{dir_of, CachingEmbedder};
use memloop_benches::judged::{load_beir, load_locomo, score, Session, Totals};
use memloop_benches::lancedb_peer;
use memloop_benches::longmemeval::run::LmeArgs;
use memloop_benches::plain_bm25::PlainBm25;
use serde_json::{json, Value};

/// What ranks a corpus's documents for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ranker {
    /// Brute-force cosine over the document vectors.
    Exact,
    /// `Memory::retrieve` with this strategy.
    Memloop(Strategy),
    /// Plain Okapi BM25.
    Bm25,
    /// LanceDB full-text search.
    LanceFts,
    /// LanceDB hybrid search.
    LanceHybrid,
}

impl Ranker {
    fn parse(name: &str) -> Result<Ranker> {
        Ok(match name {
            "exact" => Ranker::Exact,
            "bm25" => Ranker::Bm25,
            "lancedb-fts" => Ranker::LanceFts,
            "lancedb-hybrid" => Ranker::LanceHybrid,
            other => Ranker::Memloop(Strategy::parse(other).with_context(|| {
                format!("unknown strategy {other:?} (exact, single, lexical, rerank, iterative, bm25, lancedb-fts, lancedb-hybrid)")
            })?),
        })
    }

    fn is_lancedb(self) -> bool {
        matches!(self, Ranker::LanceFts | Ranker::LanceHybrid)
    }
}

/// Embeddings of `texts` (documents, or queries when `query`) through the caching embedder,
/// with progress.
fn embed_cached(
    model: &CachingEmbedder,
    texts: &[&str],
    query: bool,
    label: &str,
) -> Result<Vec<Vec<f32>>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(64) {
        if query {
            for t in chunk {
                out.push(model.embed_query(t)?);
            }
        } else {
            out.extend(model.embed_documents(chunk)?);
        }
        progress(label, out.len(), texts.len());
    }
    Ok(out)
}

#[derive(Parser, Debug)]
#[command(about = "retrieval quality (nDCG@10, Recall@10) on BEIR or LoCoMo")]
struct Args {
    /// A BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/test.tsv).
    #[arg(long, conflicts_with_all = ["locomo", "longmemeval"], required_unless_present_any = ["locomo", "longmemeval"])]
    beir: Option<PathBuf>,
    /// The LoCoMo JSON file.
    #[arg(long, conflicts_with = "longmemeval")]
    locomo: Option<PathBuf>,
    /// A LongMemEval file (`longmemeval_oracle.json.gz`, `longmemeval_s_dev.json.gz`, or
    /// `.json`): each question's haystack a conversation in its own store, asked at the
    /// question's date; official metrics (user turns) unless `--all-turns`. Without
    /// `--strategy`, every strategy and baseline runs.
    #[arg(long)]
    longmemeval: Option<PathBuf>,
    /// LongMemEval: store every turn and count evidence of both speakers (memloop's own
    /// figures) instead of the official user turns.
    #[arg(long, requires = "longmemeval")]
    all_turns: bool,
    /// Which BEIR queries judge: test (reported) or train (for tuning).
    #[arg(long, default_value = "test", value_parser = ["test", "train"])]
    split: String,
    /// Strategies and peers, comma-separated: exact, single, lexical, rerank, iterative, bm25,
    /// lancedb-fts, lancedb-hybrid.
    #[arg(long, value_delimiter = ',')]
    strategy: Vec<String>,
    /// The Python that runs the LanceDB peer (made by `bash scripts/bench-venv.sh`).
    #[arg(long, default_value = "target/bench-venv/bin/python")]
    python: PathBuf,
    /// Where document and query embeddings are cached between runs (keyed by the model and
    /// the texts); `none` turns the cache off.
    #[arg(long, default_value = "~/.cache/memloop/retrieval-bench")]
    cache: String,
    /// Model directory (default: the default model's cache).
    #[arg(long)]
    model: Option<PathBuf>,
    /// The model's matrix products: `f32` (default) or `int8` (its vectors are cached apart).
    #[arg(long, default_value = "f32", value_parser = ["f32", "int8"])]
    precision: String,
    /// How a stored text's vector is made: `sentences` (the mean of its sentences' vectors,
    /// a new store's default) or `whole` (cached apart).
    #[arg(long, default_value = "sentences", value_parser = ["whole", "sentences"])]
    pooling: String,
    /// LoCoMo through `Memory::remember_conversation`: each session's turns with the session's
    /// real date (the store's clock moved to it), a session summary, queries asked at the end
    /// of the conversation over the turns; otherwise each turn is a plain memory.
    #[arg(long, requires = "locomo")]
    conversations: bool,
    /// Context quality (LoCoMo): for each question, a context at each of these token budgets
    /// (comma-separated) from the `rerank` hits, beside a naive one (the same hits' original
    /// texts, best first, while they fit; a turn dated as memloop serves it); counts the
    /// questions whose evidence turns are all in it, and whose answer, where an evidence
    /// turn's text holds it, is still in their served text.
    #[arg(long, value_delimiter = ',', requires = "locomo")]
    contexts: Vec<usize>,
    /// Use only the first N queries of each corpus (LongMemEval: the first N questions; 0: all).
    #[arg(long, default_value_t = 0)]
    limit_queries: usize,
    /// The default reranker's lexical weight (`ScoreFusion`) in every place, for measuring
    /// others (default: the engine's head and tail weights).
    #[arg(long)]
    lexical_weight: Option<f32>,
    /// How many places the fusion's lexical-leaning weight fills (`ScoreFusion::head`); with
    /// `--lexical-weight`, that weight fills them.
    #[arg(long)]
    fusion_head: Option<usize>,
    /// The fusion's lexical weight below its head (`ScoreFusion::tail_lexical_weight`).
    #[arg(long)]
    tail_lexical_weight: Option<f32>,
    /// What the best sentence's cosine adds below the fusion's head, times this
    /// (`ScoreFusion::sentence_weight`; 0 ranks as before sentence vectors were kept).
    #[arg(long)]
    sentence_weight: Option<f32>,
    /// A cross-encoder directory (a one-label BERT sequence classifier such as
    /// ms-marco-MiniLM-L-6-v2; none ships with memloop): `rerank` and `iterative` order their
    /// best fused candidates by it (`CrossEncoderReranker`).
    #[arg(long)]
    cross_encoder: Option<PathBuf>,
    /// How many of the fused candidates the cross-encoder reads.
    #[arg(long, default_value_t = memloop::retrieve::CrossEncoderReranker::DEFAULT_DEPTH, requires = "cross_encoder")]
    cross_encoder_depth: usize,
    /// LongMemEval: write each (question, system)'s ten best turns and its evidence turns'
    /// ranks to this file, one JSON line each (every system but LanceDB's, which rank in
    /// batches in their own process).
    #[arg(long, requires = "longmemeval")]
    per_question: Option<PathBuf>,
    /// Recall's cues switched off, comma-separated (`memloop::retrieve::Cue`: time,
    /// preference, quantity, acquired, age, event, newest-first; `all` for every one): each
    /// measured alone by the figures it moves.
    #[arg(long, value_delimiter = ',')]
    cues_off: Vec<String>,
    /// Print JSON lines only.
    #[arg(long)]
    json: bool,
}

/// The cues recall applies: all but those `--cues-off` names.
fn cues(a: &Args) -> Result<Cues> {
    let mut on = Cues::ALL;
    for name in &a.cues_off {
        if name == "all" {
            on = Cues::NONE;
            continue;
        }
        let names: Vec<&str> = Cue::ALL.iter().map(|c| c.name()).collect();
        let cue = Cue::parse(name)
            .with_context(|| format!("unknown cue {name:?} ({})", names.join(", ")))?;
        on = on.without(cue);
    }
    Ok(on)
}

/// The reranker the arguments ask for, if not the engine's default: a cross-encoder after the
/// fusion, or the fusion at another lexical weight.
fn reranker(a: &Args) -> Result<Option<Arc<dyn Reranker>>> {
    let fusion = (a.lexical_weight.is_some()
        || a.fusion_head.is_some()
        || a.tail_lexical_weight.is_some()
        || a.sentence_weight.is_some())
    .then(|| {
        let mut f = a
            .lexical_weight
            .map_or_else(ScoreFusion::default, ScoreFusion::uniform);
        if let Some(h) = a.fusion_head {
            f.head = h;
        }
        if let Some(w) = a.tail_lexical_weight {
            f.tail_lexical_weight = w;
        }
        if let Some(w) = a.sentence_weight {
            f.sentence_weight = w;
        }
        f
    });
    Ok(match &a.cross_encoder {
        Some(dir) => {
            let mut r = CrossEncoderReranker::load(dir)?;
            r.depth = a.cross_encoder_depth;
            r.first = fusion.unwrap_or(r.first);
            Some(Arc::new(r))
        }
        None => fusion.map(|f| Arc::new(f) as Arc<dyn Reranker>),
    })
}

/// `options` with `reranker`, if any, and `cues`.
fn fused(mut options: Options, reranker: Option<&Arc<dyn Reranker>>, cues: Cues) -> Options {
    options.cues = cues;
    if let Some(r) = reranker {
        options.hooks.reranker = r.clone();
    }
    options
}

fn progress(label: &str, done: usize, total: usize) {
    eprint!("\r{label}: {done}/{total}");
    if done == total {
        eprintln!();
    }
    let _ = std::io::stderr().flush();
}

/// A conversation stored through `remember_conversation`, session by session, the store's
/// clock at each session's date, then an hour past the last: the store, the turns' ids in
/// order, and the filter that searches the turns.
fn store_conversation(
    dir: &Path,
    model: Arc<dyn memloop::TextEmbedder>,
    sessions: &[Session],
    reranker: Option<&Arc<dyn Reranker>>,
    cues: Cues,
) -> Result<(Memory, Vec<MemoryId>, MemoryFilter)> {
    let clock = Clock::manual(sessions.first().map_or(0, |s| s.time));
    let options = Options {
        durability: Durability::Grouped,
        dedup_threshold: None,
        forgetting: ForgetPolicy::disabled(),
        clock: clock.clone(),
        ..Options::with_embedder(model)
    };
    let memory = Memory::open(dir, fused(options, reranker, cues))?;
    let mut ids = Vec::new();
    for (i, session) in sessions.iter().enumerate() {
        clock
            .set(session.time.max(clock.now()))
            .map_err(anyhow::Error::msg)?;
        let turns: Vec<Turn> = session
            .turns
            .iter()
            .map(|(_, speaker, text)| Turn::new(speaker, text, session.time))
            .collect();
        let report =
            memory.remember_conversation(&(i + 1).to_string(), &turns, &Scope::default())?;
        ids.extend(report.turns);
    }
    clock
        .set(clock.now() + 3_600_000)
        .map_err(anyhow::Error::msg)?;
    Ok((memory, ids, MemoryFilter::new().kind(Kind::Turn)))
}

fn main() -> Result<()> {
    let mut a = Args::parse();
    // clap admits only the names these parse.
    let precision = memloop::model::EncoderPrecision::parse(&a.precision).unwrap_or_default();
    let pooling = memloop::model::DocumentPooling::parse(&a.pooling).unwrap_or_default();
    if let Some(file) = &a.longmemeval {
        if a.strategy.is_empty() {
            a.strategy =
                "single,lexical,rerank,iterative,exact,bm25,bm25-lower,lancedb-fts,lancedb-hybrid"
                    .split(',')
                    .map(String::from)
                    .collect();
        }
        return memloop_benches::longmemeval::run::run(&LmeArgs {
            file: file.clone(),
            systems: a.strategy.clone(),
            python: a.python.clone(),
            cache: dir_of(&a.cache)?,
            model: a.model.clone(),
            precision,
            pooling,
            limit: a.limit_queries,
            all_turns: a.all_turns,
            reranker: reranker(&a)?,
            cues: cues(&a)?,
            json: a.json,
            per_question: a.per_question.clone(),
        });
    }
    if a.strategy.is_empty() {
        a.strategy = "exact,single,lexical,rerank,iterative"
            .split(',')
            .map(String::from)
            .collect();
    }
    let (name, corpora) = match (&a.beir, &a.locomo) {
        (Some(dir), _) => (
            dir.file_name()
                .map_or("beir".into(), |n| n.to_string_lossy().into_owned()),
            load_beir(dir, &a.split)?,
        ),
        (None, Some(file)) => ("locomo".to_string(), load_locomo(file)?),
        _ => bail!("give --beir DIR or --locomo FILE"),
    };
    let rankers: Vec<Ranker> = a
        .strategy
        .iter()
        .map(|s| Ranker::parse(s))
        .collect::<Result<_>>()?;
    let model = Arc::new(memloop::model::load_model_with(
        a.model.as_deref(),
        memloop::model::DeviceChoice::Cpu,
        precision,
        pooling,
    )?);
    let cached = Arc::new(CachingEmbedder::new(
        model.clone(),
        dir_of(&a.cache)?.as_deref(),
    )?);
    let chosen = reranker(&a)?;
    let cues = cues(&a)?;
    let mut totals: Vec<Totals> = (0..rankers.len()).map(|_| Totals::default()).collect();
    let mut lancedb_version = None;
    // Per budget: questions, carried by memloop's context, carried by the naive one.
    let mut carried: Vec<(usize, usize, usize)> = vec![(0, 0, 0); a.contexts.len()];
    for (ci, corpus) in corpora.iter().enumerate() {
        let t = Instant::now();
        let texts: Vec<&str> = corpus.docs.iter().map(|d| d.1.as_str()).collect();
        let label = format!("embedding corpus {}", ci + 1);
        let vectors = embed_cached(&cached, &texts, false, &label)?;
        let n_queries = if a.limit_queries > 0 {
            a.limit_queries.min(corpus.queries.len())
        } else {
            corpus.queries.len()
        };
        let queries = &corpus.queries[..n_queries];
        let query_texts: Vec<&str> = queries.iter().map(|q| q.text.as_str()).collect();
        let label = format!("embedding queries {}", ci + 1);
        let query_vectors = embed_cached(&cached, &query_texts, true, &label)?;
        let embed_s = t.elapsed().as_secs_f64();
        let dir = tempfile::tempdir()?;
        let (memory, ids, filter) = if a.conversations {
            store_conversation(
                dir.path(),
                cached.clone(),
                &corpus.sessions,
                chosen.as_ref(),
                cues,
            )?
        } else {
            let options = Options {
                durability: Durability::Grouped,
                dedup_threshold: None,
                forgetting: ForgetPolicy::disabled(),
                ..Options::with_embedder(cached.clone())
            };
            let memory = Memory::open(dir.path(), fused(options, chosen.as_ref(), cues))?;
            // Through the engine's own embedding (read from the cache): each memory keeps
            // its sentences' vectors, as an application's would.
            let batch: Vec<NewMemory> = corpus
                .docs
                .iter()
                .map(|(key, text)| NewMemory::new(text).subject(key))
                .collect();
            let ids = memory.remember_batch(batch)?;
            (memory, ids, MemoryFilter::new())
        };
        // Exact duplicates merge: a memory stands for every key stored under it.
        let mut keys: HashMap<MemoryId, Vec<String>> = HashMap::new();
        for (id, (key, _)) in ids.iter().zip(&corpus.docs) {
            keys.entry(*id).or_default().push(key.clone());
        }
        let bm25 = rankers
            .contains(&Ranker::Bm25)
            .then(|| PlainBm25::new(texts.iter().copied()));
        let lance = if rankers.iter().any(|r| r.is_lancedb()) {
            let asked: Vec<(&str, Vec<f32>)> = query_texts
                .iter()
                .copied()
                .zip(query_vectors.iter().cloned())
                .collect();
            let r = lancedb_peer::rank(&a.python, &corpus.docs, &vectors, &asked, 10)?;
            lancedb_version = Some(r.version.clone());
            Some(r)
        } else {
            None
        };
        for (ri, ranker) in rankers.iter().enumerate() {
            let t = Instant::now();
            for (qi, query) in queries.iter().enumerate() {
                let ranking: Vec<String> = match *ranker {
                    Ranker::Exact => {
                        let qv = &query_vectors[qi];
                        let mut scored: Vec<(f32, usize)> = vectors
                            .iter()
                            .enumerate()
                            .map(|(i, v)| (v.iter().zip(qv).map(|(x, y)| x * y).sum(), i))
                            .collect();
                        scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
                        scored
                            .iter()
                            .take(10)
                            .map(|&(_, i)| corpus.docs[i].0.clone())
                            .collect()
                    }
                    Ranker::Memloop(strategy) => {
                        let q = Query::new(query.text.as_str()).k(10).filter(filter.clone());
                        memory
                            .retrieve(&q, strategy)?
                            .iter()
                            .flat_map(|h| keys.get(&h.item.id).cloned().unwrap_or_default())
                            .collect()
                    }
                    Ranker::Bm25 => bm25
                        .as_ref()
                        .expect("built when asked for")
                        .search(&query.text, 10)
                        .into_iter()
                        .map(|i| corpus.docs[i].0.clone())
                        .collect(),
                    Ranker::LanceFts => lance.as_ref().expect("ran").fts[qi].clone(),
                    Ranker::LanceHybrid => lance.as_ref().expect("ran").hybrid[qi].clone(),
                };
                let (ndcg, recall) = score(&ranking, &query.relevant);
                totals[ri].add(query.category, ndcg, recall);
            }
            totals[ri].seconds += t.elapsed().as_secs_f64();
        }
        for (bi, &budget) in a.contexts.iter().enumerate() {
            for query in queries {
                let (memloop, naive) =
                    contexts_carry(&memory, &model, corpus, &keys, &filter, query, budget)?;
                carried[bi].0 += 1;
                carried[bi].1 += usize::from(memloop);
                carried[bi].2 += usize::from(naive);
            }
        }
        eprintln!(
            "corpus {}: {} docs and {n_queries} queries embedded (or read from the cache) in {embed_s:.1} s",
            ci + 1,
            corpus.docs.len()
        );
    }
    for (s, t) in a.strategy.iter().zip(totals) {
        let mut line = json!({"dataset": name, "strategy": s, "queries": t.all.queries,
            "ndcg_at_10": t.all.ndcg(), "recall_at_10": t.all.recall(),
            "ms_per_query": t.seconds * 1e3 / t.all.queries as f64});
        if s.starts_with("lancedb") {
            line["lancedb"] = json!(lancedb_version);
        }
        if name != "locomo" {
            line["split"] = json!(a.split);
        }
        if !t.categories.is_empty() {
            let categories: serde_json::Map<String, Value> = t
                .categories
                .iter()
                .map(|(c, sums)| {
                    let v = json!({"queries": sums.queries, "ndcg_at_10": sums.ndcg(),
                        "recall_at_10": sums.recall()});
                    (c.to_string(), v)
                })
                .collect();
            line["categories"] = Value::Object(categories);
        }
        println!("{line}");
    }
    for (&budget, (n, memloop, naive)) in a.contexts.iter().zip(carried) {
        let line = json!({"dataset": name, "context_budget": budget, "questions": n,
            "strategy": "rerank", "memloop_carried": memloop, "naive_carried": naive,
            "memloop_share": memloop as f64 / n as f64, "naive_share": naive as f64 / n as f64});
        println!("{line}");
    }
    Ok(())
}

/// Whether memloop's context for `query` at `budget` tokens, and a naive one from the same
/// hits, carry its evidence: every evidence turn in it and, where an evidence turn's text
/// holds the answer, the answer in the served text.
fn contexts_carry(
    memory: &Memory,
    model: &memloop_embed::Embedder,
    corpus: &memloop_benches::judged::Corpus,
    keys: &HashMap<MemoryId, Vec<String>>,
    filter: &MemoryFilter,
    query: &memloop_benches::judged::JudgedQuery,
    budget: usize,
) -> Result<(bool, bool)> {
    let q = Query::new(query.text.as_str()).k(20).filter(filter.clone());
    let hits = memory.retrieve(&q, Strategy::RERANK)?;
    let mut request = ContextRequest::new(query.text.as_str(), budget);
    request.query = q;
    request.strategy = Strategy::RERANK;
    let context = memory.context(&request)?;
    let served: Vec<(Vec<String>, String)> = context
        .blocks
        .iter()
        .map(|b| (keys.get(&b.id).cloned().unwrap_or_default(), b.text.clone()))
        .collect();
    let mut naive: Vec<(Vec<String>, String)> = Vec::new();
    let mut text = String::new();
    for h in &hits {
        // A turn's line carries its date, as memloop's context serves it.
        let line = if h.item.kind == Kind::Turn {
            format!(
                "[{}] {}",
                memloop::time::format_minute(h.item.valid_from),
                h.item.text
            )
        } else {
            h.item.text.clone()
        };
        let candidate = if text.is_empty() {
            line
        } else {
            format!("{text}\n{line}")
        };
        if TextEmbedder::count_tokens(model, &candidate) <= budget {
            text = candidate;
            naive.push((
                keys.get(&h.item.id).cloned().unwrap_or_default(),
                h.item.text.clone(),
            ));
        }
    }
    let originals: HashMap<&str, &str> = corpus
        .docs
        .iter()
        .map(|(k, t)| (k.as_str(), t.as_str()))
        .collect();
    let answer = query.answer.as_deref().map(str::to_lowercase).filter(|a| {
        query.relevant.iter().any(|k| {
            originals
                .get(k.as_str())
                .is_some_and(|t| t.to_lowercase().contains(a))
        })
    });
    let carries = |blocks: &[(Vec<String>, String)]| {
        let all_there = query
            .relevant
            .iter()
            .all(|k| blocks.iter().any(|(keys, _)| keys.contains(k)));
        let answer_kept = answer.as_ref().is_none_or(|a| {
            blocks.iter().any(|(keys, text)| {
                query.relevant.iter().any(|k| keys.contains(k)) && text.to_lowercase().contains(a)
            })
        });
        all_there && answer_kept
    };
    Ok((carries(&served), carries(&naive)))
}
