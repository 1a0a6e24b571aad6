//! The operation registry: every operation the engine offers, named once, with the doc a
//! model or a person reads, the typed request every door parses ([`Request`]), whether it
//! acts within a caller's scope, and the doors it is on (with the reason where it is not).
//! The typed answer and the engine call that runs an operation stand on the top floor
//! (`crate::operations`), above the feature folders that carry it out. MCP's tools, the
//! CLI's forwarded commands, the shared store's socket, the inspector's actions, the C, Python
//! and Node doors' generic `call` and the contract table are built from this list.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    ContextParams, ConversationRequest, ExportRequest, FeedbackRequest, ForgetRequest, IdRequest,
    ImportRequest, ListRequest, ObserveRequest, RecallRequest, RememberRequest, SyncRequest, Task,
    UpdateRequest,
};
use crate::invalid::InvalidInput;
use crate::item::Scope;

/// Every operation, in the order the doors list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Store one memory.
    Remember,
    /// A new version of a memory, or new metadata.
    Update,
    /// The turns of a chat session.
    RememberConversation,
    /// The memories most related to a query.
    Recall,
    /// A context under a token budget.
    Context,
    /// How much a memory helped.
    Feedback,
    /// A finished task and its reflection.
    RecordTask,
    /// An event about a subject.
    Observe,
    /// One memory by id.
    Get,
    /// The memories passing a filter, a page at a time.
    List,
    /// One memory, or a whole scope, erased.
    Forget,
    /// A memory's retention and when it will move on.
    ExplainDecay,
    /// Counts of the store.
    Stats,
    /// Demote and delete what faded.
    Sweep,
    /// Write the store (or part of it) to a file.
    Export,
    /// Read an export into the store.
    Import,
    /// Push this device's changes to a remote and pull the other devices'.
    Sync,
}

/// A way into the engine. Each door's casing convention aside (camelCase in Node), every door
/// carrying an operation takes its request and returns its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Door {
    /// The Rust API ([`crate::Memory::call`] and the typed methods).
    Rust,
    /// The command line (`--json`), opening the store or forwarding to the process serving it.
    Cli,
    /// MCP tools, over stdio and HTTP.
    Mcp,
    /// The socket of a shared store, which the CLI forwards to.
    Socket,
    /// The inspector's actions (`memloop ui`).
    Inspector,
    /// The C ABI's `memloop_call`.
    C,
    /// Python's `Memory.call` and methods.
    Python,
    /// Node's `memory.call` and methods.
    Node,
}

impl Door {
    /// Every door.
    pub const ALL: [Door; 8] = [
        Door::Rust,
        Door::Cli,
        Door::Mcp,
        Door::Socket,
        Door::Inspector,
        Door::C,
        Door::Python,
        Door::Node,
    ];
}

/// Why a file-naming operation is not an MCP tool.
const FILES_ON_THE_SERVER: &str = "it names a file on the machine serving the store, which an \
MCP client (possibly remote, by URL) must neither read nor write";

/// Why `sync` is neither an MCP tool nor an inspector action.
const REMOTES_OF_THE_OWNER: &str = "it names a remote (a folder on the machine serving the \
store, or a bucket and endpoint reached from it) that the store's owner chooses, not a client \
reaching it by URL; run `memloop sync` beside the server";

/// Why an operation is not an inspector action.
const INSPECTOR_LOOKS: &str = "the inspector looks at memories and corrects them (pin, rate, \
edit, forget, erase); writing new ones is an agent's job";

impl Operation {
    /// Every operation, in the order the doors list them.
    pub const ALL: [Operation; 17] = [
        Operation::Remember,
        Operation::Update,
        Operation::RememberConversation,
        Operation::Recall,
        Operation::Context,
        Operation::Feedback,
        Operation::RecordTask,
        Operation::Observe,
        Operation::Get,
        Operation::List,
        Operation::Forget,
        Operation::ExplainDecay,
        Operation::Stats,
        Operation::Sweep,
        Operation::Export,
        Operation::Import,
        Operation::Sync,
    ];

    /// The operation's name on every door (MCP's tool, the CLI's JSON call, C's and the
    /// bindings' `call`).
    pub fn name(self) -> &'static str {
        match self {
            Operation::Remember => "remember",
            Operation::Update => "update",
            Operation::RememberConversation => "remember_conversation",
            Operation::Recall => "recall",
            Operation::Context => "context",
            Operation::Feedback => "feedback",
            Operation::RecordTask => "record_task",
            Operation::Observe => "observe",
            Operation::Get => "get",
            Operation::List => "list",
            Operation::Forget => "forget",
            Operation::ExplainDecay => "explain_decay",
            Operation::Stats => "stats",
            Operation::Sweep => "sweep",
            Operation::Export => "export",
            Operation::Import => "import",
            Operation::Sync => "sync",
        }
    }

    /// The operation named `name`.
    ///
    /// # Errors
    /// [`InvalidInput::Field`] naming the operations there are.
    pub fn named(name: &str) -> Result<Operation, InvalidInput> {
        Operation::ALL
            .into_iter()
            .find(|op| op.name() == name)
            .ok_or_else(|| InvalidInput::Field {
                field: "operation",
                reason: format!(
                    "`{name}` is none (the operations: {})",
                    Operation::ALL.map(Operation::name).join(", ")
                ),
            })
    }

    /// What it does, written for a model choosing a tool and a person reading `--help`.
    pub fn doc(self) -> &'static str {
        match self {
            Operation::Remember => {
                "Store one memory for later conversations: a fact, a decision, a preference, an \
                 observation. Give the full text; optionally a concise and a brief version \
                 (served when space is short), a kind (fact, triple, chunk, …), tags, a namespace \
                 and an importance. Repeating the same text merges into the existing memory; a \
                 fact that says something new about the same thing replaces the old version \
                 (kept as history). Returns the memory's id."
            }
            Operation::Update => {
                "Change a memory: a new text makes a new version (the old one is kept as \
                 history, its validity ending where the new one begins: `valid_from`, default \
                 now); tags, importance, pinning and the shorter versions change in place. \
                 Returns the id that now holds it."
            }
            Operation::RememberConversation => {
                "Store turns of a chat session, each with its speaker and time (RFC 3339), so \
                 later questions such as \"when did Ana start the course?\" find what was said \
                 and when. Later calls with the same session continue it; the session keeps a \
                 summary. Returns the turns' ids and the summary's."
            }
            Operation::Recall => {
                "Find the memories most related to a query, best first, with their ids and \
                 scores. Filter by namespace, kinds or tags; `strategy: rerank` also matches \
                 keywords (names, numbers); `explain: true` says why each surfaced."
            }
            Operation::Context => {
                "Assemble the memories relevant to a query into text ready to paste into a \
                 prompt, never over `budget` tokens: the most relevant in full, the rest \
                 shortened. `mode: documents` gives the source documents instead."
            }
            Operation::Feedback => {
                "Rate how much a memory helped (1 harmful, 2 useless, 3 somewhat useful, 4 \
                 useful, 5 decisive). Useful memories are kept longer and served in more detail."
            }
            Operation::RecordTask => {
                "Record a finished task: the request, the steps taken, the outcome (success or \
                 failure) and, for a failure, what to do differently. Later contexts can then \
                 say what worked and what failed."
            }
            Operation::Observe => {
                "Record an event about a subject (a file, a service): created, modified, \
                 executed or deleted, with its content or output. The subject keeps one memory, \
                 updated."
            }
            Operation::Get => "One memory by id, with all its fields.",
            Operation::List => {
                "The memories passing a filter (namespace, kinds, tags, scope), oldest id first, \
                 a page at a time (`limit`, `offset`), with no query and no ranking."
            }
            Operation::Forget => {
                "Delete one memory by id, for good; or erase everything of a user, agent or \
                 session (give `user`, `agent` and/or `session` instead of `id`): their memories \
                 are removed from every file of the store, and a signed receipt says so."
            }
            Operation::ExplainDecay => {
                "How well a memory is retained now, and when it will move to long-term storage \
                 or be forgotten if unused."
            }
            Operation::Stats => "Counts: memories, per tier, indexed, and the embedding model.",
            Operation::Sweep => {
                "Move memories whose retention fell below the first threshold to long-term \
                 storage and forget those below the second (of one user, agent or session when \
                 one is named). Returns how many moved and how many were forgotten."
            }
            Operation::Export => {
                "Write the store's memories (or a namespace's or a scope's) to a file: memloop's \
                 portable file, or an Arrow or Parquet change stream for other engines."
            }
            Operation::Import => "Read a memloop export or change stream into the store.",
            Operation::Sync => {
                "Push this device's changes to a remote (an S3-compatible bucket or a shared \
                 folder) as sealed, signed segments, and pull and merge the other devices'. \
                 The store must be encrypted; the remote holds nothing in the clear."
            }
        }
    }

    /// True when its request names the scope (user, agent, session) the caller acts in, so a
    /// caller bound to a scope (a scoped MCP token) may run it within that scope; the others
    /// reach the whole store.
    pub fn scoped(self) -> bool {
        !matches!(
            self,
            Operation::RecordTask
                | Operation::Observe
                | Operation::Stats
                | Operation::Export
                | Operation::Import
                | Operation::Sync
        )
    }

    /// True when running it twice is running it once: it changes no memory (a recall records
    /// access times, which a second recall records again), so a call lost with its connection
    /// may be sent again.
    pub fn reads_only(self) -> bool {
        matches!(
            self,
            Operation::Recall
                | Operation::Context
                | Operation::Get
                | Operation::List
                | Operation::ExplainDecay
                | Operation::Stats
        )
    }

    /// Whether it is on `door`: `None` when it is, or the reason it is not.
    pub fn absent_from(self, door: Door) -> Option<&'static str> {
        match (self, door) {
            (Operation::Export | Operation::Import, Door::Mcp) => Some(FILES_ON_THE_SERVER),
            (Operation::Sync, Door::Mcp | Door::Inspector) => Some(REMOTES_OF_THE_OWNER),
            (
                Operation::Remember
                | Operation::RememberConversation
                | Operation::RecordTask
                | Operation::Observe
                | Operation::Export
                | Operation::Import
                | Operation::ExplainDecay,
                Door::Inspector,
            ) => Some(INSPECTOR_LOOKS),
            _ => None,
        }
    }

    /// True when it is on `door`.
    pub fn on(self, door: Door) -> bool {
        self.absent_from(door).is_none()
    }
}

/// `stats`: no fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// One operation's request, typed: what every door parses before the engine runs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// [`Operation::Remember`].
    Remember(RememberRequest),
    /// [`Operation::Update`].
    Update(UpdateRequest),
    /// [`Operation::RememberConversation`].
    RememberConversation(ConversationRequest),
    /// [`Operation::Recall`].
    Recall(RecallRequest),
    /// [`Operation::Context`].
    Context(ContextParams),
    /// [`Operation::Feedback`].
    Feedback(FeedbackRequest),
    /// [`Operation::RecordTask`].
    RecordTask(Task),
    /// [`Operation::Observe`].
    Observe(ObserveRequest),
    /// [`Operation::Get`].
    Get(IdRequest),
    /// [`Operation::List`].
    List(ListRequest),
    /// [`Operation::Forget`].
    Forget(ForgetRequest),
    /// [`Operation::ExplainDecay`].
    ExplainDecay(IdRequest),
    /// [`Operation::Stats`].
    Stats(NoFields),
    /// [`Operation::Sweep`]: the scope whose memories are swept (none: the whole store).
    Sweep(Scope),
    /// [`Operation::Export`].
    Export(ExportRequest),
    /// [`Operation::Import`].
    Import(ImportRequest),
    /// [`Operation::Sync`].
    Sync(SyncRequest),
}

impl Request {
    /// Operation `name`'s request from its JSON fields (`null` is no fields), as every door
    /// parses it: unknown fields, wrong types and unknown operations are refused.
    ///
    /// # Errors
    /// [`InvalidInput`]: an unknown operation, or fields its request does not take.
    pub fn parse(name: &str, fields: Value) -> Result<Request, InvalidInput> {
        let op = Operation::named(name)?;
        let fields = if fields.is_null() {
            Value::Object(serde_json::Map::new())
        } else {
            fields
        };
        Ok(match op {
            Operation::Remember => Request::Remember(typed(op, fields)?),
            Operation::Update => Request::Update(typed(op, fields)?),
            Operation::RememberConversation => Request::RememberConversation(typed(op, fields)?),
            Operation::Recall => Request::Recall(typed(op, fields)?),
            Operation::Context => Request::Context(typed(op, fields)?),
            Operation::Feedback => Request::Feedback(typed(op, fields)?),
            Operation::RecordTask => Request::RecordTask(typed(op, fields)?),
            Operation::Observe => Request::Observe(typed(op, fields)?),
            Operation::Get => Request::Get(typed(op, fields)?),
            Operation::List => Request::List(typed(op, fields)?),
            Operation::Forget => Request::Forget(typed(op, fields)?),
            Operation::ExplainDecay => Request::ExplainDecay(typed(op, fields)?),
            Operation::Stats => Request::Stats(typed(op, fields)?),
            Operation::Sweep => Request::Sweep(typed(op, fields)?),
            Operation::Export => Request::Export(typed(op, fields)?),
            Operation::Import => Request::Import(typed(op, fields)?),
            Operation::Sync => Request::Sync(typed(op, fields)?),
        })
    }
}

/// `fields` as `op`'s request type.
fn typed<T: DeserializeOwned>(op: Operation, fields: Value) -> Result<T, InvalidInput> {
    serde_json::from_value(fields).map_err(|e| InvalidInput::Field {
        field: "request",
        reason: format!("{}: {e}", op.name()),
    })
}

/// The JSON schema (draft 2020-12, as MCP asks) of the fields `T` deserialises from.
fn schema_of<T: schemars::JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    schema.to_value()
}

impl Operation {
    /// The JSON schema of its request's fields (what MCP lists as the tool's input schema).
    pub fn request_schema(self) -> Value {
        match self {
            Operation::Remember => schema_of::<RememberRequest>(),
            Operation::Update => schema_of::<UpdateRequest>(),
            Operation::RememberConversation => schema_of::<ConversationRequest>(),
            Operation::Recall => schema_of::<RecallRequest>(),
            Operation::Context => schema_of::<ContextParams>(),
            Operation::Feedback => schema_of::<FeedbackRequest>(),
            Operation::RecordTask => schema_of::<Task>(),
            Operation::Observe => schema_of::<ObserveRequest>(),
            Operation::Get | Operation::ExplainDecay => schema_of::<IdRequest>(),
            Operation::List => schema_of::<ListRequest>(),
            Operation::Forget => schema_of::<ForgetRequest>(),
            Operation::Stats => schema_of::<NoFields>(),
            Operation::Sweep => schema_of::<Scope>(),
            Operation::Export => schema_of::<ExportRequest>(),
            Operation::Import => schema_of::<ImportRequest>(),
            Operation::Sync => schema_of::<SyncRequest>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_operation_is_named_once_and_found_by_its_name() {
        let mut names: Vec<&str> = Operation::ALL.map(Operation::name).to_vec();
        for op in Operation::ALL {
            assert_eq!(Operation::named(op.name()).unwrap(), op);
            assert!(!op.doc().is_empty());
            assert_eq!(op.request_schema()["type"], "object", "{}", op.name());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Operation::ALL.len());
        assert!(Operation::named("drop_table").is_err());
    }

    #[test]
    fn the_shared_scope_and_selection_parse_strictly_in_every_request() {
        // The scope's and selection's fields are read beside a request's own ...
        let r = Request::parse(
            "recall",
            json!({"query": "q", "user": "ana", "kinds": ["fact"], "include_superseded": true}),
        )
        .unwrap();
        let Request::Recall(r) = r else {
            panic!("{r:?}")
        };
        assert_eq!(r.scope.user.as_deref(), Some("ana"));
        assert!(r.selection.history);
        let Request::List(l) =
            Request::parse("list", json!({"as_of": 5, "session": "s", "limit": 3})).unwrap()
        else {
            panic!()
        };
        assert_eq!((l.scope.session.as_deref(), l.limit), (Some("s"), Some(3)));
        // ... and a field that none of them takes is refused, in every request that has them.
        for (op, fields) in [
            ("recall", json!({"query": "q", "user": "ana", "usr": "x"})),
            ("context", json!({"query": "q", "explain": true})),
            ("list", json!({"namespace": "n", "page": 2})),
            (
                "remember",
                json!({"text": "t", "agent": "a", "sesion": "s"}),
            ),
            ("update", json!({"id": 1, "user": "u", "colour": "red"})),
            ("feedback", json!({"id": 1, "level": 3, "x": 1})),
            ("get", json!({"id": 1, "history": true})),
            ("forget", json!({"user": "u", "namespace": "n"})),
            ("export", json!({"path": "/tmp/x", "limit": 5})),
            ("sweep", json!({"user": "u", "now": 1})),
            ("stats", json!({"verbose": true})),
            (
                "remember_conversation",
                json!({"session": "s", "turns": [], "tags": []}),
            ),
        ] {
            assert!(Request::parse(op, fields.clone()).is_err(), "{op} {fields}");
        }
        // A wrong type in a shared part is refused too.
        assert!(Request::parse("recall", json!({"query": "q", "user": 7})).is_err());
        assert!(Request::parse("recall", json!({"query": "q", "history": "yes"})).is_err());
    }

    #[test]
    fn the_doors_that_lack_an_operation_say_why() {
        for op in Operation::ALL {
            for door in Door::ALL {
                if let Some(why) = op.absent_from(door) {
                    assert!(why.len() > 20, "{} {door:?}", op.name());
                }
            }
            assert!(op.on(Door::Rust) && op.on(Door::Python) && op.on(Door::Node));
        }
        assert!(!Operation::Export.on(Door::Mcp));
        assert!(Operation::List.on(Door::Mcp) && Operation::List.on(Door::Cli));
    }
}
