//! `engine-bench`: the memloop engine with the real MiniLM model.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin engine-bench -- \
//!     --texts base.txt --vectors base.fvecs --queries query.txt --sizes 10000,100000 --json
//! ```
//! `base.txt` / `base.fvecs` are texts and their MiniLM embeddings (made by
//! `benches/ann_real.sh`, or `ann-bench --make-data --base-texts`), used to fill large stores
//! without embedding 100k texts on a laptop; everything measured as "with embedding" embeds
//! with the real model inside the timed region.
//!
//! Figures (one JSON line each with `--json`):
//! - `remember_synced`: single `remember` calls, each embedded and fsynced.
//! - `remember_synced_store_only`: single writes of pre-embedded memories, each fsynced.
//! - `remember_batch`: `remember_batch` of 64 texts at a time, embedded (synced per batch).
//! - `bulk_load`: pre-embedded memories in batches of 1,000, grouped durability (store,
//!   de-duplication search and index insert all included).
//! - `recall` at each size: p50 / p99 latency with query embedding, and store-only
//!   (`recall_vector`).
//! - `open` at each size: store open (model already loaded), model load, and open to the first
//!   recall answered, after a clean close.
//! - `lexical_index` at each size: the first lexical recall after that open (it builds the
//!   in-memory BM25 index from the store) and the mean of the next 100.
//! - `raw_index_build` at each size (`--raw-build`): the same vectors inserted into a bare
//!   `memloop-index` with the engine's parameters on the same threads, the rate bulk load is
//!   compared with.
//! - `rss` at each size: resident memory the store adds after open, and after the recalls.
//!
//! `--replicate` fills sizes past the files with perturbed copies (see [`replicate`]), so the
//! 100k real-text set can stand for a million memories.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use memloop::{
    Durability, Memory, MemoryFilter, NewMemory, Options, Query, Strategy, TextEmbedder,
};
use memloop_benches::rss::rss_mb;
use memloop_benches::texmex::read_fvecs;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "memloop engine throughput, latency and open time")]
struct Args {
    /// Model directory (default: the fetched all-MiniLM-L6-v2).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Texts, one per line.
    #[arg(long)]
    texts: PathBuf,
    /// Their embeddings by the same model (fvecs), row i for line i.
    #[arg(long)]
    vectors: PathBuf,
    /// Query texts, one per line.
    #[arg(long)]
    queries: PathBuf,
    /// Store sizes for recall and open figures.
    #[arg(long, default_value = "10000,100000", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Recalls timed per size.
    #[arg(long, default_value_t = 1000)]
    recalls: usize,
    /// Single synced writes timed.
    #[arg(long, default_value_t = 200)]
    singles: usize,
    /// Where to build the stores (default: a temporary directory).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Only time opening this existing store and its first recall (5 runs).
    #[arg(long)]
    reopen: Option<PathBuf>,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
    /// Extend texts and vectors with perturbed copies when the sizes ask for more rows than
    /// the files hold.
    #[arg(long)]
    replicate: bool,
    /// Also time a bare index build over the same vectors at each size.
    #[arg(long)]
    raw_build: bool,
    /// Skip the single-write and batch figures (they do not depend on size).
    #[arg(long)]
    skip_writes: bool,
    /// After the bulk load, rewrite the database into a fresh file (`Memory::compact`), so
    /// the disk figures hold no pages freed by the load's transactions.
    #[arg(long)]
    compact: bool,
    /// The index's vector encoding (f32, bf16 or int8; the engine's default without it).
    #[arg(long)]
    index_vectors: Option<memloop_index::VectorEncoding>,
}

/// Rows `n..size` made from rows `0..n`: row `i` is row `i % n` plus Gaussian noise of norm
/// 0.6 (seeded by `i`), renormalised — cosine ≈ 0.86 to its source, below the engine's
/// de-duplication threshold, so each copy is a memory of its own — and its text is the
/// source's with ` (variant i)` appended.
fn replicate(texts: &mut Vec<String>, vectors: &mut Vec<f32>, dim: usize, size: usize) {
    let n = texts.len().min(vectors.len() / dim);
    texts.truncate(n);
    vectors.truncate(n * dim);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut uniform = move || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let sigma = 0.6 / (dim as f64).sqrt();
    let mut row = vec![0f32; dim];
    for i in n..size {
        let src = i % n;
        for (j, x) in row.iter_mut().enumerate() {
            let (u, v) = (uniform().max(1e-300), uniform());
            let g = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            *x = vectors[src * dim + j] + (g * sigma) as f32;
        }
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        vectors.extend(row.iter().map(|x| x / norm));
        texts.push(format!("{} (variant {i})", texts[src]));
    }
}

fn lines(path: &Path) -> Result<Vec<String>> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?
        .lines()
        .map(str::to_string)
        .collect())
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

struct Report {
    json: bool,
}

impl Report {
    fn emit(&self, v: serde_json::Value) {
        if self.json {
            println!("{v}");
        } else {
            eprintln!("{v:#}");
        }
    }
}

fn main() -> Result<()> {
    let a = Args::parse();
    let report = Report { json: a.json };
    let mut texts = lines(&a.texts)?;
    let queries = lines(&a.queries)?;
    let max = a.sizes.iter().copied().max().unwrap_or(0);
    let mut vectors = read_fvecs(&a.vectors, Some(max))?;
    if a.replicate && (texts.len() < max || vectors.rows() < max) {
        let t = Instant::now();
        replicate(&mut texts, &mut vectors.data, vectors.dim, max);
        eprintln!(
            "replicated to {max} rows in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    if texts.len() < max || vectors.rows() < max {
        bail!(
            "need {max} texts and vectors, have {} and {}",
            texts.len(),
            vectors.rows()
        );
    }
    let model_started = Instant::now();
    let embedder: Arc<dyn TextEmbedder> = Arc::new(memloop::model::load_model(a.model.as_deref())?);
    let fingerprint = embedder.fingerprint();
    let model_load = model_started.elapsed();
    if let Some(dir) = &a.reopen {
        for _ in 0..5 {
            let t = Instant::now();
            let m = Memory::open(dir, Options::with_embedder(embedder.clone()))?;
            let opened = t.elapsed();
            m.recall(&Query::new(queries[0].as_str()).k(10))?;
            let first = t.elapsed();
            // Waits for the background load of the catalog and the forgetting queues.
            let stats = m.stats()?;
            let ready = t.elapsed();
            report.emit(json!({"figure": "reopen", "store_open_ms": m.admin().open_report().store_open.as_secs_f64() * 1e3,
                "open_ms": opened.as_secs_f64() * 1e3, "open_to_first_recall_ms": first.as_secs_f64() * 1e3,
                "catalog_and_queues_ready_ms": ready.as_secs_f64() * 1e3, "memories": stats.memories}));
        }
        return Ok(());
    }
    let tmp = tempfile::tempdir()?;
    let root = a.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let options = |durability| Options {
        durability,
        index_vectors: a.index_vectors,
        ..Options::with_embedder(embedder.clone())
    };

    // Single writes with the real model, then pre-embedded, each synced.
    if !a.skip_writes {
        let m = Memory::open(root.join("singles"), options(Durability::Synced))?;
        let t = Instant::now();
        for text in texts.iter().take(a.singles) {
            m.remember(NewMemory::new(text.as_str()))?;
        }
        let s = t.elapsed().as_secs_f64();
        report.emit(json!({"figure": "remember_synced", "n": a.singles, "per_s": a.singles as f64 / s, "ms_each": s * 1e3 / a.singles as f64}));
        let t = Instant::now();
        for (i, text) in texts.iter().enumerate().take(a.singles * 3).skip(a.singles) {
            m.advanced().remember_embedded(vec![(
                NewMemory::new(text.as_str()),
                vectors.row(i).to_vec(),
            )])?;
        }
        let s = t.elapsed().as_secs_f64();
        let n = a.singles * 2;
        report.emit(json!({"figure": "remember_synced_store_only", "n": n, "per_s": n as f64 / s, "ms_each": s * 1e3 / n as f64}));
        let n = 2048.min(texts.len());
        let t = Instant::now();
        for chunk in texts[..n].chunks(64) {
            m.remember_batch(chunk.iter().map(|t| NewMemory::new(t.as_str())).collect())?;
        }
        let s = t.elapsed().as_secs_f64();
        report
            .emit(json!({"figure": "remember_batch", "batch": 64, "n": n, "per_s": n as f64 / s}));
    }

    for &size in &a.sizes {
        let dir = root.join(format!("store-{size}"));
        if a.raw_build {
            let defaults = Options::default();
            let params = memloop_index::Params::builder(vectors.dim)
                .m(defaults.index_m)
                .ef_construction(defaults.index_ef_construction)
                .build()?;
            let index = memloop_index::Index::new(params)?;
            let ids: Vec<u64> = (0..size as u64).collect();
            let rows = memloop_index::UnitVectors::new(
                vectors.data[..size * vectors.dim].to_vec(),
                vectors.dim,
            )?;
            let t = Instant::now();
            index.insert_batch(&ids, &rows)?;
            let s = t.elapsed().as_secs_f64();
            report.emit(
                json!({"figure": "raw_index_build", "size": size, "per_s": size as f64 / s,
                "seconds": s, "threads": rayon::current_num_threads()}),
            );
        }
        {
            let m = Memory::open(&dir, options(Durability::Grouped))?;
            let t = Instant::now();
            for start in (0..size).step_by(1000) {
                let end = (start + 1000).min(size);
                let batch = (start..end)
                    .map(|i| (NewMemory::new(texts[i].as_str()), vectors.row(i).to_vec()))
                    .collect();
                m.advanced().remember_embedded(batch)?;
            }
            m.admin().flush()?;
            let load = t.elapsed().as_secs_f64();
            let t = Instant::now();
            m.admin().checkpoint()?;
            let checkpoint = t.elapsed().as_secs_f64();
            if a.compact {
                m.admin().compact()?;
            }
            let stats = m.stats()?;
            report.emit(
                json!({"figure": "bulk_load", "size": size, "memories": stats.memories,
                "per_s": size as f64 / load, "seconds": load, "checkpoint_s": checkpoint}),
            );
            m.close()?;
        }
        // Open after a clean close, then recall.
        let rss_before = rss_mb();
        let t = Instant::now();
        let m = Memory::open(&dir, options(Durability::Synced))?;
        let opened = t.elapsed();
        let rss_open = rss_mb() - rss_before;
        let first = m.recall(&Query::new(queries[0].as_str()).k(10))?;
        let to_first = t.elapsed();
        assert!(!first.is_empty());
        report.emit(json!({"figure": "open", "size": size,
            "store_open_ms": m.admin().open_report().store_open.as_secs_f64() * 1e3,
            "open_ms": opened.as_secs_f64() * 1e3,
            "open_to_first_recall_ms": to_first.as_secs_f64() * 1e3,
            "model_load_ms": model_load.as_secs_f64() * 1e3,
            "index": format!("{:?}", m.admin().open_report().index)}));
        // The BM25 index lives in memory: the first lexical recall after open builds it from
        // the store; later ones use it.
        let lexical = |q: &str| m.retrieve(&Query::new(q).k(10), Strategy::Lexical);
        let t = Instant::now();
        lexical(queries[1 % queries.len()].as_str())?;
        let first_lexical = t.elapsed();
        let t = Instant::now();
        let rounds = 100.min(queries.len());
        for q in &queries[..rounds] {
            lexical(q.as_str())?;
        }
        let steady = t.elapsed() / rounds as u32;
        report.emit(json!({"figure": "lexical_index", "size": size,
            "first_lexical_recall_ms": first_lexical.as_secs_f64() * 1e3,
            "lexical_recall_ms": steady.as_secs_f64() * 1e3}));

        let n = a.recalls.min(queries.len());
        let mut with_embed = Vec::with_capacity(n);
        let mut embed_only = Vec::with_capacity(n);
        let mut store_only = Vec::with_capacity(n);
        let filter = MemoryFilter::new();
        for q in &queries[..n] {
            let t = Instant::now();
            let v = embedder.embed_query(q)?;
            embed_only.push(t.elapsed());
            let t = Instant::now();
            m.advanced().recall_vector(&v, 10, &filter, None)?;
            store_only.push(t.elapsed());
            let t = Instant::now();
            m.recall(&Query::new(q.as_str()).k(10))?;
            with_embed.push(t.elapsed());
        }
        for v in [&mut with_embed, &mut embed_only, &mut store_only] {
            v.sort();
        }
        report.emit(json!({"figure": "recall", "size": size, "k": 10, "n": n,
            "p50_ms": pct(&with_embed, 0.5), "p99_ms": pct(&with_embed, 0.99),
            "query_embed_p50_ms": pct(&embed_only, 0.5),
            "store_only_p50_ms": pct(&store_only, 0.5), "store_only_p99_ms": pct(&store_only, 0.99)}));
        let disk = m.admin().disk_usage()?;
        report.emit(
            json!({"figure": "rss", "size": size, "after_open_mb": rss_open,
            "after_recalls_mb": rss_mb() - rss_before, "recalls": 3 * n,
            "database_bytes_per_memory": disk.database as f64 / size as f64,
            "index_bytes_per_memory": disk.index as f64 / size as f64}),
        );
        m.close()?;
    }
    report.emit(json!({"figure": "model", "fingerprint": fingerprint}));
    Ok(())
}
