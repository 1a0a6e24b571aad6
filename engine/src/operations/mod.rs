//! The top of the registry: each operation's typed answer ([`Answer`]) and the engine call
//! that runs it ([`Memory::call`]), above every feature folder it delegates to. The names,
//! docs, doors and requests are the vocabulary's (`crate::vocabulary::Operation`,
//! `Request`). Every door returns what [`Memory::call`] returns, serialised by serde as written
//! here (Node's door renames the fields to camelCase): a forwarded call and a direct one print
//! the same bytes. Each answer's JSON schema ([`Operation::answer_schema`], of what serde
//! writes) is MCP's output schema for the tool, so a client checks every answer against it.

mod face;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

pub use face::{Admin, Advanced, Scoped, Transfer};

use crate::agent::TaskIds;
use crate::context::Context;
use crate::conversation::ConversationReport;
use crate::error::{Error, Result};
use crate::forget::{DecayReport, ScopeErasure, SweepReport};
use crate::item::{MemoryId, MemoryItem};
use crate::memory::{Memory, Stats};
use crate::remember::dedup::Remembered;
use crate::retrieve::{FeedbackState, Hit};
use crate::transfer::ImportReport;
use crate::vocabulary::{Exported, Operation, Request, Synced};

/// `update`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Updated {
    /// The memory that now holds it: the same id, or the new version's.
    pub id: MemoryId,
    /// The version it replaced, kept as history (`null` for a change in place).
    pub previous: Option<MemoryId>,
}

/// `recall`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Recalled {
    /// The hits, best first, each with its explanation.
    pub hits: Vec<Hit>,
}

/// `observe`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Observed {
    /// The subject's memory.
    pub id: MemoryId,
}

/// `list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Listed {
    /// The memories of the page, by ascending id.
    pub memories: Vec<MemoryItem>,
}

/// `forget`'s answer for one memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Forgotten {
    /// The memory forgotten.
    pub id: MemoryId,
    /// Always true: a memory that could not be forgotten is an error.
    pub forgotten: bool,
}

/// An operation's answer, typed. It serialises as the inner value alone (no tag): the
/// operation asked says which it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// `remember`.
    Remembered(Remembered),
    /// `update`.
    Updated(Updated),
    /// `remember_conversation`.
    Conversation(ConversationReport),
    /// `recall`.
    Recalled(Recalled),
    /// `context`.
    Context(Context),
    /// `feedback`: the memory's feedback so far.
    Feedback(FeedbackState),
    /// `record_task`.
    Task(TaskIds),
    /// `observe`.
    Observed(Observed),
    /// `get`.
    Item(Box<MemoryItem>),
    /// `list`.
    Listed(Listed),
    /// `forget` of one memory.
    Forgotten(Forgotten),
    /// `forget` of a scope.
    Erased(Box<ScopeErasure>),
    /// `explain_decay`.
    Decay(Box<DecayReport>),
    /// `stats`.
    Stats(Box<Stats>),
    /// `sweep`.
    Swept(SweepReport),
    /// `export`.
    Exported(Exported),
    /// `import`.
    Imported(ImportReport),
    /// `sync`.
    Synced(Synced),
}

impl Answer {
    /// The answer as JSON, the value every door returns (or converts to its own objects).
    pub fn to_json(&self) -> serde_json::Value {
        // Every answer is plain data (no map with non-string keys, no failing serialiser).
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// Runs one operation of the registry on `memory` ([`Memory::call`]).
fn run(memory: &Memory, request: Request) -> Result<Answer> {
    Ok(match request {
        Request::Remember(r) => {
            Answer::Remembered(memory.remember_explained(r.into_new_memory()?)?)
        }
        Request::Update(r) => {
            let given = r.id;
            let (scope, changes) = r.into_update()?;
            let id = memory.update_in(&scope, given, changes)?;
            Answer::Updated(Updated {
                id,
                previous: (id != given).then_some(given),
            })
        }
        Request::RememberConversation(r) => {
            let (session, turns, scope) = r.into_parts()?;
            Answer::Conversation(memory.remember_conversation(&session, &turns, &scope)?)
        }
        Request::Recall(r) => {
            let (query, strategy) = r.into_query()?;
            Answer::Recalled(Recalled {
                hits: memory.retrieve(&query, strategy)?,
            })
        }
        Request::Context(r) => Answer::Context(memory.context(&r.into_request()?)?),
        Request::Feedback(r) => Answer::Feedback(memory.feedback_in(&r.scope(), r.id, r.level)?),
        Request::RecordTask(task) => Answer::Task(memory.record_task(&task)?),
        Request::Observe(r) => {
            let event = r.event()?;
            Answer::Observed(Observed {
                id: memory.observe(&r.subject, event, r.content.as_deref())?,
            })
        }
        Request::Get(r) => {
            let item = memory
                .get_in(&r.scope(), r.id)?
                .ok_or(Error::NotFound(r.id))?;
            Answer::Item(Box::new(item))
        }
        Request::List(r) => Answer::Listed(Listed {
            memories: memory.list_request(&r)?,
        }),
        Request::Forget(r) => {
            let scope = r.scope();
            match (r.id, scope.is_empty()) {
                // With a scope, the id must be a memory of that scope.
                (Some(id), _) => {
                    memory.forget_in(&scope, id)?;
                    Answer::Forgotten(Forgotten {
                        id,
                        forgotten: true,
                    })
                }
                (None, false) => Answer::Erased(Box::new(memory.forget_scope(&scope)?)),
                (None, true) => {
                    return Err(crate::invalid::InvalidInput::Field {
                        field: "id",
                        reason: "give `id` (with a scope: a memory of that scope), or a \
                                     scope alone to erase it"
                            .into(),
                    }
                    .into())
                }
            }
        }
        Request::ExplainDecay(r) => {
            Answer::Decay(Box::new(memory.explain_decay_in(&r.scope(), r.id)?))
        }
        Request::Stats(_) => Answer::Stats(Box::new(memory.stats()?)),
        Request::Sweep(scope) => Answer::Swept(memory.sweep_request(&scope)?),
        Request::Export(r) => Answer::Exported(memory.export_request(&r)?),
        Request::Import(r) => Answer::Imported(memory.import_request(&r)?),
        Request::Sync(r) => Answer::Synced(memory.transfer().sync(&r)?),
    })
}

/// `forget`'s answer: one memory forgotten, or a scope erased.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // read by the schema only
enum ForgetAnswer {
    /// One memory.
    Forgotten(Forgotten),
    /// A scope.
    Erased(Box<ScopeErasure>),
}

/// The schema of what `T` serialises as, its root an object (as MCP asks of an output schema).
fn schema_of<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.entry("type").or_insert_with(|| Value::from("object"));
    }
    value
}

impl Operation {
    /// The JSON schema of its answer, as every door returns it.
    pub fn answer_schema(self) -> Value {
        match self {
            Operation::Remember => schema_of::<Remembered>(),
            Operation::Update => schema_of::<Updated>(),
            Operation::RememberConversation => schema_of::<ConversationReport>(),
            Operation::Recall => schema_of::<Recalled>(),
            Operation::Context => schema_of::<Context>(),
            Operation::Feedback => schema_of::<FeedbackState>(),
            Operation::RecordTask => schema_of::<TaskIds>(),
            Operation::Observe => schema_of::<Observed>(),
            Operation::Get => schema_of::<MemoryItem>(),
            Operation::List => schema_of::<Listed>(),
            Operation::Forget => schema_of::<ForgetAnswer>(),
            Operation::ExplainDecay => schema_of::<DecayReport>(),
            Operation::Stats => schema_of::<Stats>(),
            Operation::Sweep => schema_of::<SweepReport>(),
            Operation::Export => schema_of::<Exported>(),
            Operation::Import => schema_of::<ImportReport>(),
            Operation::Sync => schema_of::<Synced>(),
        }
    }
}
