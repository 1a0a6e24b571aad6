//! `retrieval-bench --longmemeval FILE`: every question's haystack stored as a conversation in
//! its own store (each session at its date, turns with their speaker), the question asked at its
//! date, ranked by each memloop strategy and by the baselines on the same texts and vectors, and
//! scored by the official metrics.
//!
//! - `official` (the default): the store holds the **user** turns only; evidence is the user
//!   turns with `has_answer` in evidence sessions; the questions with none are left out.
//! - `all_turns` (`--all-turns`): every turn is stored, and evidence is every `has_answer` turn.
//!
//! Rankings are of turns; session figures take each session at its best turn.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use memloop::{
    forget::ForgetPolicy, plug::Turn, Clock, Durability, Kind, Memory, MemoryFilter, MemoryId,
    Options, Query, Scope, Strategy, TextEmbedder,
};
use serde_json::json;

use memloop::retrieve::{FusionReranker, Reranker, ScoreFusion};

use super::bm25_okapi::Bm25Okapi;
use super::metrics::{at_k, sessions_of, AtK};
use super::LmeQuestion;
use crate::embed_cache::CachingEmbedder;
use crate::lancedb_peer;

/// The cut-offs reported.
const KS: [usize; 3] = [1, 5, 10];
/// How many turns each system ranks (enough for the session figures at 10).
const DEPTH: usize = 50;

/// What `--longmemeval` was asked.
pub struct LmeArgs {
    /// The LongMemEval file.
    pub file: PathBuf,
    /// Systems: memloop strategies (single, lexical, rerank, iterative), exact, bm25,
    /// bm25-lower, lancedb-fts, lancedb-hybrid.
    pub systems: Vec<String>,
    /// The Python of the LanceDB peer.
    pub python: PathBuf,
    /// The embedding cache's directory (none: no cache).
    pub cache: Option<PathBuf>,
    /// The model directory (default: the default model).
    pub model: Option<PathBuf>,
    /// The model's matrix products.
    pub precision: memloop::model::EncoderPrecision,
    /// How stored texts' vectors are made.
    pub pooling: memloop::model::DocumentPooling,
    /// Only the first N questions (0: all).
    pub limit: usize,
    /// Every turn stored, evidence of both speakers (memloop's own figures).
    pub all_turns: bool,
    /// The reranker, when not the engine's default.
    pub reranker: Option<Arc<dyn Reranker>>,
    /// The cues recall applies.
    pub cues: memloop::retrieve::Cues,
    /// JSON lines only.
    pub json: bool,
    /// Where to write each (question, system)'s ranking beside its evidence, one JSON line
    /// each, for reading the misses.
    pub per_question: Option<PathBuf>,
}

/// What ranks a question's turns.
#[derive(Debug, Clone, Copy, PartialEq)]
enum System {
    Memloop(Strategy),
    Exact,
    Bm25 {
        lowercase: bool,
    },
    LanceFts,
    LanceHybrid,
    /// Exploration: the hybrid candidates re-fused with lexical weight `w`, each turn lifted
    /// by `lift` times the best fused score of another candidate of its session.
    Fuse {
        w: f32,
        lift: f32,
    },
    /// Exploration: z-scores of both signals over the candidates, lexical weight `w`.
    ZFuse {
        w: f32,
    },
    /// Exploration: reciprocal-rank fusion with damping `k`.
    Rrf {
        k: f32,
    },
}

impl System {
    fn parse(name: &str) -> Result<System> {
        Ok(match name {
            "exact" => System::Exact,
            "bm25" => System::Bm25 { lowercase: false },
            "bm25-lower" => System::Bm25 { lowercase: true },
            "lancedb-fts" => System::LanceFts,
            "lancedb-hybrid" => System::LanceHybrid,
            fuse if fuse.starts_with("fuse:") => {
                let p: Vec<f32> = fuse[5..]
                    .split(':')
                    .map(|x| x.parse().context("fuse:W:LIFT takes two numbers"))
                    .collect::<Result<_>>()?;
                anyhow::ensure!(p.len() == 2, "fuse:W:LIFT takes two numbers");
                System::Fuse { w: p[0], lift: p[1] }
            }
            z if z.starts_with("zfuse:") => System::ZFuse {
                w: z[6..].parse().context("zfuse:W")?,
            },
            r if r.starts_with("rrf:") => System::Rrf {
                k: r[4..].parse().context("rrf:K")?,
            },
            other => System::Memloop(Strategy::parse(other).with_context(|| {
                format!("unknown system {other:?} (single, lexical, rerank, iterative, exact, bm25, bm25-lower, lancedb-fts, lancedb-hybrid)")
            })?),
        })
    }

    /// The `system` field of the JSON lines.
    fn family(self) -> &'static str {
        match self {
            System::Memloop(_) => "memloop",
            System::Exact => "exact-cosine",
            System::Bm25 { .. } => "bm25",
            System::LanceFts => "lancedb-fts",
            System::LanceHybrid => "lancedb-hybrid",
            System::Fuse { .. } | System::ZFuse { .. } | System::Rrf { .. } => "memloop-explore",
        }
    }
}

/// Sums of the figures of one (system, granularity, question type).
#[derive(Default, Clone)]
struct Sums {
    questions: usize,
    at: [AtK; 3],
}

impl Sums {
    fn add(&mut self, figures: [AtK; 3]) {
        self.questions += 1;
        for (s, f) in self.at.iter_mut().zip(figures) {
            s.recall_any += f.recall_any;
            s.recall_all += f.recall_all;
            s.ndcg_any += f.ndcg_any;
        }
    }
}

/// One question's haystack as the documents ranked: keys, texts (what the store holds) and the
/// evidence.
struct Haystack {
    keys: Vec<String>,
    texts: Vec<String>,
    /// What each turn said, without its speaker (what the official BM25 ranks).
    contents: Vec<String>,
    evidence_turns: Vec<String>,
    evidence_sessions: Vec<String>,
    session_of: HashMap<String, String>,
}

fn haystack(q: &LmeQuestion, all_turns: bool) -> Haystack {
    let mut h = Haystack {
        keys: Vec::new(),
        texts: Vec::new(),
        contents: Vec::new(),
        evidence_turns: q.evidence_turns(!all_turns),
        evidence_sessions: q.evidence_sessions(),
        session_of: HashMap::new(),
    };
    for s in &q.sessions {
        for (i, t) in s.kept_turns(all_turns) {
            let key = s.turn_key(i);
            h.session_of.insert(key.clone(), s.id.clone());
            h.keys.push(key);
            h.texts.push(format!("{}: {}", t.role, t.content));
            h.contents.push(t.content.clone());
        }
    }
    h.evidence_turns.retain(|k| h.session_of.contains_key(k));
    h
}

/// The question's haystack stored through `remember_conversation`: sessions in date order, the
/// clock at each one's date, then at the question's. Returns the store and each turn memory's
/// key.
fn store(
    dir: &Path,
    embedder: Arc<dyn TextEmbedder>,
    q: &LmeQuestion,
    all_turns: bool,
    reranker: Option<&Arc<dyn Reranker>>,
    cues: memloop::retrieve::Cues,
) -> Result<(Memory, HashMap<MemoryId, String>)> {
    let mut sessions: Vec<&super::LmeSession> = q.sessions.iter().collect();
    sessions.sort_by_key(|s| s.time);
    let clock = Clock::manual(sessions.first().map_or(q.time, |s| s.time));
    let mut options = Options {
        durability: Durability::Grouped,
        dedup_threshold: None,
        forgetting: ForgetPolicy::disabled(),
        clock: clock.clone(),
        cues,
        ..Options::with_embedder(embedder)
    };
    if let Some(r) = reranker {
        options.hooks.reranker = r.clone();
    }
    let memory = Memory::open(dir, options)?;
    let mut keys = HashMap::new();
    for s in sessions {
        let picked: Vec<(usize, &super::LmeTurn)> = s.kept_turns(all_turns).collect();
        if picked.is_empty() {
            continue;
        }
        clock
            .set(s.time.max(clock.now()))
            .map_err(anyhow::Error::msg)?;
        let turns: Vec<Turn> = picked
            .iter()
            .map(|(_, t)| Turn::new(&t.role, &t.content, s.time))
            .collect();
        let report = memory.remember_conversation(&s.id, &turns, &Scope::default())?;
        for (id, (i, _)) in report.turns.iter().zip(&picked) {
            keys.insert(*id, s.turn_key(*i));
        }
    }
    clock
        .set(q.time.max(clock.now()))
        .map_err(anyhow::Error::msg)?;
    Ok((memory, keys))
}

/// Runs the benchmark and prints its lines.
pub fn run(a: &LmeArgs) -> Result<()> {
    let systems: Vec<System> = a
        .systems
        .iter()
        .map(|s| System::parse(s))
        .collect::<Result<_>>()?;
    let mut questions = super::load(&a.file)?;
    if a.limit > 0 {
        questions.truncate(a.limit);
    }
    let model: Arc<dyn TextEmbedder> = Arc::new(memloop::model::load_model_with(
        a.model.as_deref(),
        memloop::model::DeviceChoice::Cpu,
        a.precision,
        a.pooling,
    )?);
    let cached = Arc::new(CachingEmbedder::new(model, a.cache.as_deref())?);
    let metrics = if a.all_turns { "all_turns" } else { "official" };
    // (system index, granularity, question type) → sums.
    let mut sums: BTreeMap<(usize, &'static str, String), Sums> = BTreeMap::new();
    let mut seconds = vec![0.0f64; systems.len()];
    // Ingest: the stores written (turns through remember_conversation), embedding included
    // (from the cache when warm).
    let (mut ingest_s, mut turns_stored) = (0.0f64, 0usize);
    let lance_wanted = systems
        .iter()
        .any(|s| matches!(s, System::LanceFts | System::LanceHybrid));
    let mut lance_batch: Vec<lancedb_peer::Corpus> = Vec::new();
    let mut lance_pending: Vec<(Haystack, String)> = Vec::new();
    let mut lancedb_version = None;
    let mut lancedb_ingest_s = 0.0f64;
    let started = Instant::now();
    let mut per_question = a
        .per_question
        .as_ref()
        .map(|p| std::fs::File::create(p).map(std::io::BufWriter::new))
        .transpose()
        .context("--per-question")?;
    let record = |sums: &mut BTreeMap<(usize, &'static str, String), Sums>,
                  si: usize,
                  h: &Haystack,
                  kind: &str,
                  ranking: &[String]| {
        let turn = KS.map(|k| at_k(ranking, &h.evidence_turns, k));
        if turn.iter().all(Option::is_some) {
            let figures = turn.map(|f| f.expect("checked"));
            for t in ["all", kind] {
                sums.entry((si, "turn", t.to_string()))
                    .or_default()
                    .add(figures);
            }
        }
        let sessions = sessions_of(ranking, |k| h.session_of[k].clone());
        let session = KS.map(|k| at_k(&sessions, &h.evidence_sessions, k));
        if session.iter().all(Option::is_some) {
            let figures = session.map(|f| f.expect("checked"));
            for t in ["all", kind] {
                sums.entry((si, "session", t.to_string()))
                    .or_default()
                    .add(figures);
            }
        }
    };
    // The last question scored: LanceDB's last batch goes with it.
    let last_scored = questions.iter().rposition(|q| !q.is_abstention());
    for (qi, q) in questions.iter().enumerate() {
        if q.is_abstention() {
            continue;
        }
        let h = haystack(q, a.all_turns);
        let t = Instant::now();
        let dir = tempfile::tempdir()?;
        let needs_store = systems.iter().any(|s| {
            matches!(
                s,
                System::Memloop(_)
                    | System::Fuse { .. }
                    | System::ZFuse { .. }
                    | System::Rrf { .. }
            )
        });
        let stored = if needs_store {
            Some(store(
                dir.path(),
                cached.clone(),
                q,
                a.all_turns,
                a.reranker.as_ref(),
                a.cues,
            )?)
        } else {
            None
        };
        let text_refs: Vec<&str> = h.texts.iter().map(String::as_str).collect();
        let vectors = cached.embed_documents(&text_refs)?;
        let query_vector = cached.embed_query(&q.question)?;
        ingest_s += t.elapsed().as_secs_f64();
        turns_stored += h.keys.len();
        let pool = if systems.iter().any(|s| {
            matches!(
                s,
                System::Fuse { .. } | System::ZFuse { .. } | System::Rrf { .. }
            )
        }) {
            let (memory, keys) = stored.as_ref().expect("stored for memloop");
            let query = Query::new(q.question.as_str())
                .k(2 * DEPTH)
                .filter(MemoryFilter::new().kind(Kind::Turn));
            memory
                .retrieve(&query, Strategy::RERANK)?
                .into_iter()
                .filter_map(|hit| Some((keys.get(&hit.item.id)?.clone(), hit)))
                .collect::<Vec<_>>()
        } else {
            Vec::new()
        };
        for (si, system) in systems.iter().enumerate() {
            let t = Instant::now();
            let ranking: Vec<String> = match *system {
                System::Memloop(strategy) => {
                    let (memory, keys) = stored.as_ref().expect("stored for memloop");
                    let query = Query::new(q.question.as_str())
                        .k(DEPTH)
                        .filter(MemoryFilter::new().kind(Kind::Turn));
                    memory
                        .retrieve(&query, strategy)?
                        .iter()
                        .filter_map(|hit| keys.get(&hit.item.id).cloned())
                        .collect()
                }
                System::Exact => {
                    let mut scored: Vec<(f32, usize)> = vectors
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (v.iter().zip(&query_vector).map(|(x, y)| x * y).sum(), i))
                        .collect();
                    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
                    scored
                        .iter()
                        .take(DEPTH)
                        .map(|&(_, i)| h.keys[i].clone())
                        .collect()
                }
                System::Bm25 { lowercase } => {
                    // The official baseline ranks the turns' contents.
                    Bm25Okapi::new(h.contents.iter().map(String::as_str), lowercase)
                        .search(&q.question, DEPTH)
                        .into_iter()
                        .map(|i| h.keys[i].clone())
                        .collect()
                }
                System::Fuse { w, lift } => refuse(&pool, &h, w, lift),
                System::ZFuse { w } => zfuse(&pool, w),
                System::Rrf { k } => rrf(&pool, k),
                System::LanceFts | System::LanceHybrid => continue,
            };
            seconds[si] += t.elapsed().as_secs_f64();
            record(&mut sums, si, &h, &q.kind, &ranking);
            if let Some(w) = per_question.as_mut() {
                write_ranking(w, q, &a.systems[si], &h, &ranking)?;
            }
        }
        if let Some((memory, _)) = stored {
            memory.close()?;
        }
        if lance_wanted {
            lance_batch.push(lancedb_peer::Corpus {
                docs: h
                    .keys
                    .iter()
                    .cloned()
                    .zip(h.texts.iter().cloned())
                    .collect(),
                vectors,
                queries: vec![(q.question.clone(), query_vector)],
            });
            lance_pending.push((h, q.kind.clone()));
            if lance_batch.len() == 20 || Some(qi) == last_scored {
                let ranked = lancedb_peer::rank_many(&a.python, &lance_batch, DEPTH)?;
                lancedb_version = Some(ranked.version.clone());
                lancedb_ingest_s += ranked.ingest_seconds;
                for ((h, kind), r) in lance_pending.drain(..).zip(&ranked.corpora) {
                    for (si, system) in systems.iter().enumerate() {
                        match system {
                            System::LanceFts => record(&mut sums, si, &h, &kind, &r.fts[0]),
                            System::LanceHybrid => record(&mut sums, si, &h, &kind, &r.hybrid[0]),
                            _ => {}
                        }
                    }
                }
                lance_batch.clear();
            }
        }
        if !a.json {
            let c = cached.counts();
            eprint!(
                "\r{}/{} questions, {} turns embedded, {} from the cache, {:.0} s",
                qi + 1,
                questions.len(),
                c.embedded,
                c.cached,
                started.elapsed().as_secs_f64()
            );
        }
    }
    if !a.json {
        eprintln!();
    }
    if let Some(mut w) = per_question {
        w.flush()?;
    }
    let counts = cached.counts();
    for ((si, granularity, kind), s) in &sums {
        let n = s.questions as f64;
        let mut line = json!({
            "dataset": "longmemeval",
            "file": a.file.file_name().map(|f| f.to_string_lossy().into_owned()),
            "system": systems[*si].family(),
            "strategy": a.systems[*si],
            "metrics": metrics,
            "granularity": granularity,
            "question_type": kind,
            "questions": s.questions,
        });
        for (k, f) in KS.iter().zip(&s.at) {
            line[format!("recall_any@{k}")] = json!(f.recall_any / n);
            line[format!("recall_all@{k}")] = json!(f.recall_all / n);
            line[format!("ndcg_any@{k}")] = json!(f.ndcg_any / n);
        }
        if kind == "all" && *granularity == "turn" {
            line["seconds_ranking"] = json!(seconds[*si]);
            if systems[*si].family().starts_with("lancedb") {
                line["lancedb"] = json!(lancedb_version);
            }
        }
        println!("{line}");
    }
    println!(
        "{}",
        json!({"dataset": "longmemeval", "ingest": true, "turns": turns_stored,
            "seconds": ingest_s, "turns_per_second": turns_stored as f64 / ingest_s.max(1e-9),
            "texts_embedded": counts.embedded, "texts_from_cache": counts.cached,
            "lancedb_ingest_seconds": lance_wanted.then_some(lancedb_ingest_s),
            "total_seconds": started.elapsed().as_secs_f64()})
    );
    Ok(())
}

/// One line of `--per-question`: the question, the system, its best ten turns and where each
/// evidence turn came (`null`: below the ranking's depth).
fn write_ranking(
    w: &mut impl Write,
    q: &LmeQuestion,
    system: &str,
    h: &Haystack,
    ranking: &[String],
) -> Result<()> {
    let ranks: Vec<Option<usize>> = h
        .evidence_turns
        .iter()
        .map(|e| ranking.iter().position(|k| k == e))
        .collect();
    let line = json!({
        "question_id": q.id, "question_type": q.kind, "question": q.question,
        "system": system, "evidence": h.evidence_turns, "evidence_ranks": ranks,
        "top": &ranking[..ranking.len().min(10)],
    });
    writeln!(w, "{line}")?;
    Ok(())
}

/// The exploration's ranking: `pool`'s hits fused again with lexical weight `w` (the
/// engine's `ScoreFusion`), each lifted by `lift` × the best fused score among the other
/// candidates of its session, the time cue's boost applied as the engine applies it.
fn refuse(pool: &[(String, memloop::Hit)], h: &Haystack, w: f32, lift: f32) -> Vec<String> {
    let fused = engine_scores(pool, &ScoreFusion::uniform(w));
    let mut best_two: HashMap<&str, (f32, f32)> = HashMap::new();
    for ((key, _), f) in pool.iter().zip(&fused) {
        let e = best_two
            .entry(h.session_of[key].as_str())
            .or_insert((0.0, 0.0));
        if *f > e.0 {
            *e = (*f, e.0);
        } else if *f > e.1 {
            e.1 = *f;
        }
    }
    let lifted = pool
        .iter()
        .zip(&fused)
        .map(|((key, _), f)| {
            let (first, second) = best_two[h.session_of[key].as_str()];
            f + lift * if *f >= first { second } else { first }
        })
        .collect();
    ordered(pool, lifted)
}

/// The scores the engine's `reranker` gives the pool's hits.
fn engine_scores(pool: &[(String, memloop::Hit)], reranker: &dyn Reranker) -> Vec<f32> {
    let hits: Vec<memloop::Hit> = pool.iter().map(|(_, hit)| hit.clone()).collect();
    reranker
        .rerank("", &hits)
        .expect("the built-in rerankers do not fail")
}

/// The pool's keys by `scores`, the time cue's boost applied as the engine applies it, best
/// first.
fn ordered(pool: &[(String, memloop::Hit)], scores: Vec<f32>) -> Vec<String> {
    let mut scored: Vec<(f32, usize)> = pool
        .iter()
        .zip(scores)
        .enumerate()
        .map(|(i, ((_, x), mut s))| {
            if let Some(t) = &x.explain.time {
                s += t.boost * s.abs();
            }
            (s, i)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(DEPTH)
        .map(|(_, i)| pool[i].0.clone())
        .collect()
}

/// z-score fusion: each signal standardised over the candidates holding it (absent: its
/// minimum).
fn zfuse(pool: &[(String, memloop::Hit)], w: f32) -> Vec<String> {
    let z = |values: Vec<Option<f32>>| -> Vec<f32> {
        let present: Vec<f32> = values.iter().flatten().copied().collect();
        let n = present.len().max(1) as f32;
        let mean = present.iter().sum::<f32>() / n;
        let sd = (present.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / n)
            .sqrt()
            .max(1e-6);
        let min = present.iter().copied().fold(f32::INFINITY, f32::min);
        values
            .iter()
            .map(|v| (v.unwrap_or(if min.is_finite() { min } else { 0.0 }) - mean) / sd)
            .collect()
    };
    let lexical = z(pool.iter().map(|(_, x)| x.explain.lexical).collect());
    let vector = z(pool.iter().map(|(_, x)| x.explain.vector).collect());
    let scores = lexical
        .iter()
        .zip(&vector)
        .map(|(l, v)| w * l + (1.0 - w) * v)
        .collect();
    ordered(pool, scores)
}

/// The engine's reciprocal-rank fusion over the vector and lexical ranks.
fn rrf(pool: &[(String, memloop::Hit)], k: f32) -> Vec<String> {
    ordered(pool, engine_scores(pool, &FusionReranker { k }))
}
