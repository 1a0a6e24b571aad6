//! `memloop ingest`: text and markdown files or folders (each file a document, chunked by
//! tokens), and JSON Lines of memory objects.

use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use memloop::{context::Structures, Durability, Memory, MemoryId, NewMemory};
use serde_json::json;

use crate::lines::{BoundedLines, MAX_LINE_BYTES};
use crate::progress;
use crate::scope_args::ScopeArgs;
use crate::store_args::StoreArgs;

/// `memloop ingest`.
#[derive(Args, Debug)]
pub struct IngestArgs {
    /// Files or folders: `.txt`, `.md` and `.markdown` files become documents (chunked by
    /// 200 tokens with 40 overlapping, each chunk sourced to its file and byte span); `.jsonl`
    /// and `.ndjson` files, and `-` (stdin), are JSON Lines of memory objects
    /// (`{"text": …, "kind": …, "namespace": …, "tags": […], "importance": …, "user": …,
    /// "agent": …, "session": …, "valid_from": ms, "valid_until": ms}`).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Read every given file as JSON Lines, whatever its extension.
    #[arg(long)]
    jsonl: bool,
    /// JSON Lines memories embedded and committed together (1 to 100,000).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    batch: u32,
    /// Commit without fsync and sync once at the end (faster; a crash loses the unsynced
    /// tail, and JSON Lines ids are then printed only at the end).
    #[arg(long)]
    grouped: bool,
    /// Print one JSON object per document (`{"document", "id", "chunks"}`) and per JSON Lines
    /// memory (`{"id"}`), and a final summary object.
    #[arg(long)]
    json: bool,
    /// The scope every JSON Lines memory without its own `user`, `agent` or `session` field
    /// gets (documents are not scoped: give documents and scopes in separate runs).
    #[command(flatten)]
    scope: ScopeArgs,
}

/// What one input is.
enum Input {
    Document(PathBuf),
    Lines(PathBuf),
    Stdin,
}

fn is_document(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "txt" | "md" | "markdown"))
}

fn is_lines(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "jsonl" | "ndjson"))
}

/// Expands the arguments: folders recursively (sorted, hidden entries skipped), files by
/// extension. A file given by name with another extension is an error; inside folders such
/// files are skipped.
fn inputs(a: &IngestArgs) -> Result<Vec<Input>> {
    fn walk(dir: &Path, jsonl: bool, out: &mut Vec<Input>) -> Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read folder {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, jsonl, out)?;
            } else if jsonl || is_lines(&p) {
                out.push(Input::Lines(p));
            } else if is_document(&p) {
                out.push(Input::Document(p));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in &a.paths {
        if p.as_os_str() == "-" {
            out.push(Input::Stdin);
        } else if p.is_dir() {
            walk(p, a.jsonl, &mut out)?;
        } else if !p.exists() {
            bail!("{}: no such file or folder", p.display());
        } else if a.jsonl || is_lines(p) {
            out.push(Input::Lines(p.clone()));
        } else if is_document(p) {
            out.push(Input::Document(p.clone()));
        } else {
            bail!(
                "{}: not a text (.txt), markdown (.md) or JSON Lines (.jsonl) file; pass --jsonl to read it as JSON Lines",
                p.display()
            );
        }
    }
    if out.is_empty() {
        bail!("no .txt, .md or .jsonl files in the given folders");
    }
    Ok(out)
}

pub fn ingest(store: &StoreArgs, a: &IngestArgs) -> Result<()> {
    let inputs = inputs(a)?;
    if !a.scope.scope().is_empty() && inputs.iter().any(|i| matches!(i, Input::Document(_))) {
        bail!("--user, --agent and --session apply to JSON Lines memories; documents are not scoped (ingest them in a separate run)");
    }
    check_documents(&inputs)?;
    let durability = if a.grouped {
        Durability::Grouped
    } else {
        Durability::Synced
    };
    let total_bytes: u64 = inputs
        .iter()
        .map(|i| match i {
            Input::Document(p) | Input::Lines(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Input::Stdin => 0,
        })
        .sum();
    let memory = store.open(durability)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let bar = progress::bytes(total_bytes, "ingesting");
    let started = Instant::now();
    let (mut documents, mut chunks, mut memories) = (0usize, 0usize, 0usize);
    let mut pending_ids = Vec::new();
    for input in &inputs {
        match input {
            Input::Document(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {} as UTF-8 text", path.display()))?;
                bar.set_message(path.display().to_string());
                let key = path.to_string_lossy();
                if text.trim().is_empty() {
                    bar.println(format!("skipped {} (empty)", path.display()));
                    continue;
                }
                let ids = memory
                    .advanced()
                    .remember_document(&key, &text, &Structures::default())
                    .with_context(|| format!("ingesting {}", path.display()))?;
                documents += 1;
                chunks += ids.chunks.len();
                if a.json {
                    writeln!(
                        out,
                        "{}",
                        json!({"document": key, "id": ids.document, "chunks": ids.chunks.len()})
                    )?;
                }
                bar.inc(text.len() as u64);
            }
            Input::Lines(path) => {
                let f = std::fs::File::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                bar.set_message(path.display().to_string());
                let name = path.display().to_string();
                memories += lines(
                    &memory,
                    a,
                    std::io::BufReader::new(f),
                    &name,
                    &mut out,
                    &mut pending_ids,
                )?;
                bar.inc(std::fs::metadata(path).map_or(0, |m| m.len()));
            }
            Input::Stdin => {
                memories += lines(
                    &memory,
                    a,
                    std::io::stdin().lock(),
                    "stdin",
                    &mut out,
                    &mut pending_ids,
                )?;
            }
        }
    }
    bar.finish_and_clear();
    memory.admin().flush()?;
    for id in pending_ids {
        writeln!(out, "{}", json!({ "id": id }))?;
    }
    crate::store_args::close(memory);
    let secs = started.elapsed().as_secs_f64();
    if a.json {
        writeln!(
            out,
            "{}",
            json!({"documents": documents, "chunks": chunks, "memories": memories, "seconds": secs})
        )?;
    } else if documents > 0 {
        writeln!(
            out,
            "ingested {documents} documents ({chunks} chunks) and {memories} memories in {secs:.1} s"
        )?;
    }
    out.flush()?;
    Ok(())
}

/// Every document must be readable UTF-8 before the first one is written, so a bad file in a
/// folder stops the ingest before anything was committed, not halfway.
fn check_documents(inputs: &[Input]) -> Result<()> {
    for input in inputs {
        if let Input::Document(path) = input {
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            if let Err(e) = std::str::from_utf8(&bytes) {
                bail!(
                    "{} is not UTF-8 text (invalid byte at offset {}); nothing was ingested",
                    path.display(),
                    e.valid_up_to()
                );
            }
        }
    }
    Ok(())
}

/// Remembers the JSON Lines of `input` in batches; prints `{"id": N}` per memory once durable
/// (at the end when grouped). Returns how many lines became memories.
fn lines(
    memory: &Memory,
    a: &IngestArgs,
    input: impl BufRead,
    name: &str,
    out: &mut impl Write,
    pending_ids: &mut Vec<MemoryId>,
) -> Result<usize> {
    let per_batch = a.batch as usize;
    let mut batch = Vec::with_capacity(per_batch);
    let mut count = 0;
    let mut lines = BoundedLines::new(input, MAX_LINE_BYTES).enumerate();
    loop {
        let next = lines.next();
        if let Some((i, line)) = &next {
            let line = line
                .as_ref()
                .map_err(|e| anyhow::anyhow!("{name}: line {}: {e}", i + 1))?;
            if !line.trim().is_empty() {
                let mut m: NewMemory = serde_json::from_str(line)
                    .with_context(|| format!("{name}: line {}: not a memory object", i + 1))?;
                m.user = m.user.or_else(|| a.scope.user.clone());
                m.agent = m.agent.or_else(|| a.scope.agent.clone());
                m.session = m.session.or_else(|| a.scope.session.clone());
                batch.push(m);
            }
        }
        if batch.len() >= per_batch || (next.is_none() && !batch.is_empty()) {
            let ids = memory.remember_batch(std::mem::take(&mut batch))?;
            count += ids.len();
            if a.grouped {
                pending_ids.extend(ids);
            } else {
                // Synced: the commit returned, so these ids are durable.
                for id in ids {
                    writeln!(out, "{}", json!({ "id": id }))?;
                }
                out.flush()?;
            }
        }
        if next.is_none() {
            return Ok(count);
        }
    }
}
