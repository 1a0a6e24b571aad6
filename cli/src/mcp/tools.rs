//! The registry's operations as calls on the engine: [`call`] parses one operation's request
//! (`memloop::Request::parse`), runs it through `Memory::call` and returns the registry's answer
//! as JSON beside a text written for a model. The same function serves an MCP client in
//! process, a peer forwarding through the shared store's socket and the CLI opening the store
//! itself, so an operation answers the same bytes wherever the store is held.

use memloop::{Answer, Error, Memory, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a tool returns: text for the model, the registry's answer as JSON for programs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// Readable text.
    pub text: String,
    /// The answer, as JSON (`structuredContent`, `--json`).
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

/// Runs operation `name` with `arguments` on `memory`.
pub fn call(memory: &Memory, name: &str, arguments: Value) -> ToolResult {
    let request = Request::parse(name, arguments).map_err(Error::from)?;
    let said = Said::of(&request);
    let answer = memory.call(request)?;
    Ok(Reply {
        text: text(&said, &answer),
        structured: answer.to_json(),
    })
}

/// What a reply's text repeats from the request.
struct Said {
    /// A feedback's level.
    level: u8,
    /// An update's or feedback's id.
    id: u64,
    /// An observation: its subject and event.
    observed: Option<(String, String)>,
}

impl Said {
    fn of(request: &Request) -> Said {
        let mut said = Said {
            level: 0,
            id: 0,
            observed: None,
        };
        match request {
            Request::Feedback(r) => (said.level, said.id) = (r.level, r.id),
            Request::Update(r) => said.id = r.id,
            Request::Observe(r) => said.observed = Some((r.subject.clone(), r.event.clone())),
            _ => {}
        }
        said
    }
}

/// The answer as text for a model.
fn text(said: &Said, answer: &Answer) -> String {
    match answer {
        Answer::Remembered(done) => {
            let how = match done.action {
                memloop::RememberAction::Merged => {
                    "merged into the memory that already said this".to_string()
                }
                memloop::RememberAction::Superseded { previous } => {
                    format!("a new version replacing memory {previous} (kept as history)")
                }
                memloop::RememberAction::New => "a new memory".to_string(),
            };
            format!("Remembered as memory {}: {how}.", done.id)
        }
        Answer::Updated(u) => match u.previous {
            None => format!("Memory {} updated in place.", u.id),
            Some(given) => format!(
                "Memory {} is the new version; {given} is kept as history, valid until it began.",
                u.id
            ),
        },
        Answer::Conversation(report) => format!("Remembered {report}."),
        Answer::Recalled(r) if r.hits.is_empty() => "No memory matches.".to_string(),
        Answer::Recalled(r) => r
            .hits
            .iter()
            .map(|h| {
                format!(
                    "{}. [memory {}, {}, score {:.3}] {}",
                    h.rank + 1,
                    h.item.id,
                    h.item.kind.name(),
                    h.score,
                    h.item.text
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Answer::Context(c) if c.text.is_empty() => "No memory is relevant.".to_string(),
        Answer::Context(c) => c.text.clone(),
        Answer::Feedback(state) => format!(
            "Feedback {} recorded for memory {} ({} so far).",
            said.level, said.id, state.count
        ),
        Answer::Task(ids) => match ids.reflection {
            Some(r) => format!(
                "Task recorded as memory {}, its reflection as memory {r}.",
                ids.task
            ),
            None => format!("Task recorded as memory {}.", ids.task),
        },
        Answer::Observed(o) => {
            let (subject, event) = said.observed.clone().unwrap_or_default();
            format!("Observed: {subject} {event} (memory {}).", o.id)
        }
        Answer::Item(item) => format!("Memory {} ({}): {}", item.id, item.kind.name(), item.text),
        Answer::Listed(l) if l.memories.is_empty() => "No memory passes the filter.".to_string(),
        Answer::Listed(l) => l
            .memories
            .iter()
            .map(|m| format!("[memory {}, {}] {}", m.id, m.kind.name(), m.text))
            .collect::<Vec<_>>()
            .join("\n"),
        Answer::Forgotten(f) => format!("Memory {} forgotten.", f.id),
        // The text carries the receipt's exact signed line (`receipt_line` in the structured
        // answer too): a client that saves either verifies; `receipt` re-serialised by a JSON
        // library may order its keys otherwise and not.
        Answer::Erased(erased) => format!(
            "Erased {} memories of {} from every file of the store. Receipt (save this line as it is; `memloop receipt verify FILE` checks it):\n{}",
            erased.memories, erased.scope, erased.receipt_line
        ),
        Answer::Decay(report) => format!(
            "Memory {}: retention {:.3} now.\n{}",
            report.id,
            report.value,
            serde_json::to_string_pretty(report.as_ref()).unwrap_or_default()
        ),
        Answer::Stats(s) => format!(
            "{} memories ({} working, {} long-term), {} indexed, model {}.",
            s.memories, s.working, s.long_term, s.indexed, s.model
        ),
        Answer::Swept(r) => format!(
            "Swept: {} moved to long-term storage, {} forgotten.",
            r.demoted, r.forgotten
        ),
        other => other.to_json().to_string(),
    }
}
