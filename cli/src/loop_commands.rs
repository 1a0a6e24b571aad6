//! The memory-loop commands: context, feedback, observe, task.

use anyhow::Result;
use clap::Args;
use memloop::context::ContextMode;
use memloop::requests::{ContextParams, FeedbackRequest, ObserveRequest, SubjectEvent};
use memloop::{items::Outcome, Durability, MemoryId, Request, Scope, Task};
use serde_json::json;

use crate::store_args::StoreArgs;
use crate::tool_call::ToolCall;

/// `memloop context`.
#[derive(Args, Debug)]
pub struct ContextArgs {
    /// The query.
    query: String,
    /// Token budget (by the embedding model's tokenizer; default 500); the context never
    /// exceeds it.
    #[arg(long)]
    budget: Option<usize>,
    /// Memories retrieved before assembly (default 8).
    #[arg(long)]
    k: Option<usize>,
    /// Retrieval strategy: single, lexical, rerank, iterative (default single).
    #[arg(long)]
    strategy: Option<String>,
    /// Serve the source documents the memories point to (Memory-Doc) instead of the memories.
    #[arg(long)]
    documents: bool,
    /// The share of the memories labelled "Key Reference", in (0, 1] (default 1/3).
    #[arg(long)]
    key_share: Option<f32>,
    /// Which memories may enter: the filters of `recall`.
    #[command(flatten)]
    filter: crate::filter_args::FilterArgs,
    /// Print {"tokens":T,"blocks":[{"label","id","precision","text"}…]}.
    #[arg(long)]
    json: bool,
}

pub fn context(store: &StoreArgs, a: &ContextArgs) -> Result<()> {
    // The same request a forwarded context sends.
    let request = ContextParams::from(a).into_request()?;
    let memory = store.open_existing(Durability::Synced)?;
    let ctx = memory.context(&request)?;
    crate::store_args::close(memory);
    if a.json {
        let blocks: Vec<_> = ctx
            .blocks
            .iter()
            .map(|b| json!({"label": b.label, "id": b.id, "precision": b.precision, "text": b.text, "score": b.score}))
            .collect();
        println!(
            "{}",
            json!({"tokens": ctx.tokens, "budget": request.budget, "blocks": blocks, "dropped": ctx.dropped})
        );
    } else {
        print!("{}", ctx.text);
        eprintln!(
            "({} of {} tokens, {} memories, {} dropped)",
            ctx.tokens,
            request.budget,
            ctx.blocks.len(),
            ctx.dropped.len()
        );
    }
    Ok(())
}

/// `memloop feedback`.
#[derive(Args, Debug)]
pub struct FeedbackArgs {
    /// The memory.
    id: MemoryId,
    /// How much it contributed: 1 harmful, 2 not useful, 3 should have contributed more,
    /// 4 useful, 5 decisive.
    #[arg(value_parser = clap::value_parser!(u8).range(1..=5))]
    level: u8,
    /// Print the memory's feedback so far as JSON.
    #[arg(long)]
    json: bool,
}

pub fn feedback(store: &StoreArgs, a: &FeedbackArgs) -> Result<()> {
    let memory = store.open_existing(Durability::Synced)?;
    let state = memory.feedback(a.id, a.level)?;
    crate::store_args::close(memory);
    if a.json {
        println!("{}", serde_json::to_value(state)?);
    } else {
        println!(
            "#{}: {} feedback(s), mean {:.1}, served {:+} step(s) from its rank's precision",
            a.id,
            state.count,
            state.sum as f32 / state.count as f32,
            state.precision_shift
        );
    }
    Ok(())
}

/// `memloop observe`.
#[derive(Args, Debug)]
pub struct ObserveArgs {
    /// The subject (a file path, a service name).
    subject: String,
    /// created, modified, executed or deleted.
    event: String,
    /// What it contains now (created / modified) or printed (executed).
    content: Option<String>,
}

pub fn observe(store: &StoreArgs, a: &ObserveArgs) -> Result<()> {
    let event = SubjectEvent::named(&a.event).map_err(memloop::Error::from)?;
    let memory = store.open(Durability::Synced)?;
    let id = memory.observe(&a.subject, event, a.content.as_deref())?;
    crate::store_args::close(memory);
    println!("{id}");
    Ok(())
}

/// `memloop task`.
#[derive(Args, Debug)]
pub struct TaskArgs {
    /// What was asked.
    #[arg(long)]
    request: String,
    /// success or failure.
    #[arg(long, value_parser = ["success", "failure"])]
    outcome: String,
    /// A step taken (repeat, in order).
    #[arg(long = "step")]
    steps: Vec<String>,
    /// What to do differently next time (failures).
    #[arg(long)]
    reflection: Option<String>,
    /// Print {"task":ID,"reflection":ID|null}.
    #[arg(long)]
    json: bool,
}

pub fn task(store: &StoreArgs, a: &TaskArgs) -> Result<()> {
    let memory = store.open(Durability::Synced)?;
    let task = Task::from(a);
    let ids = memory.record_task(&task)?;
    crate::store_args::close(memory);
    if a.json {
        println!("{}", serde_json::to_value(ids)?);
    } else {
        println!("{}", ids.task);
    }
    Ok(())
}

impl From<&ContextArgs> for ContextParams {
    fn from(a: &ContextArgs) -> ContextParams {
        ContextParams {
            query: a.query.clone(),
            budget: a.budget,
            mode: Some(if a.documents {
                ContextMode::Documents
            } else {
                ContextMode::Memories
            }),
            key_share: a.key_share,
            k: a.k,
            strategy: a.strategy.clone(),
            selection: a.filter.selection(),
            scope: a.filter.scope(),
        }
    }
}

impl ContextArgs {
    /// This command as the `context` operation (run by the process serving the store).
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::Context(self.into()), self.json)
    }
}

impl FeedbackArgs {
    /// This command as the `feedback` operation.
    pub fn as_tool(&self) -> ToolCall {
        let request = FeedbackRequest {
            id: self.id,
            level: self.level,
            scope: Scope::default(),
        };
        ToolCall::operation(Request::Feedback(request), self.json)
    }
}

impl ObserveArgs {
    /// This command as the `observe` operation.
    pub fn as_tool(&self) -> ToolCall {
        let request = ObserveRequest {
            subject: self.subject.clone(),
            event: self.event.clone(),
            content: self.content.clone(),
        };
        ToolCall::operation(Request::Observe(request), false)
    }
}

impl From<&TaskArgs> for Task {
    fn from(a: &TaskArgs) -> Task {
        Task {
            request: a.request.clone(),
            steps: a.steps.clone(),
            // clap admits only these two.
            outcome: if a.outcome == "success" {
                Outcome::Success
            } else {
                Outcome::Failure
            },
            reflection: a.reflection.clone(),
            namespace: None,
            tags: Vec::new(),
        }
    }
}

impl TaskArgs {
    /// This command as the `record_task` operation.
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::RecordTask(self.into()), self.json)
    }
}
