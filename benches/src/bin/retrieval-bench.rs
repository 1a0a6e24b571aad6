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
use memloop::{
    Clock, Durability, ForgetPolicy, Kind, Memory, MemoryFilter, MemoryId, NewMemory, Options,
    Query, Scope, Strategy, Turn,
};
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
    /// LoCoMo through `Memory::remember_conversation`: each session's turns with the session's
    /// real date (the store's clock moved to it), a session summary, queries asked at the end
    /// of the conversation over the turns; otherwise each turn is a plain memory.
    #[arg(long, requires = "locomo")]
    conversations: bool,
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
    /// The conversation's sessions (LoCoMo): when each began and its turns (key, speaker,
    /// text); `docs` holds the same turns as "speaker: text".
    sessions: Vec<Session>,
    /// Query text, its relevant document keys and its category, if the data has them.
    queries: Vec<JudgedQuery>,
}

/// One session of a LoCoMo conversation.
struct Session {
    time: i64,
    turns: Vec<(String, String, String)>,
}

/// "1:56 pm on 8 May, 2023" as ms since the Unix epoch (UTC).
fn locomo_time(s: &str) -> Option<i64> {
    let (clock, date) = s.split_once(" on ")?;
    let (hm, half) = clock.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    let h = h % 12
        + if half.eq_ignore_ascii_case("pm") {
            12
        } else {
            0
        };
    let parts: Vec<&str> = date.split([' ', ',']).filter(|p| !p.is_empty()).collect();
    let [d, month, y] = parts[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let mo = MONTHS.iter().position(|x| *x == month)? + 1;
    let day = memloop::time::parse_rfc3339(&format!(
        "{y}-{mo:02}-{:02}T00:00:00Z",
        d.parse::<u32>().ok()?
    ))?;
    Some(day + (h * 60 + m) * 60_000)
}

/// A query with its relevant document keys.
struct JudgedQuery {
    text: String,
    relevant: Vec<String>,
    /// LoCoMo's question category (single-hop, multi-hop, temporal, open-domain, adversarial).
    category: Option<&'static str>,
}

/// LoCoMo's category numbers, as its paper names them.
fn locomo_category(n: u64) -> Option<&'static str> {
    match n {
        1 => Some("multi-hop"),
        2 => Some("temporal"),
        3 => Some("open-domain"),
        4 => Some("single-hop"),
        5 => Some("adversarial"),
        _ => None,
    }
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
            Ok(JudgedQuery {
                text: texts
                    .get(&q)
                    .with_context(|| format!("query {q} has no text"))?
                    .clone(),
                relevant: docs,
                category: None,
            })
        })
        .collect::<Result<_>>()?;
    Ok(vec![Corpus {
        docs,
        queries,
        sessions: Vec::new(),
    }])
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
        let mut sessions = Vec::new();
        for s in 1.. {
            let Some(turns) = conv.get(format!("session_{s}")).and_then(Value::as_array) else {
                break;
            };
            let date = str_of(conv, &format!("session_{s}_date_time"));
            let time = locomo_time(date).with_context(|| format!("session {s} date {date:?}"))?;
            let mut session = Session {
                time,
                turns: Vec::new(),
            };
            for t in turns {
                let mut text = str_of(t, "text").to_string();
                if let Some(cap) = t.get("blip_caption").and_then(Value::as_str) {
                    text.push_str(&format!(" (image: {cap})"));
                }
                let (key, speaker) = (str_of(t, "dia_id"), str_of(t, "speaker"));
                docs.push((key.to_string(), format!("{speaker}: {text}")));
                session
                    .turns
                    .push((key.to_string(), speaker.to_string(), text));
            }
            sessions.push(session);
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
                (!evidence.is_empty()).then(|| JudgedQuery {
                    text: str_of(q, "question").to_string(),
                    relevant: evidence,
                    category: q["category"].as_u64().and_then(locomo_category),
                })
            })
            .collect();
        out.push(Corpus {
            docs,
            queries,
            sessions,
        });
    }
    Ok(out)
}

/// Sums of nDCG@10 and Recall@10 over some queries.
#[derive(Default, Clone, Copy)]
struct Sums {
    ndcg: f64,
    recall: f64,
    queries: usize,
}

impl Sums {
    fn ndcg(&self) -> f64 {
        self.ndcg / self.queries as f64
    }
    fn recall(&self) -> f64 {
        self.recall / self.queries as f64
    }
}

/// One strategy's scores: over all queries, per category, and the time it took.
#[derive(Default)]
struct Totals {
    all: Sums,
    categories: std::collections::BTreeMap<&'static str, Sums>,
    seconds: f64,
}

impl Totals {
    fn add(&mut self, category: Option<&'static str>, ndcg: f64, recall: f64) {
        let sums = std::iter::once(&mut self.all)
            .chain(category.map(|c| self.categories.entry(c).or_default()));
        for s in sums {
            s.ndcg += ndcg;
            s.recall += recall;
            s.queries += 1;
        }
    }
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

/// A conversation stored through `remember_conversation`, session by session, the store's
/// clock at each session's date, then an hour past the last: the store, the turns' ids in
/// order, and the filter that searches the turns.
fn store_conversation(
    dir: &Path,
    model: &Arc<memloop_embed::Embedder>,
    sessions: &[Session],
) -> Result<(Memory, Vec<MemoryId>, MemoryFilter)> {
    let clock = Clock::manual(sessions.first().map_or(0, |s| s.time));
    let options = Options {
        durability: Durability::Grouped,
        dedup_threshold: None,
        forgetting: ForgetPolicy::disabled(),
        clock: clock.clone(),
        ..Options::with_embedder(model.clone())
    };
    let memory = Memory::open(dir, options)?;
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
    let mut totals: Vec<Totals> = (0..a.strategy.len()).map(|_| Totals::default()).collect();
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
        let (memory, ids, filter) = if a.conversations {
            store_conversation(dir.path(), &model, &corpus.sessions)?
        } else {
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
            (memory, ids, MemoryFilter::new())
        };
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
            for query in &corpus.queries[..n_queries] {
                let q = &query.text;
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
                        .retrieve(
                            &Query::new(q.as_str()).k(10).filter(filter.clone()),
                            strategy,
                        )?
                        .iter()
                        .flat_map(|h| keys.get(&h.item.id).cloned().unwrap_or_default())
                        .collect()
                };
                let (ndcg, recall) = score(&ranking, &query.relevant);
                totals[si].add(query.category, ndcg, recall);
            }
            totals[si].seconds += t.elapsed().as_secs_f64();
        }
        eprintln!(
            "corpus {}: {} docs embedded in {embed_s:.1} s, {n_queries} queries",
            ci + 1,
            corpus.docs.len()
        );
    }
    for (s, t) in a.strategy.iter().zip(totals) {
        let mut line = json!({"dataset": name, "strategy": s, "queries": t.all.queries,
            "ndcg_at_10": t.all.ndcg(), "recall_at_10": t.all.recall(),
            "ms_per_query": t.seconds * 1e3 / t.all.queries as f64});
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
    Ok(())
}
