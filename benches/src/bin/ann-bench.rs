//! `ann-bench`: memloop's HNSW beside its peers on the same texmex files in the same run.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin ann-bench -- --base B.fvecs --query Q.fvecs \
//!     --truth T.ivecs --k 10 --m 16 --ef-construction 200 --ef 16,32,64,128,256 --threads 1 \
//!     --json [--peer hnsw_rs] [--peer memloop-rescored]
//! ```
//! Prints, per system, a build line, an open line (measured in a fresh child process: open time
//! and the RSS the open added) and one line per `ef` (recall@k against the truth, single-thread
//! queries per second). Without `--truth` the truth is computed by brute force.
//! `--make-data DIR` embeds `--base-texts` / `--query-texts` (one text per line) with the default
//! model, or without them writes a clustered synthetic set; `--filter-sweep` measures where filtered
//! graph search and exact scan cross over.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use memloop_benches::systems::{by_name, BuildParams};
use memloop_benches::texmex::{read_fvecs, read_ivecs, write_fvecs, write_ivecs, Matrix};
use memloop_benches::{clustered::clustered, rss::rss_mb};
use memloop_index::{IdFilter, Index, Params, UnitVector, UnitVectors, VectorEncoding};
use rayon::prelude::*;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "ANN benchmark: memloop beside hnsw_rs (and others via benches/peers.py)")]
struct Args {
    /// Base vectors (.fvecs).
    #[arg(long)]
    base: Option<PathBuf>,
    /// Query vectors (.fvecs).
    #[arg(long)]
    query: Option<PathBuf>,
    /// Ground-truth neighbours (.ivecs); computed by brute force when absent.
    #[arg(long)]
    truth: Option<PathBuf>,
    /// Write the (computed) truth to this .ivecs file.
    #[arg(long)]
    write_truth: Option<PathBuf>,
    /// Neighbours per query.
    #[arg(long, default_value_t = 10)]
    k: usize,
    /// HNSW M.
    #[arg(long, default_value_t = 16)]
    m: usize,
    /// HNSW efConstruction.
    #[arg(long, default_value_t = 200)]
    ef_construction: usize,
    /// Search ef values, comma-separated.
    #[arg(long, default_value = "16,32,64,128,256", value_delimiter = ',')]
    ef: Vec<usize>,
    /// How memloop's index stores the vectors its searches read: f32, bf16 or int8 (compressed
    /// modes re-score their candidates against the f32 vectors).
    #[arg(long, default_value = "f32")]
    vectors: VectorEncoding,
    /// Build threads (searches are single-threaded).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
    /// Also run this peer on the same data: hnsw_rs, or memloop-rescored (an int8 index whose
    /// best candidates are re-scored on the f32 vectors the caller keeps).
    #[arg(long)]
    peer: Vec<String>,
    /// Use only the first N base vectors.
    #[arg(long)]
    limit_base: Option<usize>,
    /// Use only the first N queries.
    #[arg(long)]
    limit_query: Option<usize>,
    /// Write a clustered synthetic set (base.fvecs, query.fvecs) into this directory and exit.
    #[arg(long)]
    make_data: Option<PathBuf>,
    /// With --make-data: embed these texts (one per line) with the default model as base vectors.
    #[arg(long)]
    base_texts: Option<PathBuf>,
    /// With --make-data: embed these texts (one per line) as queries.
    #[arg(long)]
    query_texts: Option<PathBuf>,
    /// Base vectors for --make-data.
    #[arg(long, default_value_t = 100_000)]
    n: usize,
    /// Queries for --make-data.
    #[arg(long, default_value_t = 10_000)]
    queries: usize,
    /// Dimension for --make-data.
    #[arg(long, default_value_t = 384)]
    dim: usize,
    /// Measure filtered graph search against exact scan at several pass rates.
    #[arg(long)]
    filter_sweep: bool,
    /// Keep the saved indexes in this directory (one subdirectory per system).
    #[arg(long)]
    save_dir: Option<PathBuf>,
    /// Internal: open the saved index of this system in this process and search.
    #[arg(long, hide = true)]
    probe: Option<String>,
    /// Internal: where the parent saved the index.
    #[arg(long, hide = true)]
    index_dir: Option<PathBuf>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if let Some(dir) = &args.make_data {
        return make_data(&args, dir);
    }
    let base_path = args.base.clone().context("--base is required")?;
    let query_path = args.query.clone().context("--query is required")?;
    let queries = unit_rows(read_fvecs(&query_path, args.limit_query)?);
    if let Some(system) = &args.probe {
        let truth = read_ivecs(
            args.truth.as_deref().context("probe needs --truth")?,
            args.limit_query,
        )?;
        return probe(&args, system, &queries, &truth);
    }
    let base = unit_rows(read_fvecs(&base_path, args.limit_base)?);
    if base.dim != queries.dim {
        bail!(
            "base has dimension {} but queries have {}",
            base.dim,
            queries.dim
        );
    }
    if args.filter_sweep {
        return filter_sweep(&args, &base, &queries);
    }
    let work = tempfile::tempdir()?;
    let truth_path = match &args.truth {
        Some(t) if args.limit_base.is_none() => t.clone(),
        _ => {
            let t0 = Instant::now();
            let truth = brute_force(&base, &queries, args.k.max(100));
            eprintln!(
                "exact truth for {} queries in {:.1} s",
                queries.rows(),
                t0.elapsed().as_secs_f64()
            );
            let path = args
                .write_truth
                .clone()
                .unwrap_or_else(|| work.path().join("truth.ivecs"));
            write_ivecs(&path, args.k.max(100), &truth)?;
            path
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()?;
    let p = BuildParams {
        m: args.m,
        ef_construction: args.ef_construction,
        vectors: args.vectors,
    };
    for name in std::iter::once("memloop".to_string()).chain(args.peer.iter().cloned()) {
        let mut system = by_name(&name)?;
        let t0 = Instant::now();
        pool.install(|| system.build(&base, p))?;
        let seconds = t0.elapsed().as_secs_f64();
        emit(
            &args,
            json!({"system": name, "vectors": vectors_of(&args, &name), "phase": "build", "seconds": round(seconds, 2), "threads": args.threads, "n": base.rows()}),
        );
        let dir = args
            .save_dir
            .clone()
            .unwrap_or_else(|| work.path().to_path_buf())
            .join(&name);
        std::fs::create_dir_all(&dir)?;
        system.save(&dir)?;
        drop(system);
        // Open and search in a fresh process, so the RSS reading is the open's alone.
        let status = Command::new(std::env::current_exe()?)
            .args(["--probe", &name, "--index-dir"])
            .arg(&dir)
            .arg("--base")
            .arg(&base_path)
            .arg("--query")
            .arg(&query_path)
            .arg("--truth")
            .arg(&truth_path)
            .args(["--k", &args.k.to_string(), "--ef", &join(&args.ef)])
            .args(["--vectors", args.vectors.name()])
            .args(
                args.limit_query
                    .map(|l| vec!["--limit-query".to_string(), l.to_string()])
                    .unwrap_or_default(),
            )
            .args(if args.json { vec!["--json"] } else { vec![] })
            .status()?;
        if !status.success() {
            bail!("{name}: probe process failed ({status})");
        }
    }
    Ok(())
}

fn probe(args: &Args, name: &str, queries: &Matrix<f32>, truth: &Matrix<i32>) -> Result<()> {
    let dir = args
        .index_dir
        .as_deref()
        .context("probe needs --index-dir")?;
    let mut system = by_name(name)?;
    if system.wants_caller_vectors() {
        // The caller's own copy (an app's store), loaded before the open's RSS is measured.
        let base_path = args.base.as_deref().context("probe needs --base")?;
        system.caller_vectors(unit_rows(read_fvecs(base_path, args.limit_base)?));
    }
    let before = rss_mb();
    let t0 = Instant::now();
    system.open(dir)?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let rss = rss_mb() - before;
    let file_mb = dir_size(dir)? as f64 / (1024.0 * 1024.0);
    emit(
        args,
        json!({"system": name, "vectors": vectors_of(args, name), "phase": "open", "ms": round(ms, 3), "rss_mb": round(rss, 2), "file_mb": round(file_mb, 1), "kernel": kernel_of(args.vectors)}),
    );
    let mut out = Vec::with_capacity(args.k);
    // One untimed pass pages in what the searches touch, so every ef is measured warm.
    for i in 0..queries.rows() {
        system.search(
            queries.row(i),
            args.k,
            args.ef.iter().copied().max().unwrap_or(64),
            &mut out,
        );
    }
    for &ef in &args.ef {
        let t0 = Instant::now();
        let mut found = 0usize;
        for i in 0..queries.rows() {
            system.search(queries.row(i), args.k, ef, &mut out);
            let want = &truth.row(i)[..args.k.min(truth.dim)];
            found += out
                .iter()
                .filter(|id| want.contains(&(**id as i32)))
                .count();
        }
        let secs = t0.elapsed().as_secs_f64();
        let recall = found as f64 / (queries.rows() * args.k) as f64;
        let qps = queries.rows() as f64 / secs;
        emit(
            args,
            json!({"system": name, "vectors": vectors_of(args, name), "ef": ef, "recall": round(recall, 4), "qps": round(qps, 0)}),
        );
    }
    let searches = queries.rows() * (1 + args.ef.len());
    emit(
        args,
        json!({"system": name, "vectors": vectors_of(args, name), "phase": "searched", "searches": searches, "rss_mb": round(rss_mb() - before, 2)}),
    );
    Ok(())
}

/// Where filtered graph search stops paying: recall and QPS of both strategies per pass rate.
fn filter_sweep(args: &Args, base: &Matrix<f32>, queries: &Matrix<f32>) -> Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()?;
    let params = Params::builder(base.dim)
        .m(args.m)
        .ef_construction(args.ef_construction)
        .build()?;
    let mut index = Index::new(params)?;
    let ids: Vec<u64> = (0..base.rows() as u64).collect();
    let rows = UnitVectors::new(base.data.clone(), base.dim)?;
    pool.install(|| index.insert_batch(&ids, &rows))?;
    let ef = args.ef.first().copied().unwrap_or(64);
    let k = args.k;
    for pass in [0.002f64, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2] {
        let modulus = (1.0 / pass).round() as u64;
        let allowed = IdFilter::new(
            ids.iter()
                .copied()
                .filter(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) % modulus == 0),
        );
        let mut results = Vec::new();
        for (mode, threshold) in [("exact", 1.0f32), ("graph", 0.0f32)] {
            index.set_exact_below(threshold)?;
            let t0 = Instant::now();
            let hits: Vec<Vec<u64>> = (0..queries.rows())
                .map(|i| {
                    let query = UnitVector::new(queries.row(i).to_vec())?;
                    index
                        .search_filtered(&query, k, ef, &allowed)
                        .map(|h| h.iter().map(|x| x.id).collect())
                })
                .collect::<Result<_, _>>()?;
            let qps = queries.rows() as f64 / t0.elapsed().as_secs_f64();
            results.push((mode, hits, qps));
        }
        let exact = &results[0].1;
        for (mode, hits, qps) in &results {
            let found: usize = hits
                .iter()
                .zip(exact)
                .map(|(h, e)| h.iter().filter(|x| e.contains(x)).count())
                .sum();
            let recall = found as f64 / exact.iter().map(Vec::len).sum::<usize>().max(1) as f64;
            emit(
                args,
                json!({"system": "memloop", "phase": "filter", "pass": pass, "mode": mode, "ef": ef, "recall": round(recall, 4), "qps": round(*qps, 0)}),
            );
        }
    }
    Ok(())
}

fn make_data(args: &Args, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    if let (Some(base), Some(queries)) = (&args.base_texts, &args.query_texts) {
        let embedder =
            memloop_embed::Embedder::load(memloop_embed::default_model_dir(), Default::default())?;
        for (src, name, kind) in [
            (base, "base.fvecs", "documents"),
            (queries, "query.fvecs", "queries"),
        ] {
            let text =
                std::fs::read_to_string(src).with_context(|| format!("read {}", src.display()))?;
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let t0 = Instant::now();
            let mut flat = Vec::with_capacity(lines.len() * embedder.dim());
            for (i, chunk) in lines.chunks(256).enumerate() {
                let vecs = if kind == "queries" {
                    embedder.embed_queries(chunk)?
                } else {
                    embedder.embed_documents(chunk)?
                };
                flat.extend(vecs.into_iter().flatten());
                eprint!(
                    "\r{name}: {}/{} ({:.0}/s)",
                    (i * 256 + chunk.len()),
                    lines.len(),
                    (i * 256 + chunk.len()) as f64 / t0.elapsed().as_secs_f64()
                );
            }
            eprintln!();
            write_fvecs(&dir.join(name), embedder.dim(), &flat)?;
        }
        return Ok(());
    }
    let clusters = (args.n / 500).max(10);
    let all = clustered(args.n + args.queries, args.dim, clusters, 42);
    let (base, queries) = all.split_at(args.n * args.dim);
    write_fvecs(&dir.join("base.fvecs"), args.dim, base)?;
    write_fvecs(&dir.join("query.fvecs"), args.dim, queries)?;
    eprintln!(
        "wrote {} base and {} query vectors ({} clusters) to {}",
        args.n,
        args.queries,
        clusters,
        dir.display()
    );
    Ok(())
}

/// Exact top-`k` row ids per query by brute force, in parallel.
fn brute_force(base: &Matrix<f32>, queries: &Matrix<f32>, k: usize) -> Vec<i32> {
    let k = k.min(base.rows());
    (0..queries.rows())
        .into_par_iter()
        .flat_map_iter(|i| {
            let q = queries.row(i);
            let mut scored: Vec<(f32, i32)> = (0..base.rows())
                .map(|j| (memloop_index::simd::dot(q, base.row(j)), j as i32))
                .collect();
            scored.select_nth_unstable_by(k.saturating_sub(1), |a, b| b.0.total_cmp(&a.0));
            scored.truncate(k);
            scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            scored.into_iter().map(|(_, j)| j)
        })
        .collect()
}

fn unit_rows(mut m: Matrix<f32>) -> Matrix<f32> {
    for row in m.data.chunks_mut(m.dim.max(1)) {
        // A zero row (none in real data) is left as it is.
        if let Ok(unit) = UnitVector::new(row.to_vec()) {
            row.copy_from_slice(&unit);
        }
    }
    m
}

fn dir_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        total += e?.metadata()?.len();
    }
    Ok(total)
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// The search kernel memloop uses on this CPU for `vectors` (`MEMLOOP_SIMD` can cap it).
fn kernel_of(vectors: VectorEncoding) -> &'static str {
    match vectors {
        VectorEncoding::F32 => memloop_index::simd::kernel().0,
        VectorEncoding::Bf16 => memloop_index::simd::bf16::kernel().0,
        VectorEncoding::Int8 => memloop_index::simd::int8::kernel().0,
    }
}

/// The `"vectors"` field of a line: memloop's encoding, f32 for the peers run here.
fn vectors_of(args: &Args, system: &str) -> &'static str {
    if system.starts_with("memloop") {
        args.vectors.name()
    } else {
        "f32"
    }
}

fn emit(args: &Args, v: serde_json::Value) {
    if args.json {
        println!("{v}");
    } else {
        let fields: Vec<String> = v
            .as_object()
            .map(|o| o.iter().map(|(k, v)| format!("{k}={v}")).collect())
            .unwrap_or_default();
        println!("{}", fields.join("  "));
    }
}
