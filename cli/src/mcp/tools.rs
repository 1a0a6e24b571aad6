//! The MCP tools as calls on the engine: [`call`] runs one tool, its arguments parsed into
//! `tool_args.rs`' types, on an open [`Memory`]. The same function serves
//! an MCP client in process and a peer forwarding through the shared store's socket, so a
//! tool behaves the same wherever the store is held.

use super::tool_args::NoArgs;
use memloop::{
    ContextParams, ConversationRequest, Error, FeedbackRequest, ForgetRequest, IdRequest, Memory,
    ObserveRequest, RecallRequest, RememberRequest, Task, UpdateRequest,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The tools, by name, in the order they are listed.
pub const TOOLS: [&str; 12] = [
    "remember",
    "update",
    "remember_conversation",
    "recall",
    "context",
    "feedback",
    "record_task",
    "observe",
    "get",
    "forget",
    "explain_decay",
    "stats",
];

/// What a tool returns: text for the model, JSON for programs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// Readable text.
    pub text: String,
    /// The same, as JSON (`structuredContent`).
    pub structured: Value,
}

/// A tool refused its arguments or the engine failed; the message names what was wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError(pub String);

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Error> for ToolError {
    /// The engine's message with its stable code, as every door reports it.
    fn from(e: Error) -> Self {
        ToolError(format!("{e} (error code {})", e.code().name()))
    }
}

/// A tool's outcome.
pub type ToolResult = Result<Reply, ToolError>;

/// Runs tool `name` with `arguments` on `memory`.
pub fn call(memory: &Memory, name: &str, arguments: Value) -> ToolResult {
    match name {
        "remember" => remember(memory, parse(arguments)?),
        "update" => update(memory, parse(arguments)?),
        "remember_conversation" => remember_conversation(memory, parse(arguments)?),
        "recall" => recall(memory, parse(arguments)?),
        "context" => context(memory, parse(arguments)?),
        "feedback" => feedback(memory, parse(arguments)?),
        "record_task" => record_task(memory, parse(arguments)?),
        "observe" => observe(memory, parse(arguments)?),
        "get" => get(memory, parse(arguments)?),
        "forget" => forget(memory, parse(arguments)?),
        "explain_decay" => explain_decay(memory, parse(arguments)?),
        "stats" => stats(memory, parse(arguments)?),
        other => Err(ToolError(format!(
            "unknown tool `{other}` (the tools: {})",
            TOOLS.join(", ")
        ))),
    }
}

fn parse<T: serde::de::DeserializeOwned>(arguments: Value) -> Result<T, ToolError> {
    let arguments = if arguments.is_null() {
        json!({})
    } else {
        arguments
    };
    // Arguments that do not parse are invalid input, with the code every door gives it.
    serde_json::from_value(arguments).map_err(|e| {
        let code = memloop::ErrorCode::InvalidInput.name();
        ToolError(format!("bad arguments: {e} (error code {code})"))
    })
}

fn reply(text: String, structured: Value) -> ToolResult {
    Ok(Reply { text, structured })
}

fn update(memory: &Memory, a: UpdateRequest) -> ToolResult {
    let given = a.id;
    let (scope, changes) = a.into_update()?;
    let id = memory.update_in(&scope, given, changes)?;
    let text = if id == given {
        format!("Memory {id} updated in place.")
    } else {
        format!("Memory {id} is the new version; {given} is kept as history, valid until it began.")
    };
    reply(
        text,
        json!({ "id": id, "previous": (id != given).then_some(given) }),
    )
}

fn remember(memory: &Memory, a: RememberRequest) -> ToolResult {
    let m = a.into_new_memory()?;
    let done = memory.remember_explained(m)?;
    let structured = serde_json::to_value(done).map_err(|e| ToolError(e.to_string()))?;
    let how = match structured["action"].as_str().unwrap_or("new") {
        "merged" => "merged into the memory that already said this".to_string(),
        "superseded" => format!(
            "a new version replacing memory {} (kept as history)",
            structured["previous"]
        ),
        _ => "a new memory".to_string(),
    };
    reply(
        format!("Remembered as memory {}: {how}.", done.id),
        structured,
    )
}

fn recall(memory: &Memory, a: RecallRequest) -> ToolResult {
    let explain = a.explain;
    let (query, strategy) = a.into_query()?;
    let hits = memory.retrieve(&query, strategy)?;
    let mut lines = Vec::with_capacity(hits.len());
    let mut out = Vec::with_capacity(hits.len());
    for h in &hits {
        lines.push(format!(
            "{}. [memory {}, {}, score {:.3}] {}",
            h.rank + 1,
            h.item.id,
            h.item.kind.name(),
            h.score,
            h.item.text
        ));
        let mut hit = json!({
            "id": h.item.id,
            "score": h.score,
            "rank": h.rank,
            "kind": h.item.kind,
            "namespace": h.item.namespace,
            "user": h.item.user,
            "agent": h.item.agent,
            "session": h.item.session,
            "valid_from": h.item.valid_from,
            "valid_until": h.item.valid_until,
            "tier": h.item.tier,
            "tags": h.item.tags,
            "text": h.item.text,
        });
        if explain {
            hit["explain"] = serde_json::to_value(&h.explain).unwrap_or(Value::Null);
        }
        out.push(hit);
    }
    let text = if lines.is_empty() {
        "No memory matches.".to_string()
    } else {
        lines.join("\n")
    };
    reply(text, json!({ "hits": out }))
}

fn context(memory: &Memory, a: ContextParams) -> ToolResult {
    let request = a.into_request()?;
    let c = memory.context(&request)?;
    let structured = serde_json::to_value(&c).map_err(|e| ToolError(e.to_string()))?;
    let text = if c.text.is_empty() {
        "No memory is relevant.".to_string()
    } else {
        c.text.clone()
    };
    reply(text, structured)
}

fn feedback(memory: &Memory, a: FeedbackRequest) -> ToolResult {
    let state = memory.feedback_in(&a.scope(), a.id, a.level)?;
    let structured = serde_json::to_value(state).map_err(|e| ToolError(e.to_string()))?;
    reply(
        format!(
            "Feedback {} recorded for memory {} ({} so far).",
            a.level, a.id, state.count
        ),
        structured,
    )
}

fn remember_conversation(memory: &Memory, a: ConversationRequest) -> ToolResult {
    let (session, turns, scope) = a.into_parts()?;
    let report = memory.remember_conversation(&session, &turns, &scope)?;
    let text = format!("Remembered {report}.");
    let structured = serde_json::to_value(&report).map_err(|e| ToolError(e.to_string()))?;
    reply(text, structured)
}

fn record_task(memory: &Memory, task: Task) -> ToolResult {
    let ids = memory.record_task(&task)?;
    let structured = serde_json::to_value(ids).map_err(|e| ToolError(e.to_string()))?;
    let text = match ids.reflection {
        Some(r) => format!(
            "Task recorded as memory {}, its reflection as memory {r}.",
            ids.task
        ),
        None => format!("Task recorded as memory {}.", ids.task),
    };
    reply(text, structured)
}

fn observe(memory: &Memory, a: ObserveRequest) -> ToolResult {
    let event = a.event().map_err(Error::from)?;
    let id = memory.observe(&a.subject, event, a.content.as_deref())?;
    reply(
        format!("Observed: {} {} (memory {id}).", a.subject, a.event),
        json!({ "id": id }),
    )
}

fn get(memory: &Memory, a: IdRequest) -> ToolResult {
    let item = memory.get_in(&a.scope(), a.id)?.ok_or_else(|| {
        let code = memloop::ErrorCode::NotFound.name();
        ToolError(format!("no memory with id {} (error code {code})", a.id))
    })?;
    let structured = serde_json::to_value(&item).map_err(|e| ToolError(e.to_string()))?;
    reply(
        format!("Memory {} ({}): {}", item.id, item.kind.name(), item.text),
        structured,
    )
}

fn forget(memory: &Memory, a: ForgetRequest) -> ToolResult {
    let scope = a.scope();
    match (a.id, scope.is_empty()) {
        // With a scope, the id must be a memory of that scope.
        (Some(id), _) => {
            memory.forget_in(&scope, id)?;
            reply(
                format!("Memory {id} forgotten."),
                json!({ "id": id, "forgotten": true }),
            )
        }
        (None, false) => {
            let erased = memory.forget_scope(&scope)?;
            let structured = serde_json::to_value(&erased).map_err(|e| ToolError(e.to_string()))?;
            // The text carries the receipt's exact signed line (`receipt_line` in the structured
            // answer too): a client that saves either verifies; `receipt` re-serialised by a
            // JSON library may order its keys otherwise and not.
            reply(
                format!(
                    "Erased {} memories of {} from every file of the store. Receipt (save this line as it is; `memloop receipt verify FILE` checks it):\n{}",
                    erased.memories, scope, erased.receipt_line
                ),
                structured,
            )
        }
        _ => Err(ToolError(
            "give `id` (with a scope: a memory of that scope), or a scope alone to erase it".into(),
        )),
    }
}

fn explain_decay(memory: &Memory, a: IdRequest) -> ToolResult {
    let report = memory.explain_decay_in(&a.scope(), a.id)?;
    let structured = serde_json::to_value(&report).map_err(|e| ToolError(e.to_string()))?;
    reply(
        format!(
            "Memory {}: retention {:.3} now.\n{}",
            a.id,
            report.value,
            serde_json::to_string_pretty(&structured).unwrap_or_default()
        ),
        structured,
    )
}

fn stats(memory: &Memory, _: NoArgs) -> ToolResult {
    let s = memory.stats()?;
    let structured = serde_json::to_value(&s).map_err(|e| ToolError(e.to_string()))?;
    reply(
        format!(
            "{} memories ({} working, {} long-term), {} indexed, model {}.",
            s.memories, s.working, s.long_term, s.indexed, s.model
        ),
        structured,
    )
}
