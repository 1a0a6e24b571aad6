//! The store commands: remember, get, recall, forget, export, import, sweep, stats.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use memloop::requests::{
    ExportRequest, ForgetRequest, IdRequest, NoFields, RecallRequest, RememberRequest, Selection,
    UpdateRequest, When,
};
use memloop::{Durability, MemoryId, Request, Scope};
use serde_json::json;

use crate::filter_args::FilterArgs;
use crate::scope_args::ScopeArgs;
use crate::store_args::StoreArgs;
use crate::time_arg::parse_time;
use crate::tool_call::ToolCall;

/// `memloop remember`.
#[derive(Args, Debug)]
pub struct RememberArgs {
    /// The text to remember.
    text: String,
    /// Kind of memory (default chunk).
    #[arg(long)]
    kind: Option<String>,
    /// Namespace.
    #[arg(long)]
    namespace: Option<String>,
    /// Tag (repeat for several).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Importance in [0, 1].
    #[arg(long)]
    importance: Option<f32>,
    #[command(flatten)]
    scope: ScopeArgs,
    /// When what it says became true: Unix seconds or RFC 3339 (default: now).
    #[arg(long)]
    valid_from: Option<String>,
    /// When it stopped being true: Unix seconds or RFC 3339.
    #[arg(long)]
    valid_until: Option<String>,
    /// For a triple: the subject entity (give head, relation and tail together).
    #[arg(long, requires_all = ["relation", "tail"])]
    head: Option<String>,
    /// For a triple: the relation.
    #[arg(long, requires_all = ["head", "tail"])]
    relation: Option<String>,
    /// For a triple: the object entity.
    #[arg(long, requires_all = ["head", "relation"])]
    tail: Option<String>,
    /// Print `{"id": N, "action": "new" | "merged" | "superseded", "previous": M | null}`.
    #[arg(long)]
    json: bool,
}

/// `memloop remember`: the `remember` operation on the store opened (or created) here.
pub fn remember(store: &StoreArgs, a: &RememberArgs) -> Result<()> {
    run_on(store, a.as_tool(), true)
}

/// `memloop get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// Memory id.
    id: MemoryId,
    /// Print the item as JSON.
    #[arg(long)]
    json: bool,
}

/// `memloop get`: the `get` operation run on the store opened here.
pub fn get(store: &StoreArgs, a: &GetArgs) -> Result<()> {
    run_here(store, a.as_tool())
}

/// `memloop update`.
#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// The memory to change (its current version).
    id: MemoryId,
    /// The new text: a new version, the old one kept as history with its validity closed
    /// where the new one's begins.
    #[arg(long)]
    text: Option<String>,
    /// A new concise version.
    #[arg(long)]
    concise: Option<String>,
    /// A new brief version.
    #[arg(long)]
    brief: Option<String>,
    /// Replace the tags (repeat for several).
    #[arg(long = "tag")]
    tags: Option<Vec<String>>,
    /// New importance in [0, 1].
    #[arg(long)]
    importance: Option<f32>,
    /// Pin (true) or unpin (false).
    #[arg(long)]
    pinned: Option<bool>,
    /// When the new text became true: Unix seconds or RFC 3339 (default: now).
    #[arg(long)]
    valid_from: Option<String>,
    /// When it stopped being true.
    #[arg(long)]
    valid_until: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Print `{"id": N, "previous": M | null}`.
    #[arg(long)]
    json: bool,
}

impl From<&UpdateArgs> for UpdateRequest {
    fn from(a: &UpdateArgs) -> UpdateRequest {
        UpdateRequest {
            id: a.id,
            text: a.text.clone(),
            concise: a.concise.clone(),
            brief: a.brief.clone(),
            tags: a.tags.clone(),
            importance: a.importance,
            pinned: a.pinned,
            valid_from: a.valid_from.clone().map(When::Text),
            valid_until: a.valid_until.clone().map(When::Text),
            scope: a.scope.scope(),
        }
    }
}

impl UpdateArgs {
    /// This command as the `update` operation: run by the same code here and in a serving
    /// process.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::Update(self.into()), self.json)
    }
}

/// `memloop update`: the `update` tool run on the store opened here.
pub fn update(store: &StoreArgs, a: &UpdateArgs) -> Result<()> {
    run_here(store, a.as_tool())
}

/// An operation of the registry run on the store opened here, its reply printed as text or
/// (`--json`) the answer's JSON, as a forwarded call prints it.
pub fn run_here(store: &StoreArgs, call: ToolCall) -> Result<()> {
    run_on(store, call, false)
}

/// [`run_here`], creating the store first with `create`.
pub fn run_on(store: &StoreArgs, call: ToolCall, create: bool) -> Result<()> {
    let memory = if create {
        store.open(Durability::Synced)?
    } else {
        store.open_existing(Durability::Synced)?
    };
    // The commit was synced: the answer is durable before closing, whatever closing (saving
    // the index) meets.
    let reply = call.asked.run(&memory);
    crate::store_args::close(memory);
    let reply = reply.map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::print_reply(&call, &reply);
    Ok(())
}

/// `memloop decay`.
#[derive(Args, Debug)]
pub struct DecayArgs {
    /// The memory.
    id: MemoryId,
    /// Print JSON (with its retention curve).
    #[arg(long)]
    json: bool,
}

impl DecayArgs {
    /// This command as the `explain_decay` operation.
    pub fn as_tool(&self) -> ToolCall {
        let request = IdRequest {
            id: self.id,
            scope: Scope::default(),
        };
        ToolCall::operation(Request::ExplainDecay(request), self.json)
    }
}

/// `memloop decay`: the `explain_decay` tool run on the store opened here.
pub fn decay(store: &StoreArgs, a: &DecayArgs) -> Result<()> {
    run_here(store, a.as_tool())
}

/// `memloop recall`.
#[derive(Args, Debug)]
pub struct RecallArgs {
    /// The query.
    query: String,
    /// Number of hits (absent: the engine's default recall size).
    #[arg(long)]
    k: Option<usize>,
    #[command(flatten)]
    filter: FilterArgs,
    /// Retrieval strategy: single (vector top-k), lexical (BM25 alone), rerank (vector + BM25,
    /// fused), iterative (query refined over rounds, then reranked); default single.
    #[arg(long)]
    strategy: Option<String>,
    /// Show why each memory surfaced (vector, lexical, fusion, importance, tier, feedback).
    #[arg(long)]
    explain: bool,
    /// Print the answer as JSON: `{"hits": [...]}`, each hit with its explanation.
    #[arg(long)]
    json: bool,
}

/// `memloop recall`: the `recall` operation run on the store opened here.
pub fn recall(store: &StoreArgs, a: &RecallArgs) -> Result<()> {
    run_here(store, a.as_tool())
}

/// `memloop forget`.
#[derive(Args, Debug)]
pub struct ForgetArgs {
    /// Memory id (or leave it out and name a scope).
    id: Option<MemoryId>,
    /// Erase everything of this user, agent or session (all three narrow together).
    #[command(flatten)]
    scope: ScopeArgs,
    /// With a scope: print the erasure report as JSON.
    #[arg(long)]
    json: bool,
}

/// `memloop forget`: the `forget` operation run on the store opened here.
pub fn forget(store: &StoreArgs, a: &ForgetArgs) -> Result<()> {
    match (a.id, a.scope.scope().is_empty()) {
        (Some(_), false) => bail!("give a memory id or --user/--agent/--session, not both"),
        (None, true) => bail!("give a memory id, or --user, --agent or --session to erase a scope"),
        _ => run_here(store, a.as_tool()),
    }
}

/// `memloop export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// File to write.
    path: PathBuf,
    /// Only this namespace.
    #[arg(long)]
    namespace: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
    /// mlx (memloop's portable file, the default), or a change stream for other engines:
    /// arrow (an Arrow IPC stream) or parquet.
    #[arg(long)]
    format: Option<String>,
    /// With arrow or parquet: only what changed after this sequence number (deleted and
    /// forgotten memories as delete rows); the export prints the number to pass next time.
    #[arg(long)]
    since: Option<u64>,
    /// From an encrypted store: write the file in the clear (mlx exports are otherwise sealed
    /// with the store's key ring, and change streams refused).
    #[arg(long)]
    plaintext: bool,
}

pub fn export(store: &StoreArgs, a: &ExportArgs) -> Result<()> {
    // The same request a forwarded export sends.
    let request = ExportRequest::from(a);
    request.format().map_err(memloop::Error::from)?;
    let memory = store.open_existing(Durability::Synced)?;
    let out = memory.transfer().export_request(&request);
    crate::store_args::close(memory);
    println!("{}", serde_json::to_value(out?)?);
    Ok(())
}

impl From<&ExportArgs> for ExportRequest {
    /// The path made absolute: a serving process has its own working directory.
    fn from(a: &ExportArgs) -> ExportRequest {
        ExportRequest {
            path: std::path::absolute(&a.path).unwrap_or_else(|_| a.path.clone()),
            format: a.format.clone(),
            selection: Selection {
                namespace: a.namespace.clone(),
                ..Selection::default()
            },
            scope: a.scope.scope(),
            since: a.since,
            plaintext: a.plaintext,
        }
    }
}

impl ExportArgs {
    /// This command for the process serving the store.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::Export(self.into()), true)
    }
}

/// `memloop import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Export file to merge.
    path: PathBuf,
    /// mlx (default), or arrow / parquet (a full change-stream export).
    #[arg(long)]
    format: Option<String>,
}

pub fn import(store: &StoreArgs, a: &ImportArgs) -> Result<()> {
    let request = memloop::requests::ImportRequest {
        path: a.path.clone(),
        format: a.format.clone(),
    };
    request.format().map_err(memloop::Error::from)?;
    let memory = store.open(Durability::Synced)?;
    let r = memory.transfer().import_request(&request);
    crate::store_args::close(memory);
    println!("{}", serde_json::to_value(r?)?);
    Ok(())
}

/// `memloop sync`.
#[derive(Args, Debug)]
pub struct SyncArgs {
    /// `s3://bucket/prefix` or `file:///path`.
    #[arg(long)]
    remote: String,
    /// An S3-compatible endpoint other than AWS's (`http://127.0.0.1:9000`).
    #[arg(long)]
    endpoint: Option<String>,
    /// Seconds one request to the remote may take, retries included (default 60).
    #[arg(long)]
    timeout: Option<u64>,
    /// Then compact the remote: a snapshot of this store, and the segments every device has
    /// applied deleted.
    #[arg(long)]
    compact: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `memloop sync`: its report, and its exit status ([`SYNC_HELD_BACK`] when the remote held
/// something back).
pub fn sync(store: &StoreArgs, a: &SyncArgs) -> Result<std::process::ExitCode> {
    let request = memloop::requests::SyncRequest {
        remote: a.remote.clone(),
        endpoint: a.endpoint.clone(),
        timeout_secs: a.timeout,
        compact: a.compact,
    };
    request.check().map_err(memloop::Error::from)?;
    let memory = store.open(Durability::Synced)?;
    let r = memory.transfer().sync(&request);
    crate::store_args::close(memory);
    let r = r?;
    if a.json {
        println!("{}", serde_json::to_value(&r)?);
    } else {
        println!(
            "device {}: pushed {} changes ({} segments, {} bytes); pulled {} ({} segments, {} bytes)",
            r.device, r.pushed, r.pushed_segments, r.pushed_bytes, r.pulled, r.pulled_segments, r.pulled_bytes
        );
        if r.erasures > 0 {
            println!(
                "carried out {} erasures made on other devices (receipts: memloop receipt list)",
                r.erasures
            );
        }
        if r.unreadable > 0 {
            println!("{} changes are sealed under keys this key file does not hold (an erased user's, or one made on another device after the ring was exported)", r.unreadable);
        }
        if a.compact {
            println!(
                "compacted: a snapshot of {} bytes written, {} segments deleted",
                r.snapshot_bytes, r.deleted_segments
            );
        }
        for name in &r.refused {
            println!("refused {name}: damaged, not signed with this key ring, or a signed object under another name; that device's later changes wait behind it");
        }
        for name in &r.missing {
            println!("missing {name}: a later segment of that device names it, and the remote did not serve it (withheld or rolled back); that device's later changes wait for it");
        }
        for name in &r.waiting {
            println!("waiting {name}: sealed under a key this key file does not hold yet; the next sync applies it once the key arrives");
        }
    }
    // The sync did what it could, but the remote served objects that were not believed,
    // withheld some, or sealed rows under keys not served yet: a status of its own, so a
    // script sees it.
    if !(r.refused.is_empty() && r.waiting.is_empty() && r.missing.is_empty()) {
        return Ok(std::process::ExitCode::from(SYNC_HELD_BACK));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The exit status of a sync that completed while the remote held something back (objects
/// refused, withheld, or waiting for their keys): docs/cli.md.
pub const SYNC_HELD_BACK: u8 = 11;

/// `memloop sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Apply the policy at this time: Unix seconds or RFC 3339 (`2026-11-22T10:00:00Z`);
    /// default: now.
    #[arg(long, value_parser = parse_time)]
    now: Option<i64>,
    /// Only this scope's memories move (the store-wide and per-namespace capacities wait for
    /// a sweep of everything).
    #[command(flatten)]
    scope: ScopeArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn sweep(store: &StoreArgs, a: &SweepArgs) -> Result<()> {
    let memory = match a.now {
        Some(t) => store.open_existing_at(Durability::Synced, t)?,
        None => store.open_existing(Durability::Synced)?,
    };
    let r = memory.scoped(&a.scope.scope()).sweep()?;
    let stats = memory.stats()?;
    crate::store_args::close(memory);
    if a.json {
        println!(
            "{}",
            json!({ "at": r.at, "demoted": r.demoted, "forgotten": r.forgotten,
                    "evicted": r.evicted, "memories": stats.memories,
                    "working": stats.working, "long_term": stats.long_term })
        );
    } else {
        println!(
            "demoted {}, forgotten {}, evicted {}; {} memories left ({} working, {} long-term)",
            r.demoted, r.forgotten, r.evicted, stats.memories, stats.working, stats.long_term
        );
    }
    Ok(())
}

/// `memloop stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `memloop stats`: the `stats` operation run on the store opened here.
pub fn stats(store: &StoreArgs, a: &StatsArgs) -> Result<()> {
    run_here(store, a.as_tool())
}

impl From<&RememberArgs> for RememberRequest {
    fn from(a: &RememberArgs) -> RememberRequest {
        RememberRequest {
            text: a.text.clone(),
            kind: a.kind.clone(),
            concise: None,
            brief: None,
            tags: a.tags.clone(),
            namespace: a.namespace.clone(),
            importance: a.importance,
            head: a.head.clone(),
            relation: a.relation.clone(),
            tail: a.tail.clone(),
            scope: a.scope.scope(),
            valid_from: a.valid_from.clone().map(When::Text),
            valid_until: a.valid_until.clone().map(When::Text),
        }
    }
}

impl RememberArgs {
    /// This command as the `remember` operation (run here or by the process serving the
    /// store).
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::Remember(self.into()), self.json)
    }
}

impl GetArgs {
    /// This command as the `get` operation.
    pub fn as_tool(&self) -> ToolCall {
        let request = IdRequest {
            id: self.id,
            scope: Scope::default(),
        };
        ToolCall::operation(Request::Get(request), self.json)
    }
}

impl From<&RecallArgs> for RecallRequest {
    fn from(a: &RecallArgs) -> RecallRequest {
        RecallRequest {
            query: a.query.clone(),
            k: a.k,
            strategy: a.strategy.clone(),
            explain: a.explain,
            selection: a.filter.selection(),
            scope: a.filter.scope(),
        }
    }
}

impl RecallArgs {
    /// This command as the `recall` operation.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::Recall(self.into()), self.json)
    }
}

impl From<&ForgetArgs> for ForgetRequest {
    fn from(a: &ForgetArgs) -> ForgetRequest {
        ForgetRequest {
            id: a.id,
            scope: a.scope.scope(),
        }
    }
}

impl ForgetArgs {
    /// This command as the `forget` operation.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::Forget(self.into()), self.json)
    }
}

impl StatsArgs {
    /// This command as the `stats` operation.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::Stats(NoFields {}), self.json)
    }
}
