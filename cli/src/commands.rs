//! The store commands: remember, get, recall, forget, export, import, sweep, stats.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use memloop::Durability;
use serde_json::json;

use crate::filter_args::FilterArgs;
use crate::forward::ToolCall;
use crate::scope_args::ScopeArgs;
use crate::store_args::StoreArgs;
use crate::time_arg::parse_time;

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
    // The request is checked before the store is created, so a bad one leaves no store behind.
    let call = a.as_tool();
    memloop::Request::parse(call.tool, call.arguments.clone()).map_err(memloop::Error::from)?;
    run_on(store, call, true)
}

/// `memloop get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// Memory id.
    id: u64,
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
    id: u64,
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

impl UpdateArgs {
    /// This command as the `update` tool: run by the same code here and in a serving process.
    pub fn as_tool(&self) -> ToolCall {
        let mut arguments = json!({"id": self.id, "text": self.text, "concise": self.concise,
            "brief": self.brief, "tags": self.tags, "importance": self.importance,
            "pinned": self.pinned, "valid_from": self.valid_from, "valid_until": self.valid_until});
        self.scope.add_to(&mut arguments);
        ToolCall {
            tool: "update",
            arguments,
            json: self.json,
        }
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
    let reply = crate::mcp::tools::call(&memory, call.tool, call.arguments.clone());
    crate::store_args::close(memory);
    let reply = reply.map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::print_reply(call.tool, &call.arguments, &reply, call.json);
    Ok(())
}

/// `memloop decay`.
#[derive(Args, Debug)]
pub struct DecayArgs {
    /// The memory.
    id: u64,
    /// Print JSON (with its retention curve).
    #[arg(long)]
    json: bool,
}

impl DecayArgs {
    /// This command as the `explain_decay` tool.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall {
            tool: "explain_decay",
            arguments: json!({"id": self.id}),
            json: self.json,
        }
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
    id: Option<u64>,
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
    // The same request the serving process parses, so a forwarded export is this one.
    let request: memloop::requests::ExportRequest = serde_json::from_value(a.as_tool().arguments)?;
    request.format().map_err(memloop::Error::from)?;
    let memory = store.open_existing(Durability::Synced)?;
    let out = memory.transfer().export_request(&request);
    crate::store_args::close(memory);
    println!("{}", serde_json::to_value(out?)?);
    Ok(())
}

impl ExportArgs {
    /// This command for the process serving the store (the path made absolute: that process
    /// has its own working directory).
    pub fn as_tool(&self) -> ToolCall {
        let scope = self.scope.scope();
        let path = std::path::absolute(&self.path).unwrap_or_else(|_| self.path.clone());
        ToolCall {
            tool: "export",
            arguments: json!({
                "path": path, "format": self.format, "namespace": self.namespace,
                "user": scope.user, "agent": scope.agent, "session": scope.session,
                "since": self.since, "plaintext": self.plaintext,
            }),
            json: true,
        }
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

impl RememberArgs {
    /// This command as the `remember` tool (run by the process serving the store).
    pub fn as_tool(&self) -> ToolCall {
        let mut arguments = json!({"text": self.text, "kind": self.kind,
            "namespace": self.namespace, "tags": self.tags, "importance": self.importance,
            "valid_from": self.valid_from, "valid_until": self.valid_until,
            "head": self.head, "relation": self.relation, "tail": self.tail});
        self.scope.add_to(&mut arguments);
        ToolCall {
            tool: "remember",
            arguments,
            json: self.json,
        }
    }
}

impl GetArgs {
    /// This command as the `get` tool.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall {
            tool: "get",
            arguments: json!({"id": self.id}),
            json: self.json,
        }
    }
}

impl RecallArgs {
    /// This command as the `recall` tool.
    pub fn as_tool(&self) -> ToolCall {
        let mut arguments = json!({"query": self.query, "k": self.k,
            "strategy": self.strategy, "explain": self.explain});
        self.filter.add_to(&mut arguments);
        ToolCall {
            tool: "recall",
            arguments,
            json: self.json,
        }
    }
}

impl ForgetArgs {
    /// This command as the `forget` tool.
    pub fn as_tool(&self) -> ToolCall {
        let mut arguments = json!({"id": self.id});
        self.scope.add_to(&mut arguments);
        ToolCall {
            tool: "forget",
            arguments,
            json: self.json,
        }
    }
}

impl StatsArgs {
    /// This command as the `stats` tool.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall {
            tool: "stats",
            arguments: json!({}),
            json: self.json,
        }
    }
}
